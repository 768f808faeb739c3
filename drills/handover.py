"""handover: two replicas, one Lease (seed 002, steps 4-6).

Two toy-scheduler replicas with --leader-elect (identities drill-a and
drill-b, the Lease in the drill's namespace). A graceful handover (SIGTERM
to the holder: it releases the Lease) and a forced one (SIGKILL: the
standby waits out the lease duration), with the holder and leaseTransitions
before and after each and the handover times (kill -> the Lease names the
other holder). During the forced gap, pods are submitted and their pending
time measured. Checks: leaseTransitions +1 per handover, the graceful one
within 2 s, the forced one about the lease duration, the gap pods bound
once, one leader at a time.
"""
import re
import signal
import time

import kit

LAB_FLAGS = ["--controllers"]


def add_args(p):
    p.add_argument("--gap-pods", type=int, default=5, help="pods submitted in the forced gap (default 5)")
    p.add_argument("--scheduler-name", default="toy-scheduler-drill",
                   help="the replicas' scheduler name, the gap pods' schedulerName and the Lease's name "
                        "(default toy-scheduler-drill)")
    p.add_argument("--lease-duration", default="15s", help="--leader-elect-lease-duration (default 15s)")
    p.add_argument("--renew-deadline", default="10s", help="--leader-elect-renew-deadline (default 10s)")
    p.add_argument("--retry-period", default="2s", help="--leader-elect-retry-period (default 2s)")


def seconds(d):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", d)
    if not m:
        raise kit.DrillError("bad duration %r (use e.g. 15s, 500ms)" % d)
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


class Lease:
    """The Lease as a kubectl watch sees it: (time, holder, transitions)."""

    def __init__(self, t, name):
        self.t, self.name = t, name
        self.watch = kit.Watch(t, ["-n", t.ns, "get", "lease", "--field-selector", "metadata.name=" + name])

    def states(self):
        return [(ts, o.get("spec", {}).get("holderIdentity") or "", o.get("spec", {}).get("leaseTransitions") or 0)
                for ts, typ, o in self.watch.snapshot() if typ in ("ADDED", "MODIFIED")]

    def current(self):
        s = self.states()
        return (s[-1][1], s[-1][2]) if s else ("", 0)

    def wait_holder(self, want, since, timeout):
        """The time the Lease first named `want` after `since`."""
        def seen():
            for ts, holder, _ in self.states():
                if ts >= since and holder == want:
                    return ts
            return None
        return kit.wait_until(timeout, "the Lease to name %s" % want, seen, 0.05)


class Replicas:
    """drill-a and drill-b; a restart is a new process, with a log of its own."""

    def __init__(self, t, flags):
        self.t, self.flags, self.by_ident, self.logs = t, flags, {}, []

    def start(self, ident):
        p = self.t.toy("%s-%d" % (ident, len(self.logs) + 1), *self.flags, "--leader-elect-identity=" + ident)
        self.by_ident[ident] = p
        self.logs.append(p)
        return p

    def __getitem__(self, ident):
        return self.by_ident[ident]


def other(ident):
    return "drill-b" if ident == "drill-a" else "drill-a"


def graceful_handover(lease, reps, leader, retry):
    """SIGTERM to the holder: it releases the Lease and the standby takes
    it; the old holder then restarts as the standby. Returns (the table's
    row, the handover in seconds, the old holder's exit code, the
    transitions before)."""
    h0, tr0 = lease.current()
    kit.progress("graceful: SIGTERM to the holder %s" % leader)
    t0 = kit.now()
    reps[leader].send(signal.SIGTERM)
    ts = lease.wait_holder(other(leader), t0, 15)
    graceful = ts - t0
    # It exits on its own once the Lease is released: wait for that (an
    # ASan build takes a while over its leak check); only a process still
    # there after 15 s is killed, and the check below then says so.
    term_rc = reps[leader].wait(15)
    if term_rc is None:
        term_rc = reps[leader].stop(signal.SIGKILL, grace=1)
    h1, tr1 = lease.current()
    row = ["graceful (SIGTERM)", h0, tr0, h1, tr1, "%d ms" % kit.ms(graceful)]
    kit.progress("graceful handover %s -> %s in %d ms; restarting %s as the standby"
                 % (h0, h1, kit.ms(graceful), leader))
    reps.start(leader).wait_ready()
    reps[leader].wait_standing_by()
    time.sleep(retry + 1)  # a renew or two: the standby has seen the record
    return row, graceful, term_rc, tr0


