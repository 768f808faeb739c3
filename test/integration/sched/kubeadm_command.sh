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
#    warns about nothing;
#  - kubeadm's manifest unchanged but for the image: the same command line
#    run as `kube-scheduler` (a link to toy-scheduler, as the image has),
#    with scheduler.conf holding the system:kube-scheduler client
#    certificate the lab's CA signed, so only the bootstrap ClusterRoles
#    authorize it: it answers to default-scheduler, holds the Lease
#    kube-system/kube-scheduler, binds pods that name no scheduler, and is
#    refused nothing (no 403).
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

# kubeadm BINARY CONF LOG: kubeadm's command line, in the background.
kubeadm() {
  "$1" \
    --authentication-kubeconfig="$2" \
    --authorization-kubeconfig="$2" \
    --bind-address=127.0.0.1 \
    --kubeconfig="$2" \
    --leader-elect=true >"$3" 2>&1 &
}

use_private_lab --nodes 1
cp "$KCFG" "$TEST_TMP/scheduler.conf"
kubeadm "$TOYSCHED_BUILD/toy-scheduler" "$TEST_TMP/scheduler.conf" "$TEST_TMP/toy.log"
TOY_PID=$!
on_exit "kill -TERM $TOY_PID 2>/dev/null; wait $TOY_PID 2>/dev/null"

# holder LEASE: who holds kube-system/LEASE.
holder() { k -n kube-system get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }
# serving LEASE: wait for the Lease to be taken and /healthz to answer.
serving() {
  wait_until 30 "the Lease $1 taken" '[ -n "$(holder '"$1"')" ]'
  wait_until 20 "/healthz on 127.0.0.1:10259" '[ "$(curl -sk https://127.0.0.1:10259/healthz)" = ok ]'
}
serving toy-scheduler
pod p1 <<YAML
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
wait_until 30 "p1 bound" '[ -n "$(node_of p1)" ]'
kill -0 "$TOY_PID" || fail "toy-scheduler exited"
if grep -E '^W' "$TEST_TMP/toy.log"; then fail "warnings on kubeadm's command line"; fi
pass "kubeadm's command line: Lease held by $(holder toy-scheduler), /healthz ok on 127.0.0.1:10259, p1 on $(node_of p1), no warning"

kill -TERM "$TOY_PID"
wait "$TOY_PID" 2>/dev/null || true
SCONF=$LAB_DIR/scheduler.conf
[ -f "$SCONF" ] || fail "the lab wrote no $SCONF"
[ "$(k --kubeconfig "$SCONF" auth whoami -o jsonpath='{.status.userInfo.username}')" = system:kube-scheduler ] ||
  fail "scheduler.conf is not system:kube-scheduler's"
ln -s "$TOYSCHED_BUILD/toy-scheduler" "$TEST_TMP/kube-scheduler"
kubeadm "$TEST_TMP/kube-scheduler" "$SCONF" "$TEST_TMP/kube.log"
KUBE_PID=$!
on_exit "kill -TERM $KUBE_PID 2>/dev/null; wait $KUBE_PID 2>/dev/null"
serving kube-scheduler
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: $NS}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
[ "$(k -n "$NS" get pod p2 -o jsonpath='{.spec.schedulerName}')" = default-scheduler ] || fail "p2 names a scheduler"
wait_until 30 "p2 (no schedulerName) bound" '[ -n "$(node_of p2)" ]'
kill -0 "$KUBE_PID" || fail "kube-scheduler (toy-scheduler) exited"
if grep -iwE '403|forbidden' "$TEST_TMP/kube.log"; then fail "refused something as system:kube-scheduler"; fi
if grep -E '^W' "$TEST_TMP/kube.log"; then fail "warnings on kubeadm's command line as kube-scheduler"; fi
pass "as kube-scheduler with system:kube-scheduler's certificate: Lease kube-scheduler held by $(holder kube-scheduler), p2 (default-scheduler) on $(node_of p2), no 403, no warning"
