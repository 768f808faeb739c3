# The fault tests (issue 18 item 1): a private lab, a burst of pods pending
# at once, toy-scheduler binding them, a fault in the middle of it, then the
# promise checked: every pod bound exactly once, no node over-committed, the
# scheduler's cache equal to the server's view, and toy-scheduler alive
# throughout and ending cleanly (exit 0 on SIGTERM, no crash in its log).
# Source after lib.sh.

# burst_pods N CPU: N bare toy-scheduler pods p-0..p-(N-1), label app=burst,
# requesting CPU each, created by one kubectl.
burst_pods() {
  python3 - "$NS" "$1" "$2" >"$TEST_TMP/burst.json" <<'PY'
import json, sys
ns, n, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pod = lambda i: {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "p-%d" % i, "namespace": ns, "labels": {"app": "burst"}},
                 "spec": {"schedulerName": "toy-scheduler", "containers": [
                     {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {"requests": {"cpu": cpu}}}]}}
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod(i) for i in range(n)]}))
PY
  k create -f "$TEST_TMP/burst.json" >/dev/null
}

# binds_logged LOG...: the binds toy-scheduler confirmed in its logs.
binds_logged() { cat "$@" | grep -c 'Successfully bound pod to node' || true; }

# wait_mid_burst SECS N TOTAL LOG: until LOG confirms N binds; fails if the
# whole burst (TOTAL) is already bound then: the fault would miss its middle.
wait_mid_burst() {
  local secs=$1 n=$2 total=$3 log=$4
  wait_until "$secs" "$n binds confirmed" "[ \"\$(binds_logged '$log')\" -ge $n ]"
  local done_now
  done_now=$(binds_logged "$log")
  ((done_now < total)) || fail "all $total bound before the fault: no middle to break"
  echo "  fault at $done_now of $total binds confirmed"
}

# check_bound_once TOTAL LOG...: all TOTAL burst pods bound; no pod with two
# confirmed binds in the logs (of every toy-scheduler run); every confirmed
# bind names the node the pod is on. The pods bound without a confirmed
# bind (a bind that landed but whose answer was lost: the watch told the
# scheduler) are listed in $TEST_TMP/unheard.
check_bound_once() {
  local total=$1; shift
  k -n "$NS" get pods -l app=burst -o json >"$TEST_TMP/burst-now.json"
  python3 - "$NS" "$total" "$TEST_TMP/burst-now.json" "$TEST_TMP/unheard" "$@" <<'PY' || fail "not every pod bound exactly once"
import collections, json, re, sys
ns, total, pods_path, unheard_path, logs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
on = {ns + "/" + p["metadata"]["name"]: p["spec"].get("nodeName") for p in json.load(open(pods_path))["items"]}
BOUND = re.compile(r'"Successfully bound pod to node" pod="([^"]+)" node="([^"]+)"')
binds = [m.groups() for path in logs for m in BOUND.finditer(open(path, errors="replace").read())]
binds = [(p, n) for p, n in binds if p.startswith(ns + "/")]
twice = [p for p, c in collections.Counter(p for p, _ in binds).items() if c > 1]
wrong = ["%s: logged on %s, is on %s" % (p, n, on.get(p)) for p, n in binds if on.get(p) != n]
unbound = [p for p, n in on.items() if not n]
ok = len(on) == total and not unbound and not twice and not wrong
unheard = sorted(set(p for p, n in on.items() if n) - set(p for p, _ in binds))
open(unheard_path, "w").write("".join(p + "\n" for p in unheard))
print("%d pods, %d bound, %d confirmed binds in the logs, %d bound without one (answer lost, seen on the watch)"
      % (len(on), len(on) - len(unbound), len(binds), len(unheard)))
for what, items in (("unbound", unbound), ("bound twice", twice), ("wrong node", wrong)):
    if items:
        print("%s (%d): %s" % (what, len(items), ", ".join(sorted(items)[:10])))
sys.exit(0 if ok else 1)
PY
}

# check_promise TOTAL URL LOG...: after a fault, the whole promise (see the
# top), TOY_PID being the scheduler that runs now and URL its HTTP address.
check_promise() {
  local total=$1 url=$2; shift 2
  check_bound_once "$total" "$@"
  pass "all $total pods bound, none twice, each on the node its bind named"
  check_no_overcommit
  pass "no node over-committed"
  sleep 1 # the last watch events reach the cache
  check_cache_agrees "$url"
  pass "toy-scheduler's cache agrees with the API server"
  kill -0 "$TOY_PID" 2>/dev/null || fail "toy-scheduler is not running"
  signal_and_wait TERM "$TOY_PID"
  [ "$EXIT_STATUS" = 0 ] || fail "toy-scheduler exited $EXIT_STATUS on SIGTERM"
  if grep -E '^F[0-9]{4} |terminate called|Sanitizer|Segmentation|Aborted|Task failed|Critical task failed' "$@"; then
    fail "a crash or a failed task in toy-scheduler's log"
  fi
  pass "toy-scheduler ran throughout and exited 0 on SIGTERM"
}
