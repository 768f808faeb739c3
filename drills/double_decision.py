"""double-decision: the API server stops double binds, not double decisions.

The "sharp" answer of seed 002, step 1. Two toy-scheduler replicas WITHOUT
leader election take a burst sized to fill the nodes exactly (their free
CPU divided by --cpu; 3 lab nodes x 4 CPU = 24 pods of 500m), created in one
request so that both decide at once. Each replica counts its own assumed
pods and not the other's, so both can place a pod on a node that had room
for one: no pod is bound twice, yet the node is over-committed. The race is
a race: it may not happen in a given round, so up to --rounds rounds are run
(stopping at the first over-commit) and what happened is reported as is.
Then the same burst with leader election on (one replica decides): there no
node may be over-committed, and that is the invariant that fails the drill.
"""
import collections
import json
import signal
import time

import kit

LAB_FLAGS = []


def add_args(p):
    p.add_argument("--cpu", default="500m", help="each pod's CPU request (default 500m)")
    p.add_argument("--pods", type=int, help="pods per burst (default: exactly what the nodes' free CPU holds)")
    p.add_argument("--extra", type=int, default=0, help="pods beyond that (default 0)")
    p.add_argument("--rounds", type=int, default=5,
                   help="bursts without leader election, stopping at the first over-commit (default 5)")
    p.add_argument("--live", action="store_true",
                   help="submit the burst to running replicas (default: both are paused with SIGSTOP while the "
                        "burst is created and resumed together, so that both decide on the same backlog at once)")
    p.add_argument("--scheduler-name", default="toy-scheduler-drill",
                   help="the replicas' scheduler name and the pods' schedulerName (default toy-scheduler-drill)")


