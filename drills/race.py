"""race: two schedulers, one pod (seed 000, steps 1-3).

toy-scheduler runs under the name default-scheduler beside the real
kube-scheduler, and a Deployment with no schedulerName is submitted, so both
believe every pod is theirs. Reports the placement per node, the binds and
the lost races (409 conflicts) on each side, the win ratio, and checks "the
thing that would actually be a bug": every pod's spec.nodeName agrees with
its status.hostIP (the node's InternalIP), no pod bound by both, none lost.

Per pod, the time from its creation (as a watch of the drill's own saw it) to each
scheduler's bind attempt (from each log's timestamps; kube-scheduler's needs
-v>=3, which the drill's lab sets), so a lost race shows whose side was slow.
--runs N races N times in a row, each with a fresh toy-scheduler and a fresh
Deployment, and prints each run and the median share.

On the drill's lab the apiserver logs every binding it receives and answers
(kube-lab --audit-bindings): for each pod both schedulers tried, whose binding
reached the server first and whose it accepted. A race lost although ours
arrived first was decided inside the server, not on our side.

How long each side's threads waited for a CPU during the burst, runnable
but not running (the kernel's run_delay, /proc/PID/task/*/schedstat): on a
machine whose cores the lab shares, a run lost by a scheduler kept off the
CPU shows there. kube-scheduler's is read only on the drill's lab, where it
is a local process.

On a cluster it needs a running default scheduler (checked with a probe pod)
and counts kube-scheduler's lost races from its FailedScheduling events.
"""
import json
import os
import re
import signal
import statistics
import subprocess
import time
from datetime import datetime, timezone

import kit
from devlib import procfs  # kit puts the checkout on sys.path

LAB_FLAGS = ["--controllers", "--kube-scheduler", "--kube-scheduler-v", "3", "--audit-bindings"]
AUDIT_LOG = "audit-bindings.log"  # in the lab's directory


def add_args(p):
    p.add_argument("--replicas", type=int, default=20, help="pods in the Deployment (default 20)")
    p.add_argument("--runs", type=int, default=1,
                   help="races in a row, each with a fresh toy-scheduler and Deployment; each run is printed "
                        "and the median share (default 1)")
    p.add_argument("--allow-foreign-pods", action="store_true",
                   help="on a cluster: go on although pods outside the namespace are pending for "
                        "default-scheduler (toy-scheduler would race for them too)")


def default_scheduler_lease(t):
    """kube-system/kube-scheduler, if readable: (holder, seconds since renew)."""
    out = t.k("-n", "kube-system", "get", "lease", "kube-scheduler", "-o", "json", "--ignore-not-found", check=False)
    if not out.strip():
        return None
    spec = json.loads(out).get("spec", {})
    return spec.get("holderIdentity"), spec.get("renewTime")


def check_default_scheduler(t):
    """A probe pod with no schedulerName must be bound within 20 s."""
    lease = default_scheduler_lease(t)
    if lease:
        kit.progress("kube-system/kube-scheduler Lease: holder %s, renewed %s" % lease)
    probe = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "race-probe", "namespace": t.ns, "labels": t.labels("race-probe")},
             "spec": t.pod_spec()}
    t.k("create", "-f", "-", input=json.dumps(probe))
    try:
        kit.wait_until(20, "the probe pod to be bound", lambda: t.bound("race-probe") == 1, 0.3)
    except kit.DrillError:
        raise kit.DrillError(
            "race needs a running default scheduler (kube-scheduler as default-scheduler): a probe pod "
            "with no schedulerName stayed unbound for 20 s%s" % (
                "" if lease else ", and there is no kube-system/kube-scheduler Lease"))
    finally:
        t.k("-n", t.ns, "delete", "pod", "race-probe", "--wait=false", check=False)
    kit.wait_until(60, "the probe pod to be gone", lambda: not t.pods("race-probe"), 0.3)


# klog's header and a bind attempt: "I1201 02:38:40.717837 ... "Attempting to
# bind pod to node" [logger="..."] pod="ns/name"". Upstream logs it at -v=3.
ATTEMPT_RE = re.compile(
    r'^[IWE](\d\d)(\d\d) (\d\d):(\d\d):(\d\d\.\d+) .*"Attempting to bind pod to node".*? pod="([^"]+)"', re.M)


