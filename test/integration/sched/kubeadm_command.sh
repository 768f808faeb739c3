#!/usr/bin/env bash
# Drop-in for kube-scheduler's command line (issue 15):
#  - every flag of the pinned release's kube-scheduler (as `kube-lab
#    kube-scheduler-flags` lists them from the command itself) is one
#    toy-scheduler knows: a kube-scheduler command line never stops it at a
#    flag it has not heard of;
#  - the exact command line of kubeadm's static pod manifest for v1.36
#    (cmd/kubeadm/app/phases/controlplane/manifests.go: sorted, the
#    kubeconfig paths pointing at this lab's) runs: it takes the Lease,
#    serves /healthz on 127.0.0.1:10259 over HTTPS, binds a pod, and
#    warns about nothing.
source "$(dirname "$0")/../lib.sh"

help=$("$TOYSCHED_BUILD/toy-scheduler" --help)
upstream=$("$KUBE_LAB" kube-scheduler-flags)
[ "$(echo "$upstream" | grep -c .)" -gt 50 ] || fail "kube-lab listed too few flags: $upstream"
missing=()
for flag in $upstream; do
  grep -qE -- "(^|[ ,])$flag([ ,=]|$)" <<<"$help" || missing+=("$flag")
done
((${#missing[@]} == 0)) || fail "kube-scheduler flags toy-scheduler does not know: ${missing[*]}"
# The check can fail: a flag no one has is reported.
grep -qE -- "(^|[ ,])--no-such-flag([ ,=]|$)" <<<"$help" && fail "the flag check matches anything"
pass "all $(echo "$upstream" | grep -c .) kube-scheduler v1.36 flags are known to toy-scheduler"

use_private_lab --nodes 1
cp "$KCFG" "$TEST_TMP/scheduler.conf"
CONF=$TEST_TMP/scheduler.conf
"$TOYSCHED_BUILD/toy-scheduler" \
  --authentication-kubeconfig="$CONF" \
  --authorization-kubeconfig="$CONF" \
  --bind-address=127.0.0.1 \
  --kubeconfig="$CONF" \
  --leader-elect=true >"$TEST_TMP/toy.log" 2>&1 &
TOY_PID=$!
on_exit "kill -TERM $TOY_PID 2>/dev/null; wait $TOY_PID 2>/dev/null"

holder() { k -n kube-system get lease toy-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }
wait_until 30 "the Lease taken" '[ -n "$(holder)" ]'
wait_until 20 "/healthz on 127.0.0.1:10259" '[ "$(curl -sk https://127.0.0.1:10259/healthz)" = ok ]'
pod p1 <<YAML
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
wait_until 30 "p1 bound" '[ -n "$(node_of p1)" ]'
kill -0 "$TOY_PID" || fail "toy-scheduler exited"
if grep -E '^W' "$TEST_TMP/toy.log"; then fail "warnings on kubeadm's command line"; fi
pass "kubeadm's command line: Lease held by $(holder), /healthz ok on 127.0.0.1:10259, p1 on $(node_of p1), no warning"