def capacity(t, cpu):
    """Pods of `cpu` that the schedulable nodes' free CPU holds, per node."""
    req = kit.quantity(cpu)
    out = {}
    for name, u in kit.node_usage(t).items():
        if not u["schedulable"]:
            continue
        free_cpu = u["allocatable"].get("cpu", 0) - u["requested"].get("cpu", 0)
        free_pods = u["allocatable"].get("pods", 0) - u["pods"]
        out[name] = max(0, min(int(free_cpu // req), int(free_pods)))
    return out


def burst(t, prefix, n, cpu, scheduler):
    items = [{"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "%s-%02d" % (prefix, i), "namespace": t.ns, "labels": t.labels(prefix)},
              "spec": t.pod_spec(scheduler, cpu)} for i in range(n)]
    t.k("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def settle(t, app, n):
    """Wait until the number of bound pods has not changed for 2 s."""
    last, since, deadline = -1, kit.now(), kit.now() + 40
    while kit.now() < deadline:
        b = t.bound(app)
        if b != last:
            last, since = b, kit.now()
        elif kit.now() - since >= 2.0 and b > 0:
            return b
        time.sleep(0.25)
    raise kit.DrillError("pods of %s still being bound after 40 s" % app)


def delete(t, app):
    t.k("-n", t.ns, "delete", "pods", "-l", "app=" + app, "--wait=false")
    kit.wait_until(60, "pods of %s gone" % app, lambda: not t.pods(app), 0.3)


def one_burst(t, app, n, cpu, scheduler, reps, live):
    """Submit, settle, and say where each replica put its pods."""
    offsets = {r.name: len(r.log()) for r in reps}
    if live:
        burst(t, app, n, cpu, scheduler)
    else:
        # Both replicas see the whole burst at the same instant, as two
        # replicas that start on a backlog do: each decides every pod against
        # its own cache before the other's binds can show in it. The pause is
        # short (well under the renew deadline).
        for r in reps:
            r.send(signal.SIGSTOP)
        try:
            burst(t, app, n, cpu, scheduler)
            time.sleep(0.3)
        finally:
            for r in reps:
                r.send(signal.SIGCONT)
    bound = settle(t, app, n)
    usage = kit.node_usage(t)
    by = {}
    for r in reps:
        by[r.name] = collections.Counter(kit.binds_in(r.log()[offsets[r.name]:], t.ns).values())
    binds = [p for r in reps for p in kit.binds_in(r.log()[offsets[r.name]:], t.ns)]
    return {"bound": bound, "pending": n - bound, "usage": usage, "by": by,
            "bound_twice": sorted(p for p, c in collections.Counter(binds).items() if c > 1),
            "over": sorted(k for k, u in usage.items() if u["over"])}


def node_row(u):
    return "%s/%s" % (kit.cpu_str(u["requested"].get("cpu", 0)), kit.cpu_str(u["allocatable"].get("cpu", 0)))


def rounds_without_le(t, args, n, name):
    """Two replicas without leader election, both synced before each burst;
    a burst a round until one over-commits a node or the rounds run out.
    Returns (every round, the last round, the replicas)."""
    reps = [t.toy("no-le-a", "--scheduler-name=" + name), t.toy("no-le-b", "--scheduler-name=" + name)]
    for r in reps:
        r.wait_ready()
    rounds = []
    for i in range(1, args.rounds + 1):
        app = "dd-%d" % i
        r = one_burst(t, app, n, args.cpu, name, reps, args.live)
        rounds.append(r)
        kit.progress("round %d without leader election: %d bound (%s), over-committed: %s" % (
            i, r["bound"], " + ".join("%s %d" % (k, sum(v.values())) for k, v in r["by"].items()),
            ", ".join(r["over"]) or "none"))
        if r["over"] or i == args.rounds:
            no_le = r
            break
        delete(t, app)
    delete(t, "dd-%d" % len(rounds))
    for r in reps:
        r.stop()
    return rounds, no_le, reps


def burst_with_le(t, args, n, name):
    """The same burst with leader election: one replica decides.
    Returns (the burst, the replicas)."""
    lease = name + "-dd"
    flags = ["--scheduler-name=" + name, "--leader-elect", "--leader-elect-resource-namespace=" + t.ns,
             "--leader-elect-resource-name=" + lease]
    t.on_close(lambda: t.on_lab or t.k("-n", t.ns, "delete", "lease", lease, "--ignore-not-found", check=False))
    le = [t.toy("le-a", *flags, "--leader-elect-identity=le-a"), t.toy("le-b", *flags, "--leader-elect-identity=le-b")]
    for r in le:
        r.wait_ready()
    kit.wait_until(30, "a leader", lambda: "successfully acquired lease" in le[0].log() + le[1].log(), 0.1)
    with_le = one_burst(t, "dd-le", n, args.cpu, name, le, args.live)
    kit.progress("with leader election: %d bound, over-committed: %s"
                 % (with_le["bound"], ", ".join(with_le["over"]) or "none"))
    delete(t, "dd-le")
    for r in le:
        r.stop()
    return with_le, le


def node_rows(no_le, reps, with_le, le):
    """A row a node: each side's binds by replica, CPU requested/allocatable, fits or OVER."""
    rows = []
    for node in sorted(set(no_le["usage"]) | set(with_le["usage"])):
        a, b = (no_le["by"][r.name].get(node, 0) for r in reps)
        la, lb = (with_le["by"][r.name].get(node, 0) for r in le)
        ua, ub = no_le["usage"][node], with_le["usage"][node]
        rows.append([node, "%d + %d" % (a, b), node_row(ua), "OVER" if ua["over"] else "ok",
                     "%d + %d" % (la, lb), node_row(ub), "OVER" if ub["over"] else "ok"])
    return rows


def summary(r, reps):
    """One side's burst for --json."""
    return {"bound": r["bound"], "pending": r["pending"], "overcommitted_nodes": r["over"],
            "bound_twice": r["bound_twice"],
            "binds_by_replica": {x.name: sum(r["by"][x.name].values()) for x in reps},
            "nodes": {k: {"cpu_requested": float(u["requested"].get("cpu", 0)),
                          "cpu_allocatable": float(u["allocatable"].get("cpu", 0)), "pods": u["pods"],
                          "placed_by": {x.name: r["by"][x.name].get(k, 0) for x in reps}}
                      for k, u in r["usage"].items()}}


def run(t, args, res):
    name = args.scheduler_name
    t.check_cluster_wide_read()
    if not t.on_lab:
        kit.progress("note: without leader election this may over-commit your nodes' CPU requests for a few "
                     "seconds (pause pods, deleted at the end)")
    cap = capacity(t, args.cpu)
    n = (args.pods if args.pods is not None else sum(cap.values())) + args.extra
    if n <= 0:
        raise kit.DrillError("the schedulable nodes have no room for a pod of cpu %s" % args.cpu)
    kit.progress("burst: %d pods of cpu %s (the nodes hold %d: %s)" % (
        n, args.cpu, sum(cap.values()), ", ".join("%s %d" % kv for kv in sorted(cap.items()))))
    rounds, no_le, reps = rounds_without_le(t, args, n, name)
    with_le, le = burst_with_le(t, args, n, name)
    res.data.update({
        "pods_per_burst": n, "cpu_per_pod": args.cpu, "capacity_pods": sum(cap.values()),
        "rounds_without_le": len(rounds),
        "rounds_overcommitted_without_le": sum(1 for r in rounds if r["over"]),
        "without_le": summary(no_le, reps), "with_le": summary(with_le, le),
    })
    res.section("%d pods of cpu %s; without leader election (round %d of at most %d) | with leader election" % (
        n, args.cpu, len(rounds), args.rounds), kit.table(
        ["node", "no LE: a + b", "cpu req/alloc", "fits", "LE: a + b", "cpu req/alloc", "fits"],
        node_rows(no_le, reps, with_le, le)) +
        "\nwithout LE: %d bound, %d pending, over-committed: %s (%d of %d rounds over-committed)" % (
            no_le["bound"], no_le["pending"], ", ".join(no_le["over"]) or "none",
            sum(1 for r in rounds if r["over"]), len(rounds)) +
        "\nwith LE:    %d bound, %d pending, over-committed: %s" % (
            with_le["bound"], with_le["pending"], ", ".join(with_le["over"]) or "none"))
    res.check("no pod bound twice (either side)", not no_le["bound_twice"] and not with_le["bound_twice"],
              ", ".join(no_le["bound_twice"] + with_le["bound_twice"]) or "the API server refused every second bind")
    res.check("with leader election: no node over-committed", not with_le["over"],
              ", ".join(with_le["over"]) or "%d nodes" % len(with_le["usage"]))
    res.check("with leader election: one replica decides", min(sum(with_le["by"][x.name].values()) for x in le) == 0,
              ", ".join("%s %d" % (x.name, sum(with_le["by"][x.name].values())) for x in le))
