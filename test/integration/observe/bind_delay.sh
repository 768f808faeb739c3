#!/usr/bin/env bash
# --bind-delay (seed 000's "Ctrl-\ mid-burst" by hand): each bind waits that
# long before its POST, at the await point bind.delay, which a SIGQUIT dump
# taken then shows. Without the flag a bind on the lab takes milliseconds.
source "$(dirname "$0")/../lib.sh"
use_shared_lab
start_toy "$TEST_TMP/toy.log" -v=3 --bind-delay=3s --dump-dir="$TEST_TMP"
attempts() { grep -c "Attempting to bind" "$TEST_TMP/toy.log" || true; }

deployment slow 4 toy-scheduler
wait_until 30 "4 binds attempted" '[ "$(attempts)" -ge 4 ]'
[ "$(bound_count app=slow)" = 0 ] || fail "a pod was bound at once despite --bind-delay=3s"
sleep 1
[ "$(bound_count app=slow)" = 0 ] || fail "a pod was bound within 1 s of its attempt despite --bind-delay=3s"
wait_until 15 "the 4 pods bound after the delay" '[ "$(bound_count app=slow)" = 4 ]'

deployment dump 4 toy-scheduler
wait_until 30 "4 more binds attempted" '[ "$(attempts)" -ge 8 ]'
kill -QUIT "$TOY_PID"
wait "$TOY_PID" || true
dump=$TEST_TMP/toy-scheduler-dump-$TOY_PID.txt
[ -s "$dump" ] || fail "no dump file $dump"
delayed=$(grep -cE "^task [0-9]+ \[waiting [0-9]+ms\] bind/$NS/dump-[^ ]* at bind\.delay \(" "$dump" || true)
[ "$delayed" -ge 1 ] || fail "no bind of the second burst at bind.delay in the dump: $(grep '^task' "$dump")"
pass "binds wait --bind-delay before the POST; the SIGQUIT dump shows $delayed at bind.delay"
