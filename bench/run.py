#!/usr/bin/env python3
"""Scheduling benchmark: toy-scheduler, kube-scheduler (the release's own
command, with its default profile and with toy-scheduler's plugins), both
scoring every node, a client-go reference and the bind ceiling, side by side
on the lab. `./dev bench` runs it; see --help. bench/contenders.py says how
each contender is started and configured.

For every node count, run and contender, on a FRESH lab (a new kube-lab
process and etcd: every contender meets the same empty API server, nothing
left over from the previous one):

  1. start kube-lab --no-kubelet with N fake nodes of 4 CPU / 32Gi / 110 pods
     (scheduler_perf's SchedulingBasic node);
  2. backlog workload: create the measured pods, pending, with this
     contender's schedulerName (bench-ceiling create, 32 POSTs in flight);
     timed, but outside the measurement;
  3. start the watcher (bench-ceiling watch) and wait until it has listed;
  4. start the contender (its own process, client rate limits off). basic
     workload (SchedulingBasic): it places the initial pods first (bound,
     and for a contender that posts events, their `Scheduled` events seen),
     then the measured pods are created while it runs, and the window opens
     with the first of them. Wait until the watcher has seen every measured pod bound
     (the bind drain) and a watch of the events has seen every one's
     `Scheduled` event (the whole job): throughput, CPU, peak RSS, the API
     server's request counters, all over the window;
  5. latency phases (toy-scheduler, kube-scheduler and the two references
     only, in the first workload only), contender still running: create
     pods at a steady rate (default 1 000 pods at 100/s, then 1 000 at
     500/s) and take, per pod, the time from the watcher seeing it created
     to the watcher seeing it bound;
  6. stop everything, remove the lab.

--workloads may also name scheduler_perf's volume workloads (in-tree-pvs,
migrated-pvs, csi-pvs: bench/volumes.py), not run by default: as basic,
each pod with a pre-bound volume and claim of its own, all created and
Bound before the contender starts, on a lab with the volume binder
(--controllers) and, but for in-tree-pvs, CSINodes; and each as
NAME-backlog, run as backlog.

Each measurement runs in every --workloads and every --settings: "shared"
(every process on all CPUs: a small control-plane node) and "dedicated" (the
lab, the watcher and the pod creator on one half of the CPUs, the contender
alone on the other; on 2 CPUs, one and one). The contenders' order is
shuffled in each run. Then the scale run (bench/scale.py, --scale): one
large cluster with most pods already placed, toy-scheduler and
kube-scheduler, in each setting.

A default run takes about 4.2 hours on 2 CPUs. It is measured in groups (a
node count, run, workload and setting with all its contenders), each kept
on disk when finished: stopped (Ctrl-C, --budget), the same command goes on
from the next group. bench/progress.py says when progress is discarded.

Only the standard library: Python 3.11 is everywhere meson is.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from apiserver import ApiServer, ScheduledEvents, counter_delta
from harness import (Lab, PageFeed, Watcher, create_pods, creation, drain_figures, machine_busy_seconds, percentile,
                     proc_cpu_seconds, proc_hwm_mib, stop, stop_descendants)
from contenders import contender_cmd
from common import (CEILING, CONTENDERS, DEFAULT_PODS, INIT_NS, INIT_PODS, KUBE_LAB, KUBE_SCHEDULER, LABELS,
                    LAT_NS, LATENCY_CONTENDERS, ROOT, SETTINGS, TOY, TPUT_NS, WORKLOADS, log, rates, setting_cpus)
from progress import PROGRESS_DIR, Progress, measured_code, now, run_key
from plots import plot_latency, plot_throughput
from report import fmt, latency_rates, machine, old_latency, render, summarize, write_results_md
from targets import render_targets
from scale import SCALE_CONTENDERS, parse_scale, render_scale, run_scale
from volumes import VOLUME_WORKLOADS, create_volume_pods, is_backlog, lab_flags, prepare_volumes, volume_workload


def perf_average(bound_ns: list[int], start_ns: int) -> tuple[float | None, int]:
    """scheduler_perf's SchedulingThroughput Average, replayed from the bind
    times: a sample every 1 s from the contender's start; nothing until a pod
    is bound; the first sample with pods skipped; a second with no new pod is
    folded into the next; the collector stops at the last bind (the partial
    second after the last tick is lost, as when the workload ends)."""
    if not bound_ns:
        return None, 0
    ts = sorted(bound_ns)
    last = ts[-1]
    samples: list[float] = []
    started = False
    last_count = 0
    last_t = start_ns
    i = 0
    tick = start_ns
    while True:
        tick += 1_000_000_000
        if tick > last:
            break
        while i < len(ts) and ts[i] <= tick:
            i += 1
        if i == 0:
            continue
        if not started:
            started, last_count, last_t = True, i, tick
            continue
        if i == last_count:
            continue
        samples.append((i - last_count) / ((tick - last_t) / 1e9))
        last_count, last_t = i, tick
    return (statistics.fmean(samples) if samples else None), len(samples)


def latency_phases(c: str, workload: str, args) -> bool:
    """Whether this measurement ends with the latency phases: for the latency
    contenders, in the first workload measured only (the phases do not
    depend on how the throughput pods came)."""
    return c in LATENCY_CONTENDERS and workload == args.workloads.split(",")[0]


def init_count(nodes: int, args) -> int:
    return args.init_pods or INIT_PODS.get(nodes, nodes)


def create_for(workload: str, lab, api, scheduler: str, ns: str, count: int, prefix: str = "p-") -> dict:
    """The workload's pods: bench-ceiling create's, or with a claim each (bench/volumes.py)."""
    if volume_workload(workload):
        return create_volume_pods(api, scheduler, ns, count, prefix)
    return create_pods(lab.kubeconfig, scheduler, ns, count, prefix=prefix)


def place_initial_pods(c: str, nodes: int, args, lab, scheduler: str, watcher, init_events, res: dict) -> None:
    """SchedulingBasic's initial pods, bound by the contender and given their
    Scheduled events before the window opens."""
    init = init_count(nodes, args)
    create_for(res["workload"], lab, ApiServer(lab.dir), scheduler, INIT_NS, init, prefix="i-")
    if not watcher.wait(lambda: watcher.bound_in.get(INIT_NS, 0) >= init, 120 + init / 20,
                        f"{init} initial pods bound by {LABELS[c]}"):
        raise RuntimeError("the initial pods were not all bound")
    if init_events is not None:
        bound_ns = time.time_ns()
        if not watcher.wait(lambda: init_events.count() >= init or init_events.error is not None,
                            60 + init / 50, f"the {init} initial pods' Scheduled events"):
            raise RuntimeError("the initial pods' Scheduled events did not all come")
        if init_events.error is not None:
            raise RuntimeError(f"the initial pods' Scheduled-event watch failed: {init_events.error}")
        res["init_events_after_binds_s"] = (time.time_ns() - bound_ns) / 1e9
    res["init_pods"] = init


def job_done_figures(res: dict, proc, lab, api, cpu0: float, at_start) -> None:
    """The contender's CPU and peak RSS, the lab's CPU, the machine's other
    CPU and the server's request counters since the window opened
    (at_start: the lab's CPU, the machine's busy time and the counters then)."""
    lab_cpu0, busy0, counters0 = at_start
    cpu1 = proc_cpu_seconds(proc.pid)
    res["cpu_s"] = cpu1 - cpu0 if cpu1 is not None else None
    res["peak_rss_mib"] = proc_hwm_mib(proc.pid)
    lab_cpu1 = proc_cpu_seconds(lab.pid)
    res["lab_cpu_s"] = lab_cpu1 - lab_cpu0 if lab_cpu0 is not None and lab_cpu1 is not None else None
    # What else ran in the window: the machine's busy time less the contender and the lab (the watcher,
    # the event watch and this script are in it, and anything a quiet machine should not be running).
    res["machine_cpu_s"] = machine_busy_seconds() - busy0
    if res["cpu_s"] is not None and res["lab_cpu_s"] is not None:
        res["other_cpu_s"] = res["machine_cpu_s"] - res["cpu_s"] - res["lab_cpu_s"]
    res["apiserver"] = counter_delta(counters0, api.counters())


def drain_results(res: dict, watcher, events, start_ns: int, backlog: bool, complete: bool) -> None:
    """The drain's figures from the watcher's bind stamps: pods/s, whole job,
    per-second average, requests and CPU per pod."""
    bt = sorted(t for k, t in watcher.bound.items() if k.startswith(TPUT_NS + "/"))
    res["bound"] = len(bt)
    res["complete"] = complete
    if len(bt) >= 2:
        res["first_bind_after_start_s"] = (bt[0] - start_ns) / 1e9
        # backlog: from the first bind (n - 1 intervals); basic: from the first measured pod seen created
        created = [t for k, t in watcher.seen.items() if k.startswith(TPUT_NS + "/")]
        t0, intervals = (bt[0], len(bt) - 1) if backlog else (min(created + bt), len(bt))
        res.update(drain_figures(bt, t0, intervals, list(events.first.values()) if events else []))
    reqs = sum(v for k, v in res["apiserver"]["requests"].items() if " " in k)  # resource requests only
    res["requests_per_pod"] = reqs / len(bt) if bt else None
    avg, n = perf_average(bt, start_ns)
    res["perf_avg_pods_per_s"], res["perf_samples"] = avg, n
    if res["cpu_s"] is not None and bt:
        res["cpu_s_per_1000"] = res["cpu_s"] / (len(bt) / 1000)
    if res.get("lab_cpu_s") is not None and bt:
        res["lab_cpu_s_per_1000"] = res["lab_cpu_s"] / (len(bt) / 1000)


def run_latency_phases(res: dict, args, lab, scheduler: str, watcher, proc) -> None:
    """Pods created at each --latency-rate; created-to-bound per pod."""
    res["latency"] = {}
    for rate in args.latency_rate:  # one namespace per rate: the watcher counts its pods apart
        ns = f"{LAT_NS}-{rate:g}"
        create_pods(lab.kubeconfig, scheduler, ns, args.latency_pods, rate=rate, prefix="l-")
        watcher.wait(lambda: watcher.bound_in.get(ns, 0) >= args.latency_pods, 60, f"the latency pods at "
                     f"{rate:g}/s")
        lat = [(watcher.bound[k] - watcher.seen[k]) / 1e6 for k in watcher.bound
               if k.startswith(ns + "/") and k in watcher.seen]
        res["latency"][f"{rate:g}"] = {"pods": len(lat), "p50_ms": percentile(lat, 50),
                                       "p99_ms": percentile(lat, 99), "max_ms": max(lat) if lat else None}
    res["peak_rss_after_latency_mib"] = proc_hwm_mib(proc.pid)


def reference_errors(res: dict, c: str, work: Path) -> None:
    """The failures the bind ceiling and the client-go reference count in their logs."""
    if c == "ceiling":
        out = (work / "ceiling.log").read_text()
        m = re.search(r"bound (\d+) conflicts (\d+) errors (\d+)", out)
        if m:
            res["ceiling_errors"] = int(m.group(3))
    if c == "client-go":
        m = re.search(r"bound (\d+) failed (\d+) events (\d+) event-failed (\d+)", (work / f"{c}.log").read_text())
        if m:
            res["client_go_errors"] = int(m.group(2)) + int(m.group(4))


def wait_whole_job(c: str, pods: int, args, watcher, events) -> bool:
    """Whether every measured pod was seen bound and, where the contender
    posts them, given its Scheduled event, in time."""
    ok = watcher.wait(lambda: watcher.bound_in.get(TPUT_NS, 0) >= pods, args.drain_timeout or 120 + pods / 20,
                      f"{pods} pods bound by {LABELS[c]}")
    if ok and events is not None:
        ok = watcher.wait(lambda: events.count() >= pods or events.error is not None, 60 + pods / 50,
                          f"the {pods} pods' Scheduled events")
        if events.error is not None:
            raise RuntimeError(f"the Scheduled-event watch failed: {events.error}")
    return ok


def is_incomplete(res: dict, c: str, workload: str, args) -> bool:
    """A drain not complete, or a latency phase short of its pods: its logs are kept."""
    lat = res.get("latency", {})
    return not res.get("complete") or latency_phases(c, workload, args) and any(
        lat.get(f"{rate:g}", {}).get("pods", 0) < args.latency_pods for rate in args.latency_rate)


def measure(c: str, setting: str, workload: str, nodes: int, pods: int, run: int, args, work: Path) -> dict:
    work.mkdir(parents=True)
    scheduler = f"bench-{c}-{run}"
    backlog = is_backlog(workload)
    res: dict = {"contender": c, "setting": setting, "workload": workload, "nodes": nodes, "pods": pods, "run": run,
                 "scheduler_name": scheduler,
                 # other work on the machine shows here first: the figures are only comparable when it is low
                 "loadavg_1m": float(Path("/proc/loadavg").read_text().split()[0])}
    all_cpus = os.sched_getaffinity(0)
    lab_cpus, contender_cpus = setting_cpus(setting)
    res["lab_cpus"], res["contender_cpus"] = sorted(lab_cpus), sorted(contender_cpus)
    lab = Lab(work, nodes, lab_flags(workload))
    watcher = events = init_events = proc = page = None
    try:
        # This process, and so the lab, the watcher and the creator it starts, on the lab's CPUs.
        os.sched_setaffinity(0, lab_cpus)
        lab.start(timeout=300)  # 5 000 nodes take a while to create
        res["lab_ready_s"] = round(lab.ready_seconds, 2)
        api = ApiServer(lab.dir)
        # a volume workload's volumes and claims, all Bound before the contender starts and before any pod
        res.update(prepare_volumes(api, workload, {INIT_NS: 0 if backlog else init_count(nodes, args), TPUT_NS: pods}))
        if backlog:  # every measured pod pending before the contender starts
            res.update(creation(create_for(workload, lab, api, scheduler, TPUT_NS, pods)))
        watcher = Watcher(work, lab.kubeconfig, scheduler)
        if not watcher.wait(lambda: watcher.synced is not None and len(watcher.seen) >= (pods if backlog else 0),
                            60, "the watcher's list"):
            raise RuntimeError("the watcher did not list the pods")
        events = ScheduledEvents(api, TPUT_NS) if c != "ceiling" else None  # the ceiling posts no events
        # SchedulingBasic's initial pods are done when bound and given their events, as the measured pods are:
        # events held past the last initial bind would otherwise be counted in the measured window.
        # It stays open, idle, through the window: closing it there would put its end (a watch is counted in
        # apiserver_request_total when it ends) among the window's requests.
        init_events = ScheduledEvents(api, INIT_NS) if c != "ceiling" and not backlog else None
        log(f"{nodes} nodes, run {run}, {setting}, {workload}: {LABELS[c]} starts on "
            + (f"{pods} pending pods (created in {res['create_s']:.1f}s)" if backlog else "an empty queue"))
        err = open(work / f"{c}.log", "w")
        if backlog:  # the window opens with the contender: its start-up is in it
            lab_cpu0, busy0, counters0 = proc_cpu_seconds(lab.pid), machine_busy_seconds(), api.counters()
        start_ns = time.time_ns()
        proc = subprocess.Popen(contender_cmd(c, lab.kubeconfig, scheduler, work), stdout=err, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: os.sched_setaffinity(0, contender_cpus))
        if c == "toy-page":
            page = PageFeed(work / f"{c}.log", proc)
        cpu0 = 0.0
        if not backlog:  # SchedulingBasic: the initial pods placed, then the measured pods created while it runs
            place_initial_pods(c, nodes, args, lab, scheduler, watcher, init_events, res)
            cpu0 = proc_cpu_seconds(proc.pid) or 0.0
            lab_cpu0, busy0, counters0 = proc_cpu_seconds(lab.pid), machine_busy_seconds(), api.counters()
            start_ns = time.time_ns()
            res.update(creation(create_for(workload, lab, api, scheduler, TPUT_NS, pods)))
        ok = wait_whole_job(c, pods, args, watcher, events)
        # The whole job is done: CPU, memory and the server's counters, all at this one point.
        job_done_figures(res, proc, lab, api, cpu0, (lab_cpu0, busy0, counters0))
        if proc.poll() is not None:
            raise RuntimeError(f"{LABELS[c]} exited with {proc.returncode}; see {work / (c + '.log')}")
        drain_results(res, watcher, events, start_ns, backlog, ok)
        if ok and latency_phases(c, workload, args):
            run_latency_phases(res, args, lab, scheduler, watcher, proc)
        if page:
            res["page_messages"], res["page_bytes"] = page.messages, page.bytes
        return res
    finally:
        stop(proc)
        for watch in (events, init_events):
            if watch:
                watch.stop()
        os.sched_setaffinity(0, all_cpus)
        if page:
            page.stop()  # after the scheduler: its exit ends the stream the reader waits on
        if proc is not None:
            reference_errors(res, c, work)
        if watcher:
            watcher.stop()
        incomplete = is_incomplete(res, c, workload, args)
        lab.close(keep=args.keep or incomplete)
        if incomplete:
            args.keep_work = True
            log(f"  incomplete: logs kept in {work}")


# ------------------------------------------------------------------ report


def rerender(args) -> int:
    """RESULTS.md and throughput.png again from a saved run (the figures and
    the run's own date, command and machine; only the wording is new)."""
    saved = json.loads(Path(args.from_json).read_text())
    results, info, wall = saved["results"], saved["info"], saved["wall_seconds"]
    node_counts = sorted({r["nodes"] for r in results})
    contenders = [c for c in CONTENDERS if any(r["contender"] == c for r in results)]
    pods = {r["nodes"]: r["pods"] for r in results}
    cmd = info["command"].split()
    if "--runs" in cmd:
        args.runs = int(cmd[cmd.index("--runs") + 1])
    if "--latency-rate" in cmd:
        args.latency_rate = rates(cmd[cmd.index("--latency-rate") + 1])
    if "--latency-pods" in cmd:
        args.latency_pods = int(cmd[cmd.index("--latency-pods") + 1])
    old_latency(results, args)
    summary = summarize(results, node_counts, contenders)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_results_md(out_dir / "RESULTS.md", render(results, summary, node_counts, contenders, info, args, wall,
                                                    lambda n: pods[n], render_scale(saved.get("scale", [])),
                                                    render_targets(results, saved.get("scale", []), node_counts)))
    if Path(args.from_json).resolve() != (out_dir / "sched-results.json").resolve():
        shutil.copy(args.from_json, out_dir / "sched-results.json")
    work = Path(tempfile.mkdtemp(prefix="toysched-bench."))
    plot_throughput(out_dir, work, summary, node_counts, contenders)
    plot_latency(out_dir, work, summary, contenders, latency_rates(results))
    shutil.rmtree(work, ignore_errors=True)
    log(f"wrote {out_dir / 'RESULTS.md'} from {args.from_json}")
    return 0


def measure_logged(c: str, setting: str, workload: str, n: int, pods: int, run: int, args, work: Path) -> dict:
    try:
        r = measure(c, setting, workload, n, pods, run, args, work)
    except Exception as e:  # one failed measurement must not lose the others
        log(f"{n} nodes, run {run}, {setting}, {workload}, {LABELS[c]}: FAILED: {e}")
        return {"contender": c, "setting": setting, "workload": workload, "nodes": n, "pods": pods, "run": run,
                "error": str(e)}
    log(f"  {LABELS[c]}: {r.get('bound')}/{r['pods']} bound, {fmt(r.get('pods_per_s'))} pods/s binds, "
        f"{fmt(r.get('job_pods_per_s'))} whole job, CPU {fmt(r.get('cpu_s'), 2)} s, "
        f"RSS {fmt(r.get('peak_rss_mib'))} MiB, {fmt(r.get('requests_per_pod'), 2)} requests/pod, "
        f"other CPU {fmt(r.get('other_cpu_s'), 2)} s"
        + "".join(f", latency at {k}/s p50 {fmt(v['p50_ms'], 1)} ms p99 {fmt(v['p99_ms'], 1)} ms"
                  for k, v in r.get("latency", {}).items()))
    return r


def interrupted(*_) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: what follows is cleanup
    raise KeyboardInterrupt


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="./dev bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="500,5000", help="node counts, comma-separated (default 500,5000)")
    ap.add_argument("--pods", type=int, default=0,
                    help="measured pods per node count (default: 2000 at 500 nodes, 10000 at 5000, else 2/node)")
    ap.add_argument("--init-pods", type=int, default=0,
                    help="SchedulingBasic's initial pods (default: 500 at 500 nodes, 1000 at 5000, else one a node)")
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per contender; medians and the median of paired ratios are reported (default 5)")
    ap.add_argument("--contenders", default=",".join(CONTENDERS), help="subset of " + ",".join(CONTENDERS))
    ap.add_argument("--settings", default=",".join(SETTINGS),
                    help="shared (all CPUs for every process) and/or dedicated (the lab on half the CPUs, the "
                    "contender alone on the other half); default both")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="basic (SchedulingBasic: initial pods placed, then the measured pods created while the "
                    "contender runs) and/or backlog (the measured pods all pending before it starts); default both. "
                    "Not in the default: " + ", ".join(VOLUME_WORKLOADS) + " (scheduler_perf's volume workloads, "
                    "as basic, each pod with a pre-bound volume and claim of its own: bench/volumes.py), and each "
                    "as NAME-backlog")
    ap.add_argument("--latency-rate", type=rates, default=rates("100,500"),
                    help="pods/s of the latency phases, comma-separated (default 100,500); 0: none")
    ap.add_argument("--latency-pods", type=int, default=1000, help="pods created in each latency phase (default 1000)")
    ap.add_argument("--scale", default="15000:150000:10000",
                    help="the scale run, NODES:PLACED:PENDING (pods placed before the contender starts, pods it "
                    "places); 0: none (default 15000:150000:10000)")
    ap.add_argument("--scale-contenders", default=",".join(SCALE_CONTENDERS),
                    help="contenders of the scale run (default toy,kube-scheduler)")
    ap.add_argument("--drain-timeout", type=float, default=0,
                    help="seconds to wait for the drain (default 120 + pods/20)")
    ap.add_argument("--out", default=str(ROOT / "bench"), help="where RESULTS.md and throughput.png go")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, watch stamps)")
    ap.add_argument("--budget", type=float, default=0,
                    help="minutes: start no group after this long (at least one group is measured); the run "
                    "stops with exit status 3 and the same command goes on from there (default 0: no limit)")
    ap.add_argument("--progress", default=str(PROGRESS_DIR),
                    help="where finished groups are kept until the run is complete (default bench/progress: "
                    "tracked, so a commit carries a long run's progress to the next checkout)")
    ap.add_argument("--fresh", action="store_true", help="discard the progress of an earlier sitting: start over")
    ap.add_argument("--from-json", help="no run: rewrite RESULTS.md and the plot from a saved sched-results.json")
    return ap


