"""The scale run of ./dev bench (`--scale NODES:PLACED:PENDING`, default
15000:150000:10000): one large cluster, most of it already placed. On a
fresh lab (--no-kubelet) for each contender:

  1. NODES nodes, then PLACED pods created already bound (spec.nodeName set,
     lab-node-1..N in turn: no scheduler involved), then PENDING pods for
     the contender;
  2. the contender starts, lists it all, and places the pending pods; the
     watcher and the event watch stop the clock as in run.py's backlog;
  3. read at that moment: its peak RSS, its CPU, and its own mean decision
     time per pod (scheduler_scheduling_algorithm_duration_seconds, sum over
     count, from its /metrics: toy-scheduler's plain HTTP endpoint,
     kube-scheduler's secure port with the lab's admin credentials).

Once per --settings (shared, dedicated: as run.py's).
kube-scheduler is reported if it completes. toy-scheduler's memory is
projected to 50 000 nodes as its RSS per node (the cluster's pods
included) times 50 000: the start-up baseline is counted in every node, so
the projection errs high.
"""
from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from pathlib import Path

from algorithm import free_port, histogram
from apiserver import ScheduledEvents, ApiServer
from common import KUBECTL, LABELS, TPUT_NS, log, setting_cpus
from contenders import contender_cmd
from harness import Lab, Watcher, create_pods, drain_figures, proc_cpu_seconds, proc_hwm_mib, stop
from report import fmt

SCALE_CONTENDERS = ("toy", "kube-scheduler")
PLACED_NS = "bench-placed"
PROJECT_TO_NODES = 50_000


def parse_scale(spec: str) -> tuple[int, int, int] | None:
    """--scale: "15000:150000:10000" -> (nodes, placed, pending); "0" -> None."""
    if spec in ("", "0"):
        return None
    nodes, placed, pending = (int(x) for x in spec.split(":"))
    return nodes, placed, pending


def metrics_text(c: str, port: int, kubeconfig: str) -> str:
    if c == "toy":
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            return r.read().decode()
    return subprocess.run([str(KUBECTL), "--kubeconfig", kubeconfig, "--server", f"https://127.0.0.1:{port}",
                           "--insecure-skip-tls-verify", "get", "--raw", "/metrics"],
                          capture_output=True, text=True, check=True, timeout=60).stdout


def scale_cmd(c: str, kubeconfig: str, scheduler: str, work: Path, port: int) -> list[str]:
    """The bench's own command for c, with its metrics served on `port`."""
    cmd = contender_cmd(c, kubeconfig, scheduler, work)
    i = cmd.index("--secure-port")
    if c == "toy":
        return cmd[:i] + cmd[i + 2:] + ["--secure-port", "0", "--metrics-bind-address", f"127.0.0.1:{port}"]
    return cmd[:i] + cmd[i + 2:] + ["--secure-port", str(port), "--bind-address", "127.0.0.1",
                                    "--authentication-kubeconfig", kubeconfig,
                                    "--authorization-kubeconfig", kubeconfig]


def measure_scale(c: str, setting: str, nodes: int, placed: int, pending: int, args, work: Path) -> dict:
    work.mkdir(parents=True)
    scheduler = f"bench-{c}-scale"
    res: dict = {"contender": c, "setting": setting, "nodes": nodes, "placed": placed, "pods": pending}
    all_cpus = os.sched_getaffinity(0)
    lab_cpus, contender_cpus = setting_cpus(setting)
    lab = Lab(work, nodes)
    watcher = events = proc = None
    try:
        os.sched_setaffinity(0, lab_cpus)  # this process, and so the lab, the watcher and the creator
        lab.start(timeout=1800)
        res["lab_ready_s"] = round(lab.ready_seconds, 1)
        cr = create_pods(lab.kubeconfig, "default-scheduler", PLACED_NS, placed, prefix="s-", placed_on=nodes)
        res["placed_create_s"] = round(cr["seconds"], 1)
        create_pods(lab.kubeconfig, scheduler, TPUT_NS, pending)
        watcher = Watcher(work, lab.kubeconfig, scheduler)
        if not watcher.wait(lambda: watcher.synced is not None and len(watcher.seen) >= pending, 120,
                            "the watcher's list"):
            raise RuntimeError("the watcher did not list the pods")
        events = ScheduledEvents(ApiServer(lab.dir), TPUT_NS)
        log(f"scale, {setting}: {LABELS[c]} starts on {nodes} nodes, {placed} placed pods, {pending} pending "
            f"(placed pods created in {cr['seconds']:.0f}s)")
        port = free_port()
        start_ns = time.time_ns()
        proc = subprocess.Popen(scale_cmd(c, lab.kubeconfig, scheduler, work, port),
                                stdout=open(work / f"{c}.log", "w"), stderr=subprocess.STDOUT,
                                preexec_fn=lambda: os.sched_setaffinity(0, contender_cpus))
        ok = watcher.wait(lambda: watcher.bound_in.get(TPUT_NS, 0) >= pending,
                          args.drain_timeout or 300 + pending / 10, f"{pending} pods bound by {LABELS[c]}")
        if ok:
            ok = watcher.wait(lambda: events.count() >= pending or events.error is not None, 60 + pending / 50,
                              f"the {pending} pods' Scheduled events")
        res["cpu_s"], res["peak_rss_mib"] = proc_cpu_seconds(proc.pid), proc_hwm_mib(proc.pid)
        if proc.poll() is not None:
            raise RuntimeError(f"{LABELS[c]} exited with {proc.returncode}; see {work / (c + '.log')}")
        bt = sorted(t for k, t in watcher.bound.items() if k.startswith(TPUT_NS + "/"))
        res["bound"], res["complete"] = len(bt), ok
        if len(bt) >= 2:
            res["first_bind_after_start_s"] = (bt[0] - start_ns) / 1e9
            res.update(drain_figures(bt, bt[0], len(bt) - 1, list(events.first.values())))  # as run.py's backlog
        seconds, count = histogram(metrics_text(c, port, lab.kubeconfig))
        res["decisions"] = count
        res["decision_us"] = 1e6 * seconds / count if count else None
        if res["peak_rss_mib"]:
            res["rss_per_node_kib"] = res["peak_rss_mib"] * 1024 / nodes
            res["projected_rss_mib"] = res["peak_rss_mib"] / nodes * PROJECT_TO_NODES
        return res
    finally:
        stop(proc, 20)
        if events:
            events.stop()
        if watcher:
            watcher.stop()
        os.sched_setaffinity(0, all_cpus)
        lab.close(keep=args.keep or not res.get("complete"))


