#!/usr/bin/env bash
# 3 nodes of 4 CPU, 30 pods of 500m: exactly 24 bound, 6 Pending with
# FailedScheduling and PodScheduled=False; a 4th node takes the 6 within 5 s.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
start_toy "$TEST_TMP/toy.log" -v=4

deployment fat 30 toy-scheduler 500m
wait_until 10 "30 pods" '[ "$(count_pods app=fat)" = 30 ]'
wait_until 10 "24 bound" '[ "$(bound_count app=fat)" = 24 ]'
sleep 1
[ "$(bound_count app=fat)" = 24 ] || fail "more than 24 bound: $(bound_count app=fat)"
pass "exactly 24 bound"

want="0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
pending=$(unbound app=fat)
[ "$(grep -c . <<<"$pending")" = 6 ] || fail "pending: $pending"
failed_pods() {
  k -n "$NS" get events --field-selector reason=FailedScheduling \
    -o jsonpath='{range .items[*]}{.regarding.name}{.involvedObject.name}{"\n"}{end}' | sort -u | grep -c .
}
wait_until 10 "FailedScheduling events for the 6" '[ "$(failed_pods)" = 6 ]'
for p in $pending; do
  note=$(k -n "$NS" get events --field-selector "reason=FailedScheduling" -o json |
    python3 -c "import json,sys; e=[x for x in json.load(sys.stdin)['items'] if (x.get('regarding') or x.get('involvedObject'))['name']=='$p']; print((e[-1].get('note') or e[-1].get('message')) if e else '')")
  [ "$note" = "$want" ] || fail "$p: FailedScheduling says '$note'"
  cond=$(k -n "$NS" get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}/{.status.conditions[?(@.type=="PodScheduled")].message}')
  [ "$cond" = "False/Unschedulable/$want" ] || fail "$p: PodScheduled is $cond"
done
pass "6 pending: FailedScheduling '$want', PodScheduled=False Unschedulable"

k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: lab-node-4, labels: {kubernetes.io/hostname: lab-node-4}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok}]
YAML
start=$(now_ms)
wait_until 5 "the 6 bound on the new node" '[ "$(bound_count app=fat)" = 30 ]'
echo "the 6 bound $(( $(now_ms) - start )) ms after the node was added"
[ "$(spread app=fat | awk '$2 == "lab-node-4" {print $1}')" = 6 ] || fail "$(spread app=fat)"
pass "a 4th node took the 6"
check_no_overcommit
pass "no node over-committed"
