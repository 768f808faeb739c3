// The args of the plugins that take any (upstream's types_pluginargs.go),
// after v1 defaulting: what a --config's pluginConfig sets
// (config/plugin_args.cpp decodes and checks it) and what each plugin's
// factory reads (registry.hpp). The defaults are the default profile's.
#pragma once

#include "toysched/sched/plugins/node_resources_fit.hpp"

#include <cstdint>

namespace toysched::sched {

// DefaultPreemption's args: how many candidate nodes a preemption looks
// for, as a percentage of the nodes it may free and at least an absolute
// number (DefaultPreemptionArgs, v1 defaults).
struct PreemptionArgs {
  std::int32_t min_candidate_nodes_percentage = 10;
  std::int32_t min_candidate_nodes_absolute = 100;
};

struct PluginArgs {
  FitArgs fit;                                // NodeResourcesFit.scoringStrategy
  std::int32_t hard_pod_affinity_weight = 1;  // InterPodAffinity
  bool spread_system_defaulting = true;       // PodTopologySpread: defaultingType System
  PreemptionArgs preemption;                  // DefaultPreemption
  // VolumeBinding: how long PreBind waits for the volume controller to bind
  // the pod's claims before the pod is tried again.
  std::int64_t bind_timeout_seconds = 600;
};

}  // namespace toysched::sched
