#!/usr/bin/env bash
# Smoke run of the benchmark harness, for `./dev test` (suite integration):
# 20 nodes, 50 pods, one run, toy-scheduler and the bind ceiling only. It
# checks that bench/run.py runs end to end, every pod gets bound and the
# report is written - into a temp dir, never into the repository. No figure
# is judged: benchmarks are not tests.
set -euo pipefail
: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"

out=$(mktemp -d /tmp/toysched-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$TOYSCHED_ROOT/bench/run.py" --nodes 20 --pods 50 --runs 1 --contenders toy,ceiling \
  --latency-rate 20 --latency-seconds 2 --out "$out" || fail "bench/run.py failed (exit $?)"

[ -s "$out/RESULTS.md" ] || fail "no RESULTS.md"
grep -q '^| toy-scheduler |' "$out/RESULTS.md" || fail "no toy-scheduler row in RESULTS.md"
grep -q '^| bind ceiling |' "$out/RESULTS.md" || fail "no bind ceiling row in RESULTS.md"
python3 - "$out/sched-results.json" <<'PY' || fail "sched-results.json does not show every pod bound"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"]
assert len(rs) == 2, rs
for r in rs:
    assert "error" not in r, r
    assert r["bound"] == 50 and r["complete"], r
    assert r["latency_pods"] == 40, r
    assert r["cpu_s"] is not None and r["peak_rss_mib"], r
PY
if command -v gnuplot >/dev/null; then
  [ -s "$out/throughput.png" ] || fail "gnuplot is installed but no throughput.png"
fi
echo "ok: harness ran end to end (toy-scheduler and the ceiling bound 50/50)"
