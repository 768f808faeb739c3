#!/usr/bin/env bash
# The API server turns slow for the leader only (toxiproxy on its connections
# holds every chunk 2 s, so a GET + PUT renew cannot finish within the 3 s
# renew deadline), while its binds wait in the rate limiter. The leader must
# stop sending binds at its last renew + renew deadline, give up the lead and
# exit 1; the standby takes over once the lease expires. Checked against the
# Lease's holder history from both logs (issue 13 item 4): no bind of the old
# leader leaves after the new one acquired the Lease, nor after its own renew
# deadline. (A bind already on the wire when the deadline passes may still
# land later: a Lease is not a fencing token, for kube-scheduler neither.)
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers

LEASE=(--leader-elect --leader-elect-resource-namespace="$NS" --leader-elect-resource-name=slow
  --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s --leader-elect-retry-period=1s)
holder() { k -n "$NS" get lease slow -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }

# The leader-to-be talks to the API server through the proxy.
start_toxiproxy

"$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$TOXI_KCFG" --metrics-bind-address=127.0.0.1:0 --secure-port=0 -v=6 \
  "${LEASE[@]}" --leader-elect-identity=a --kube-api-qps=5 --kube-api-burst=1 >"$TEST_TMP/a.log" 2>&1 &
A_PID=$!
on_exit "kill -KILL $A_PID 2>/dev/null"
wait_until 20 "a leads" '[ "$(holder)" = a ]'
start_toy "$TEST_TMP/b.log" -v=2 "${LEASE[@]}" --leader-elect-identity=b
sleep 1

deployment burst 40 toy-scheduler
wait_until 30 "a binds a few" '[ "$(grep -c "Successfully bound" "$TEST_TMP/a.log")" -ge 3 ]'
for s in upstream downstream; do
  toxi POST /proxies/api/toxics "{\"type\": \"latency\", \"stream\": \"$s\", \"attributes\": {\"latency\": 2000}}" >/dev/null
done
echo "  slow for a from $(date +%T.%N)"

rc=0
timeout 30 tail --pid="$A_PID" -f /dev/null || fail "a still runs 30 s after its API server turned slow"
wait "$A_PID" || rc=$?
[ "$rc" = 1 ] || fail "a exited $rc after losing the lease, want 1: $(tail -n3 "$TEST_TMP/a.log")"
wait_until 20 "b leads" '[ "$(holder)" = b ]'
wait_until 60 "all 40 bound" '[ "$(bound_count app=burst)" = 40 ]'
check_no_overcommit
pass "a gave up the lead and exited 1; b took over and bound the rest"

# The holder history from both logs, and a's binds against it.
python3 - "$TEST_TMP/a.log" "$TEST_TMP/b.log" <<'PY' || fail "a bind of the old leader after it lost the lease"
import re, sys
from datetime import datetime

LINE = re.compile(r'^[IWE](\d{4} \d\d:\d\d:\d\d\.\d{6}) +\d+ \S+\] "([^"]*)"(.*)$')
RENEW_DEADLINE = 3.0


def events(path):
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if m:
            t = datetime.strptime(m.group(1), "%m%d %H:%M:%S.%f").replace(year=datetime.now().year)
            yield t.timestamp(), m.group(2), m.group(3)


a = list(events(sys.argv[1]))
b = list(events(sys.argv[2]))
b_acquired = min(t for t, msg, _ in b if msg == "successfully acquired lease")
renews = sorted(t for t, msg, _ in a if msg in ("successfully acquired lease", "successfully renewed lease"))
attempts = [t for t, msg, _ in a if msg == "Attempting to bind pod to node"]
sends = [t for t, msg, kv in a if msg == "Sending request" and "/binding" in kv]
print("  a: %d bind attempts, %d bind requests sent, %d renews; b acquired at %s"
      % (len(attempts), len(sends), len(renews), datetime.fromtimestamp(b_acquired).time()))
bad = []
for t in attempts + sends:
    if t >= b_acquired:
        bad.append("a bind by a %.3f s after b acquired the lease" % (t - b_acquired))
for t in sends:
    last = max((r for r in renews if r <= t), default=None)
    if last is None or t > last + RENEW_DEADLINE:
        bad.append("a bind sent %.3f s after a's renew deadline" % (t - (last or 0) - RENEW_DEADLINE))
if not sends:
    bad.append("no bind request of a's found at -v=6: nothing was checked")
for x in bad:
    print("  " + x)
sys.exit(1 if bad else 0)
PY
pass "no bind of a's left after its renew deadline or after b acquired the lease"
