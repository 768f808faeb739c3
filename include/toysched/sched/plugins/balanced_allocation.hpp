// NodeResourcesBalancedAllocation (framework/plugins/noderesources/
// balanced_allocation.go): prefers the node whose balance of cpu and memory
// use the pod improves most (v1.36's rule; before, the balance after the pod
// alone decided, which favoured an emptier node over a fuller one).
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// Upstream skips this plugin for a pod requesting neither cpu nor memory
// (so a flood of best-effort pods does not pile onto one node,
// kubernetes#129138); a skipped plugin adds 0 to every node.
bool is_best_effort(const kube::Pod& pod) noexcept;
// 50 + (50 + with − without) / 2, where with and without are the node's
// balance with and without the pod: (1 − std) × 100 truncated, std =
// |f_cpu − f_mem| / 2, f = the node's real requested (plus the pod's
// request, for with) / alloc capped at 1; a resource with alloc 0 is left
// out (then std = 0). 0 for best-effort pods.
std::int64_t score_balanced_allocation(const kube::Pod& pod, const NodeInfo& ni) noexcept;

class BalancedAllocation final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::balanced_allocation; }
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
};

}  // namespace toysched::sched
