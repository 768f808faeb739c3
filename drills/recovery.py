"""recovery: killed mid-burst, it loses nothing (seed 000, steps 4-6).

A burst of pods for toy-scheduler, which is killed in the middle: SIGQUIT
(its task dump, like Ctrl-\\) once a few binds are in, or exactly at an await
point with --crash-at POINT[:N]. The scheduler is slowed (--kube-api-qps 20,
burst 1) so that the burst has a middle. Reports the await points from the
dump (how many tasks parked at each), the pods left unbound with nothing
scheduling them, then restarts it and times the catch-up until the last pod
is bound. Checks: all bound, none bound twice, no node over-committed.
"""
import collections
import signal
import time

import kit

LAB_FLAGS = ["--controllers"]


def add_args(p):
    p.add_argument("--replicas", type=int, default=30, help="pods in the burst (default 30)")
    p.add_argument("--scheduler-name", default="toy-scheduler-drill",
                   help="the pods' schedulerName and ours (default toy-scheduler-drill: not the name of a "
                        "toy-scheduler that may already run in the cluster)")
    p.add_argument("--crash-at", metavar="POINT[:N]",
                   help="kill it with toy-scheduler's --crash-at instead of SIGQUIT (e.g. bind.post:10)")
    p.add_argument("--signal", choices=["QUIT", "KILL"], default="QUIT",
                   help="the signal sent mid-burst (default QUIT: a task dump; KILL: no dump)")
    p.add_argument("--kill-after-binds", type=int, default=3,
                   help="send the signal once this many binds are logged (default 3)")
    p.add_argument("--kube-api-qps", default="20",
                   help="the first run's client QPS (default 20: a burst with a middle)")
    p.add_argument("--kube-api-burst", default="1", help="the first run's client burst (default 1)")


def bound_times(watch, t_from=None):
    """{pod name: monotonic time it was first seen with a nodeName}."""
    out = {}
    for t, _, obj in watch.snapshot():
        name = obj.get("metadata", {}).get("name")
        if name and obj.get("spec", {}).get("nodeName") and name not in out:
            out[name] = t
    return out


def burst_and_kill(t, args, flags):
    """A toy-scheduler, a burst of pods for it, and its death: at
    --crash-at, else by --signal after --kill-after-binds logged binds.
    Returns (the dead process, a watch of the pods, how it died, its exit
    code)."""
    n, name = args.replicas, args.scheduler_name
    kit.progress("starting toy-scheduler (%s)" % " ".join(flags))
    first = t.toy("first", *flags)
    first.wait_ready()
    watch = kit.Watch(t, ["-n", t.ns, "get", "pods", "-l", "app=burst"])

    kit.progress("creating Deployment burst: %d replicas, schedulerName %s" % (n, name))
    t.deployment("burst", n, scheduler=name)
    if args.crash_at:
        kit.progress("waiting for it to reach %s" % args.crash_at)
        kit.wait_until(60, "toy-scheduler to die at --crash-at=" + args.crash_at,
                       lambda: not first.alive() or t.bound("burst") == n, 0.1)
        if first.alive():
            raise kit.DrillError("the burst finished before --crash-at=%s was reached; nothing to recover"
                                 % args.crash_at)
        how = "--crash-at=" + args.crash_at
    else:
        kit.wait_until(30, "%d binds logged" % args.kill_after_binds,
                       lambda: len(kit.binds_in(first.log(), t.ns)) >= args.kill_after_binds, 0.05)
        first.send(getattr(signal, "SIG" + args.signal))
        how = "SIG" + args.signal
    first.wait(10)  # the dump is written before it exits
    rc = first.stop(signal.SIGKILL, grace=0)
    kit.progress("toy-scheduler died (%s, exit %s)" % (how, rc))
    return first, watch, how, rc


def restart(t, args, watch, left):
    """A second toy-scheduler, until every pod is bound. Returns (it, the
    seconds from its start to the last and to the first of `left` bound,
    None if one of them was not seen bound)."""
    n = args.replicas
    t_restart = kit.now()
    second = t.toy("second", "--scheduler-name=" + args.scheduler_name, "-v=2")
    kit.wait_until(60, "all %d pods bound after the restart" % n, lambda: t.bound("burst") == n, 0.2)
    kit.wait_until(5, "the watch to show the last bind", lambda: len(bound_times(watch)) >= n, 0.1)
    times = bound_times(watch)
    catch_up = max(times[p] for p in left) - t_restart if all(p in times for p in left) else None
    # The first bind after the restart: its start-up (connect, list, sync)
    # and the first decision; the rest of the catch-up is binding.
    first_bind = min(times[p] for p in left) - t_restart if all(p in times for p in left) else None
    return second, catch_up, first_bind


