#!/usr/bin/env bash
# The HTTP endpoints on a live scheduler: /debug/tasks lists the tasks,
# -v changes at run time, /debug/cache shows assumed pods during a burst and
# the same totals as the API server after it, /metrics parses as Prometheus
# text and its counters agree with what the test did.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
# A slow client (20 binds/s) so that the burst has a middle to look at.
start_toy "$TEST_TMP/toy.log" -v=2 --kube-api-qps=20 --kube-api-burst=1
port=$(toy_port "$TEST_TMP/toy.log")
url=http://127.0.0.1:$port
wait_until 10 "ready" '[ "$(curl -s "$url/readyz")" = ok ]'
pass "/readyz ok once the informers synced"
# Ready means ready to bind at once: the bind connection was opened when
# the informers synced, before any pod (connections once waited for the
# first pod, which then waited for 16 TCP + TLS handshakes). The lab's API
# server chooses HTTP/2: one connection carries every bind.
grep -q '"Bind connections open" protocol="HTTP/2" connections=1 ' "$TEST_TMP/toy.log" ||
  fail "/readyz ok but the bind connections are not open: $(grep -E 'synced|Bind conn' "$TEST_TMP/toy.log")"
pass "the bind connections were open before /readyz said ok"

tasks=$(curl -s "$url/debug/tasks")
for t in watch/nodes watch/pods schedule serve/http; do
  grep -q "\] $t at " <<<"$tasks" || fail "/debug/tasks has no parked $t task: $tasks"
done
curl -s "$url/debug/tasks?format=json" | /usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin); assert isinstance(t, (list, dict))' ||
  fail "/debug/tasks?format=json is not JSON"
pass "/debug/tasks lists watch/nodes, watch/pods, schedule, serve/http"

# -v at run time: level 3 lines appear only after PUT /debug/flags/v.
deployment one 1 toy-scheduler 100m
wait_until 10 "one bound" '[ "$(bound_count app=one)" = 1 ]'
! grep -q 'Attempting to schedule pod' "$TEST_TMP/toy.log" || fail "a level-3 line at -v=2"
answer=$(curl -s -X PUT --data 3 "$url/debug/flags/v")
[ "$answer" = "successfully set klog.logging.verbosity to 3" ] || fail "PUT /debug/flags/v: $answer"
deployment two 1 toy-scheduler 100m
wait_until 10 "two bound" '[ "$(bound_count app=two)" = 1 ]'
grep -q "Attempting to schedule pod\" pod=\"$NS/two" "$TEST_TMP/toy.log" || fail "no level-3 line after -v=3"
curl -s -X PUT --data 2 "$url/debug/flags/v" >/dev/null
pass "-v changed at run time changes what is logged"

# /debug/cache: assumed pods during a burst, none after; totals as the server has them.
deployment burst 30 toy-scheduler 100m
seen_assumed=0
for _ in $(seq 100); do
  n=$(curl -s "$url/debug/cache" | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["assumed"]))')
  if ((n > 0)); then seen_assumed=$n; break; fi
  sleep 0.05
done
((seen_assumed > 0)) || fail "never saw an assumed pod in /debug/cache during the burst"
pass "/debug/cache showed $seen_assumed assumed pods mid-burst"
wait_until 30 "burst bound" '[ "$(bound_count app=burst)" = 30 ]'
sleep 1
check_cache_agrees "$url"
pass "after the burst: no assumed pods; requested totals equal the API server's"

# One pod that cannot fit, then /metrics.
deployment huge 1 toy-scheduler 100
wait_until 10 "huge unschedulable" '[ "$(k -n "$NS" get events --field-selector reason=FailedScheduling -o name | wc -l)" -ge 1 ]'
curl -s "$url/metrics" >"$TEST_TMP/metrics.txt"
/usr/bin/python3 - "$TEST_TMP/metrics.txt" <<'PY' || fail "/metrics"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}   # raises on malformed text
def value(name, **labels):
    fam = fams[name]
    for s in fam.samples:
        if s.name.endswith("_total") or s.name == name:
            if all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError((name, labels))
scheduled = value("scheduler_schedule_attempts", result="scheduled")
unschedulable = value("scheduler_schedule_attempts", result="unschedulable")
error = value("scheduler_schedule_attempts", result="error")
assert scheduled == 32, scheduled            # one + two + 30
assert unschedulable >= 1, unschedulable     # huge
assert error == 0, error
count = [s for s in fams["scheduler_scheduling_attempt_duration_seconds"].samples if s.name.endswith("_count")]
assert sum(s.value for s in count) == scheduled + unschedulable + error, count
assert value("scheduler_pending_pods", queue="unschedulable") == 1
assert value("toysched_binds_in_flight") == 0
assert value("toysched_bind_conflicts") == 0
posts = value("toysched_api_requests", verb="POST", code="201")
assert posts >= 32, posts
# Latency by stage: one observation per bound pod in every stage; with 20
# binds/s and no burst, the client's rate limiter is where 30 binds waited.
stages = {}
for s in fams["toysched_pod_scheduling_stage_duration_seconds"].samples:
    if s.name.endswith("_count") or s.name.endswith("_sum"):
        stages.setdefault(s.labels["stage"], {})[s.name.rsplit("_", 1)[1]] = s.value
assert set(stages) == {"decode", "queue", "decide", "slot", "limiter", "connect", "post", "total"}, stages
assert all(v["count"] == scheduled for v in stages.values()), stages
assert stages["limiter"]["sum"] > 0.5, stages["limiter"]           # 30 binds at 20/s: about 1.5 s in all
assert stages["total"]["sum"] >= stages["limiter"]["sum"] + stages["post"]["sum"], stages
print("metrics: scheduled=%d unschedulable=%d error=%d POST 201=%d" % (scheduled, unschedulable, error, posts))
PY
pass "/metrics parses (prometheus_client) and agrees: attempts = scheduled + unschedulable + errors"

# With --leader-elect, the lease task is there too.
start_toy "$TEST_TMP/le.log" -v=2 --leader-elect --leader-elect-identity observer --scheduler-name=observer
le_port=$(toy_port "$TEST_TMP/le.log")
wait_until 10 "lease/renew listed" "curl -s http://127.0.0.1:$le_port/debug/tasks | grep -q 'lease/renew'"
pass "/debug/tasks with --leader-elect lists lease/renew"
check_no_overcommit
