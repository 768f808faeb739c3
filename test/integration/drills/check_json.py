"""Checks a drill's --json output: the invariants, and that every number the
drill reports is present and plausible. Usage: check_json.py DRILL FILE.
Prints one line per check; exit 1 on the first that fails."""
import json
import os
import sys


def need(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)
    print("ok: " + what)


def common(r, drill):
    need(r["drill"] == drill, "the JSON is drill %s's" % drill)
    need(r["ok"] is True and r["exit_code"] == 0 and r["error"] is None,
         "the drill passed (exit %s, error %s)" % (r["exit_code"], r["error"]))
    need(r["checks"] and all(c["ok"] for c in r["checks"]), "every invariant held: %d checks" % len(r["checks"]))
    need(0 < r["duration_s"] < 120, "it took %.1f s (< 2 min)" % r["duration_s"])


def race(r):
    n = r["pods"]
    b = r["binds"]
    c = r["conflicts"]
    need(n == 20, "20 pods")
    need(sum(r["placement"].values()) == n and len(r["placement"]) >= 2,
         "placement covers every pod: %s" % r["placement"])
    need(b["toy-scheduler"] + b["kube-scheduler"] == n, "binds add up: %s" % b)
    for side in ("toy-scheduler", "kube-scheduler"):
        x = c[side]
        need(isinstance(x["lines"], int) and isinstance(x["pods"], int) and x["lines"] >= x["pods"] >= 0,
             "%s conflicts counted: %d lines, %d pods" % (side, x["lines"], x["pods"]))
    # A side loses only pods the other side bound.
    need(c["toy-scheduler"]["pods"] <= b["kube-scheduler"], "our lost races <= their binds")
    need(c["kube-scheduler"]["pods"] <= b["toy-scheduler"], "their lost races <= our binds")
    need(c["kube-scheduler"]["events"] == c["kube-scheduler"]["pods"],
         "their events say what their log says: %d" % c["kube-scheduler"]["events"])
    need(r["win_ratio"] == "%d:%d" % (b["toy-scheduler"], b["kube-scheduler"]), "win ratio " + r["win_ratio"])
    need(r["nodename_hostip_mismatches"] == [] and r["bound_by_both"] == [] and r["overcommitted_nodes"] == [],
         "no nodeName/hostIP mismatch, none bound by both, no over-commit")
    # The kernel's run-queue delay of each side during the burst: read from /proc on the lab's machine
    # (a kernel built without CONFIG_SCHED_INFO keeps none).
    for side in ("toy-scheduler", "kube-scheduler") if os.path.exists("/proc/self/schedstat") else ():
        w = r["cpu_wait"][side]
        need(w is not None and w["ms"] >= 0 and w["slices"] > 0 and w["mean_us"] >= 0,
             "%s's wait for a CPU during the burst: %s" % (side, w))
    # The apiserver's own record (the lab's audit log of bindings): one accepted per pod, and every pod
    # both sides tried is one side's lost race, as the two logs count them.
    o = r["server_order"]
    need(o is not None and o["pods"] == n and o["accepted_per_pod"] == [1],
         "the server accepted one binding per pod: %s" % o)
    need(o["contested"] == c["toy-scheduler"]["pods"] + c["kube-scheduler"]["pods"],
         "contested at the server (%d) = lost races in the two logs (%d + %d)" % (
             o["contested"], c["toy-scheduler"]["pods"], c["kube-scheduler"]["pods"]))
    need(0 <= o["lost_though_ours_first"] <= min(o["ours_first"], c["toy-scheduler"]["pods"])
         and 0 <= o["won_though_theirs_first"] <= c["kube-scheduler"]["pods"]
         and len(o["lost_arrival_gap_ms"]) == c["toy-scheduler"]["pods"],
         "the server's order adds up: %s" % o)


