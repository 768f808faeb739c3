#!/usr/bin/env bash
# What a task's exception does (issue 13 item 9), with --throw-at injecting
# one at an await point of the real binary on a real lab:
#  - a bind that throws is logged and counted (toysched_task_failures_total)
#    and its pod is retried and bound; the scheduler goes on;
#  - the scheduling loop that throws is a dead scheduler: /healthz fails and
#    the process exits non-zero (2), so a standby or a restart takes over.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2 --controllers

start_toy "$TEST_TMP/bind.log" -v=2 --throw-at=bind.post:2
port=$(toy_port "$TEST_TMP/bind.log")
deployment five 5 toy-scheduler
wait_until 30 "5 bound" '[ "$(bound_count app=five)" = 5 ]'
grep -q '"Task failed" task="bind/.*--throw-at: injected fault at bind.post:2' "$TEST_TMP/bind.log" ||
  fail "no log line for the bind that threw"
n=$(curl -s "http://127.0.0.1:$port/metrics" | grep '^toysched_task_failures_total{task="bind"}' | awk '{print $2}')
[ "$n" = 1 ] || fail "toysched_task_failures_total{task=\"bind\"} is '$n', want 1"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$code" = 200 ] || fail "/healthz $code after a bind failed"
kill -0 "$TOY_PID" || fail "the scheduler died of a bind's exception"
pass "a bind that threw: logged, counted, retried; all 5 bound, /healthz 200"
kill -TERM "$TOY_PID"
wait "$TOY_PID" || true

deployment more 3 toy-scheduler
rc=0
timeout 30 "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --metrics-bind-address=127.0.0.1:0 --secure-port=0 -v=2 \
  --throw-at=schedule.pop:2 >"$TEST_TMP/schedule.log" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "exit status $rc after the scheduling loop threw, want 2: $(tail -n3 "$TEST_TMP/schedule.log")"
grep -q '"Critical task failed; the scheduler cannot go on" task="schedule"' "$TEST_TMP/schedule.log" ||
  fail "no line naming the dead task: $(tail -n3 "$TEST_TMP/schedule.log")"
pass "the scheduling loop threw: exit 2 at once, the dead task named in the log"
