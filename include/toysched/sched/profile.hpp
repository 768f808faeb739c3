// A scheduling profile: which plugins run at which extension point, in
// which order, with which score weights (upstream's KubeSchedulerProfile
// after defaulting). make_default is kube-scheduler's default profile
// (apis/config/v1/default_plugins.go); config/profiles.hpp makes the
// profiles of a `--config` file.
//
// Filters, in upstream's order; the first that rejects a node decides its
// reasons:
//   NodeUnschedulable → NodeName → TaintToleration → NodeAffinity
//     → NodePorts → NodeResourcesFit → PodTopologySpread → InterPodAffinity
// Scores, in upstream's order, and their default weights:
//   TaintToleration ×3, NodeAffinity ×2, NodeResourcesFit ×1,
//   PodTopologySpread ×2, InterPodAffinity ×2,
//   NodeResourcesBalancedAllocation ×1, ImageLocality ×1.
// NodeResourcesFit scores LeastAllocated over cpu and memory unless the
// profile is made with other FitArgs (its scoring strategy).
#pragma once

#include "toysched/sched/framework.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace toysched::sched {

struct FitArgs;

// DefaultPreemption's args: how many candidate nodes a preemption looks
// for, as a percentage of the nodes it may free and at least an absolute
// number (DefaultPreemptionArgs, v1 defaults).
struct PreemptionArgs {
  std::int32_t min_candidate_nodes_percentage = 10;
  std::int32_t min_candidate_nodes_absolute = 100;
};

struct WeightedPlugin {
  Plugin* plugin = nullptr;
  std::int64_t weight = 1;
};

class Profile {
 public:
  // kube-scheduler's default profile, with the plugins this build has.
  static Profile make_default();
  // The same with NodeResourcesFit's scoring strategy set by `fit`
  // (validate_fit_args first: invalid args throw std::invalid_argument).
  static Profile make_default(const FitArgs& fit);

  Profile() = default;
  Profile(Profile&&) noexcept = default;
  Profile& operator=(Profile&&) noexcept = default;

  // Takes ownership; the plugin then runs at the points it is enabled for.
  Plugin& add(std::unique_ptr<Plugin> p);
  void enable_filter(Plugin& p) { filters_.push_back(&p); }
  void enable_score(Plugin& p, std::int64_t weight) { scorers_.push_back({&p, weight}); }

  std::span<Plugin* const> filters() const noexcept { return filters_; }
  std::span<const WeightedPlugin> scorers() const noexcept { return scorers_; }
  Plugin* find(PluginId id) const noexcept;

  // DefaultPreemption (PostFilter), on in the default profile; unset: a
  // pod that fits nowhere preempts nothing (preemption.hpp).
  const std::optional<PreemptionArgs>& preemption() const noexcept { return preemption_; }
  void set_preemption(std::optional<PreemptionArgs> args) { preemption_ = args; }

  // Every filter of this profile on one node, PreFilter included, as a
  // decision would run them (tests and reports; the cycle never calls it).
  // PreFilter sees a cluster of that one node: PodTopologySpread then
  // counts the pods of that node only.
  FilterStatus filter_one(const kube::Pod& pod, const NodeInfo& ni) const;

 private:
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<Plugin*> filters_;
  std::vector<WeightedPlugin> scorers_;
  std::optional<PreemptionArgs> preemption_ = PreemptionArgs{};
};

}  // namespace toysched::sched
