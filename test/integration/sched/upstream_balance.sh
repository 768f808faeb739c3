#!/usr/bin/env bash
# Issue 47's acceptance, against the real kube-scheduler v1.36.3 (the lab's,
# default profile): NodeResourcesBalancedAllocation scores how much a pod
# improves a node's balance of cpu and memory. Two nodes of 10 CPU / 10Gi,
# lab-node-1 holding 2 CPU / 2Gi, lab-node-2 4 CPU / 1Mi; a 10m / 2Gi probe
# evens lab-node-2 out and unbalances lab-node-1 (resource scores tie), so
# both schedulers send it to lab-node-2, every time.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2 --node-cpu 10 --node-memory 10Gi --kube-scheduler
start_toy "$TEST_TMP/toy.log" -v=2

# make_pod NAME FIELD VALUE CPU MEMORY: a pod whose spec sets FIELD (nodeName:
# placed there; schedulerName: left to that scheduler) to VALUE, asking CPU
# and MEMORY.
make_pod() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  $2: $3
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '$4', memory: $5}}}]
YAML
}
make_pod even nodeName lab-node-1 2 2Gi
make_pod cpu-heavy nodeName lab-node-2 4 1Mi

# probe SCHEDULER NAME: the node SCHEDULER gives a 10m / 2Gi pod; the pod
# is deleted again so that every probe sees the same cluster.
probe() {
  make_pod "$2" schedulerName "$1" 10m 2Gi
  wait_until 30 "$2 bound by $1" "[ -n \"\$(node_of $2)\" ]"
  node_of "$2"
  k -n "$NS" delete pod "$2" --wait=true --timeout=30s >/dev/null
}

for i in 1 2 3; do
  kube=$(probe default-scheduler "kube-$i")
  toy=$(probe toy-scheduler "toy-$i")
  [ "$kube" = lab-node-2 ] || fail "kube-scheduler put probe $i on $kube, expected lab-node-2"
  [ "$toy" = "$kube" ] || fail "probe $i: toy-scheduler chose $toy, kube-scheduler $kube"
done
pass "three probes each: kube-scheduler and toy-scheduler both choose lab-node-2"
