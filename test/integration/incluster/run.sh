#!/usr/bin/env bash
# toy-scheduler in cluster, for real (issue 8): manifests/ applied to the lab,
# then the binary run the way a pod runs it - no --kubeconfig, no $KUBECONFIG,
# KUBERNETES_SERVICE_HOST/PORT set, a TokenRequest token, the lab's CA and the
# namespace at /var/run/secrets/kubernetes.io/serviceaccount (a tmpfs in a
# private mount namespace: in_pod.sh), uid 65532, the Deployment's own args.
# With only the manifests' RBAC it leads, schedules, posts events, hands over;
# with the leases rule gone it says so in its log and waits, then recovers.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
HERE=$(cd "$(dirname "$0")" && pwd)
M=$TOYSCHED_ROOT/manifests
command -v unshare >/dev/null && command -v setpriv >/dev/null || fail "needs unshare and setpriv (util-linux)"

k apply -f "$M" >/dev/null
# The lab has no container runtime: the Deployment's pods would never run.
k -n academy-build scale deployment toy-scheduler --replicas=0 >/dev/null
mapfile -t ARGS < <(k -n academy-build get deployment toy-scheduler \
  -o jsonpath='{range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
[[ " ${ARGS[*]} " == *" --leader-elect "* ]] || fail "the Deployment's args: ${ARGS[*]}"

server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
hostport=${server#https://}
SA=$TEST_TMP/serviceaccount
mkdir -p "$SA" "$TEST_TMP/home"
k -n academy-build create token toy-scheduler --duration=1h >"$SA/token"
k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$SA/ca.crt"
printf academy-build >"$SA/namespace"
# kubectl as the ServiceAccount, with the same token and CA.
cat >"$TEST_TMP/sa.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "$server", certificate-authority: "$SA/ca.crt"}}]
users: [{name: sa, user: {tokenFile: "$SA/token"}}]
contexts: [{name: sa, context: {cluster: lab, user: sa}}]
current-context: sa
YAML
as_sa() { "$KUBECTL" --kubeconfig "$TEST_TMP/sa.kubeconfig" "$@"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
declare -A PID PORT SPORT
# in_pod NAME: a replica whose pod is NAME, with the Deployment's args. Its
# secure port (10259 in a pod) is moved to a free port, and a plain-HTTP
# loopback port is added for the checks: here two replicas share one network
# namespace, where in the cluster each pod has its own.
in_pod() {
  local name=$1
  PORT[$name]=$(free_port)
  SPORT[$name]=$(free_port)
  local args=("${ARGS[@]}" "--metrics-bind-address=127.0.0.1:${PORT[$name]}" "--secure-port=${SPORT[$name]}")
  env -u KUBECONFIG HOME="$TEST_TMP/home" POD_NAME="$name" \
    KUBERNETES_SERVICE_HOST="${hostport%:*}" KUBERNETES_SERVICE_PORT="${hostport##*:}" \
    unshare -m --propagation private "$HERE/in_pod.sh" "$SA" \
    setpriv --reuid=65532 --regid=65532 --clear-groups \
    "$TOYSCHED_BUILD/toy-scheduler" "${args[@]}" >>"$TEST_TMP/$name.log" 2>&1 &
  PID[$name]=$!
  on_exit "kill -KILL ${PID[$name]} 2>/dev/null"
}
holder() { k -n academy-build get lease toy-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }
no_403() {
  ! grep -E -h ' 403|[Ff]orbidden' "$TEST_TMP"/*.log || fail "a 403 in toy-scheduler's log: the RBAC misses something"
}

A=toy-scheduler-test-abc B=toy-scheduler-test-def
in_pod $A
wait_until 20 "the Lease held by $A" '[ "$(holder)" = $A ]'
grep -q 'config="in-cluster config"' "$TEST_TMP/$A.log" || fail "not the in-cluster config: $(head -n1 "$TEST_TMP/$A.log")"
in_pod $B   # the standby: it watches the Lease
sleep 2
pass "in-cluster config; Lease academy-build/toy-scheduler held by POD_NAME=$A, $B waits"

deployment web 6 toy-scheduler 100m
wait_until 30 "6 pods bound" '[ "$(bound_count app=web)" = 6 ]'
scheduled_events() {
  k -n "$NS" get events.events.k8s.io -o jsonpath='{range .items[?(@.reason=="Scheduled")]}{.reportingController} {.regarding.name}{"\n"}{end}' |
    awk '$1 == "toy-scheduler" {print $2}' | sort -u | grep -c . || true
}
wait_until 20 "a Scheduled event per pod" '[ "$(scheduled_events)" = 6 ]'
! grep -q 'Successfully bound' "$TEST_TMP/$B.log" || fail "the standby bound pods"
pass "6 pods bound by the leader, 6 Scheduled events (events.k8s.io) from toy-scheduler"

# A pod that fits nowhere: FailedScheduling and PodScheduled=False (pods/status).
k -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: $NS}
spec:
  schedulerName: toy-scheduler
  containers: [{name: pause, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1000"}}}]
YAML
cond() { k -n "$NS" get pod huge -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}'; }
wait_until 20 "PodScheduled=False on the pod that fits nowhere" '[ "$(cond)" = False/Unschedulable ]'
wait_until 20 "a FailedScheduling event" \
  '[ -n "$(k -n "$NS" get events.events.k8s.io --field-selector reason=FailedScheduling,regarding.name=huge -o name)" ]'
pass "a pod that fits nowhere: PodScheduled=False/Unschedulable and a FailedScheduling event"

# The standby's watch on the Lease fails silently when refused (it falls back
# to polling), so make the same request with the same token: allowed for this
# Lease, refused for the others.
rc=0; timeout 3 "$KUBECTL" --kubeconfig "$TEST_TMP/sa.kubeconfig" -n academy-build get leases --field-selector metadata.name=toy-scheduler --watch -o name \
  >/dev/null 2>"$TEST_TMP/watch.err" || rc=$?
[ "$rc" = 124 ] || fail "the ServiceAccount cannot watch its Lease (rc=$rc): $(cat "$TEST_TMP/watch.err")"
as_sa -n academy-build get leases >/dev/null 2>&1 && fail "the ServiceAccount may list every Lease in academy-build"
as_sa -n default get leases --field-selector metadata.name=toy-scheduler >/dev/null 2>&1 && fail "the ServiceAccount may read Leases outside academy-build"
no_403
pass "least privilege is enough: no 403 in either replica's log; the Lease watch is allowed, only on that Lease"

if command -v curl >/dev/null && curl -fsS -m 2 "http://127.0.0.1:${PORT[$A]}/healthz" >/dev/null 2>&1; then
  for p in livez readyz; do
    curl -fsS -m 2 "http://127.0.0.1:${PORT[$A]}/$p" >/dev/null || fail "/$p on the leader"
  done
  # The Deployment's readinessProbe is /readyz: a standby that is not ready
  # would stall every rolling update (maxUnavailable rounds down to 0 of 2).
  curl -fsS -m 2 "http://127.0.0.1:${PORT[$B]}/readyz" >/dev/null || fail "/readyz fails on the standby"
  pass "/healthz, /livez, /readyz answer on the leader; /readyz on the standby too"
fi

# The secure port, as the Deployment serves it (curl -k https://POD:10259,
# here 127.0.0.1 and the replica's port): open for the probes, 401 without a
# token, 403 for the scheduler's own token until RBAC allows it, then 200.
https_code() {  # https_code PATH [token file]
  local auth=()
  [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $(cat "$2")")
  curl -ks -o "$TEST_TMP/https.out" -w '%{http_code}' -m 5 "${auth[@]}" "https://127.0.0.1:${SPORT[$A]}$1"
}
wait_until 10 "the secure port answers" '[ "$(https_code /healthz)" = 200 ]'
for p in /livez /readyz; do [ "$(https_code $p)" = 200 ] || fail "$p over HTTPS without a token: $(https_code $p)"; done
code=$(https_code /debug/cache)
[ "$code" = 401 ] || fail "/debug/cache without a token: HTTP $code, want 401"
code=$(https_code /debug/cache "$SA/token")
[ "$code" = 403 ] || fail "/debug/cache with the scheduler's token, before RBAC allows it: HTTP $code, want 403"
grep -qF 'cannot get path \"/debug/cache\"' "$TEST_TMP/https.out" || fail "the 403 does not say why: $(cat "$TEST_TMP/https.out")"
k create clusterrolebinding toy-scheduler-endpoints-test --clusterrole=toy-scheduler-endpoints \
  --serviceaccount=academy-build:toy-scheduler >/dev/null
on_exit k delete clusterrolebinding toy-scheduler-endpoints-test '>/dev/null'
# The 403 stays cached for 10 s (upstream's deny TTL).
wait_until 20 "/debug/cache with the token and RBAC" '[ "$(https_code /debug/cache "$SA/token")" = 200 ]'
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["assumed"]' "$TEST_TMP/https.out" || fail "/debug/cache is not the cache"
code=$(https_code /ui "$SA/token")
[ "$code" = 200 ] || fail "/ui with the token and the manifests' toy-scheduler-endpoints role: HTTP $code, want 200"
grep -q '<title>toy-scheduler' "$TEST_TMP/https.out" || fail "/ui is not the page: $(head -c 200 "$TEST_TMP/https.out")"
! grep -qF "$(cat "$SA/token")" "$TEST_TMP"/*.log || fail "the token is in a replica's log"
pass "HTTPS :10259 (self-signed): /healthz /livez /readyz 200 without a token; /debug/cache 401 without, 403 with the own token, 200 once RBAC allows, and /ui"

# Graceful handover, in-cluster: SIGTERM releases, the standby takes it.
start=$(now_ms)
kill -TERM "${PID[$A]}"
wait_until 10 "$B holds the Lease" '[ "$(holder)" = $B ]'
took=$(( $(now_ms) - start ))
wait "${PID[$A]}" || fail "$A exited $? on SIGTERM"
grep -q 'released leader lease' "$TEST_TMP/$A.log" || fail "$A did not release the Lease"
deployment web 9 toy-scheduler 100m
wait_until 30 "9 pods bound" '[ "$(bound_count app=web)" = 9 ]'
no_403
pass "graceful handover $A -> $B in ${took} ms; $B schedules"
kill -TERM "${PID[$B]}"; wait "${PID[$B]}" || fail "$B exited $? on SIGTERM"

# Without the leases rule: a clear line in the log, no scheduling, no exit;
# and when the rule comes back, it leads without a restart.
k -n academy-build delete lease toy-scheduler >/dev/null
k -n academy-build patch role toy-scheduler-leader-election --type=json -p='[{"op": "replace", "path": "/rules", "value": []}]' >/dev/null
C=toy-scheduler-test-ghi
in_pod $C
wait_until 20 "a 403 on leases in the log" "grep -q '403.*leases.*academy-build' '$TEST_TMP/$C.log'"
line=$(grep -m1 '403.*leases.*academy-build' "$TEST_TMP/$C.log")
[[ $line == *forbidden* && $line == *system:serviceaccount:academy-build:toy-scheduler* ]] || fail "unclear: $line"
echo "  the line: $line"
deployment late 1 toy-scheduler
sleep 4
kill -0 "${PID[$C]}" || fail "it exited without the leases permission"
[ "$(bound_count app=late)" = 0 ] || fail "it scheduled without holding the Lease"
# One line, not one per retry period: repeats go to -v=4.
n=$(grep -c '403.*leases' "$TEST_TMP/$C.log" || true)
[ "$n" = 1 ] || fail "$n lines about the 403 in ~5 s, want one"
# Not ready (it cannot work with the Lease), but alive: no crash loop.
code=$(curl -s -o "$TEST_TMP/readyz" -w '%{http_code}' -m 2 "http://127.0.0.1:${PORT[$C]}/readyz")
[ "$code" = 500 ] || fail "/readyz without the Lease: HTTP $code, want 500"
grep -q '^\[-\]leader-election-lease failed: .*403' "$TEST_TMP/readyz" || fail "/readyz does not say why: $(cat "$TEST_TMP/readyz")"
curl -fsS -m 2 "http://127.0.0.1:${PORT[$C]}/livez" >/dev/null || fail "/livez fails without the Lease"
echo "  /readyz: HTTP 500, $(grep -m1 '^\[-\]' "$TEST_TMP/readyz" | cut -c1-120)"
pass "without the leases rule: one line naming the 403, /readyz 500, no scheduling, still running"
k apply -f "$M/10-rbac.yaml" >/dev/null
wait_until 30 "$C holds the Lease once the Role is back" '[ "$(holder)" = $C ]'
wait_until 30 "the waiting pod bound" '[ "$(bound_count app=late)" = 1 ]'
pass "the Role restored: $C leads and schedules without a restart"
kill -TERM "${PID[$C]}"; wait "${PID[$C]}" || fail "$C exited $? on SIGTERM"