def chosen(ap, args):
    """--contenders, --settings and --workloads as lists, each name checked."""
    contenders = [c for c in args.contenders.split(",") if c]
    for c in contenders:
        if c not in CONTENDERS:
            ap.error(f"unknown contender {c}")
    settings = [x for x in args.settings.split(",") if x]
    for x in settings:
        if x not in SETTINGS:
            ap.error(f"unknown setting {x}")
    workloads = [x for x in args.workloads.split(",") if x]
    for x in workloads:
        if x not in WORKLOADS and volume_workload(x) is None:
            ap.error(f"unknown workload {x}")
    if "dedicated" in settings and len(os.sched_getaffinity(0)) < 2:
        ap.error("--settings dedicated needs 2 CPUs or more")
    return contenders, settings, workloads


def measure_groups(groups, progress, measure, scale_groups, scale, contenders, pods_for, args, work: Path) -> bool:
    """Each group not measured yet, kept in the progress file as it ends;
    False when --budget ran out first (at least one group is measured)."""
    t0 = time.monotonic()
    measured = 0
    for group in groups:
        if progress.done(group):
            continue
        if measured and args.budget and time.monotonic() - t0 > args.budget * 60:
            log(f"--budget {args.budget:g} min spent: {progress.left(groups)} of {len(groups)} groups left; "
                "run the same command again to measure them")
            return False
        started, g0 = now(), time.monotonic()
        if group in scale_groups:
            rs = run_scale(scale, [c for c in args.scale_contenders.split(",") if c], [scale_groups[group]], args,
                           work)
        else:
            n, run, workload, setting = measure[group]
            order = list(contenders)
            random.Random(f"{n}/{run}/{setting}/{workload}").shuffle(order)  # none always first or last
            rs = [measure_logged(c, setting, workload, n, pods_for(n), run, args,
                                 work / f"{n}-{run}-{workload}-{setting}-{c}") for c in order]
        progress.add(group, started, time.monotonic() - g0, rs)
        measured += 1
    return True


