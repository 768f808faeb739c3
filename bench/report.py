"""The benchmark's report: medians, the RESULTS.md section, the plot.
Split from run.py, which measures; this only formats what it measured."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import subprocess
from pathlib import Path

from common import (INIT_PODS, KUBECTL, LABELS, PAIRS, PARALLELISM, ROOT, SECTION_BEGIN, SECTION_END, TOY, VERBOSITY,
                    setting_label)
from volumes import is_backlog, upstream_name


def figure(r: dict, key: str):
    """r[key]; latency_<rate>_<p50|p99>_ms reads r["latency"][rate] (kept
    nested in the results, so nothing derived is saved beside it)."""
    if key.startswith("latency_") and key.count("_") == 3:
        _, rate, p, _ = key.split("_")
        return r.get("latency", {}).get(rate, {}).get(f"{p}_ms")
    return r.get(key)


def median(rs: list[dict], key: str) -> float | None:
    xs = [v for v in (figure(r, key) for r in rs) if v is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=0, unit="") -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{nd}f}{unit}"


def machine() -> dict:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = "unknown"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"

    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
        except OSError:
            return ""
    commit = out(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    if out(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]):
        # Which changes: the same hash means the same tree, so two runs can be told apart or matched.
        diff = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD"], capture_output=True).stdout
        commit += f" (with uncommitted changes: `git diff HEAD` sha256 {hashlib.sha256(diff).hexdigest()[:12]})"
    kv = out([str(KUBECTL), "version", "--client", "-o", "json"])
    try:
        kv = json.loads(kv)["clientVersion"]["gitVersion"]
    except (ValueError, KeyError):
        kv = "unknown"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "kernel": platform.release(),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
        "toy_version": out([str(TOY), "--version"]),
        "commit": commit,
        "kubernetes": kv,
        "compiler": out(["c++", "--version"]).splitlines()[0] if out(["c++", "--version"]) else "",
    }


def old_latency(results: list[dict], args) -> None:
    """A result saved before the latency phases had rates: its one phase, at
    the first --latency-rate of its command (100/s then), in today's form."""
    for r in results:
        if "latency" not in r and r.get("latency_p50_ms") is not None:
            r["latency"] = {f"{args.latency_rate[0]:g}": {
                "pods": r.get("latency_pods"), "p50_ms": r["latency_p50_ms"], "p99_ms": r.get("latency_p99_ms"),
                "max_ms": r.get("latency_max_ms")}}


def latency_rates(results: list[dict]) -> list[str]:
    """The latency phases' rates found in the results, slowest first."""
    return sorted({k for r in results for k in r.get("latency", {})}, key=float)


def workload_of(r: dict) -> str:
    """A result's workload (one from before workloads: backlog, all there was)."""
    return r.setdefault("workload", "backlog")


def in_group(r: dict, workload: str, setting: str, n: int) -> bool:
    return workload_of(r) == workload and r["setting"] == setting and r["nodes"] == n


def paired_ratios(results: list[dict], group: tuple, a: str, b: str, key: str) -> list[float]:
    """Contender a over b, run by run within one (workload, setting, node
    count) group (the same run index: the same hour, the same machine
    state), sorted."""
    runs = {}
    for r in results:
        if in_group(r, *group) and "error" not in r and figure(r, key) is not None:
            runs.setdefault(r["run"], {})[r["contender"]] = figure(r, key)
    return sorted(v[a] / v[b] for v in runs.values() if a in v and b in v and v[b])


def paired(results: list[dict], group: tuple, a: str, b: str, key: str) -> str:
    """paired_ratios as "median [min-max]"; one pair: just it."""
    rs = paired_ratios(results, group, a, b, key)
    if not rs:
        return "n/a"
    if len(rs) == 1:
        return f"{rs[0]:.2f}×"
    return f"{statistics.median(rs):.2f}× [{rs[0]:.2f}-{rs[-1]:.2f}]"