def run_scale(spec: tuple[int, int, int], contenders: list[str], settings: list[str], args,
              work: Path) -> list[dict]:
    nodes, placed, pending = spec
    results = []
    for setting, c in ((s, c) for s in settings for c in contenders):
        try:
            r = measure_scale(c, setting, nodes, placed, pending, args, work / f"scale-{setting}-{c}")
        except Exception as e:  # kube-scheduler not completing is a result, not the end of the bench
            log(f"scale, {setting}: {LABELS[c]}: FAILED: {e}")
            r = {"contender": c, "setting": setting, "nodes": nodes, "placed": placed, "pods": pending,
                 "error": str(e)}
        else:
            log(f"scale, {setting}:   {LABELS[c]}: {r.get('bound')}/{pending} bound, "
                f"{fmt(r.get('pods_per_s'))} pods/s binds, "
                f"{fmt(r.get('job_pods_per_s'))} whole job, decision {fmt(r.get('decision_us'), 1)} µs/pod, "
                f"CPU {fmt(r.get('cpu_s'), 1)} s, RSS {fmt(r.get('peak_rss_mib'))} MiB")
        results.append(r)
    return results


def render_scale(results: list[dict]) -> list[str]:
    """The scale run's lines for RESULTS.md's generated section."""
    if not results:
        return []
    r0 = results[0]
    w = ["", f"### Scale: {r0['nodes']:,} nodes, {r0['placed']:,} pods placed, {r0['pods']:,} pending; one run "
         "per setting", "",
         "Each contender on a fresh lab, in the settings of the tables above; the placed pods are created bound "
         "(no scheduler involved) before it starts, so it lists them all. **decision** = its own "
         "scheduler_scheduling_algorithm_duration_seconds, sum over count (the filter and score of one pod). CPU "
         "and peak RSS from its start to the whole job's end. "
         f"**RSS at {PROJECT_TO_NODES:,} nodes** = peak RSS per node (its pods and the start-up baseline "
         f"included) × {PROJECT_TO_NODES:,}: an upper bound.", "",
         "| setting | contender | bound | binds pods/s | whole job pods/s | decision µs / pod | CPU s | peak RSS | "
         f"RSS per node | RSS at {PROJECT_TO_NODES:,} nodes |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        head = f"| {r.get('setting', 'shared')} | {LABELS[r['contender']]} |"
        if "error" in r:
            w.append(f"{head} did not complete: {r['error'][:160]} |" + " |" * 7)
            continue
        w.append(f"{head} {r['bound']}/{r['pods']} | {fmt(r.get('pods_per_s'))} | "
                 f"{fmt(r.get('job_pods_per_s'))} | {fmt(r.get('decision_us'), 1)} | {fmt(r.get('cpu_s'), 1)} | "
                 f"{fmt(r.get('peak_rss_mib'), 0, ' MiB')} | {fmt(r.get('rss_per_node_kib'), 1, ' KiB')} | "
                 f"{fmt(r.get('projected_rss_mib'), 0, ' MiB')} |")
    return w
