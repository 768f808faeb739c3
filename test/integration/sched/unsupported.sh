#!/usr/bin/env bash
# Pods with hard constraints toy-scheduler does not evaluate (resource
# claims; volumes' claims, ephemeral ones included, are evaluated: see
# volumes.sh and volume_binding.sh) are not bound blindly: each stays
# pending with a FailedScheduling event and PodScheduled=False naming the
# field. With --ignore-unsupported-constraints the same pods are bound.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3
start_toy "$TEST_TMP/toy.log" -v=2

PAUSE='containers: [{name: c, image: registry.k8s.io/pause:3.9}]'
# name|field named in the message|spec lines (indented 2)
cases=(
  "claim|spec.resourceClaims|  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]"
)

for c in "${cases[@]}"; do
  IFS='|' read -r name _ spec <<<"$c"
  pod "$name" <<<"$spec
  $PAUSE"
done
# A pod it can place, made after the others: a sign that they had their turn.
pod plain <<<"  $PAUSE"

condition() {
  k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}/{.status.conditions[?(@.type=="PodScheduled")].message}'
}
event_note() {
  k -n "$NS" get events --field-selector "reason=FailedScheduling,involvedObject.name=$1" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | tail -n1
}

wait_until 20 "plain bound" '[ -n "$(node_of plain)" ]'
for c in "${cases[@]}"; do
  IFS='|' read -r name field _ <<<"$c"
  want="toy-scheduler does not evaluate $field: the pod stays pending rather than be bound without it (--ignore-unsupported-constraints binds it anyway)."
  wait_until 20 "$name: FailedScheduling" '[ -n "$(event_note '"$name"')" ]'
  [ "$(event_note "$name")" = "$want" ] || fail "$name: FailedScheduling says '$(event_note "$name")'"
  wait_until 10 "$name: PodScheduled=False" '[ "$(condition '"$name"')" = "False/Unschedulable/$want" ]'
  [ -z "$(node_of "$name")" ] || fail "$name was bound to $(node_of "$name")"
  pass "$name: pending, FailedScheduling names $field"
done
sleep 2  # a late bind would show now
for c in "${cases[@]}"; do
  IFS='|' read -r name _ <<<"$c"
  [ -z "$(node_of "$name")" ] || fail "$name was bound to $(node_of "$name") after all"
done
grep -q 'Successfully bound pod to node.*pod="'"$NS"'/plain"' "$TEST_TMP/toy.log" || fail "plain not bound by toy-scheduler"
pass "every pod with an unsupported constraint stays pending"

# The old behaviour, for drills that rely on it: bound as if unconstrained.
kill -TERM "$TOY_PID"
wait "$TOY_PID" || true
start_toy "$TEST_TMP/toy-ignore.log" -v=2 --ignore-unsupported-constraints
for c in "${cases[@]}"; do
  IFS='|' read -r name _ <<<"$c"
  wait_until 20 "$name bound with --ignore-unsupported-constraints" '[ -n "$(node_of '"$name"')" ]'
done
pass "--ignore-unsupported-constraints: all bound"
