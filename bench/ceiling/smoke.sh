#!/usr/bin/env bash
# Smoke run of the benchmark harness, for `./dev test` (suite integration):
# 20 nodes, 50 pods, one run, toy-scheduler and the bind ceiling in both
# workloads (SchedulingBasic and backlog) and both settings (shared and
# dedicated CPUs); then, SchedulingBasic and shared only, the contenders
# started from a config file (kube-scheduler's command and toy-scheduler
# reading the same "every node scored" file), the client-go reference, and
# a small scale run (20 nodes, 200 pods placed, 50 pending). It
# checks that bench/run.py runs end to end, every pod gets bound and the
# report is written - into a temp dir, never into the repository - and that
# a run stopped between groups goes on where it stopped. No figure
# is judged: benchmarks are not tests.
set -euo pipefail
: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"

out=$(mktemp -d /tmp/toysched-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# In two sittings, as a long default run is measured: --budget stops it after
# its first group (exit 3), the same command measures the other three.
args=(--nodes 20 --pods 50 --runs 1 --contenders toy,ceiling --latency-rate 20,40 --latency-pods 20 --scale 0
  --out "$out" --progress "$out/progress")
rc=0
python3 "$TOYSCHED_ROOT/bench/run.py" "${args[@]}" --budget 0.0001 2>"$out/sitting1.err" || rc=$?
[ "$rc" = 3 ] || { cat "$out/sitting1.err" >&2; fail "the first sitting exited $rc, not 3"; }
[ ! -e "$out/RESULTS.md" ] || fail "a stopped run wrote RESULTS.md"
grep -q "3 of 4 groups left" "$out/sitting1.err" || fail "the first sitting did not stop after one group"
python3 "$TOYSCHED_ROOT/bench/run.py" "${args[@]}" 2>"$out/sitting2.err" ||
  { cat "$out/sitting2.err" >&2; fail "bench/run.py failed (exit $?)"; }
grep -q "1 of 4 groups measured" "$out/sitting2.err" || fail "the second sitting did not resume"
grep -q "in 2 sittings" "$out/RESULTS.md" || fail "RESULTS.md does not say the run took two sittings"
! grep -q '^### The targets, judged by this run' "$out/RESULTS.md" || fail "targets judged without kube-scheduler"
[ -z "$(ls -A "$out/progress")" ] || fail "a finished run left its progress behind"

[ -s "$out/RESULTS.md" ] || fail "no RESULTS.md"
grep -q '^| toy-scheduler |' "$out/RESULTS.md" || fail "no toy-scheduler row in RESULTS.md"
grep -q '^| bind ceiling (our client) |' "$out/RESULTS.md" || fail "no bind ceiling row in RESULTS.md"
grep -q 'latency p50 / p99 at 40/s' "$out/RESULTS.md" || fail "no column for the 40/s latency phase"
grep -q '^### 20 nodes, SchedulingBasic: 20 initial pods placed, then 50 measured pods' "$out/RESULTS.md" ||
  fail "no SchedulingBasic table"
grep -q '^### 20 nodes, backlog: 50 pods pending' "$out/RESULTS.md" || fail "no backlog table"
python3 - "$out/sched-results.json" <<'PY' || fail "sched-results.json does not show every pod bound"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"]
assert sorted((r["workload"], r["setting"], r["contender"]) for r in rs) == [
    (w, s, c) for w in ("backlog", "basic") for s in ("dedicated", "shared") for c in ("ceiling", "toy")], rs
for r in rs:
    assert "error" not in r, r
    assert r["bound"] == 50 and r["complete"], r
    if r["workload"] == "basic":  # the latency phases run in the first workload only
        assert sorted(r["latency"]) == ["20", "40"] and all(v["pods"] == 20 for v in r["latency"].values()), r
        # the initial pods (one a node at 20 nodes) were placed first; creation was inside the window
        assert r["init_pods"] == 20 and r["create_s"] > 0 and r["first_bind_after_start_s"] > 0, r
        assert r["apiserver"]["requests"].get("POST pods", 0) >= 50, r["apiserver"]
        # ... and done, events included, before it opened: none of their events is counted in it
        if r["contender"] == "toy":
            assert r["init_events_after_binds_s"] >= 0, r
    else:
        assert "latency" not in r, r
    # the machine's busy time holds the contender's and the lab's
    assert r["machine_cpu_s"] > 0 and r["other_cpu_s"] is not None, r
    assert r["cpu_s"] is not None and r["peak_rss_mib"], r
    # the API server's own counters: at least one binding per pod
    assert r["apiserver"]["requests"].get("POST pods binding", 0) >= 50, r["apiserver"]
    assert r["requests_per_pod"] >= 1, r
    if r["setting"] == "dedicated":
        assert r["lab_cpus"] and r["contender_cpus"] and not set(r["lab_cpus"]) & set(r["contender_cpus"]), r
    if r["contender"] == "toy":
        # the whole job waited for the Scheduled events: never shorter than the binds
        assert r["job_s"] >= r["drain_s"] and r["events_after_binds_s"] >= 0, r
        # one event per measured pod in the window, the initial pods' outside it (SchedulingBasic)
        assert r["apiserver"]["requests"].get("POST events", 0) == 50, r["apiserver"]
PY
if command -v gnuplot >/dev/null; then
  [ -s "$out/throughput.png" ] || fail "gnuplot is installed but no throughput.png"
  [ -s "$out/latency.png" ] || fail "gnuplot is installed but no latency.png"
fi

# The initial pods are done, events included, before the window opens: with
# 300 of them (their binds take long enough for toy-scheduler to hold their
# events), not one of their events may be counted among the measured pods'.
out3=$out/initial-events
python3 "$TOYSCHED_ROOT/bench/run.py" --nodes 20 --pods 50 --init-pods 300 --runs 1 --contenders toy --settings shared \
  --workloads basic --latency-rate 0 --scale 0 --out "$out3" --progress "$out3/progress" ||
  fail "bench/run.py with 300 initial pods failed (exit $?)"
python3 - "$out3/sched-results.json" <<'PY' || fail "the initial pods' events were counted in the window"
import json, sys
[r] = json.load(open(sys.argv[1]))["results"]
assert "error" not in r and r["bound"] == 50 and r["complete"] and r["init_pods"] == 300, r
assert r["apiserver"]["requests"].get("POST events", 0) == 50, r["apiserver"]
PY

out2=$out/config-file-contenders
python3 "$TOYSCHED_ROOT/bench/run.py" --nodes 20 --pods 50 --runs 1 --settings shared --workloads basic \
  --contenders toy-all-nodes,kube-scheduler-all-nodes,client-go --latency-rate 20 --latency-pods 20 \
  --scale 20:200:50 --out "$out2" --progress "$out2/progress" || fail "bench/run.py with the config-file contenders failed (exit $?)"
grep -q "^| kube-scheduler, toy's plugins, every node scored |" "$out2/RESULTS.md" || fail "no matched row"
grep -q "^### Scale: 20 nodes, 200 pods placed, 50 pending" "$out2/RESULTS.md" || fail "no scale table"
grep -q "^| toy-scheduler's peak RSS ≤ 1 GiB (21) | shared | [0-9]* MiB | \*\*met\*\* |" "$out2/RESULTS.md" ||
  fail "the scale run's RSS target is not judged"
grep -q "^toy-scheduler, every node scored / kube-scheduler, toy's plugins, every node scored (shared, basic, paired" \
  "$out2/RESULTS.md" || fail "no paired ratio of the two every-node contenders"
python3 - "$out2/sched-results.json" <<'PY' || fail "the config-file contenders did not bind every pod"
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
assert sorted(r["contender"] for r in rs) == ["client-go", "kube-scheduler-all-nodes", "toy-all-nodes"], rs
for r in rs:
    assert "error" not in r and r["bound"] == 50 and r["complete"], r
    # every one of them posts a Binding and an event per pod
    assert r["apiserver"]["requests"].get("POST pods binding", 0) >= 50, r["apiserver"]
    assert r["apiserver"]["requests"].get("POST events", 0) >= 50, r["apiserver"]
    if r["contender"] == "toy-all-nodes":  # its initial pods' held events came before the window
        assert r["apiserver"]["requests"]["POST events"] == 50, r["apiserver"]
    # latency phases for the references and the schedulers as users run them only
    assert ("latency" in r) == (r["contender"] == "client-go"), r
    if r["contender"] == "client-go":
        assert r.get("client_go_errors") == 0, r
# the scale run: both schedulers placed the pending pods beside the placed ones, and their own
# decision histograms were read (toy-scheduler's plain /metrics, kube-scheduler's secure port)
scale = json.load(open(sys.argv[1]))["scale"]
assert sorted(r["contender"] for r in scale) == ["kube-scheduler", "toy"], scale
for r in scale:
    assert "error" not in r and r["bound"] == 50 and r["complete"], r
    assert r["decisions"] >= 50 and r["decision_us"] > 0 and r["projected_rss_mib"] > r["peak_rss_mib"], r
PY
if command -v gnuplot >/dev/null; then  # labels with an apostrophe ("toy's plugins") once broke gnuplot's quoting
  [ -s "$out2/throughput.png" ] && [ -s "$out2/latency.png" ] || fail "no plots for the config-file contenders"
fi
echo "ok: harness ran end to end (toy-scheduler, the ceiling, the config-file contenders and client-go bound 50/50)"