def settings_of(results: list[dict]) -> list[str]:
    """The settings measured, in order (a result from before settings: shared)."""
    seen = []
    for r in results:
        if r.setdefault("setting", "shared") not in seen:
            seen.append(r["setting"])
    return seen


def summarize(results: list[dict], node_counts: list[int], contenders: list[str]) -> dict:
    """Medians per (workload, setting, node count, contender):
    summary[(workload, setting, n)][c]."""
    summary = {}
    workloads = list(dict.fromkeys(workload_of(r) for r in results))
    for workload, setting in ((wl, st) for wl in workloads for st in settings_of(results)):
        for n in node_counts:
            if not any(in_group(r, workload, setting, n) for r in results):
                continue
            group = summary[(workload, setting, n)] = {}
            for c in contenders:
                rs = [r for r in results if in_group(r, workload, setting, n) and r["contender"] == c
                      and "error" not in r]
                keys = ["pods_per_s", "job_pods_per_s", "perf_avg_pods_per_s", "cpu_s_per_1000", "peak_rss_mib",
                        "lab_cpu_s_per_1000", "create_s", "create_pods_per_s", "drain_s",
                        "first_bind_after_start_s", "lab_ready_s", "requests_per_pod", "events_after_binds_s",
                        "other_cpu_s"] + [f"latency_{k}_{p}_ms" for k in latency_rates(results) for p in ("p50", "p99")]
                group[c] = {k: median(rs, k) for k in keys}
                group[c]["runs"] = len(rs)
                group[c]["complete"] = all(r.get("complete") for r in rs) and bool(rs)
                group[c]["cpus"] = (rs[0].get("lab_cpus"), rs[0].get("contender_cpus")) if rs else (None, None)
    return summary


def measured_command(command: str) -> str:
    """The command without the options that only say when to stop or where
    to keep progress (run.py's --budget, --progress, --fresh): the one to
    type to measure the same thing again."""
    words, out = command.split(), []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--budget", "--progress"):
            skip = True
        elif word != "--fresh" and not word.startswith(("--budget=", "--progress=")):
            out.append(word)
    return " ".join(out)


def render(results, summary, node_counts, contenders, info, args, wall_s, pods_for, scale_lines=(),
           target_lines=()) -> str:
    L = []
    w = L.append
    w(SECTION_BEGIN)
    w("## Scheduling: toy-scheduler, kube-scheduler and two references")
    w("")
    render_setting(w, info, wall_s)
    L.extend(target_lines)  # bench/targets.py's verdicts, first: what the reader came for
    rates_seen = latency_rates(results)
    render_method(w, args, rates_seen)
    for key in summary:
        render_group(w, results, summary[key], key, contenders, pods_for, rates_seen)
    L.extend(scale_lines)  # bench/scale.py's table
    render_runs(w, results)
    w("")
    w("![pods/s against node count](throughput.png)")
    w("")
    w("![latency p50 and p99 per contender](latency.png)")
    w(SECTION_END)
    return "\n".join(L) + "\n"


