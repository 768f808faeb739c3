#!/usr/bin/env bash
# Preemption on a real lab (2 nodes of 4 cpu), with PriorityClasses the API
# server resolves into spec.priority:
#  - preemptionPolicy Never, and a pod of equal priority, preempt nothing,
#    and their FailedScheduling text ends in upstream's preemption sentence;
#  - a high-priority pod preempts the fewest, least important pods: one
#    2-cpu pod on lab-node-2 rather than two 1-cpu pods on lab-node-1; the
#    victim gets DisruptionTarget (PreemptionByScheduler) and a Preempted
#    event, the preemptor status.nominatedNodeName;
#  - while its victim is still terminating (a finalizer holds it), the
#    preemptor evicts nothing more; once the victim is gone it is bound
#    to the node it was nominated to;
#  - a PodDisruptionBudget steers the choice of node: pods it protects are
#    spared where evicting others, though more important, violates none.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2
start_toy "$TEST_TMP/toy.log" -v=2

priority_classes low=10 mid=500 high=1000 never=1000:Never

# held NAME NODE CPU [CLASS [APP]]: a pod of priority class CLASS (default
# low) labelled app=APP, pinned to NODE, that a finalizer keeps in
# Terminating once deleted (so its conditions can be read).
held() {
  { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, finalizers: [toysched.test/hold], labels: {app: %s}}\n' "$1" "$NS" "${5:-none}"
    printf 'spec:\n  schedulerName: toy-scheduler\n  priorityClassName: %s-%s\n' "${4:-low}" "$NS"
    printf '  nodeSelector: {kubernetes.io/hostname: %s}\n' "$2"
    printf '  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "%s"}}}]\n' "$3"
  } | k apply -f - >/dev/null
}
release() { k -n "$NS" patch pod "$1" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true; }
# On exit, whatever is still held goes.
on_exit 'for p in $(k -n "$NS" get pods -o name 2>/dev/null); do k -n "$NS" patch "$p" --type=json -p '"'"'[{"op":"remove","path":"/metadata/finalizers"}]'"'"' >/dev/null 2>&1; done'
# pending NAME CLASS CPU: an unpinned pod of priority class CLASS.
pending() {
  pod "$1" <<<"  priorityClassName: $2-$NS
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: \"$3\"}}}]"
}
deleting() { k -n "$NS" get pods -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}'; }
# one_victim: waits for a pod to be terminating, and then long enough for a
# second one that should not come; sets `victims` to the one pod's name.
one_victim() {
  wait_until 20 "one victim terminating" '[ -n "$(deleting)" ]'
  sleep 2
  victims=$(deleting)
  [ "$(wc -l <<<"$victims")" = 1 ] || fail "more than one victim: $victims"
}

for i in 1 2 3 4; do held "small-$i" lab-node-1 1; done
for i in 1 2; do held "big-$i" lab-node-2 2; done
wait_until 30 "6 low pods bound" '[ "$(bound_count "")" = 6 ]'
pass "lab-node-1: four 1-cpu pods, lab-node-2: two 2-cpu pods, priority 10"

pending never never 1
pending peer low 1
want_never='0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.'
want_peer='0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.'
wait_until 20 "never: its message" '[ "$(scheduled_message never)" = "$want_never" ]'
wait_until 20 "peer: its message" '[ "$(scheduled_message peer)" = "$want_peer" ]'
[ -z "$(deleting)" ] || fail "pods deleted by pods that may not preempt: $(deleting)"
pass "preemptionPolicy Never and equal priority preempt nothing, and say so"
# Gone before the preemptor comes, so that nothing else competes for the room it frees.
k -n "$NS" delete pod never peer --wait=false >/dev/null

pending hi high 2
one_victim
[[ $victims == big-* ]] || fail "the victim is $victims, not a 2-cpu pod on lab-node-2"
pass "one victim, $victims on lab-node-2 (lab-node-1 would have cost two)"

