#!/usr/bin/env bash
# Issue 13 item 2: one pod must never wedge an informer. `memory: 100E` and
# `cpu: 1e16` are valid to the API server but beyond int64 where the
# scheduler counts. Two such pods exist before toy-scheduler starts (its
# first list) and two more arrive in the middle of a burst of 60 ordinary
# pods (its watch): every ordinary pod is bound, the four get
# FailedScheduling "Insufficient memory" / "Insufficient cpu" (more than a
# node has at all: preemption is not helpful) and stay pending, and a restarted toy-scheduler (a fresh list with them in it)
# still syncs and binds a new pod.
# Also during the burst: a pod of 1.3 MB of '<' in an env value, valid
# (etcd holds 1.5 MiB) but a 7.8 MB watch event once the API server has
# escaped each '<' as \u003c: it is bound like any other.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers

# huge NAME RESOURCE QUANTITY: a bare toy-scheduler pod asking that much.
huge() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {app: huge}}
spec:
  schedulerName: toy-scheduler
  containers:
  - {name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {$2: "$3"}}}
YAML
}
# big: sent as raw JSON with the '<' unescaped (kubectl would escape them
# and exceed the API server's 3 MiB request limit).
python3 - "$NS" >"$TEST_TMP/big.json" <<'PY'
import json, sys
print(json.dumps({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "big", "namespace": sys.argv[1], "labels": {"app": "big"}},
                  "spec": {"schedulerName": "toy-scheduler", "containers": [
                      {"name": "c", "image": "registry.k8s.io/pause:3.9",
                       "env": [{"name": "X", "value": "<" * 1300000}]}]}}, ensure_ascii=False))
PY
huge huge-mem-before memory 100E
huge huge-cpu-before cpu 1e16
[ "$(k -n "$NS" get pod huge-mem-before -o jsonpath='{.spec.containers[0].resources.requests.memory}')" = 100E ] ||
  fail "the API server did not keep memory: 100E"

start_toy "$TEST_TMP/toy.log" -v=2
deployment burst 60 toy-scheduler 10m
sleep 0.5
huge huge-mem-during memory 100E
huge huge-cpu-during cpu 1e16
size=$(k create --raw "/api/v1/namespaces/$NS/pods" -f "$TEST_TMP/big.json" | wc -c)
((size > 7000000)) || fail "the big pod is only $size bytes as the API server writes it"
wait_until 60 "60 ordinary pods and the big one bound" '[ "$(bound_count app=burst)/$(bound_count app=big)" = 60/1 ]'
pass "every ordinary pod and the big one ($size bytes of JSON) bound around the huge ones"

# reason_of POD: the note (or message) of its last FailedScheduling event.
reason_of() {
  k -n "$NS" get events --field-selector "reason=FailedScheduling,involvedObject.name=$1" -o json |
    python3 -c "import json,sys; e=json.load(sys.stdin)['items']; print((e[-1].get('note') or e[-1].get('message')) if e else '')"
}
for p in huge-mem-before huge-mem-during; do
  want="0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
  wait_until 20 "FailedScheduling for $p" "[ \"\$(reason_of $p)\" = '$want' ]"
done
for p in huge-cpu-before huge-cpu-during; do
  want="0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
  wait_until 20 "FailedScheduling for $p" "[ \"\$(reason_of $p)\" = '$want' ]"
done
[ "$(bound_count app=huge)" = 0 ] || fail "a huge pod was bound: $(spread app=huge)"
pass "the four huge pods: FailedScheduling Insufficient memory / cpu, not bound"
if grep -E 'Failed to list|Undecodable watch event' "$TEST_TMP/toy.log"; then
  fail "a list or watch failed on the huge pods"
fi
pass "no failed list or watch"

# A restart lists the huge pods again: the new scheduler must sync and bind.
kill -TERM "$TOY_PID"
wait "$TOY_PID" 2>/dev/null || true
start_toy "$TEST_TMP/toy-restarted.log" -v=2
k -n "$NS" scale deployment burst --replicas=61 >/dev/null
wait_until 30 "the restarted scheduler binds a new pod" '[ "$(bound_count app=burst)" = 61 ]'
pass "a restarted toy-scheduler synced and bound a new pod"
check_no_overcommit
pass "no node over-committed"
