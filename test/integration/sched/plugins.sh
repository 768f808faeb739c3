#!/usr/bin/env bash
# The plugins that count pods (issue 14's acceptance), on a real cluster:
#  - a 6-replica Deployment with required pod anti-affinity on 4 nodes: 4
#    bound, 2 pending with the message kube-scheduler gives (checked against
#    the lab's kube-scheduler on the same Deployment in another namespace);
#  - maxSkew 1 DoNotSchedule over 2 nodes: 2/2 for 4 pods, although their
#    preferred node affinity pulls them all to one node;
#  - a Deployment of 9 with no constraints on 3 zones × 2 nodes: at most 2
#    apart per zone (PodTopologySpread's system default constraints).
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 4 --zones 3 --controllers --kube-scheduler
start_toy "$TEST_TMP/toy.log" -v=2

ANTI='affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}'

# web REPLICAS SCHEDULER NAMESPACE: the one-per-node Deployment.
web() {
  k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: $3}
spec:
  replicas: $1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      schedulerName: $2
      $ANTI
      containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
}
pending_messages() { # NAMESPACE: the PodScheduled message of each pending web pod
  k -n "$1" get pods -l app=web -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if not p["spec"].get("nodeName"):
        print(next((c.get("message", "") for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"), ""))'
}

# --- required anti-affinity: one per node, the rest pending
k create namespace "$NS-kube" >/dev/null
web 6 toy-scheduler "$NS"
web 6 default-scheduler "$NS-kube"
wait_until 30 "4 web pods bound" '[ "$(bound_count app=web)" = 4 ] && [ "$(k -n "$NS" get pods -l app=web -o name | wc -l)" = 6 ]'
wait_until 30 "2 pending with a message" '[ "$(pending_messages "$NS" | grep -c .)" = 2 ]'
WANT="0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
while read -r msg; do
  [ "$msg" = "$WANT" ] || fail "pending web pod says '$msg', expected '$WANT'"
done < <(pending_messages "$NS")
[ "$(spread app=web | awk '$1 != 1' | wc -l)" = 0 ] || fail "two web pods on one node: $(spread app=web)"
pass "6 replicas, required anti-affinity, 4 nodes: 4 bound one per node, 2 pending: $WANT"
# kube-scheduler's own words for the same pods: the same, but for the
# PostFilter message of DynamicResources, which toy-scheduler does not run
# (it refuses pods with resource claims), placed before preemption's.
wait_until 60 "kube-scheduler's message" '[ "$(pending_messages "$NS-kube" | grep -c .)" = 2 ]'
theirs=$(pending_messages "$NS-kube" | sed -n 1p)
[ "${theirs/no new claims to deallocate, /}" = "$WANT" ] ||
  fail "kube-scheduler says '$theirs', toy-scheduler '$WANT'"
pass "kube-scheduler's message is the same, but for DynamicResources' part: $theirs"
k delete namespace "$NS-kube" --wait=false >/dev/null
k -n "$NS" delete deployment web --wait=false >/dev/null
wait_until 60 "web pods gone" '[ "$(k -n "$NS" get pods -l app=web -o name | wc -l)" = 0 ]'
wait_until 60 "namespace $NS-kube gone" '[ -z "$(k get namespace "$NS-kube" --ignore-not-found -o name)" ]'

# --- required pod affinity: a pod waiting for its partner is placed as soon
# as the partner is (an assigned pod's arrival moves it), not after the
# 5-minute flush of unschedulable pods
pod needs-db <<'YAML'
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}}
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
wait_until 20 "needs-db unschedulable" '[ -n "$(scheduled_message needs-db)" ]'
[ "$(scheduled_message needs-db)" = "0/4 nodes are available: 4 node(s) didn't match pod affinity rules. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling." ] ||
  fail "needs-db: $(scheduled_message needs-db)"
sleep 3 # the deletes above are all seen: nothing else moves needs-db now
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: $NS, labels: {app: db}}
spec:
  schedulerName: toy-scheduler
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
wait_until 15 "needs-db bound once db is" '[ -n "$(node_of needs-db)" ]'
[ "$(node_of needs-db)" = "$(node_of db)" ] || fail "needs-db on $(node_of needs-db), db on $(node_of db)"
pass "required pod affinity: placed beside its partner as soon as the partner was bound ($(node_of db))"
k -n "$NS" delete pod needs-db db --wait=false >/dev/null

# --- two more nodes: 3 zones × 2 nodes (the lab dealt 1..4 over zone-0,1,2,0)
for i in 5 6; do
  k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: lab-node-$i
  labels: {kubernetes.io/hostname: lab-node-$i, topology.kubernetes.io/zone: zone-$(((i - 1) % 3)), topology.kubernetes.io/region: lab}
YAML
  k patch node "lab-node-$i" --subresource=status --type=merge -p \
    '{"status":{"allocatable":{"cpu":"4","memory":"32Gi","pods":"110"},"capacity":{"cpu":"4","memory":"32Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ok"}]}}' >/dev/null
done
zones=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}' | sort | uniq -c | awk '{print $1}' | sort -u)
[ "$zones" = 2 ] || fail "expected 2 nodes in each zone: $(k get nodes -L topology.kubernetes.io/zone)"

# --- maxSkew 1, DoNotSchedule, over two nodes (zone-0's): 2/2, against a
# preferred node affinity that would put all four on lab-node-1
for i in 1 2 3 4; do
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: skew-$i, namespace: $NS, labels: {group: skew}}
spec:
  schedulerName: toy-scheduler
  nodeSelector: {topology.kubernetes.io/zone: zone-0}
  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchFields: [{key: metadata.name, operator: In, values: [lab-node-1]}]}}]}}
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {group: skew}}}]
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
done
wait_until 30 "4 skew pods bound" '[ "$(bound_count group=skew)" = 4 ]'
got=$(spread group=skew | awk '{print $2 "=" $1}' | tr '\n' ' ')
[ "$got" = "lab-node-1=2 lab-node-4=2 " ] || fail "maxSkew 1 over lab-node-1 and lab-node-4 gave: $got"
pass "maxSkew 1 DoNotSchedule over 2 nodes: $got"

# --- system default spreading: a Deployment of 9, no constraints of its own
deployment nine 9 toy-scheduler
wait_until 60 "9 pods bound" '[ "$(bound_count app=nine)" = 9 ]'
per_zone=$(for n in $(k -n "$NS" get pods -l app=nine -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'); do
  k get node "$n" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}'
done | sort | uniq -c | awk '{print $1}' | sort -n | tr '\n' ' ')
read -r lo _ hi <<<"$per_zone"
[ -n "$hi" ] && ((hi - lo <= 2)) || fail "9 replicas over 3 zones: $per_zone (per zone, sorted)"
pass "9 replicas over 3 zones × 2 nodes: $per_zone per zone"

kill -0 "$TOY_PID" || fail "toy-scheduler died"
! grep -E '^F|panic|terminate called' "$TEST_TMP/toy.log" || fail "toy-scheduler logged a crash"
check_no_overcommit
pass "no node over-committed"