def render_setting(w, info, wall_s) -> None:
    """When, with what command, on what machine and versions, with which contenders."""
    w(f"- Date: {info['date']}; whole run {wall_s / 60:.1f} min (wall).")
    w(f"- Command: `{measured_command(info['command'])}`")
    w(f"- Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory']} RAM, Linux {info['kernel']}; "
      f"load average when the run began: {' '.join(info['loadavg'])}. Each table names its setting: "
      "**shared** (the lab (etcd + kube-apiserver), the contender, the watcher and the pod creator all on every "
      "CPU: a small control-plane node) or **dedicated** (the lab, the watcher and the creator pinned to one "
      "half of the CPUs, the contender alone on the other, `sched_setaffinity`).")
    w(f"- Versions: {info['toy_version']} at commit {info['commit']}; kube-scheduler, kube-apiserver and "
      f"kubectl {info['kubernetes']} (kube-lab); {info['compiler']}.")
    w(f"- Settings: client rate limits off for every contender (toy-scheduler `--kube-api-qps -1`, kube-scheduler "
      f"`clientConnection` QPS 1e6 / burst 2e6, the references unlimited); {PARALLELISM} bindings in flight "
      f"(toy `--bind-parallelism {PARALLELISM}`, the references `--parallelism {PARALLELISM}`; kube-scheduler binds "
      f"asynchronously without a fixed cap); both schedulers at `-v={VERBOSITY}` (one log line per bound pod), "
      "logging to a file.")
    w("- The contenders (bench/contenders.py writes their config files): **kube-scheduler** is the release's own "
      "command (`build/kube-scheduler --config`), with its default profile and adaptive percentageOfNodesToScore. "
      "**kube-scheduler, toy's plugins**: `multiPoint` with every default disabled, then exactly toy-scheduler's "
      "plugins and weights (the four it lacks are volume and DRA plugins none of these pods needs), contention "
      "profiling off. **every node scored**: that profile with `percentageOfNodesToScore: 100`, one file read by "
      "both schedulers. **client-go reference** (`kube-lab bind-reference`): client-go set up as kube-scheduler "
      "sets it up (protobuf, HTTP/2, an informer), a Binding to the next node in turn and a `Scheduled` event per "
      "pod, no decisions: the floor for two writes a pod. **bind ceiling (our client)**: toy-scheduler's own "
      "client posting Bindings in turn with no decisions and no events.")


def render_method(w, args, rates_seen) -> None:
    """How it is measured: the workload, the labs, the watcher, each column."""
    w("")
    w("### How it is measured")
    w("")
    w("- Workload as scheduler_perf SchedulingBasic: fake nodes 4 CPU / 32Gi / 110 pods (Ready, no kubelet: "
      "bound pods stay Pending and nothing else writes to them); measured pods of one pause container with "
      "requests = limits = 100m / 500Mi.")
    w("- Each contender, each run, gets a fresh lab (new kube-lab process, empty etcd) and its own "
      "schedulerName (`bench-<contender>-<run>`), so nothing left by one contender weighs on the next. The "
      "contenders' order is shuffled in each run.")
    w("- Two workloads, each table names its own. **SchedulingBasic** as scheduler_perf runs it: the contender "
      "starts on an empty queue and places the initial pods (scheduler_perf's initPods: 500 at 500 nodes, 1 000 "
      "at 5 000); then the measured pods are created while it runs (32 POSTs in flight, C++ client), and the "
      "window opens as they start: creation is inside it, and no contender can be faster than the creator. "
      "**backlog**: the measured pods are all created, pending, before the contender starts, so it only drains; "
      "their creation time is shown but not measured.")
    w("- A watcher (`bench-ceiling watch`: C++, the project's client, list+watch on the schedulerName) is listed "
      "before the contender starts and stamps each pod when it first sees it and when it sees `spec.nodeName` set. "
      "It re-watches as "
      "soon as the server ends a watch response, as the scheduler's own reflector does (kube-apiserver ends a "
      "watcher it finds slow with the final chunk but keeps the connection for its 90 s idle timeout). A second "
      "watch (bench/apiserver.py) stamps each pod's first `Scheduled` event.")
    w("- **binds pods/s** = backlog: (pods − 1) / (last bind seen − first bind seen); SchedulingBasic: pods / "
      "(last bind seen − first measured pod seen created). **whole job pods/s**: the same with the end at the "
      "moment every pod is bound *and* has its `Scheduled` event: a scheduler that posts its events after its "
      "binds is not done before they are. **per-second avg** = scheduler_perf's "
      "SchedulingThroughput Average replayed from the bind stamps (1 s samples from the window's start, "
      "first non-empty sample skipped, empty seconds folded into the next; in brackets, how many samples; n/a "
      "when the drain is too short to give one).")
    w("- **CPU s / 1000 pods** = the contender process's utime+stime (/proc/PID/stat) over the window (backlog: "
      "from its start, start-up and initial lists included; SchedulingBasic: from the first measured pod's "
      "creation) until the whole job is done, divided by thousands of pods. **Peak RSS** = "
      "VmHWM at the same moment. **apiserver CPU** = the lab process (etcd + kube-apiserver) over the same "
      "span, per 1000 pods. **requests / pod** = the growth of kube-apiserver's own `apiserver_request_total` "
      "(resource requests, every client; the watches are long-running and counted when they end) over the same "
      "span, per pod (in SchedulingBasic the pods' creation is in the window: one request more, and its apiserver "
      "CPU); the breakdown by verb and resource is in sched-results.json.")
    w("- **other CPU s** = the machine's busy CPU time (/proc/stat) over the same span less the contender's and "
      "the lab's: the watcher, the event watch, this script, in SchedulingBasic the pod creator, and anything "
      "else that ran. On a quiet machine it is small beside them; when it is not, the run's figures are suspect.")
    w("- **Latency** (phases after the drain, in the first workload measured, contender still running: "
      f"{args.latency_pods:,} pods at each of "
      f"{', '.join(r + '/s' for r in rates_seen) or 'no rate'}, created at a steady rate into a namespace of "
      "their own) = bound seen on the watch − created seen on the watch, per pod; p50 / p99 (nearest rank). It "
      "includes the watch delivery to the contender and back to the watcher, not the POST of the pod. A "
      "contender slower than the rate queues the pods, and its latency grows with the phase.")
    w(f"- Medians over {args.runs} run(s). The ratios are paired: toy-scheduler's figure over the other's in the "
      "same run (same workload, setting and node count, minutes apart), then the median of those ratios, with "
      "the lowest and highest in brackets. The latency phases run for toy-scheduler, kube-scheduler and the two "
      "references only.")


