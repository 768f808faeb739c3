#!/usr/bin/env bash
# The API server restarts under a running scheduler (the lab stopped 3 s and
# started again on the same dir, same address, same etcd data): new pods are
# bound within 5 s of the server answering /readyz again. kube-scheduler runs
# beside it as its own process, measured the same way, for the figure in
# docs/running.md (issue 13 item 1; 76 s at 966effa, where a dead pooled connection was
# handed out again and again while the backoff grew).
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2

start_toy "$TEST_TMP/toy.log" -v=2
"$KUBE_LAB" kube-scheduler --kubeconfig "$KCFG" --scheduler-name ks-restart -v 2 >"$TEST_TMP/ks.log" 2>&1 &
KS_PID=$!
on_exit "kill -TERM $KS_PID 2>/dev/null; wait $KS_PID 2>/dev/null"

# pod NAME SCHEDULER: a bare pause pod in NS.
pod() {
  k -n "$NS" create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $1}}
spec:
  schedulerName: $2
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
YAML
}
node_of() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }

pod before-toy toy-scheduler
pod before-ks ks-restart
wait_until 30 "both schedulers bind a first pod" '[ -n "$(node_of before-toy)" ] && [ -n "$(node_of before-ks)" ]'
pass "both schedulers bind before the restart"

lab_stop "$LAB_DIR"
sleep 3
# The moment the new server answers /readyz: polled on the side, every 0.1 s.
(
  until "$KUBECTL" --kubeconfig "$KCFG" get --raw /readyz --request-timeout=1s >/dev/null 2>&1; do sleep 0.1; done
  now_ms >"$TEST_TMP/ready_ms"
) &
lab_start "$LAB_DIR" --nodes 2 || fail "the lab did not restart"
on_exit lab_stop "$LAB_DIR"
wait_until 30 "/readyz after the restart" '[ -s "$TEST_TMP/ready_ms" ]'
ready=$(cat "$TEST_TMP/ready_ms")
kill -0 "$TOY_PID" || fail "toy-scheduler died with the API server: $(tail -n5 "$TEST_TMP/toy.log")"

pod after-toy toy-scheduler
pod after-ks ks-restart
toy_ms= ks_ms=
deadline=$((SECONDS + 90))
while [ -z "$toy_ms" ] || [ -z "$ks_ms" ]; do
  [ -z "$toy_ms" ] && [ -n "$(node_of after-toy)" ] && toy_ms=$(($(now_ms) - ready))
  [ -z "$ks_ms" ] && [ -n "$(node_of after-ks)" ] && ks_ms=$(($(now_ms) - ready))
  ((SECONDS < deadline)) || break
  sleep 0.1
done
echo "  after /readyz: toy-scheduler bound in ${toy_ms:-(not in 90 s)} ms, kube-scheduler in ${ks_ms:-(not in 90 s)} ms"
[ -n "$toy_ms" ] || fail "toy-scheduler did not bind a new pod within 90 s of the restart; log: $(tail -n5 "$TEST_TMP/toy.log")"
((toy_ms <= 5000)) || fail "toy-scheduler took ${toy_ms} ms after /readyz to bind a new pod (want <= 5000)"
pass "API server restart: toy-scheduler binds a new pod ${toy_ms} ms after /readyz (kube-scheduler: ${ks_ms:-n/a} ms)"
