"""The benchmark's plots, drawn with gnuplot from the medians: pods/s
against node count (throughput.png) and the latency phases' p50 and p99 per
contender (latency.png)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from common import LABELS, log

COLOURS = {"toy": "#1b9e77", "kube-scheduler": "#d95f02", "kube-scheduler-matched": "#e6ab02",
           "toy-all-nodes": "#66a61e", "kube-scheduler-all-nodes": "#a6761d", "client-go": "#7570b3",
           "ceiling": "#555555", "toy-page": "#e7298a"}
WORKLOAD_TITLES = {"basic": "SchedulingBasic", "backlog": "backlog"}


def gnuplot(work: Path, name: str, script: str) -> bool:
    exe = shutil.which("gnuplot")
    if not exe:
        log("gnuplot is not installed: no plot (./dev bench installs gnuplot-nox)")
        return False
    (work / f"{name}.gp").write_text(script)
    r = subprocess.run([exe, str(work / f"{name}.gp")], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"gnuplot failed on {name}: {r.stderr.strip()}")
        return False
    return True


def primary_workload(summary) -> str:
    """The workload the plots show: the first measured (basic, SchedulingBasic,
    when it ran); the tables have every one."""
    return next(iter(summary))[0]


def plot_throughput(out_dir: Path, work: Path, summary, node_counts, contenders) -> bool:
    """throughput.png: whole-job pods/s against node count, a line per
    contender and setting (dashed: dedicated), for the primary workload."""
    if not summary:  # a scale run alone
        return False
    dat = work / "throughput.dat"
    wl = primary_workload(summary)
    settings = list(dict.fromkeys(k[1] for k in summary if k[0] == wl))
    series = [(st, c) for st in settings for c in contenders]
    with open(dat, "w") as f:
        f.write("# nodes " + " ".join(f"{st}/{c}" for st, c in series) + "\n")
        for n in node_counts:
            vals = [summary.get((wl, st, n), {}).get(c, {}).get("job_pods_per_s") for st, c in series]
            f.write(f"{n} " + " ".join("?" if v is None else f"{v:.1f}" for v in vals) + "\n")
    lines = ", ".join(f"'{dat}' using 1:{i + 2} with linespoints lw 2 ps 1.5 lc rgb '{COLOURS[c]}' "
                      f"pt {5 if c.startswith('kube') else 7} dt {1 if st == 'shared' else 2} "
                      f'title "{LABELS[c]}, {st}"'
                      for i, (st, c) in enumerate(series))
    lo, hi = min(node_counts), max(node_counts)
    return gnuplot(work, "throughput", f"""
set terminal pngcairo size 1500,600 font ',11'
set output '{out_dir / "throughput.png"}'
set datafile missing '?'
set title "Throughput on the lab, {WORKLOAD_TITLES.get(wl, wl)}\\n(median pods/s, whole job: bound and Scheduled event)"
set xlabel 'nodes'
set ylabel 'pods/s'
set logscale x
set xrange [{lo / 1.6}:{hi * 1.6}]
set xtics ({", ".join(str(n) for n in node_counts)})
set yrange [0:*]
set grid ytics
# 1500 px wide: a contender per setting in the key on the right (its labels up to 55 characters)
# took more than half of 1100 px and squeezed the plot; below, gnuplot gives it one column.
set key outside right top
plot {lines}
""")


def plot_latency(out_dir: Path, work: Path, summary, contenders, rates) -> bool:
    """latency.png: for every node count, setting and rate (a group on the x
    axis), a bar per contender that ran the latency phases: its median p99
    (light) with its median p50 drawn over it (dark); log scale, ms."""
    if not summary:
        return False
    wl = primary_workload(summary)
    groups = [(st, n, k) for (w, st, n) in summary if w == wl for k in rates]
    series = [c for c in contenders if any(summary[(wl, st, n)][c].get(f"latency_{k}_p50_ms") is not None
                                           for st, n, k in groups)]
    if not groups or not series:
        return False
    width = len(series) + 1  # one empty slot between groups
    dat = work / "latency.dat"
    with open(dat, "w") as f:
        for c in series:  # one data block per contender: `index i` below
            f.write(f"# {c}: x p50 p99\n")
            for j, (st, n, k) in enumerate(groups):
                p50 = summary[(wl, st, n)][c].get(f"latency_{k}_p50_ms")
                p99 = summary[(wl, st, n)][c].get(f"latency_{k}_p99_ms")
                if p50 is not None and p99 is not None:
                    f.write(f"{j * width + series.index(c)} {p50:.2f} {p99:.2f}\n")
            f.write("\n\n")
    tics = ", ".join(f'"{n} nodes\\n{st}\\n{k}/s" {j * width + (len(series) - 1) / 2}'
                     for j, (st, n, k) in enumerate(groups))
    plots = []
    for i, c in enumerate(series):
        plots.append(f"'{dat}' index {i} using 1:3 with boxes lc rgb '{COLOURS[c]}' fs transparent solid 0.3 "
                     f'title "{LABELS[c]}"')
        plots.append(f"'{dat}' index {i} using 1:2 with boxes lc rgb '{COLOURS[c]}' fs solid 0.9 notitle")
    return gnuplot(work, "latency", f"""
set terminal pngcairo size 1200,620 font ',10'
set output '{out_dir / "latency.png"}'
set title 'Pod created to bound, seen on a separate watch (median of runs; dark: p50, light: p99)'
set ylabel 'ms (log scale)'
set logscale y
set yrange [0.5:*]
set xrange [-1:{len(groups) * width - 1}]
set xtics ({tics})
set grid ytics
set boxwidth 0.85
set bmargin 5
set key outside right top
plot {", ".join(plots)}
""")