def recovery(r):
    n = r["pods"]
    need(n == 30, "30 pods")
    if r["killed_by"] == "SIGKILL":  # no dump: nothing of it runs after the signal
        need(r["dump_first_line"] is None and r["dump_tasks"] == 0 and r["scheduler_exit_code"] == -9,
             "SIGKILL: no dump, killed by the signal (exit %s)" % r["scheduler_exit_code"])
        need(r["binds_logged_before_kill"] >= 3, "SIGKILL after %d binds" % r["binds_logged_before_kill"])
    else:
        need(r["dump_tasks"] > 0 and sum(r["await_points"].values()) == r["dump_tasks"],
             "the dump's tasks, by await point: %s" % r["await_points"])
        need(r["await_points"].get("watch.read", 0) >= 2, "both watches parked at watch.read")
    need(r["unbound_after_kill"] > 0, "%d pods left unbound" % r["unbound_after_kill"])
    need(r["binds_logged_before_kill"] + r["bound_by_requests_in_flight"] + r["unbound_after_kill"] == n,
         "before + in flight + unbound = %d" % n)
    need(r["bound_after_restart"] == r["unbound_after_kill"], "the restart bound exactly the unbound")
    need(r["catch_up_ms"] is not None and 0 < r["catch_up_ms"] < 60000, "catch-up %s ms" % r["catch_up_ms"])
    need(r["bound_twice"] == [] and r["conflicts_after_restart"] == 0 and r["overcommitted_nodes"] == [],
         "none bound twice, no conflict after the restart, no node over-committed")
    if r["killed_by"].startswith("--crash-at=bind.post"):
        need(r["dump_first_line"].startswith("crash-at: bind.post"), "the dump names the crash point")
        need(r["binds_logged_before_kill"] == 0 and r["await_points"].get("bind.post", 0) >= 1,
             "died with binds decided, none posted")
    elif r["killed_by"] == "SIGQUIT":
        need(r["dump_first_line"] == "SIGQUIT: quit" and r["binds_logged_before_kill"] >= 3,
             "SIGQUIT after %d binds" % r["binds_logged_before_kill"])


def handover(r):
    g, f = r["graceful"], r["forced"]
    lease, retry = r["lease_duration_s"], r["retry_period_s"]
    need(g["holder_before"] != g["holder_after"] and g["holder_after"], "graceful: a new holder")
    need(g["transitions_after"] == g["transitions_before"] + 1, "graceful: transitions +1")
    need(0 <= g["handover_ms"] <= 2000 and g["old_leader_exit_code"] == 0,
         "graceful in %d ms, old leader exit 0" % g["handover_ms"])
    need(f["holder_before"] == g["holder_after"] and f["holder_after"] == g["holder_before"],
         "forced: back to the first holder")
    need(f["transitions_after"] == f["transitions_before"] + 1 == g["transitions_after"] + 1, "forced: transitions +1")
    # The standby takes over once the record has been unchanged for the lease
    # duration, at its next retry (jittered by up to 1.2x): lease + 1.2 x
    # retry, and 1 s for the watch and the API server.
    need((lease - retry - 1) * 1000 <= f["handover_ms"] <= (lease + 1.2 * retry + 1) * 1000,
         "forced in %d ms (lease %gs, retry %gs)" % (f["handover_ms"], lease, retry))
    p = r["gap_pending_ms"]
    need(p and r["gap_pods"] == 5 and 1000 <= p["min"] <= p["max"] <= f["handover_ms"] + 5000,
         "gap pods pending %s ms" % p)
    need(r["overcommitted_nodes"] == [], "no node over-committed")


def double_decision(r):
    n = r["pods_per_burst"]
    need(n == r["capacity_pods"] == 24, "24 pods fill 3 nodes x 4 CPU at 500m")
    for side in ("without_le", "with_le"):
        s = r[side]
        need(sum(s["binds_by_replica"].values()) == s["bound"] and s["bound"] + s["pending"] == n,
             "%s: binds by replica add up to %d bound, %d pending" % (side, s["bound"], s["pending"]))
        need(s["bound_twice"] == [], side + ": no pod bound twice")
        need(sum(x["pods"] for x in s["nodes"].values()) == s["bound"], side + ": per-node pods add up")
    le = r["with_le"]
    need(le["bound"] == n and le["overcommitted_nodes"] == [] and min(le["binds_by_replica"].values()) == 0,
         "with LE: all %d bound by one replica, none over-committed" % n)
    need(1 <= r["rounds_without_le"] <= 5, "%d rounds without LE, %d over-committed" % (
        r["rounds_without_le"], r["rounds_overcommitted_without_le"]))
    over = r["without_le"]["overcommitted_nodes"]
    print("note: without LE, over-committed: %s" % (", ".join(over) or "none in this run"))


if __name__ == "__main__":
    drill, path = sys.argv[1], sys.argv[2]
    r = json.load(open(path))
    common(r, drill)
    {"race": race, "recovery": recovery, "handover": handover, "double-decision": double_decision}[drill](r)