def forced_handover(t, args, lease, reps, leader, dur, retry):
    """SIGKILL to the holder: nothing releases the Lease, and pods submitted
    in the gap wait. Returns (the table's row, the handover in seconds, the
    watch of the gap pods)."""
    h1, tr1 = lease.current()
    pods = kit.Watch(t, ["-n", t.ns, "get", "pods", "-l", "app=gap"])
    kit.progress("forced: SIGKILL to the holder %s; %d pods submitted in the gap" % (leader, args.gap_pods))
    t0 = kit.now()
    reps[leader].send(signal.SIGKILL)
    t.deployment("gap", args.gap_pods, scheduler=args.scheduler_name)
    ts = lease.wait_holder(other(leader), t0, dur + 4 * retry + 10)
    forced = ts - t0
    reps[leader].stop(signal.SIGKILL, grace=1)
    h2, tr2 = lease.current()
    kit.progress("forced handover %s -> %s in %d ms" % (h1, h2, kit.ms(forced)))
    return ["forced (SIGKILL)", h1, tr1, h2, tr2, "%d ms" % kit.ms(forced)], forced, pods


def gap_pending(t, args, pods):
    """Once the gap pods are bound: (pod -> when the watch saw it bound,
    each one's pending time sorted)."""
    kit.wait_until(30, "the gap pods bound", lambda: t.bound("gap") == args.gap_pods, 0.2)
    kit.wait_until(5, "the watch to show them bound", lambda: len(
        {o["metadata"]["name"] for _, _, o in pods.snapshot() if o.get("spec", {}).get("nodeName")}) >= args.gap_pods)
    created, bound = {}, {}
    for ts_, typ, o in pods.snapshot():
        n = o["metadata"]["name"]
        created.setdefault(n, ts_)
        if o.get("spec", {}).get("nodeName"):
            bound.setdefault(n, ts_)
    return bound, sorted(bound[n] - created[n] for n in bound)


def start_pair(t, args, lease):
    """Both replicas up, the holder's standby watching the Lease. Returns
    (the replicas, the holder)."""
    flags = ["--scheduler-name=" + args.scheduler_name, "-v=2", "--leader-elect",
             "--leader-elect-resource-namespace=" + t.ns, "--leader-elect-resource-name=" + lease.name,
             "--leader-elect-lease-duration=" + args.lease_duration,
             "--leader-elect-renew-deadline=" + args.renew_deadline, "--leader-elect-retry-period=" + args.retry_period]
    reps = Replicas(t, flags)
    kit.progress("starting two replicas with --leader-elect (drill-a, drill-b), Lease %s/%s" % (t.ns, lease.name))
    reps.start("drill-a")
    reps.start("drill-b")
    kit.wait_until(30, "a leader", lambda: lease.current()[0], 0.1)
    for p in reps.by_ident.values():
        p.wait_ready()
    leader = lease.current()[0]
    # The SIGTERM goes only to a holder whose standby watches the Lease: the
    # handover is then the standby's reaction, not the luck of its retry timer.
    reps[other(leader)].wait_standing_by()
    return reps, leader


