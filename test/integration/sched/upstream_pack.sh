#!/usr/bin/env bash
# Issue 47's acceptance, against the real kube-scheduler v1.36.3: one
# KubeSchedulerConfiguration of two profiles (acc-spread, the default;
# acc-pack, NodeResourcesFit MostAllocated over cpu and memory, weight 1
# each), twelve 200m pods for acc-pack on 3 idle nodes of 4 CPU, created six
# at a time. kube-scheduler (the release's own command with this --config)
# runs it first, then toy-scheduler with the very same file on the same
# cluster, emptied again: both put all twelve on one node, and each pod's
# node totals (their -v=10 "Calculated node's final score" lines, the same
# in both) are the same numbers.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3

CONFIG=$TEST_TMP/config.yaml
scheduler_config "$CONFIG" <<YAML
profiles:
- schedulerName: acc-spread
- schedulerName: acc-pack
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
YAML

# batch RUN FIRST: six acc-pack pods run=RUN, numbered from FIRST, in one apply.
batch() {
  local i
  for ((i = $2; i < $2 + 6; i++)); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1-$i, namespace: $NS, labels: {run: $1}}
spec:
  schedulerName: acc-pack
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 200m}}}]
YAML
  done | k apply -f - >/dev/null
}

# twelve RUN: the two batches, the second once the first is bound; then
# "count node" lines; the pods are deleted again.
twelve() {
  batch "$1" 0
  wait_until 60 "the first six $1 pods bound" "[ \"\$(bound_count run=$1)\" = 6 ]"
  batch "$1" 6
  wait_until 60 "all twelve $1 pods bound" "[ \"\$(bound_count run=$1)\" = 12 ]"
  spread "run=$1" >"$TEST_TMP/$1.spread"
  k -n "$NS" delete pods -l "run=$1" --wait=true --timeout=60s >/dev/null
}

# totals LOG RUN: per pod of RUN, in order, its node totals sorted (which
# node a tie went to may differ).
totals() {
  local i
  for ((i = 0; i < 12; i++)); do
    grep "Calculated node's final score for pod\" pod=\"$NS/$2-$i\"" "$1" | sed 's/.* score=//' | sort -n | xargs
  done
}

"$TOYSCHED_BUILD/kube-scheduler" --config "$CONFIG" --secure-port 0 --v=10 >"$TEST_TMP/kube-scheduler.log" 2>&1 &
KUBE_PID=$!
on_exit "kill -TERM $KUBE_PID 2>/dev/null; wait $KUBE_PID 2>/dev/null"
twelve kube
signal_and_wait TERM "$KUBE_PID"
[ "$(wc -l <"$TEST_TMP/kube.spread")" = 1 ] || fail "kube-scheduler spread the twelve: $(xargs <"$TEST_TMP/kube.spread")"
pass "kube-scheduler: all twelve on one node ($(xargs <"$TEST_TMP/kube.spread"))"

start_toy "$TEST_TMP/toy.log" --config "$CONFIG" -v=10
twelve toy
[ "$(wc -l <"$TEST_TMP/toy.spread")" = 1 ] || fail "toy-scheduler spread the twelve: $(xargs <"$TEST_TMP/toy.spread")"
pass "toy-scheduler: all twelve on one node ($(xargs <"$TEST_TMP/toy.spread")), as kube-scheduler"

totals "$TEST_TMP/kube-scheduler.log" kube >"$TEST_TMP/kube.totals"
totals "$TEST_TMP/toy.log" toy >"$TEST_TMP/toy.totals"
[ "$(grep -c . "$TEST_TMP/kube.totals")" = 12 ] || fail "kube-scheduler's log has no totals for some pods"
diff "$TEST_TMP/kube.totals" "$TEST_TMP/toy.totals" >&2 || fail "node totals differ (< kube-scheduler, > toy-scheduler)"
pass "each pod's node totals equal kube-scheduler's: $(head -n 2 "$TEST_TMP/toy.totals" | paste -sd';'); ..."
