"""The targets of issues 20 and 21, judged against one run's figures: the
table at the head of RESULTS.md's generated section. Each target is a
paired ratio (toy-scheduler's figure over the other contender's in the
same run, then the median of those), or an absolute figure of the scale
run; it is met when that median is on the right side of the target. Where
it is not, the cell says by how much. Only formats what run.py measured
(bench/progress.py does not count it as measured code)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from report import fmt, in_group, paired_ratios, settings_of, workload_of


@dataclass(frozen=True)
class Target:
    text: str          # as the issue states it
    issue: str
    other: str         # the contender toy-scheduler is compared with
    key: str           # the figure compared (report.figure's names)
    bound: float       # the target ratio
    at_least: bool     # True: the ratio must reach bound; False: stay at or under it
    settings: tuple[str, ...] = ("shared", "dedicated")
    first_workload_only: bool = False  # the latency phases run in the first workload only


TARGETS = (
    Target("whole job ≥ 1.3× kube-scheduler with toy's plugins", "21", "kube-scheduler-matched", "job_pods_per_s",
           1.3, True, ("dedicated",)),
    Target("whole job ≥ 95 % of the client-go reference", "21", "client-go", "job_pods_per_s", 0.95, True,
           ("dedicated",)),
    Target("whole job ≥ 2× kube-scheduler", "21", "kube-scheduler", "job_pods_per_s", 2.0, True, ("shared",)),
    Target("apiserver CPU per pod ≤ 0.7× kube-scheduler's", "21", "kube-scheduler", "lab_cpu_s_per_1000", 0.7,
           False),
    Target("contender CPU per 1 000 pods ≤ 1/10 of kube-scheduler's", "21", "kube-scheduler", "cpu_s_per_1000", 0.1,
           False),
    Target("peak RSS ≤ 1/8 of kube-scheduler's", "21", "kube-scheduler", "peak_rss_mib", 0.125, False),
    Target("latency p50 at 100 pods/s ≤ ½ of kube-scheduler's", "20", "kube-scheduler", "latency_100_p50_ms", 0.5,
           False, first_workload_only=True),
    Target("latency p99 at 100 pods/s ≤ ½ of kube-scheduler's", "20, 21", "kube-scheduler", "latency_100_p99_ms",
           0.5, False, first_workload_only=True),
)


def meets(v: float, bound: float, at_least: bool) -> bool:
    return v >= bound if at_least else v <= bound


def verdict(v: float, bound: float, at_least: bool) -> str:
    if meets(v, bound, at_least):
        return "**met**"
    if at_least:
        short = 100 * (1 - v / bound)
        return f"missed, {short:.{1 if short < 10 else 0}f} % short"  # 0.949 against 0.95 is not "0 % short"
    return f"missed, {v / bound:.2f}× the target"


def cell(ratios: list[float], t: Target) -> str:
    if not ratios:
        return "n/a"
    m = statistics.median(ratios)
    spread = f" [{min(ratios):.2f}-{max(ratios):.2f}]" if len(ratios) > 1 else ""
    return f"{m:.2f}×{spread} {verdict(m, t.bound, t.at_least)}"


def render_targets(results: list[dict], scale: list[dict], node_counts: list[int]) -> list[str]:
    """The targets table (and the scale run's), as RESULTS.md lines; a
    target whose contenders were not both measured is left out."""
    workloads = list(dict.fromkeys(workload_of(r) for r in results))
    columns = [(n, wl) for n in node_counts for wl in workloads]
    settings = settings_of(results)
    measured = {r["contender"] for r in results}
    rows = []
    for t in (t for t in TARGETS if {"toy", t.other} <= measured):
        for setting in (s for s in settings if s in t.settings):
            cells, met, judged = [], 0, 0
            for n, wl in columns:
                if t.first_workload_only and wl != workloads[0] or not any(
                        in_group(r, wl, setting, n) for r in results):
                    cells.append("")
                    continue
                rs = paired_ratios(results, (wl, setting, n), "toy", t.other, t.key)
                cells.append(cell(rs, t))
                if rs:
                    judged += 1
                    met += meets(statistics.median(rs), t.bound, t.at_least)
            rows.append(f"| {t.text} ({t.issue}) | {setting} | " + " | ".join(cells) + f" | {met} of {judged} |")
    w = []
    if rows:
        w = ["", "Each cell: the median of toy-scheduler's paired ratios over the runs [lowest-highest], and whether "
             "it meets the target. The tables below hold the figures behind them.", "",
             "| target (issue) | setting | " + " | ".join(f"{n:,} nodes, {wl}" for n, wl in columns) + " | met |",
             "|---|---|" + "---|" * len(columns) + "---:|"] + rows
    w += scale_targets(scale)
    return ["", "### The targets, judged by this run"] + w if w else []


def scale_targets(scale: list[dict]) -> list[str]:
    """Issue 21's scale targets: toy-scheduler's RSS and decision time, and
    its whole job against kube-scheduler's (one run per setting)."""
    if not any(r["contender"] == "toy" for r in scale):
        return []
    r0 = scale[0]
    w = ["", f"Scale run ({r0['nodes']:,} nodes, {r0['placed']:,} pods placed, {r0['pods']:,} pending; one run "
         "per setting, so no spread):", "", "| target (issue) | setting | figure | met |", "|---|---|---|---|"]
    for setting in dict.fromkeys(r.get("setting", "shared") for r in scale):
        by = {r["contender"]: r for r in scale if r.get("setting", "shared") == setting and "error" not in r}
        toy, ks = by.get("toy", {}), by.get("kube-scheduler", {})
        rows = [("toy-scheduler's peak RSS ≤ 1 GiB", toy.get("peak_rss_mib"), 1024, False, " MiB"),
                ("toy-scheduler's decision ≤ 50 µs per pod", toy.get("decision_us"), 50, False, " µs")]
        if setting == "dedicated":
            ratio = (toy["job_pods_per_s"] / ks["job_pods_per_s"]
                     if toy.get("job_pods_per_s") and ks.get("job_pods_per_s") else None)
            rows.append(("whole job ≥ 2.5× kube-scheduler" + ("" if ks else " (it did not complete)"), ratio, 2.5,
                         True, "×"))
        for text, v, bound, at_least, unit in rows:
            judged = verdict(v, bound, at_least) if v is not None else "n/a"
            w.append(f"| {text} (21) | {setting} | {fmt(v, 0 if unit == ' MiB' else 1 if unit == ' µs' else 2, unit)} "
                     f"| {judged} |")
    return w