def main() -> int:
    ap = parser()
    args = ap.parse_args()

    if args.from_json:
        return rerender(args)
    node_counts = [int(x) for x in args.nodes.split(",") if x]
    contenders, settings, workloads = chosen(ap, args)
    for p in (KUBE_LAB, KUBE_SCHEDULER, TOY, CEILING):
        if not os.access(p, os.X_OK):
            log(f"{p} is missing: run ./dev build (bench-ceiling needs subdir('bench') in meson.build)")
            return 1

    def pods_for(n: int) -> int:
        return args.pods or DEFAULT_PODS.get(n, max(50, 2 * n))

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    info = machine()
    info["date"] = now()
    info["command"] = " ".join(["./dev bench"] + sys.argv[1:])
    code = measured_code()
    if code is None:
        log("not a git checkout: no progress is kept, the run must finish in one sitting")
        code = f"unversioned {time.time_ns()}"
    progress = Progress(Path(args.progress), run_key(code, args), info, args.fresh)
    # Each group as the progress file keys it, with what it measures.
    measure = {f"{n}/{run}/{workload}/{setting}": (n, run, workload, setting) for n in node_counts
               for run in range(1, args.runs + 1) for workload in workloads for setting in settings}
    scale = parse_scale(args.scale)
    scale_groups = {f"scale/{setting}": setting for setting in settings} if scale else {}
    groups = list(measure) + list(scale_groups)
    if progress.groups:
        log(f"resuming {progress.path}: {len(groups) - progress.left(groups)} of {len(groups)} groups measured "
            f"since {progress.header['began']}")
    work = Path(tempfile.mkdtemp(prefix="toysched-bench."))
    log(f"work directory {work}; progress in {progress.path}")
    # SIGTERM as Ctrl-C: every measurement's cleanup runs (no lab left behind), the group in hand is dropped.
    signal.signal(signal.SIGTERM, interrupted)
    if not measure_groups(groups, progress, measure, scale_groups, scale, contenders, pods_for, args, work):
        shutil.rmtree(work, ignore_errors=True)
        return 3
    results, scale_results = progress.results(list(measure)), progress.results(list(scale_groups))
    info, wall = progress.info(), progress.wall_seconds()
    summary = summarize(results, node_counts, contenders)
    (out_dir / "sched-results.json").write_text(json.dumps(
        {"info": info, "wall_seconds": wall, "results": results, "scale": scale_results,
         "summary": {f"{k[0]}/{k[1]}": v for k, v in summary.items()}}, indent=1) + "\n")
    write_results_md(out_dir / "RESULTS.md", render(results, summary, node_counts, contenders, info, args, wall,
                                                    pods_for, render_scale(scale_results),
                                                    render_targets(results, scale_results, node_counts)))
    plotted = [p for p, ok in (("throughput.png", plot_throughput(out_dir, work, summary, node_counts, contenders)),
                               ("latency.png", plot_latency(out_dir, work, summary, contenders,
                                                            latency_rates(results)))) if ok]
    log(f"wrote {out_dir / 'RESULTS.md'}" + "".join(f", {out_dir / p}" for p in plotted)
        + f" in {wall / 60:.1f} min")
    progress.remove()
    if args.keep or getattr(args, "keep_work", False):
        log(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    # kube-scheduler not completing the scale run is a figure; toy-scheduler not completing it is a failure
    failed = [r for r in results + [r for r in scale_results if r["contender"] == "toy"]
              if "error" in r or not r.get("complete")]
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the finished groups are on disk; the one in hand is dropped
        log("interrupted: stopping the lab and the contender; the same command goes on from the last finished group")
        stop_descendants()
        sys.exit(130)
