"""race: two schedulers, one pod (seed 000, steps 1-3).

toy-scheduler runs under the name default-scheduler beside the real
kube-scheduler, and a Deployment with no schedulerName is submitted, so both
believe every pod is theirs. Reports the placement per node, the binds and
the lost races (409 conflicts) on each side, the win ratio, and checks "the
thing that would actually be a bug": every pod's spec.nodeName agrees with
its status.hostIP (the node's InternalIP), no pod bound by both, none lost.

On a cluster it needs a running default scheduler (checked with a probe pod)
and counts kube-scheduler's lost races from its FailedScheduling events.
"""
import json
import os
import time

import kit

LAB_FLAGS = ["--controllers", "--kube-scheduler"]


def add_args(p):
    p.add_argument("--replicas", type=int, default=20, help="pods in the Deployment (default 20)")
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


def foreign_pending(t):
    n = 0
    for p in t.kj("get", "pods", "-A", "--field-selector", "spec.nodeName=,status.phase=Pending")["items"]:
        if p["metadata"]["namespace"] != t.ns and p["spec"].get("schedulerName") == "default-scheduler":
            n += 1
    return n


def their_conflicts_from_events(t):
    """kube-scheduler's lost races as it reports them on a cluster: FailedScheduling
    events about our pods whose message says 'already assigned' (toy-scheduler
    records no event for a lost race)."""
    lines, pods = 0, set()
    for e in t.kj("-n", t.ns, "get", "events")["items"]:
        io = e.get("involvedObject", {})
        if e.get("reason") == "FailedScheduling" and "already assigned" in e.get("message", "") \
                and io.get("name", "").startswith("race-"):
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

    ks_log_path = os.path.join(t.lab_dir, "kube-scheduler.log") if t.on_lab else None
    ks_offset = os.path.getsize(ks_log_path) if ks_log_path else 0
    kit.progress("starting toy-scheduler --scheduler-name=default-scheduler -v=4")
    toy = t.toy("toy-scheduler", "--scheduler-name=default-scheduler", "-v=4")
    toy.wait_ready()

    kit.progress("creating Deployment race: %d replicas, no schedulerName" % n)
    start = kit.now()
    t.deployment("race", n)
    kit.wait_until(60, "%d race pods bound" % n,
                   lambda: len(t.pods("race")) == n and t.bound("race") == n, 0.3)
    all_bound_s = kit.now() - start
    kit.progress("all %d bound in %.1f s; letting the losers log their refusals" % (n, all_bound_s))
    time.sleep(2)
    # hostIP comes with the kubelet's status update (on a cluster, once the
    # sandbox runs): wait for it, not for the drill's sake but for the check's.
    try:
        kit.wait_until(60, "every pod's status.hostIP", lambda: all(
            p.get("status", {}).get("hostIP") for p in t.pods("race")), 0.5)
    except kit.DrillError as e:
        kit.progress(str(e))
    pods = t.pods("race")
    ips = kit.node_ips(t)

    our_log = toy.log()
    ours = kit.binds_in(our_log, t.ns)
    our_conf = kit.conflict_lines(our_log, t.ns)
    if ks_log_path:
        with open(ks_log_path, errors="replace") as f:
            f.seek(ks_offset)
            ks_log = f.read()
        theirs = kit.binds_in(ks_log, t.ns)
        their_conf = kit.conflict_lines(ks_log, t.ns)
        their_conf_n, their_lost = len(their_conf), kit.pods_in(their_conf)
        source = "kube-scheduler.log"
    else:
        names = {t.ns + "/" + p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods}
        theirs = {p: node for p, node in names.items() if p not in ours}
        their_conf_n, their_lost = their_conflicts_from_events(t)
        source = "FailedScheduling events"
    ev_n, ev_pods = their_conflicts_from_events(t)

    placement = {}
    mismatched = []
    for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
        node, host = p["spec"].get("nodeName"), p.get("status", {}).get("hostIP")
        placement[node] = placement.get(node, 0) + 1
        if host != ips.get(node):
            mismatched.append("%s: nodeName %s (%s) but hostIP %s" % (p["metadata"]["name"], node, ips.get(node), host))
    both = sorted(set(ours) & set(theirs))
    usage = kit.node_usage(t)
    over = sorted(name for name, u in usage.items() if u["over"])
    total = len(ours) + len(theirs)

    res.data.update({
        "pods": n, "seconds_to_all_bound": round(all_bound_s, 2),
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
        "nodename_hostip_mismatches": mismatched,
        "bound_by_both": both,
        "overcommitted_nodes": over,
    })

    res.section("placement (pods per node; the drill's `awk '{print $7}' | sort | uniq -c`)",
                kit.table(["node", "pods", "InternalIP"],
                          [[k, v, ips.get(k, "?")] for k, v in sorted(placement.items())]))
    res.section("the race", kit.table(
        ["scheduler", "binds (won)", "conflicts (grep -ci lines)", "pods lost (409)", "counted from"],
        [["toy-scheduler", len(ours), len(our_conf), len(kit.pods_in(our_conf)), "its log"],
         ["kube-scheduler", len(theirs), their_conf_n, len(their_lost), source]]) +
        "\nwin ratio toy-scheduler : kube-scheduler = %d : %d%s" % (
            len(ours), len(theirs), " (%.0f%% ours)" % (100.0 * len(ours) / total) if total else "") +
        "\nkube-scheduler's FailedScheduling events saying 'already assigned': %d" % ev_n)

    res.check("every pod bound", len([p for p in pods if p["spec"].get("nodeName")]) == n,
              "%d of %d" % (len([p for p in pods if p["spec"].get("nodeName")]), n))
    res.check("nodeName agrees with hostIP", not mismatched,
              "; ".join(mismatched[:3]) or "all %d pods" % len(pods))
    res.check("no pod bound by both schedulers", not both, ", ".join(both[:5]) or "binds are disjoint")
    if ks_log_path:  # on a cluster, theirs is "the rest": adding up proves nothing
        res.check("binds add up to the pods", total == n, "%d + %d = %d of %d" % (len(ours), len(theirs), total, n))
    # toy-scheduler logs one line per lost race (forget, count, no retry): two
    # lines for one pod would mean it tried to bind that pod twice.
    res.check("one conflict line per race we lost", len(our_conf) == len(kit.pods_in(our_conf)),
              "%d lines, %d pods" % (len(our_conf), len(kit.pods_in(our_conf))))
    res.check("every race we lost, they won", kit.pods_in(our_conf) <= set(theirs),
              "%d lost, all bound by kube-scheduler" % len(kit.pods_in(our_conf)))
    res.check("every race they lost, we won", their_lost <= set(ours),
              "%d lost, all bound by toy-scheduler" % len(their_lost))
    res.check("no node over-committed", not over, ", ".join(over) or "%d nodes" % len(usage))
