#!/usr/bin/env bash
# The recovery drill, deterministic: --crash-at=bind.post:10 in a 30-pod
# burst exits 2 with the task dump; the pods left unbound are those whose
# binds had not completed; after a restart all 30 are bound, none twice.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
# Create the pods first, scheduler off, so the burst is all pending at once.
deployment burst 30 toy-scheduler
wait_until 20 "30 pods" '[ "$(count_pods app=burst)" = 30 ]'

rc=0
"$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --metrics-bind-address=127.0.0.1:0 --secure-port=0 -v=3 \
  --crash-at=bind.post:10 >"$TEST_TMP/first.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "exit status $rc, expected 2"
grep -q '^crash-at: bind.post:10 reached by task' "$TEST_TMP/first.log" || fail "no crash-at line"
grep -q '\] schedule[, ]' "$TEST_TMP/first.log" || fail "the dump has no schedule task"
parked=$(grep -c '\] bind/.* at bind.post ' "$TEST_TMP/first.log" || true)
((parked >= 1)) || fail "no bind task parked at bind.post in the dump"
grep -q '^native backtrace:' "$TEST_TMP/first.log" || fail "no backtrace"
pass "exit 2; dump with the schedule task and $parked bind tasks at bind.post"

sleep 1
crashed=$(grep '^task .*bind/.* at bind.post' "$TEST_TMP/first.log" | awk -v id="$(sed -n 's/^crash-at: bind.post:10 reached by task //p' "$TEST_TMP/first.log")" '$2 == id' |
  grep -o 'bind/[^ ]*' | sed 's|bind/||')
attempted=$(grep -o 'Attempting to bind pod to node" pod="[^"]*"' "$TEST_TMP/first.log" | sed 's/.*pod="//; s/"$//' | sort -u || true)
succeeded=$(grep -o 'Successfully bound pod to node" pod="[^"]*"' "$TEST_TMP/first.log" | sed 's/.*pod="//; s/"$//' | sort -u || true)
bound=$(k -n "$NS" get pods -l app=burst -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk 'NF == 2 {print $1}' | sort)
echo "attempted $(grep -c . <<<"$attempted"), confirmed $(grep -c . <<<"$succeeded" || true), bound on the server $(grep -c . <<<"$bound" || true), crashed before posting: $crashed"
# Every bind we saw succeed is bound; nothing we never posted is bound; the
# crashed one was never posted.
if comm -23 <(grep . <<<"$succeeded" || true) <(echo "$bound") | grep -q .; then fail "a confirmed bind is not bound"; fi
if comm -13 <(echo "$attempted") <(echo "$bound") | grep .; then fail "a pod we never tried to bind is bound"; fi
[ -n "$crashed" ] && ! grep -qx "$crashed" <<<"$bound" || fail "the pod whose bind crashed is bound: $crashed"
left=$((30 - $(grep -c . <<<"$bound" || true)))
pass "$left pods left unbound: exactly those whose binds had not completed"

start=$(now_ms)
start_toy "$TEST_TMP/second.log" -v=2
wait_until 30 "all 30 bound" '[ "$(bound_count app=burst)" = 30 ]'
echo "catch-up: the last pod bound $(( $(now_ms) - start )) ms after the restart"
cat "$TEST_TMP/first.log" "$TEST_TMP/second.log" | grep 'Successfully bound' | grep -o 'pod="[^"]*"' | sort | uniq -d >"$TEST_TMP/dups"
[ ! -s "$TEST_TMP/dups" ] || fail "bound twice: $(cat "$TEST_TMP/dups")"
pass "after the restart all 30 bound, none twice"
check_no_overcommit
