#!/usr/bin/env bash
# The informers of what the plugins look up (issue 14): namespaces,
# Services, ReplicationControllers, ReplicaSets, StatefulSets (and the
# storage kinds: PersistentVolumeClaims, PersistentVolumes, StorageClasses,
# and preemption's PodDisruptionBudgets, whose watches show in /metrics like
# the others). toy-scheduler
# syncs them before it schedules (the "Caches are synced" line counts them);
# /debug/cluster-objects shows a pod's namespace labels and its default spread
# selector as upstream's helper.DefaultSelector builds it (a Service and a
# ReplicaSet merged); a namespace's labels changing sends unschedulable pods
# back to be tried.
source "$(dirname "$0")/../lib.sh"
use_shared_lab
# A scheduler name of this test's own: other tests' schedulers share the lab.
SCHED=toy-$NS
k label namespace "$NS" team=a >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $NS}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: headless-no-selector, namespace: $NS}
spec:
  clusterIP: None
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-rs, namespace: $NS}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web, track: stable}
    matchExpressions: [{key: env, operator: NotIn, values: [dev]}]
  template:
    metadata: {labels: {app: web, track: stable}}
    spec:
      schedulerName: $SCHED
      containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
YAML

start_toy "$TEST_TMP/toy.log" -v=5 --scheduler-name="$SCHED"
port=$(toy_port "$TEST_TMP/toy.log")
url=http://127.0.0.1:$port
wait_until 20 "informers synced" "grep -q '\"Caches are synced\"' '$TEST_TMP/toy.log'"
line=$(grep '"Caches are synced"' "$TEST_TMP/toy.log" | head -n1)
echo "$line"
for kind in namespaces services replicasets; do
  n=$(grep -oE "[\" ]$kind=[0-9]+" <<<"$line" | cut -d= -f2)
  [ "${n:-0}" -ge 1 ] || fail "the synced line counts ${n:-no} $kind: $line"
done
pass "the informers synced, with their object counts logged"
curl -sf "$url/metrics" >"$TEST_TMP/metrics.txt" || fail "GET /metrics"
for r in pods nodes namespaces services replicationcontrollers replicasets statefulsets \
  persistentvolumeclaims persistentvolumes storageclasses csinodes volumeattachments csidrivers \
  csistoragecapacities poddisruptionbudgets; do
  grep -q "^toysched_watch_restarts_total{.*resource=\"$r\"" "$TEST_TMP/metrics.txt" ||
    fail "no toysched_watch_restarts_total series for $r"
done
pass "toysched_watch_restarts_total has a series for each of the fifteen watches"

wait_until 20 "the ReplicaSet's pod bound" '[ "$(bound_count app=web)" = 1 ]'
pod=$(k -n "$NS" get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
curl -sf "$url/debug/cluster-objects?pod=$NS/$pod" >"$TEST_TMP/objects.json" || fail "GET /debug/cluster-objects"
cat "$TEST_TMP/objects.json"; echo
python3 - "$TEST_TMP/objects.json" <<'PY' || fail "/debug/cluster-objects is not what the lab holds"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["synced"] is True, d
assert d["counts"]["services"] >= 2 and d["counts"]["replicasets"] >= 1, d["counts"]
p = d["pod"]
assert p["namespace_labels"].get("team") == "a", p
# The Service "web" (the one without a selector selects nothing) merged with
# the ReplicaSet's selector, requirements sorted by key as upstream prints them.
assert p["default_selector"] == "app=web,env notin (dev),track=stable", p["default_selector"]
PY
pass "the pod's namespace labels and default selector (Service + ReplicaSet)"
curl -sf "$url/debug/cluster-objects?pod=$NS/no-such-pod" | grep -q '"error"' || fail "an unknown pod is not reported as such"

# A pod no node fits waits as unschedulable; a namespace label change moves it.
pod stuck <<<"  schedulerName: $SCHED
  nodeSelector: {no-such-label: x}
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"
wait_until 20 "stuck unschedulable" '[ -n "$(scheduled_message stuck)" ]'
moved='"Unschedulable pods moved by a cluster event" event="NamespaceUpdate"'
grep -q "$moved" "$TEST_TMP/toy.log" && fail "a NamespaceUpdate move before any namespace label changed"
k label namespace "$NS" team=b --overwrite >/dev/null
wait_until 10 "the NamespaceUpdate move" "grep -q '$moved pods=1' '$TEST_TMP/toy.log'"
wait_until 10 "the namespace label seen" \
  "curl -sf '$url/debug/cluster-objects?pod=$NS/$pod' | grep -q '\"team\":\"b\"'"
pass "a namespace label change moves the unschedulable pod and shows in /debug/cluster-objects"

! grep -E -h ' 403|[Ff]orbidden' "$TEST_TMP/toy.log" || fail "a 403 in toy-scheduler's log"
