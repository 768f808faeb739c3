#!/usr/bin/env python3
"""The scheduling algorithm's cost with the plugins that count pods:
kube-scheduler and toy-scheduler on the same workload, each on a fresh lab,
one after the other on the same machine. `./dev bench-algorithm` runs it.

For each contender:
  1. a fresh lab: kube-lab --no-kubelet --nodes N --zones Z (4 CPU / 32Gi /
     110 pods per node, nodes dealt round-robin over the zones);
  2. PODS pending pods in GROUPS groups (label app=gK), created before the
     scheduler starts, each with what issue 14's plugins evaluate:
       - topologySpreadConstraints: zone maxSkew 1 DoNotSchedule, and
         hostname maxSkew 1 ScheduleAnyway, over the pod's group;
       - podAntiAffinity: preferred (weight 100, hostname, own group);
         the pods of group 0 also require it (one per node);
       - podAffinity: preferred (weight 50, zone, the next group);
     cpu 100m, memory 500Mi;
  3. the scheduler starts (kube-scheduler: the real one, built from the
     pinned release, its default profile, client rate limits off;
     toy-scheduler: its default profile, client rate limits off) and runs
     until every pod is bound;
  4. its /metrics: scheduler_scheduling_algorithm_duration_seconds, the time
     of the decision alone (filter, score, select), summed and counted over
     the run: the mean per pod.

Both schedulers run on this machine's cores with the same lab beside them;
kube-scheduler filters and scores in 16 goroutines (its parallelism
default), toy-scheduler in one thread. Only the standard library.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))
sys.path.append(str(ROOT / "drills"))
from devlib.lab import Lab  # noqa: E402
import kit  # noqa: E402

NS = "bench-algorithm"
METRIC = "scheduler_scheduling_algorithm_duration_seconds"


def pod_manifest(i: int, group: int, groups: int, scheduler: str) -> dict:
    app = "g%d" % group
    sel = {"matchLabels": {"app": app}}
    anti = {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": sel, "topologyKey": "kubernetes.io/hostname"}}]}
    if group == 0:
        anti["requiredDuringSchedulingIgnoredDuringExecution"] = [
            {"labelSelector": sel, "topologyKey": "kubernetes.io/hostname"}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p-%05d" % i, "namespace": NS, "labels": {"app": app, "bench": "algorithm"}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}],
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": sel},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": sel}],
            "affinity": {
                "podAntiAffinity": anti,
                "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "g%d" % ((group + 1) % groups)}},
                        "topologyKey": "topology.kubernetes.io/zone"}}]},
            },
        },
    }


def histogram(metrics_text: str) -> tuple[float, int]:
    """(sum, count) of the algorithm histogram, over its label sets."""
    total, count = 0.0, 0
    for line in metrics_text.splitlines():
        m = re.match(r"^%s_(sum|count)(\{[^}]*\})? ([0-9.eE+-]+)$" % METRIC, line)
        if m:
            if m.group(1) == "sum":
                total += float(m.group(3))
            else:
                count += int(float(m.group(3)))
    return total, count


def kubectl(build: Path, kubeconfig: str, *args, input_text=None, timeout=600) -> str:
    p = subprocess.run([str(build / "kubectl"), "--kubeconfig", kubeconfig, *args], capture_output=True,
                       input=input_text.encode() if input_text else None, timeout=timeout)
    if p.returncode != 0:
        raise SystemExit("kubectl %s: %s" % (" ".join(args[:3]), p.stderr.decode().strip()))
    return p.stdout.decode()


def create_pods(build: Path, kubeconfig: str, pods: int, groups: int, scheduler: str) -> None:
    kubectl(build, kubeconfig, "create", "namespace", NS)
    batch = 500  # one kubectl per batch: a List of pods, created one by one by kubectl
    for start in range(0, pods, batch):
        items = [pod_manifest(i, i % groups, groups, scheduler) for i in range(start, min(pods, start + batch))]
        kubectl(build, kubeconfig, "create", "-f", "-", "-o", "name",
                input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def bound(build: Path, kubeconfig: str) -> tuple[int, int]:
    out = kubectl(build, kubeconfig, "-n", NS, "get", "pods", "-o",
                  "jsonpath={range .items[*]}{.spec.nodeName}{\"\\n\"}{end}")
    lines = out.splitlines()
    return sum(1 for x in lines if x.strip()), len(lines)


def check_placement(build: Path, kubeconfig: str) -> list[str]:
    """What the bound pods break of their hard constraints: per group, zones
    more than 1 apart (DoNotSchedule maxSkew 1); group 0, two on a node."""
    zone_of = {}
    for n in json.loads(kubectl(build, kubeconfig, "get", "nodes", "-o", "json"))["items"]:
        zone_of[n["metadata"]["name"]] = n["metadata"]["labels"].get("topology.kubernetes.io/zone")
    zones = sorted(set(zone_of.values()))
    per_group: dict[str, dict[str, int]] = {}
    nodes_g0: list[str] = []
    for p in json.loads(kubectl(build, kubeconfig, "-n", NS, "get", "pods", "-o", "json"))["items"]:
        node, app = p["spec"].get("nodeName"), p["metadata"]["labels"]["app"]
        if not node:
            continue
        per_group.setdefault(app, dict.fromkeys(zones, 0))[zone_of[node]] += 1
        if app == "g0":
            nodes_g0.append(node)
    broken = ["%s: zones %s" % (g, c) for g, c in sorted(per_group.items()) if max(c.values()) - min(c.values()) > 1]
    if len(set(nodes_g0)) != len(nodes_g0):
        broken.append("g0: %d pods on %d nodes" % (len(nodes_g0), len(set(nodes_g0))))
    return broken


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_contender(name: str, args, build: Path, workdir: Path) -> dict:
    lab_dir = tempfile.mkdtemp(prefix="lab.", dir=workdir)
    lab = Lab(lab_dir, ["--no-kubelet", "--nodes", str(args.nodes), "--zones", str(args.zones)])
    proc = None
    try:
        kit.progress("%s: starting a lab of %d nodes in %d zones" % (name, args.nodes, args.zones))
        kubeconfig = lab.start(timeout=600)
        scheduler = "default-scheduler" if name == "kube-scheduler" else "toy-scheduler"
        t0 = time.monotonic()
        create_pods(build, kubeconfig, args.pods, args.groups, scheduler)
        kit.progress("%s: %d pods created in %.0f s" % (name, args.pods, time.monotonic() - t0))
        log_path = workdir / (name + ".log")
        log = open(log_path, "ab")
        if name == "kube-scheduler":
            port = free_port()
            argv = [str(build / "kube-lab"), "kube-scheduler", "--kubeconfig", kubeconfig, "--qps", "0",
                    "--port", str(port), "-v", "1"]
        else:
            port = free_port()
            argv = [str(build / "toy-scheduler"), "--kubeconfig", kubeconfig, "--secure-port=0",
                    "--metrics-bind-address=127.0.0.1:%d" % port, "--kube-api-qps=-1", "-v=1"]
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        t0 = time.monotonic()
        done, total = 0, args.pods
        while time.monotonic() - t0 < args.timeout:
            done, total = bound(build, kubeconfig)
            if done >= total:
                break
            if proc.poll() is not None:
                raise SystemExit("%s exited (%s): see %s" % (name, proc.returncode, log_path))
            time.sleep(2)
        wall = time.monotonic() - t0
        if name == "kube-scheduler":
            text = kubectl(build, kubeconfig, "--server", "https://127.0.0.1:%d" % port, "--insecure-skip-tls-verify",
                           "get", "--raw", "/metrics")
        else:
            import urllib.request
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                text = r.read().decode()
        seconds, count = histogram(text)
        broken = check_placement(build, kubeconfig)
        if broken:
            kit.progress("%s broke hard constraints: %s" % (name, "; ".join(broken)))
        kit.progress("%s: %d/%d bound in %.0f s; %d decisions, mean %.3f ms" %
                     (name, done, total, wall, count, 1000 * seconds / max(count, 1)))
        return {"contender": name, "pods": total, "bound": done, "wall_s": round(wall, 1), "decisions": count,
                "constraints_broken": broken,
                "mean_ms": round(1000 * seconds / count, 3) if count else None}
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        lab.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for every pod bound, per contender")
    ap.add_argument("--contenders", default="kube-scheduler,toy-scheduler")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    build = Path(os.environ.get("TOYSCHED_BUILD") or ROOT / "build")
    workdir = Path(tempfile.mkdtemp(prefix="bench-algorithm."))
    rows = [run_contender(c, args, build, workdir) for c in args.contenders.split(",")]
    print("\nOn %s, %d cores, one contender at a time beside its own lab; %d nodes in %d zones, %d pods in %d groups "
          "(spread DoNotSchedule + ScheduleAnyway, pod anti-affinity preferred (group 0 required), pod affinity "
          "preferred).\n" % (platform.node(), os.cpu_count(), args.nodes, args.zones, args.pods, args.groups))
    print("| scheduler | pods bound | decisions | mean %s (ms) | wall (s) |" % METRIC)
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d/%d | %d | %s | %.0f |" % (r["contender"], r["bound"], r["pods"], r["decisions"],
                                                   r["mean_ms"], r["wall_s"]))
    means = {r["contender"]: r["mean_ms"] for r in rows}
    if means.get("kube-scheduler") and means.get("toy-scheduler"):
        print("\ntoy-scheduler / kube-scheduler: %.3f" % (means["toy-scheduler"] / means["kube-scheduler"]))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2) + "\n")
    print("logs: %s" % workdir)
    print("hard constraints held (zone skew <= 1 per group, group 0 one per node): %s" %
          ", ".join("%s %s" % (r["contender"], "yes" if not r["constraints_broken"] else "NO") for r in rows))
    return 0 if all(r["bound"] == r["pods"] and not r["constraints_broken"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
