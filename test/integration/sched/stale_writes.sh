#!/usr/bin/env bash
# No stale writes (issue 13, item 6). A FailedScheduling and its
# PodScheduled=False patch wait in toy-scheduler's event queue while binds
# are in flight (up to 5 s). Three pods that fit nowhere fail; while their
# writes wait, one is bound (by us, through the API), one deleted, and one
# deleted and created again under its name (for another scheduler, so that
# nothing else writes its status). None of the three writes may land: not on
# the bound pod, not as an event about a pod that is gone, not on the new pod.
#
# Binds are held in flight by a client limit of 1 request/s and ten small
# pods decided just before; that is what makes the writes wait.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1 --node-cpu 4
start_toy "$TEST_TMP/toy.log" -v=4 --kube-api-qps=1 --kube-api-burst=1

pods() { # SCHEDULER CPU NAME...
  local sched=$1 cpu=$2 name
  shift 2
  for name in "$@"; do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $NS}
spec:
  schedulerName: $sched
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "$cpu"}}}]
YAML
  done | k create -f - >/dev/null
}
field() { k -n "$NS" get pod "$1" -o jsonpath="{$2}"; }
scheduled_cond() { field "$1" '.status.conditions[?(@.type=="PodScheduled")].status'; }
logged() { grep -c -e "$1" "$TEST_TMP/toy.log" || true; }
# "name/uid" of each FailedScheduling event in NS.
failed_events() {
  k -n "$NS" get events --field-selector reason=FailedScheduling \
    -o jsonpath='{range .items[*]}{.involvedObject.name}/{.involvedObject.uid}{"\n"}{end}'
}

wait_until 30 "toy-scheduler listed the nodes" '[ "$(logged "\"Listed\" resource=\"nodes\"")" -ge 1 ]'
pods toy-scheduler 10m $(seq -f 'small-%g' 1 10)
wait_until 30 "the ten small pods decided" '[ "$(logged "Attempting to bind pod to node")" -ge 10 ]'
pods toy-scheduler 5 bound deleted recreated # 5 CPU: no 4-CPU node fits them
for p in bound deleted recreated; do
  wait_until 10 "$p found unschedulable" '[ "$(logged "Unable to schedule pod.*pod=\"$NS/$p\"")" -ge 1 ]'
done
old_uid=$(field recreated .metadata.uid)
# The writes must still be waiting, or this run tests nothing.
for p in bound deleted recreated; do
  [ -z "$(scheduled_cond "$p")" ] || fail "$p got its PodScheduled=False before the test could change it"
done
node=$(k get nodes -o jsonpath='{.items[0].metadata.name}')
k -n "$NS" create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"}, "target": {"kind": "Node", "name": "$node"}}
JSON
k -n "$NS" delete pod deleted recreated --wait=true >/dev/null
pods nobody 5 recreated
new_uid=$(field recreated .metadata.uid)
[ "$(failed_events)" = "" ] || fail "an event went out before the changes: $(failed_events)"
pass "while the three writes waited: bound bound, deleted deleted, recreated recreated ($old_uid -> $new_uid)"

# The event queue is first in, first out: once the ten Scheduled events are
# in, the three writes have been sent or dropped.
scheduled_events() { k -n "$NS" get events --field-selector reason=Scheduled -o name | grep -c . || true; }
wait_until 60 "the ten Scheduled events" '[ "$(scheduled_events)" = 10 ]'
sleep 2 # a write sent alongside the last of them has landed by now
[ "$(scheduled_cond bound)" = True ] || fail "the bound pod says PodScheduled=$(scheduled_cond bound)"
[ -z "$(scheduled_cond recreated)" ] || fail "the new pod got a stale PodScheduled=$(scheduled_cond recreated)"
[ "$(failed_events)" = "" ] || fail "stale FailedScheduling events: $(failed_events)"
pass "no stale PodScheduled=False nor FailedScheduling on the bound, deleted or recreated pod"
[ "$(logged "Dropped a FailedScheduling")" = 3 ] || fail "dropped: $(grep "Dropped a FailedScheduling" "$TEST_TMP/toy.log")"
pass "the three writes dropped, each logged at -v=4"
