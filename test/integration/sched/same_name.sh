#!/usr/bin/env bash
# Same name, new UID (issue 13, item 3). A bound pod deleted and created
# again under its name while toy-scheduler was not watching reaches it in a
# relist as one change of that name. That must be a delete of the old pod
# (its 3 CPU freed) and an add of the new one (queued): on a 4-CPU node the
# new pod, 3 CPU too, fits only if the old one no longer counts.
#
# To make the change arrive in a relist and not as two watch events,
# toy-scheduler is frozen (SIGSTOP) across a lab restart, during which the
# pod is replaced and etcd compacts past the revision it last saw; on
# SIGCONT its watch is dead, the re-watch meets 410 Expired, and it relists.
source "$(dirname "$0")/../lib.sh"
flags=(--nodes 1 --node-cpu 4 --etcd-compaction-interval 2s --watch-cache=false)
use_private_lab "${flags[@]}"
start_toy "$TEST_TMP/toy.log" -v=4

pod() { # NAME CPU
  k -n "$NS" create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  schedulerName: toy-scheduler
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "$2"}}}]
YAML
}
field() { k -n "$NS" get pod "$1" -o jsonpath="{$2}"; }

pod web 3
wait_until 30 "web bound" '[ -n "$(field web .spec.nodeName)" ]'
old_uid=$(field web .metadata.uid)
pass "web ($old_uid) bound to $(field web .spec.nodeName)"

kill -STOP "$TOY_PID"
on_exit "kill -CONT $TOY_PID 2>/dev/null"  # runs before start_toy's kill -TERM
rv=$(list_rv)
restart_private_lab 0 "${flags[@]}"
k -n "$NS" delete pod web --wait=true >/dev/null # the fake kubelet finalizes it
pod web 3
new_uid=$(field web .metadata.uid)
[ "$new_uid" != "$old_uid" ] || fail "web kept its UID"
wait_compacted_past "$rv" 60
pass "web recreated as $new_uid while toy-scheduler was frozen; resourceVersion $rv compacted"

kill -CONT "$TOY_PID"
wait_until 60 "the new web bound" '[ -n "$(field web .spec.nodeName)" ]'
pass "the new web bound to $(field web .spec.nodeName)"
# The scenario really went through a relist (else it tested the watch path).
grep -E 'Watch error event.*pods.*410' "$TEST_TMP/toy.log" >/dev/null || fail "no 410 on the pod watch: no relist"
check_no_overcommit
pass "no node over-committed"