cond=$(k -n "$NS" get pod "$victims" -o jsonpath='{.status.conditions[?(@.type=="DisruptionTarget")].status} {.status.conditions[?(@.type=="DisruptionTarget")].reason} {.status.conditions[?(@.type=="DisruptionTarget")].message}')
[ "$cond" = "True PreemptionByScheduler toy-scheduler: preempting to accommodate a higher priority pod" ] ||
  fail "the victim's DisruptionTarget: '$cond'"
pass "the victim carries DisruptionTarget: $cond"
hi_uid=$(k -n "$NS" get pod hi -o jsonpath='{.metadata.uid}')
note="Preempted by pod $hi_uid on node lab-node-2"
event() { k -n "$NS" get events.events.k8s.io -o jsonpath="{range .items[?(@.reason==\"Preempted\")]}{.regarding.name}|{.note}|{.related.name}{\"\n\"}{end}"; }
wait_until 20 "a Preempted event" '[ "$(event)" = "$victims|$note|hi" ]'
pass "event Preempted on $victims: '$note', related to hi"
wait_until 20 "hi nominated to lab-node-2" '[ "$(k -n "$NS" get pod hi -o jsonpath="{.status.nominatedNodeName}")" = lab-node-2 ]'
pass "hi: status.nominatedNodeName lab-node-2"
grep -q '"Preemptor Pod preempted victim Pod" preemptor="'"$NS"'/hi" victim="'"$NS/$victims"'" node="lab-node-2"' "$TEST_TMP/toy.log" ||
  fail "no log line for the preemption"

# Still held: hi waits, and preempts nothing more, however often it is tried.
[ -z "$(node_of hi)" ] || fail "hi bound while its victim still holds the room"
[ "$(deleting)" = "$victims" ] || fail "more victims while the first is terminating: $(deleting)"
release "$victims"
wait_until 30 "hi bound" '[ -n "$(node_of hi)" ]'
[ "$(node_of hi)" = lab-node-2 ] || fail "hi went to $(node_of hi), not lab-node-2"
[ "$(k -n "$NS" get pods --no-headers | grep -c .)" = 6 ] || fail "pods lost: $(k -n "$NS" get pods --no-headers)"
pass "once $victims is gone, hi is bound to lab-node-2; the other 5 low pods still run"

url=http://127.0.0.1:$(toy_port "$TEST_TMP/toy.log")
attempts=$(metric "$url" scheduler_preemption_attempts_total)
victims_count=$(metric "$url" scheduler_preemption_victims_count)
((attempts >= 3)) || fail "scheduler_preemption_attempts_total $attempts"
[ "$victims_count" = 1 ] || fail "scheduler_preemption_victims_count $victims_count"
pass "metrics: $attempts preemption attempts, 1 preemption with victims"

# A PodDisruptionBudget steers the choice of node. Victims of priority 10 on
# lab-node-1 would go before victims of priority 500 on lab-node-2; with
# lab-node-1's pods under a budget that allows no disruption (no
# disruption controller runs here: status.disruptionsAllowed stays 0),
# evicting there would violate it, so lab-node-2 pays instead.
for p in $(k -n "$NS" get pods -o name); do release "${p#pod/}"; done
k -n "$NS" delete pods --all --grace-period=0 --force >/dev/null 2>&1
wait_until 30 "the namespace emptied" '[ -z "$(k -n "$NS" get pods -o name)" ]'
k apply -f - >/dev/null <<YAML
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: $NS}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: guarded}}
YAML
for i in 1 2; do held "guarded-$i" lab-node-1 2 low guarded; done
for i in 1 2; do held "mid-$i" lab-node-2 2 mid; done
wait_until 30 "4 pods bound" '[ "$(bound_count "")" = 4 ]'
pending hi2 high 2
one_victim
[[ $victims == mid-* ]] || fail "the victim is $victims: the PodDisruptionBudget on lab-node-1's pods was not honoured"
pass "one victim, $victims (priority 500) on lab-node-2: lab-node-1's priority-10 pods are under a PodDisruptionBudget"
release "$victims"
wait_until 30 "hi2 bound" '[ "$(node_of hi2)" = lab-node-2 ]'
pass "hi2 bound to lab-node-2"
