#!/usr/bin/env bash
# A 20-replica Deployment for toy-scheduler on 3 nodes: all bound within 5 s,
# spread 6/7/7, one Scheduled event each.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
start_toy "$TEST_TMP/toy.log" -v=2

deployment web 20 toy-scheduler
wait_until 10 "20 pods created" '[ "$(count_pods app=web)" = 20 ]'
start=$(now_ms)
wait_until 5 "20 pods bound" '[ "$(bound_count app=web)" = 20 ]'
echo "all 20 bound $(( $(now_ms) - start )) ms after the last was created"
got=$(spread app=web | awk '{print $1}' | sort | tr '\n' ' ')
[ "$got" = "6 7 7 " ] || fail "spread is $got: $(spread app=web)"
pass "spread 6/7/7"

events=$(k -n "$NS" get events --field-selector reason=Scheduled -o jsonpath='{range .items[*]}{.regarding.name}{.involvedObject.name}{"\n"}{end}' | sort)
[ "$(grep -c . <<<"$events")" = 20 ] || fail "Scheduled events: $(grep -c . <<<"$events")"
[ "$(uniq <<<"$events" | grep -c .)" = 20 ] || fail "a pod has two Scheduled events"
pod=pod/$(k -n "$NS" get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
k -n "$NS" describe "$pod" | grep -q "Scheduled .*toy-scheduler .*Successfully assigned $NS/${pod#pod/} to lab-node-" ||
  fail "describe pod does not show the Scheduled event: $(k -n "$NS" describe "$pod" | tail -5)"
pass "one Scheduled event per pod, as kubectl describe shows it"

[ "$(grep -c 'Successfully bound pod to node' "$TEST_TMP/toy.log")" = 20 ] || fail "bind log lines"
check_no_overcommit
pass "no node over-committed"
