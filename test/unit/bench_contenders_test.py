#!/usr/bin/env python3
"""bench/contenders.py's matched profile comes from the plugin registry.

kube-scheduler-matched runs the plugins toy-scheduler runs, read from the
PLUGIN and BUILT_IN lines of include/toysched/sched/registry.hpp: first on
made-up lines (REFUSED, ABSENT and config-only lines are left out, the
order and weights kept), then on the tree's registry.
"""
import os
import sys

ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import contenders  # noqa: E402

MADE_UP = r"""
#define TOYSCHED_PLUGINS(PLUGIN, BUILT_IN, REFUSED, ABSENT)                \
  BUILT_IN(SchedulingGates, kPreEnqueue, 0, in_default)                   \
  PLUGIN(taint_toleration, TaintToleration, kFilter | kScorePair, 3, in_default) \
  REFUSED(NodeVolumeLimits, kFilterPair, 0, in_default)                   \
  PLUGIN(balanced_allocation, NodeResourcesBalancedAllocation, kScorePair, 1, in_default) \
  ABSENT(GangScheduling, kPreEnqueue, 0, config_only)                     \
  PLUGIN(extra, Extra, kFilter, 0, config_only)
"""


def main():
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    check("made-up registry", contenders.registry_default_plugins(MADE_UP),
          (("SchedulingGates", 0), ("TaintToleration", 3), ("NodeResourcesBalancedAllocation", 1)))
    try:
        contenders.registry_default_plugins("no lines here")
        failures.append("a registry without lines was accepted")
    except ValueError:
        pass

    tree = dict(contenders.TOY_PLUGINS)
    check("first plugin of the tree's registry", contenders.TOY_PLUGINS[0], ("SchedulingGates", 0))
    check("NodeResourcesFit's weight", tree.get("NodeResourcesFit"), 1)
    check("TaintToleration's weight", tree.get("TaintToleration"), 3)
    check("NodeVolumeLimits in the matched profile", "NodeVolumeLimits" in tree, True)
    for refused in ("DynamicResources", "GangScheduling"):
        check(f"{refused} in the matched profile", refused in tree, False)

    for f in failures:
        print("FAIL:", f)
    print(f"bench contenders: {len(contenders.TOY_PLUGINS)} plugins from the registry, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
