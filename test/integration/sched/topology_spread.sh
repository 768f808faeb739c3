#!/usr/bin/env bash
# PodTopologySpread's score on a real cluster, against the real
# kube-scheduler: a ScheduleAnyway zone constraint sends the pod to the
# emptier zone although resource scoring prefers the other node, and both
# schedulers choose the same node; without the constraint both choose the
# other one. Also what the v1.36 apiserver does with matchLabelKeys: it
# appends `key In (value)` to the selector at creation, so the selector the
# scheduler reads already holds the pod's value.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2 --zones 2 --kube-scheduler
start_toy "$TEST_TMP/toy.log" -v=2
PAUSE='containers: [{name: c, image: registry.k8s.io/pause:3.9}]'

# lab-node-1 (zone-0): three app=web pods, no requests. lab-node-2
# (zone-1): one app=other pod with 2 of its 4 cpus. Bound by nodeName.
placed() {
  { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {app: %s}}\nspec:\n  nodeName: %s\n' \
    "$1" "$NS" "$2" "$3"
    cat; } | k apply -f - >/dev/null
}
for i in 1 2 3; do placed "web-$i" web lab-node-1 <<<"  $PAUSE"; done
placed heavy other lab-node-2 <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '2'}}}]"

# decide SCHEDULER NAME SPREAD(yes|no): the node SCHEDULER gives a new
# app=web pod; the pod is deleted again so that the next decision sees the
# same cluster.
decide() {
  local sched=$1 name=$2 spread=$3 node=
  {
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {app: web}}\nspec:\n  schedulerName: %s\n' \
      "$name" "$NS" "$sched"
    if [ "$spread" = yes ]; then
      echo "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,"
      echo "    whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}]"
    fi
    echo "  $PAUSE"
  } | k apply -f - >/dev/null
  wait_until 30 "$name bound by $sched" "[ -n \"\$(node_of $name)\" ]"
  node=$(node_of "$name")
  k -n "$NS" delete pod "$name" --grace-period=0 --force >/dev/null 2>&1
  wait_until 30 "$name gone" "! k -n $NS get pod $name >/dev/null 2>&1"
  echo "$node"
}

kube_plain=$(decide default-scheduler kube-plain no)
toy_plain=$(decide toy-scheduler toy-plain no)
[ "$kube_plain" = lab-node-1 ] || fail "kube-scheduler put the plain pod on $kube_plain, expected lab-node-1"
[ "$toy_plain" = "$kube_plain" ] || fail "plain pod: toy-scheduler chose $toy_plain, kube-scheduler $kube_plain"
pass "without a constraint both choose lab-node-1 (resource scores)"

kube_spread=$(decide default-scheduler kube-spread yes)
toy_spread=$(decide toy-scheduler toy-spread yes)
[ "$kube_spread" = lab-node-2 ] || fail "kube-scheduler put the spread pod on $kube_spread, expected lab-node-2"
[ "$toy_spread" = "$kube_spread" ] || fail "spread pod: toy-scheduler chose $toy_spread, kube-scheduler $kube_spread"
pass "ScheduleAnyway zone spread: both choose lab-node-2"

# matchLabelKeys: merged into the selector by the apiserver at creation
# (a key the pod has no label for adds nothing).
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: mlk, namespace: $NS, labels: {app: web, pod-template-hash: abc123}}
spec:
  schedulerName: nobody
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,
    whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}},
    matchLabelKeys: [pod-template-hash, absent-key]}]
  $PAUSE
YAML
got=$(k -n "$NS" get pod mlk -o jsonpath='{.spec.topologySpreadConstraints[0].labelSelector.matchExpressions}')
want='[{"key":"pod-template-hash","operator":"In","values":["abc123"]}]'
[ "$got" = "$want" ] || fail "matchLabelKeys: selector expressions $got, expected $want"
pass "apiserver merged matchLabelKeys: $got"