def run(t, args, res):
    lease_name = args.scheduler_name
    dur, retry = seconds(args.lease_duration), seconds(args.retry_period)
    t.check_cluster_wide_read()
    if t.k("-n", t.ns, "get", "lease", lease_name, "--ignore-not-found", "-o", "name").strip():
        raise kit.DrillError("a Lease %s/%s exists already: another scheduler uses it (pass --scheduler-name)"
                             % (t.ns, lease_name))
    t.on_close(lambda: t.on_lab or t.k("-n", t.ns, "delete", "lease", lease_name, "--ignore-not-found", check=False))
    lease = Lease(t, lease_name)
    reps, leader = start_pair(t, args, lease)
    g_row, graceful, term_rc, tr0 = graceful_handover(lease, reps, leader, retry)
    f_row, forced, pods = forced_handover(t, args, lease, reps, other(leader), dur, retry)
    rows = [g_row, f_row]
    _, h1, tr1, h2, tr2, _ = f_row
    h0 = g_row[1]
    bound, pending = gap_pending(t, args, pods)

    time.sleep(0.5)
    all_logs = "".join(p.log() for p in reps.logs)
    binds = [p for p, _ in kit.BOUND_RE.findall(all_logs) if p.startswith(t.ns + "/")]
    acquired = all_logs.count("successfully acquired lease")
    # One leader at a time: the Lease never went from one holder straight to
    # the other while the first was alive is what leaseTransitions counts; the
    # logs say how many times a replica became leader.
    lo, hi = dur - retry - 1.0, dur + 1.2 * retry + 2.0
    usage = kit.node_usage(t)
    over = sorted(k for k, u in usage.items() if u["over"])

    res.data.update({
        "lease": "%s/%s" % (t.ns, lease_name),
        "lease_duration_s": dur, "retry_period_s": retry,
        "graceful": {"holder_before": h0, "transitions_before": tr0, "holder_after": rows[0][3],
                     "transitions_after": rows[0][4], "handover_ms": kit.ms(graceful), "old_leader_exit_code": term_rc},
        "forced": {"holder_before": h1, "transitions_before": tr1, "holder_after": h2,
                   "transitions_after": tr2, "handover_ms": kit.ms(forced)},
        "gap_pods": args.gap_pods,
        "gap_pending_ms": {"min": kit.ms(pending[0]), "max": kit.ms(pending[-1])} if pending else None,
        "times_a_replica_became_leader": acquired,
        "overcommitted_nodes": over,
    })
    res.section("handovers (Lease %s/%s, lease duration %gs, retry %gs)" % (t.ns, lease_name, dur, retry),
                kit.table(["handover", "holder before", "transitions", "holder after", "transitions", "time"], rows))
    res.section("the forced gap", kit.table(["what", "value"], [
        ["pods submitted right after the SIGKILL", args.gap_pods],
        ["pending time (created -> bound)", "%d .. %d ms" % (kit.ms(pending[0]), kit.ms(pending[-1]))
         if pending else "?"]]))

    res.check("graceful: leaseTransitions +1", rows[0][4] == tr0 + 1, "%s -> %s" % (tr0, rows[0][4]))
    res.check("graceful: within 2 s", graceful <= 2.0, "%d ms" % kit.ms(graceful))
    res.check("graceful: the old leader exits 0", term_rc == 0, "exit %s" % term_rc)
    res.check("forced: leaseTransitions +1", tr2 == tr1 + 1, "%s -> %s" % (tr1, tr2))
    res.check("forced: about the lease duration", lo <= forced <= hi,
              "%d ms, expected %d..%d ms" % (kit.ms(forced), kit.ms(lo), kit.ms(hi)))
    res.check("gap pods bound, once each", len(bound) == args.gap_pods and len(binds) == len(set(binds)),
              "%d of %d bound; %d logged binds" % (len(bound), args.gap_pods, len(binds)))
    res.check("a new leader only per handover", acquired == 3, "%d acquisitions (first election + 2)" % acquired)
    res.check("no node over-committed", not over, ", ".join(over) or "%d nodes" % len(usage))