def render_group(w, results, group, group_key, contenders, pods_for, rates_seen) -> None:
    """One workload, setting and node count: the medians, the paired ratios, the set-up."""
    workload, setting, n = group_key
    cpus = next((group[c]["cpus"] for c in contenders if group[c]["runs"]), (None, None))
    label = setting_label(setting, cpus[0] or [], cpus[1] or []) if cpus[0] else setting
    init = next((r["init_pods"] for r in results if in_group(r, *group_key) and "init_pods" in r), INIT_PODS.get(n, n))
    what = (f"{upstream_name(workload)}: {init:,} initial pods placed, then {pods_for(n):,} measured pods created "
            "while it runs" if not is_backlog(workload) else f"{upstream_name(workload)}: {pods_for(n):,} pods pending "
            "before the contender starts")
    w("")
    w(f"### {n:,} nodes, {what}; {label}")
    w("")
    w("| contender | binds pods/s | whole job pods/s | per-second avg | CPU s / 1000 pods | peak RSS | "
      + "".join(f"latency p50 / p99 at {k}/s | " for k in rates_seen)
      + "apiserver CPU s / 1000 pods | requests / pod | other CPU s | runs |")
    w("|---|" + "---:|" * (9 + len(rates_seen)))
    for c in contenders:
        s = group[c]
        samples = [r.get("perf_samples", 0) for r in results if in_group(r, *group_key) and r["contender"] == c]
        incomplete = "" if s["complete"] else " (incomplete)"
        w(f"| {LABELS[c]}{incomplete} | {fmt(s['pods_per_s'])} | {fmt(s['job_pods_per_s'])} | "
          f"{fmt(s['perf_avg_pods_per_s'])} [{','.join(map(str, samples))}] | {fmt(s['cpu_s_per_1000'], 3)} | "
          f"{fmt(s['peak_rss_mib'], 0, ' MiB')} | "
          + "".join(f"{fmt(s[f'latency_{k}_p50_ms'], 1)} / {fmt(s[f'latency_{k}_p99_ms'], 1)} ms | "
                    for k in rates_seen)
          + f"{fmt(s['lab_cpu_s_per_1000'], 2)} | {fmt(s['requests_per_pod'], 2)} | {fmt(s['other_cpu_s'], 2)} | "
          f"{s['runs']} |")
    for a, b, what in PAIRS:
        if not group.get(a, {}).get("runs") or not group.get(b, {}).get("runs"):
            continue

        def pr(key):
            return paired(results, group_key, a, b, key)
        parts = [f"binds {pr('pods_per_s')}"]
        if what == "all":
            parts += [f"whole job {pr('job_pods_per_s')}", f"per-second avg {pr('perf_avg_pods_per_s')}",
                      f"CPU/1000 pods {pr('cpu_s_per_1000')}", f"peak RSS {pr('peak_rss_mib')}",
                      f"apiserver CPU/pod {pr('lab_cpu_s_per_1000')}", f"requests/pod {pr('requests_per_pod')}"]
            for k in rates_seen:
                if group[a].get(f"latency_{k}_p50_ms") is not None and group[b].get(f"latency_{k}_p50_ms") is not None:
                    parts += [f"latency at {k}/s p50 {pr(f'latency_{k}_p50_ms')}", f"p99 {pr(f'latency_{k}_p99_ms')}"]
        w("")
        w(f"{LABELS[a]} / {LABELS[b]} ({setting}, {workload}, paired runs): " + "; ".join(parts) + ".")
    cs = [group[c]["create_pods_per_s"] for c in contenders if group[c]["create_pods_per_s"]]
    ls = [group[c]["lab_ready_s"] for c in contenders if group[c]["lab_ready_s"]]
    w("")
    w(f"Lab ready in {fmt(statistics.median(ls) if ls else None, 1, ' s')} (not measured); the {pods_for(n):,} "
      f"pods created at {fmt(statistics.median(cs) if cs else None, 0)} pods/s (median; "
      + ("inside the window, with the contender running: a contender cannot go faster than this)."
         if not is_backlog(workload) else "before the window, not measured)."))


