#!/usr/bin/env bash
# Killed mid-burst (kill -9, a few binds in), it loses nothing: restarted, it
# re-lists and binds the rest; no pod is bound twice. Prints the catch-up time.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
# A slow client (20 requests/s) so that the burst is still going when we kill it.
start_toy "$TEST_TMP/first.log" -v=2 --kube-api-qps=20 --kube-api-burst=1
first=$TOY_PID

deployment burst 30 toy-scheduler
wait_until 20 "a few binds" '[ "$(grep -c "Successfully bound" "$TEST_TMP/first.log")" -ge 3 ]'
kill -KILL "$first"
wait "$first" 2>/dev/null || true
sleep 0.5
left=$((30 - $(bound_count app=burst)))
echo "killed after $(grep -c 'Successfully bound' "$TEST_TMP/first.log") logged binds; $left of 30 pods unbound"
((left > 0)) || fail "the burst was over before the kill; nothing to recover"

start=$(now_ms)
start_toy "$TEST_TMP/second.log" -v=2
wait_until 30 "all 30 bound after restart" '[ "$(bound_count app=burst)" = 30 ]'
echo "catch-up: the last pod bound $(( $(now_ms) - start )) ms after the restart"

cat "$TEST_TMP/first.log" "$TEST_TMP/second.log" | grep 'Successfully bound' | grep -o 'pod="[^"]*"' | sort >"$TEST_TMP/bound"
dups=$(uniq -d "$TEST_TMP/bound")
[ -z "$dups" ] || fail "bound twice: $dups"
! grep -qi 'conflict' "$TEST_TMP/second.log" || fail "the restarted scheduler raced with the dead one: $(grep -i conflict "$TEST_TMP/second.log")"
pass "all 30 bound, none twice"
check_no_overcommit
pass "no node over-committed"