def run(t, args, res):
    n, name = args.replicas, args.scheduler_name
    flags = ["--scheduler-name=" + name, "-v=2", "--kube-api-qps=" + args.kube_api_qps,
             "--kube-api-burst=" + args.kube_api_burst]
    if args.crash_at:
        flags.append("--crash-at=" + args.crash_at)
    t.check_cluster_wide_read()
    first, watch, how, rc = burst_and_kill(t, args, flags)

    # Binds it had posted may still land; then nothing schedules these pods.
    time.sleep(1)
    kit.wait_until(30, "all %d pods created" % n, lambda: len(t.pods("burst")) == n, 0.3)
    pods = t.pods("burst")
    left = sorted(p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName"))
    first_log = first.log()
    first_binds = kit.binds_in(first_log, t.ns)
    head, tasks = kit.parse_dump(first_log)
    points = collections.Counter(x["point"] for x in tasks)
    if not left:
        raise kit.DrillError("the burst was over before the kill (%d logged binds); nothing to recover: "
                             "lower --kube-api-qps or --kill-after-binds" % len(first_binds))
    kit.progress("%d of %d pods unbound with nothing scheduling them; restarting" % (len(left), n))
    time.sleep(1)  # the drill's "look at the cluster"; and still none of them may move
    still = sum(1 for p in t.pods("burst") if not p["spec"].get("nodeName"))

    second, catch_up, first_bind = restart(t, args, watch, left)
    time.sleep(1)  # a late conflict line would show here
    second_log = second.log()
    second_binds = kit.binds_in(second_log, t.ns)
    # Every conflict line of the restarted scheduler, whatever the pod: it
    # started after the first died, so any lost race at all means a bind of
    # the dead one landed after it decided, or a pod it bound twice.
    second_conf = kit.conflict_lines(second_log)
    logged = list(kit.BOUND_RE.findall(first_log)) + list(kit.BOUND_RE.findall(second_log))
    twice = sorted(p for p, c in collections.Counter(p for p, _ in logged if p.startswith(t.ns + "/")).items() if c > 1)
    pods = t.pods("burst")
    bound = [p for p in pods if p["spec"].get("nodeName")]
    in_flight = n - len(left) - len(first_binds)
    usage = kit.node_usage(t)
    over = sorted(k for k, u in usage.items() if u["over"])

    res.data.update({
        "pods": n, "killed_by": how, "scheduler_exit_code": rc,
        "dump_first_line": head, "dump_tasks": len(tasks),
        "await_points": dict(points.most_common()),
        "binds_logged_before_kill": len(first_binds),
        "bound_by_requests_in_flight": in_flight,
        "unbound_after_kill": len(left), "unbound_1s_later": still,
        "bound_after_restart": len(second_binds),
        "catch_up_ms": kit.ms(catch_up),
        "restart_to_first_bind_ms": kit.ms(first_bind),
        "conflicts_after_restart": len(second_conf),
        "bound_twice": twice, "overcommitted_nodes": over,
    })
    res.section("the dump (%s)" % (head or "no dump: SIGKILL"), kit.table(
        ["await point", "tasks"], [[p, c] for p, c in points.most_common()]) if tasks else "(none)")
    res.section("the recovery", kit.table(["what", "value"], [
        ["pods in the burst", n],
        ["killed by", "%s (exit %s)" % (how, rc)],
        ["binds logged before the kill", len(first_binds)],
        ["bound by its requests still in flight", in_flight],
        ["unbound with nothing scheduling them", "%d (1 s later: %d)" % (len(left), still)],
        ["bound after the restart", len(second_binds)],
        ["catch-up: restart -> last pod bound", "%d ms" % kit.ms(catch_up) if catch_up is not None else "?"],
        ["restart -> first pod bound", "%d ms" % kit.ms(first_bind) if first_bind is not None else "?"],
    ]))
    res.check("every pod bound", len(bound) == n, "%d of %d" % (len(bound), n))
    res.check("no pod moved while no scheduler ran", still == len(left), "%d then %d unbound" % (len(left), still))
    res.check("none bound twice", not twice and not second_conf,
              ", ".join(twice[:5]) or ("%d conflicts after restart" % len(second_conf) if second_conf else
                                       "%d + %d logged binds, all distinct" % (len(first_binds), len(second_binds))))
    res.check("the restart bound exactly the unbound", len(second_binds) == len(left),
              "%d unbound, %d bound after restart" % (len(left), len(second_binds)))
    res.check("no node over-committed", not over, ", ".join(over) or "%d nodes" % len(usage))