def render_runs(w, results) -> None:
    rates_seen = latency_rates(results)
    w("")
    w("### Every run")
    w("")
    w("| workload | setting | nodes | run | contender | bound | first bind after start | drain | binds pods/s | "
      "whole job pods/s | events after binds | per-second avg | CPU s | peak RSS | requests / pod | other CPU s | "
      + "".join(f"p50 / p99 at {k}/s | " for k in rates_seen) + "create | load avg 1 min |")
    w("|---|---|---:|---:|---|" + "---:|" * (14 + len(rates_seen)))
    for r in results:
        head = f"| {workload_of(r)} | {r['setting']} | {r['nodes']} | {r['run']} | {LABELS[r['contender']]} |"
        if "error" in r:
            w(f"{head} failed: {r['error'][:120]} |" + " |" * (13 + len(rates_seen)))
            continue
        lat = r.get("latency", {})
        w(f"{head} {r.get('bound', 0)}/{r['pods']} | "
          f"{fmt(r.get('first_bind_after_start_s'), 2, ' s')} | {fmt(r.get('drain_s'), 2, ' s')} | "
          f"{fmt(r.get('pods_per_s'))} | {fmt(r.get('job_pods_per_s'))} | "
          f"{fmt(r.get('events_after_binds_s'), 2, ' s')} | {fmt(r.get('perf_avg_pods_per_s'))} | "
          f"{fmt(r.get('cpu_s'), 2)} | {fmt(r.get('peak_rss_mib'), 0, ' MiB')} | "
          f"{fmt(r.get('requests_per_pod'), 2)} | {fmt(r.get('other_cpu_s'), 2)} | "
          + "".join(f"{fmt(lat.get(k, {}).get('p50_ms'), 1)} / {fmt(lat.get(k, {}).get('p99_ms'), 1)} ms | "
                    for k in rates_seen)
          + f"{fmt(r.get('create_s'), 1, ' s')} | {fmt(r.get('loadavg_1m'), 1)} |")


def write_results_md(path: Path, section: str, begin: str = SECTION_BEGIN, end: str = SECTION_END) -> None:
    """Replace the section between `begin` and `end` (the scheduling table's,
    unless told), keep everything else byte for byte."""
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1]
        new = head + section.rstrip("\n") + tail
    else:
        new = old.rstrip("\n") + "\n\n" + section
    path.write_text(new)
