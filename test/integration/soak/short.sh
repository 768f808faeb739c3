#!/usr/bin/env bash
# ./dev soak, short: 1.5 minutes of churn on a period of 30 s (so that every
# pattern of the churn recurs three times), on its own lab. Every invariant
# must hold, and the run must have done what a soak does: pods of every kind
# created, bound and reported, the deployment scaled, nodes deleted and
# created again, samples of every phase in the CSV.
source "$(dirname "$0")/../lib.sh"
RUN=$TEST_TMP/run
rc=0
python3 "$TOYSCHED_ROOT/soak/run.py" 1.5 --period 30 --interval 1 --workdir "$RUN" \
  >"$TEST_TMP/out.txt" 2>"$TEST_TMP/soak.log" || rc=$?
cat "$TEST_TMP/out.txt"
[ "$rc" = 0 ] || fail "the soak exited $rc (run directory: $RUN)"
python3 - "$RUN" <<'PY' || fail "implausible soak results"
import csv, json, sys
run = sys.argv[1]
s = json.load(open(run + "/summary.json"))
rows = list(csv.DictReader(open(run + "/samples.csv")))


def need(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        sys.exit(1)


need(all(c["ok"] for c in s["checks"]) and len(s["checks"]) == 7, "all 7 invariants held")
# The lab's API server chooses HTTP/2: the binds' connection is open from the
# start, its reader counted apart from the tasks.
peak_h2 = max(int(r["http2_connections"]) for r in rows)
need(1 <= peak_h2 <= 5, "HTTP/2 connections seen: at most %s at once" % peak_h2)
need(85 <= s["churn_s"] <= 100, "churned %.0f s" % s["churn_s"])
ch, p = s["churn"], s["pods"]
need(ch["bare_created"] >= 100 and ch["bare_deleted"] >= 60, "bare pods created / deleted: %d / %d"
     % (ch["bare_created"], ch["bare_deleted"]))
need(ch["scales"] >= 40, "the deployment scaled %d times" % ch["scales"])
need(ch["nodes_deleted"] >= 8 and ch["nodes_created"] >= 3 + 5, "nodes deleted / created: %d / %d"
     % (ch["nodes_deleted"], ch["nodes_created"]))
need(ch["pods_gc_deleted"] >= 1, "pods of deleted nodes deleted: %d" % ch["pods_gc_deleted"])
need(set(p["by_kind"]) == {"bare", "bare-too-big", "bare-churn-node", "deployment"}, "pods of every kind: %s"
     % p["by_kind"])
need(p["created"] >= ch["bare_created"] + 50, "%d pods seen created" % p["created"])
need(p["bound"] >= 0.6 * p["created"] and p["reported_only"] >= ch["bare_created"] // 5 - 15,
     "%d bound, %d reported and never bound" % (p["bound"], p["reported_only"]))
need(p["reasons"].get("Unschedulable", 0) >= 1, "reasons: %s" % p["reasons"])
need(p["binds_logged"] == p["bound"], "binds logged = pods bound = %d" % p["bound"])
phases = {r["phase"] for r in rows}
need(phases == {"baseline", "churn", "settle", "teardown"}, "samples of every phase: %s" % sorted(phases))
need(len([r for r in rows if r["phase"] == "churn"]) >= 60, "%d churn samples" % len(rows))
need(all(int(r["rss_kib"]) > 1000 and int(r["tasks"]) > 3 for r in rows), "RSS and tasks in every sample")
need(max(int(r["pods_live"]) for r in rows) >= 50, "up to %d pods live" % max(int(r["pods_live"]) for r in rows))
PY
pass "soak 1.5 min"