def attempts_in(log, ns):
    """{pod: wall-clock seconds} of a scheduler's first bind attempt per pod
    (klog writes local time without the year: this year is assumed)."""
    year = time.localtime().tm_year
    out = {}
    for mo, d, h, mi, sec, pod in ATTEMPT_RE.findall(log):
        if pod.startswith(ns + "/"):
            t = time.mktime((year, int(mo), int(d), int(h), int(mi), 0, 0, 0, -1)) + float(sec)
            out.setdefault(pod, t)
    return out


def latency_ms(created, at):
    """p50 and p99 (nearest rank) in ms of at[pod] - created[pod], and the count."""
    xs = sorted((at[p] - created[p]) * 1000 for p in at if p in created)
    if not xs:
        return {"n": 0, "p50": None, "p99": None}

    def pick(q): return round(xs[min(len(xs) - 1, max(0, int(round(q / 100.0 * len(xs) + 0.5)) - 1))], 1)  # noqa: E731
    return {"n": len(xs), "p50": pick(50), "p99": pick(99)}


class PodWatch:
    """The reference clock: a watch of our own beside the two schedulers
    (bench-ceiling watch: the project's client, a JSON watch as toy-scheduler
    has), writing the wall-clock time each default-scheduler pod was first seen
    pending and first seen bound. kubectl's watch is no reference: it prints
    the events late enough that both schedulers seem to bind before the pod
    exists."""

    def __init__(self, t, name):
        self.path = os.path.join(t.workdir, name + ".watch.txt")
        self.proc = subprocess.Popen(
            [os.path.join(t.build, "bench", "ceiling", "bench-ceiling"), "watch", "--kubeconfig", t.kubeconfig,
             "--scheduler-name", "default-scheduler", "--out", self.path, "-v", "2"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t.on_close(self.stop)
        kit.wait_until(30, "the reference watch to list the pods",
                       lambda: os.path.exists(self.path) and "synced" in open(self.path).read(), 0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()

    def bound_count(self, ns, name):
        """How many of the Deployment's pods the watch has seen bound so far."""
        return len(self.created_and_bound(ns, name)[1])

    def created_and_bound(self, ns, name):
        """{pod: wall-clock seconds} first seen pending, and first seen bound."""
        created, bound = {}, {}
        with open(self.path) as f:
            for line in f:
                w = line.split()
                if len(w) < 3 or not w[1].startswith(ns + "/" + name + "-"):
                    continue
                if w[0] == "seen":
                    created.setdefault(w[1], int(w[2]) / 1e9)
                elif w[0] == "bound":
                    bound.setdefault(w[1], int(w[2]) / 1e9)
        return created, bound


def audit_time(s):
    """An audit timestamp ("2026-12-06T02:33:48.439723Z") as seconds."""
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def server_order(text, ns, deployment):
    """The apiserver's audit log of bindings, read per pod of the Deployment:
    whose binding it received first and whose it accepted (201). A side that
    sent more than one counts from its first."""
    per = {}
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue  # a line cut by the read: the race's own lines are complete by then
        o = e.get("objectRef") or {}
        if e.get("stage") != "ResponseComplete" or o.get("namespace") != ns or \
                not o.get("name", "").startswith(deployment + "-"):
            continue
        side = "toy-scheduler" if e.get("userAgent", "").startswith("toy-scheduler/") else "kube-scheduler"
        s = per.setdefault(o["name"], {}).setdefault(side, {"received": float("inf"), "accepted": 0})
        s["received"] = min(s["received"], audit_time(e["requestReceivedTimestamp"]))
        s["accepted"] += (e.get("responseStatus") or {}).get("code") == 201
    contested = {p: s for p, s in per.items() if len(s) == 2}
    first = {p for p, s in contested.items() if s["toy-scheduler"]["received"] < s["kube-scheduler"]["received"]}
    won = {p for p, s in contested.items() if s["toy-scheduler"]["accepted"]}
    lost_gap = sorted(1000 * (s["toy-scheduler"]["received"] - s["kube-scheduler"]["received"])
                      for p, s in contested.items() if p not in won)
    return {"pods": len(per), "contested": len(contested), "ours_first": len(first),
            "lost_though_ours_first": len(first - won), "won_though_theirs_first": len(won - first),
            # lost races: ours received minus theirs, ms (negative: ours came first)
            "lost_arrival_gap_ms": [round(x, 1) for x in lost_gap],
            "accepted_per_pod": sorted({sum(v["accepted"] for v in s.values()) for s in per.values()})}


def fmt_order(o):
    if not o:
        return "-"
    return "ours first in %d of %d; lost %d though first, won %d though second" % (
        o["ours_first"], o["contested"], o["lost_though_ours_first"], o["won_though_theirs_first"])


def fmt_wait(w):
    def one(x):
        return "-" if not x else "%.1f" % x["ms"]
    return "%s / %s" % (one(w["toy-scheduler"]), one(w["kube-scheduler"]))


def foreign_pending(t):
    n = 0
    for p in t.kj("get", "pods", "-A", "--field-selector", "spec.nodeName=,status.phase=Pending")["items"]:
        if p["metadata"]["namespace"] != t.ns and p["spec"].get("schedulerName") == "default-scheduler":
            n += 1
    return n


def their_conflicts_from_events(t, name="race"):
    """kube-scheduler's lost races as it reports them on a cluster: FailedScheduling
    events about our pods whose message says 'already assigned' (toy-scheduler
    records no event for a lost race)."""
    lines, pods = 0, set()
    for e in t.kj("-n", t.ns, "get", "events")["items"]:
        io = e.get("involvedObject", {})
        if e.get("reason") == "FailedScheduling" and "already assigned" in e.get("message", "") \
                and io.get("name", "").startswith(name + "-"):
            lines += e.get("count") or (e.get("series") or {}).get("count") or 1
            pods.add(t.ns + "/" + io["name"])
    return lines, pods


def run(t, args, res):
    n = args.replicas
    if not t.on_lab and not args.allow_foreign_pods:
        f = foreign_pending(t)
        if f:
            raise kit.DrillError("%d pods outside namespace %s are pending for default-scheduler; toy-scheduler "
                                 "under that name would race for them too (--allow-foreign-pods to go on)" % (f, t.ns))
    t.check_cluster_wide_read()
    kit.progress("checking that a default scheduler is running (a probe pod)")
    check_default_scheduler(t)
    runs = []
    for i in range(max(1, args.runs)):
        name = "race" if args.runs <= 1 else "race-%d" % (i + 1)
        runs.append(race_once(t, n, name, last=(i == args.runs - 1)))
        if args.runs > 1:
            r = runs[-1]
            kit.progress("run %d: toy-scheduler %s (%.0f%% ours)" % (i + 1, r["win_ratio"],
                                                                     100 * (r["toy_scheduler_share"] or 0)))
    if len(runs) == 1:
        report_one(t, res, runs[0])
    else:
        report_many(res, runs)
    checks(t, res, runs)


def log_end(path):
    """Where a log written by the lab ends now (0 if there is none yet): this race's lines come after."""
    return os.path.getsize(path) if path and os.path.exists(path) else 0


def read_after(path, offset):
    with open(path, errors="replace") as f:
        f.seek(offset)
        return f.read()


def burst(t, toy, watch, n, name):
    """The Deployment of n created and every pod seen bound. Returns (the
    seconds that took, each side's CPU wait meanwhile)."""
    # Each side's wait for a CPU during the burst (the kernel's run-queue
    # delay): on a small machine a race is lost as often there as anywhere.
    ks_pid = procfs.child_pid(t.lab.pid, "kube-scheduler") if t.on_lab else None
    pids = {"toy-scheduler": toy.pid, "kube-scheduler": ks_pid}
    kit.progress("creating Deployment %s: %d replicas, no schedulerName" % (name, n))
    waits_before = {side: procfs.cpu_wait(pid) for side, pid in pids.items()}
    start = kit.now()
    t.deployment(name, n)
    # Waited for on the reference watch, not by polling kubectl: a kubectl
    # run costs about as much CPU as the whole race, and on a small machine
    # it would take that CPU from the two schedulers while they race.
    kit.wait_until(60, "%d %s pods bound" % (n, name), lambda: watch.bound_count(t.ns, name) >= n, 0.05)
    all_bound_s = kit.now() - start
    cpu_wait = {side: procfs.cpu_wait_between(waits_before[side], procfs.cpu_wait(pid)) for side, pid in pids.items()}
    kit.progress("all %d bound in %.1f s; letting the losers log their refusals" % (n, all_bound_s))
    return all_bound_s, cpu_wait


def wait_host_ips(t, name):
    # hostIP comes with the kubelet's status update (on a cluster, once the
    # sandbox runs): wait for it, not for the drill's sake but for the check's.
    try:
        kit.wait_until(60, "every pod's status.hostIP", lambda: all(
            p.get("status", {}).get("hostIP") for p in t.pods(name)), 0.5)
    except kit.DrillError as e:
        kit.progress(str(e))


def their_side(t, name, pods, ours, ks_log_path, ks_offset):
    """kube-scheduler's binds, lost races and bind attempts: from its log
    after ks_offset (on the lab), else the pods toy-scheduler did not bind
    and the FailedScheduling events. Returns (binds, how many lost races,
    the pods of those, attempts, the source, the events' count)."""
    # kube-scheduler's FailedScheduling events about lost races: shown on the
    # lab too, and on a cluster the only count of its lost races.
    ev_n, ev_pods = their_conflicts_from_events(t, name)
    if ks_log_path:
        ks_log = read_after(ks_log_path, ks_offset)
        their_conf = kit.conflict_lines(ks_log, t.ns)
        return (kit.binds_in(ks_log, t.ns), len(their_conf), kit.pods_in(their_conf), attempts_in(ks_log, t.ns),
                "kube-scheduler.log", ev_n)
    names = {t.ns + "/" + p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods}
    theirs = {p: node for p, node in names.items() if p not in ours}
    return theirs, ev_n, ev_pods, {}, "FailedScheduling events", ev_n


def placement_of(pods, ips):
    """Pods per node, and each pod whose hostIP is not its node's."""
    placement, mismatched = {}, []
    for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
        node, host = p["spec"].get("nodeName"), p.get("status", {}).get("hostIP")
        placement[node] = placement.get(node, 0) + 1
        if host != ips.get(node):
            mismatched.append("%s: nodeName %s (%s) but hostIP %s" % (p["metadata"]["name"], node, ips.get(node), host))
    return placement, mismatched


def race_once(t, n, name, last):
    """One race: a fresh toy-scheduler, a Deployment of n, the facts."""
    ks_log_path = os.path.join(t.lab_dir, "kube-scheduler.log") if t.on_lab else None
    audit_path = os.path.join(t.lab_dir, AUDIT_LOG) if t.on_lab else None
    ks_offset, audit_offset = log_end(ks_log_path), log_end(audit_path)
    watch = PodWatch(t, name)
    kit.progress("starting toy-scheduler --scheduler-name=default-scheduler -v=4")
    toy = t.toy("toy-scheduler" if name == "race" else "toy-scheduler-" + name,
                "--scheduler-name=default-scheduler", "-v=4")
    toy.wait_ready()
    all_bound_s, cpu_wait = burst(t, toy, watch, n, name)
    time.sleep(2)
    wait_host_ips(t, name)
    pods = t.pods(name)
    ips = kit.node_ips(t)
    if not last:  # the next race gets a toy-scheduler of its own
        toy.stop(signal.SIGTERM, grace=10)
    watch.stop()

    our_log = toy.log()
    ours = kit.binds_in(our_log, t.ns)
    our_conf = kit.conflict_lines(our_log, t.ns)
    our_attempts = attempts_in(our_log, t.ns)
    theirs, their_conf_n, their_lost, their_attempts, source, ev_n = their_side(
        t, name, pods, ours, ks_log_path, ks_offset)
    created, bound = watch.created_and_bound(t.ns, name)
    order = None
    if audit_path:
        order = server_order(read_after(audit_path, audit_offset), t.ns, name)
    placement, mismatched = placement_of(pods, ips)
    usage = kit.node_usage(t)
    total = len(ours) + len(theirs)
    return {
        "pods": n, "deployment": name, "seconds_to_all_bound": round(all_bound_s, 2),
        "placement": dict(sorted(placement.items())),
        "binds": {"toy-scheduler": len(ours), "kube-scheduler": len(theirs)},
        "binds_source": {
            "toy-scheduler": "toy-scheduler log",
            "kube-scheduler": "kube-scheduler.log" if ks_log_path else "pods not bound by toy-scheduler"},
        "conflicts": {
            "toy-scheduler": {"lines": len(our_conf), "pods": len(kit.pods_in(our_conf)),
                              "source": "toy-scheduler log"},
            "kube-scheduler": {"lines": their_conf_n, "pods": len(their_lost), "source": source,
                               "events": ev_n},
        },
        "win_ratio": "%d:%d" % (len(ours), len(theirs)),
        "toy_scheduler_share": round(len(ours) / total, 3) if total else None,
        # creation (the drill's own watch) to each side's bind attempt (its log), and to bound (the watch)
        "latency_ms": {
            "created_to_attempt": {"toy-scheduler": latency_ms(created, our_attempts),
                                   "kube-scheduler": latency_ms(created, their_attempts) if ks_log_path else None},
            "created_to_bound": {
                "won_by_toy-scheduler": latency_ms(created, {p: bound[p] for p in bound if p in ours}),
                "won_by_kube-scheduler": latency_ms(created, {p: bound[p] for p in bound if p not in ours})},
        },
        "server_order": order,
        # from the Deployment's creation to the last pod seen bound; all threads of each process
        "cpu_wait": cpu_wait,
        "nodename_hostip_mismatches": mismatched,
        "bound_by_both": sorted(set(ours) & set(theirs)),
        "overcommitted_nodes": sorted(k for k, u in usage.items() if u["over"]),
        "_facts": {"bound_pods": len([p for p in pods if p["spec"].get("nodeName")]), "ours": set(ours),
                   "theirs": set(theirs), "our_conf": our_conf, "their_lost": their_lost,
                   "counted": bool(ks_log_path), "source": source, "ips": ips, "nodes": len(usage)},
    }


def fmt_lat(x):
    return "-" if not x or not x["n"] else "%s / %s ms (%d)" % (x["p50"], x["p99"], x["n"])


def public(r):
    return {k: v for k, v in r.items() if not k.startswith("_")}


def report_one(t, res, r):
    f = r["_facts"]
    res.data.update(public(r))
    res.section("placement (pods per node; the drill's `awk '{print $7}' | sort | uniq -c`)",
                kit.table(["node", "pods", "InternalIP"],
                          [[k, v, f["ips"].get(k, "?")] for k, v in sorted(r["placement"].items())]))
    c = r["conflicts"]
    b = r["binds"]
    res.section("the race", kit.table(
        ["scheduler", "binds (won)", "conflicts (grep -ci lines)", "pods lost (409)", "counted from"],
        [["toy-scheduler", b["toy-scheduler"], c["toy-scheduler"]["lines"], c["toy-scheduler"]["pods"], "its log"],
         ["kube-scheduler", b["kube-scheduler"], c["kube-scheduler"]["lines"], c["kube-scheduler"]["pods"],
          f["source"]]]) +
        "\nwin ratio toy-scheduler : kube-scheduler = %s%s" % (
            r["win_ratio"],
            " (%.0f%% ours)" % (100.0 * r["toy_scheduler_share"]) if r["toy_scheduler_share"] is not None else "") +
        "\nkube-scheduler's FailedScheduling events saying 'already assigned': %d" % c["kube-scheduler"]["events"])
    lat = r["latency_ms"]
    res.section("latency (p50 / p99, pods): creation seen on the drill's watch -> bind attempt (each log) "
                "and -> bound (the watch)", kit.table(
                    ["scheduler", "created -> bind attempt", "created -> bound (races it won)"],
                    [["toy-scheduler", fmt_lat(lat["created_to_attempt"]["toy-scheduler"]),
                      fmt_lat(lat["created_to_bound"]["won_by_toy-scheduler"])],
                     ["kube-scheduler", fmt_lat(lat["created_to_attempt"]["kube-scheduler"]),
                      fmt_lat(lat["created_to_bound"]["won_by_kube-scheduler"])]]))
    w = r["cpu_wait"]
    res.section("waiting for a CPU (runnable, not running; all threads; from the Deployment's creation to "
                "the last pod bound)", kit.table(
                    ["scheduler", "waited", "times on a CPU", "mean wait per time"],
                    [[side, "%.1f ms" % w[side]["ms"], w[side]["slices"], "%d µs" % w[side]["mean_us"]]
                     if w[side] else [side, "-", "-", "-"] for side in ("toy-scheduler", "kube-scheduler")]))
    o = r["server_order"]
    if o:
        res.section("the server's order (its audit log of bindings; pods both schedulers tried)",
                    "%s\nlost races, ours received minus theirs (ms): %s" % (
                        fmt_order(o), ", ".join("%+.1f" % x for x in o["lost_arrival_gap_ms"]) or "none"))


def report_many(res, runs):
    shares = [r["toy_scheduler_share"] for r in runs if r["toy_scheduler_share"] is not None]
    res.data.update({"runs": [public(r) for r in runs],
                     "median_toy_scheduler_share": round(statistics.median(shares), 3) if shares else None,
                     "min_toy_scheduler_share": min(shares) if shares else None})
    rows = []
    for i, r in enumerate(runs):
        lat = r["latency_ms"]["created_to_attempt"]
        rows.append([i + 1, r["win_ratio"], "%.0f%%" % (100 * (r["toy_scheduler_share"] or 0)),
                     fmt_lat(lat["toy-scheduler"]), fmt_lat(lat["kube-scheduler"]), fmt_wait(r["cpu_wait"]),
                     fmt_order(r["server_order"])])
    res.section("the races (win ratio toy-scheduler : kube-scheduler; created -> bind attempt, p50 / p99; "
                "waited for a CPU during the burst, ms, ours / theirs; at the server, of the pods both tried)",
                kit.table(["run", "won", "ours", "toy-scheduler", "kube-scheduler", "CPU wait", "at the server"],
                          rows) +
                ("\nmedian share: %.0f%% ours (lowest %.0f%%)" % (100 * statistics.median(shares), 100 * min(shares))
                 if shares else ""))


def checks(t, res, runs):
    def every(pred):
        return all(pred(r) for r in runs)

    def per_run(fmt):
        return "; ".join(fmt(r) for r in runs)
    facts = [r["_facts"] for r in runs]
    res.check("every pod bound", every(lambda r: r["_facts"]["bound_pods"] == r["pods"]),
              per_run(lambda r: "%d of %d" % (r["_facts"]["bound_pods"], r["pods"])))
    res.check("nodeName agrees with hostIP", every(lambda r: not r["nodename_hostip_mismatches"]),
              "; ".join(m for r in runs for m in r["nodename_hostip_mismatches"][:3]) or "all pods")
    res.check("no pod bound by both schedulers", every(lambda r: not r["bound_by_both"]),
              ", ".join(p for r in runs for p in r["bound_by_both"][:5]) or "binds are disjoint")
    if all(f["counted"] for f in facts):  # on a cluster, theirs is "the rest": adding up proves nothing
        res.check("binds add up to the pods", every(lambda r: len(r["_facts"]["ours"]) + len(r["_facts"]["theirs"])
                                                    == r["pods"]),
                  per_run(lambda r: "%d + %d = %d of %d" % (len(r["_facts"]["ours"]), len(r["_facts"]["theirs"]),
                                                            len(r["_facts"]["ours"]) + len(r["_facts"]["theirs"]),
                                                            r["pods"])))
    # toy-scheduler logs one line per lost race (forget, count, no retry): two
    # lines for one pod would mean it tried to bind that pod twice.
    res.check("one conflict line per race we lost",
              every(lambda r: len(r["_facts"]["our_conf"]) == len(kit.pods_in(r["_facts"]["our_conf"]))),
              per_run(lambda r: "%d lines, %d pods" % (len(r["_facts"]["our_conf"]),
                                                       len(kit.pods_in(r["_facts"]["our_conf"])))))
    res.check("every race we lost, they won",
              every(lambda r: kit.pods_in(r["_facts"]["our_conf"]) <= r["_facts"]["theirs"]),
              per_run(lambda r: "%d lost, all bound by kube-scheduler" % len(kit.pods_in(r["_facts"]["our_conf"]))))
    res.check("every race they lost, we won", every(lambda r: r["_facts"]["their_lost"] <= r["_facts"]["ours"]),
              per_run(lambda r: "%d lost, all bound by toy-scheduler" % len(r["_facts"]["their_lost"])))
    if all(r["server_order"] for r in runs):  # the drill's lab: the server's own record of every binding
        res.check("the server accepted one binding per pod",
                  every(lambda r: r["server_order"]["accepted_per_pod"] == [1]
                        and r["server_order"]["pods"] == r["pods"]),
                  per_run(lambda r: "%d pods, bindings accepted per pod: %s" % (
                      r["server_order"]["pods"], r["server_order"]["accepted_per_pod"])))
    res.check("no node over-committed", every(lambda r: not r["overcommitted_nodes"]),
              ", ".join(k for r in runs for k in r["overcommitted_nodes"]) or "%d nodes" % facts[-1]["nodes"])
