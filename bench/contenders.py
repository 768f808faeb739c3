"""How each contender of ./dev bench is started: its command line and, for
kube-scheduler, the KubeSchedulerConfiguration it reads (written into the
run's work directory, as a user would write one).

kube-scheduler is the pinned release's own command (build/kube-scheduler:
kube-lab invoked under that name runs upstream's app.NewSchedulerCommand, as
cmd/kube-scheduler does) with `--config`. Its variants:

- kube-scheduler: the default profile, nothing changed but the client's
  rate limit (off, as for every contender).
- kube-scheduler-matched: exactly toy-scheduler's plugins and weights
  (multiPoint: every default disabled, then ours), contention profiling off.
  What toy-scheduler leaves out are the plugins it does not run
  (include/toysched/sched/registry.hpp's REFUSED lines: NodeVolumeLimits,
  DynamicResources); none of the bench's pods needs them.
- toy-all-nodes and kube-scheduler-all-nodes: that matched profile with
  percentageOfNodesToScore 100, in ONE file read by both schedulers (toy-
  scheduler reads KubeSchedulerConfiguration too), so both score every node.
"""
from __future__ import annotations

import re
from pathlib import Path

from common import CEILING, KUBE_LAB, KUBE_SCHEDULER, PARALLELISM, ROOT, TOY, VERBOSITY

# toy-scheduler's plugins with their score weights (0: no score), in
# kube-scheduler's default order: read from the registry's PLUGIN and
# BUILT_IN lines that the default profile enables, so a plugin added there
# is in the matched profile without a line here.
REGISTRY = ROOT / "include" / "toysched" / "sched" / "registry.hpp"


def registry_default_plugins(text: str) -> tuple[tuple[str, int], ...]:
    """(name, weight) of each PLUGIN(id, Name, points, weight, in_default)
    and BUILT_IN(Name, points, weight, in_default) line, in the file's order."""
    out = []
    for m in re.finditer(r"^\s*(PLUGIN|BUILT_IN)\(([^()]*)\)", text, re.M):
        fields = [f.strip() for f in m.group(2).split(",")]
        if m.group(1) == "PLUGIN":
            fields = fields[1:]
        name, _points, weight, default = fields
        if default == "in_default":
            out.append((name, int(weight)))
    if not out:
        raise ValueError(f"no PLUGIN or BUILT_IN line found in {REGISTRY}")
    return tuple(out)


TOY_PLUGINS = registry_default_plugins(REGISTRY.read_text())


def scheduler_config(kubeconfig: str, scheduler: str, matched: bool, all_nodes: bool) -> str:
    """A KubeSchedulerConfiguration (v1) for one bench contender."""
    lines = ["apiVersion: kubescheduler.config.k8s.io/v1",
             "kind: KubeSchedulerConfiguration",
             "clientConnection:",
             f"  kubeconfig: {kubeconfig!r}",
             "  qps: 1000000  # no client rate limit: as toy-scheduler --kube-api-qps -1",
             "  burst: 2000000",
             "leaderElection:",
             "  leaderElect: false"]
    if matched:
        lines.append("enableContentionProfiling: false")
    lines += ["profiles:", f"- schedulerName: {scheduler}"]
    if all_nodes:
        lines.append("  percentageOfNodesToScore: 100")
    if matched:
        lines += ["  plugins:", "    multiPoint:", "      enabled:"]
        for name, weight in TOY_PLUGINS:
            lines.append(f"      - name: {name}" + (f"\n        weight: {weight}" if weight else ""))
        lines += ["      disabled:", "      - name: '*'"]
    return "\n".join(lines) + "\n"


def contender_cmd(c: str, kubeconfig: str, scheduler: str, work: Path) -> list[str]:
    """The command that starts contender c on pods of `scheduler`; config
    files go to `work`."""
    toy = [str(TOY), "--kubeconfig", kubeconfig, "--scheduler-name", scheduler, f"-v={VERBOSITY}",
           "--kube-api-qps", "-1", "--bind-parallelism", str(PARALLELISM), "--secure-port", "0"]
    if c == "toy":
        return toy
    if c == "toy-page":
        return toy + ["--metrics-bind-address", "127.0.0.1:0"]
    if c in ("kube-scheduler", "kube-scheduler-matched", "kube-scheduler-all-nodes", "toy-all-nodes"):
        all_nodes = c.endswith("all-nodes")
        config = work / ("all-nodes.yaml" if all_nodes else f"{c}.yaml")
        config.write_text(scheduler_config(kubeconfig, scheduler, matched=c != "kube-scheduler", all_nodes=all_nodes))
        if c == "toy-all-nodes":  # the file replaces the client and scheduling flags (its parallelism: 16)
            return [str(TOY), "--config", str(config), f"-v={VERBOSITY}", "--secure-port", "0"]
        # --secure-port 0: no HTTPS endpoint (the bench reads /proc, not its /metrics).
        return [str(KUBE_SCHEDULER), "--config", str(config), "--secure-port", "0", f"--v={VERBOSITY}"]
    if c == "client-go":
        return [str(KUBE_LAB), "bind-reference", "--kubeconfig", kubeconfig, "--scheduler-name", scheduler,
                "--parallelism", str(PARALLELISM)]
    if c == "ceiling":
        return [str(CEILING), "bind", "--kubeconfig", kubeconfig, "--scheduler-name", scheduler,
                "--parallelism", str(PARALLELISM)]
    raise ValueError(c)
