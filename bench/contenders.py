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

from pathlib import Path

from common import CEILING, KUBE_LAB, KUBE_SCHEDULER, PARALLELISM, TOY, VERBOSITY

# toy-scheduler's plugins with their score weights (0: no score), in
# kube-scheduler's default order: include/toysched/sched/registry.hpp's
# PLUGIN and BUILT_IN lines that the default profile enables.
TOY_PLUGINS = (("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
               ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
               ("VolumeRestrictions", 0), ("VolumeBinding", 0), ("VolumeZone", 0), ("PodTopologySpread", 2),
               ("InterPodAffinity", 2), ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1),
               ("ImageLocality", 1), ("DefaultBinder", 0), ("NodeDeclaredFeatures", 0))


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
