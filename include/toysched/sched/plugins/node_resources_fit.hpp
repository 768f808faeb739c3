// NodeResourcesFit (framework/plugins/noderesources/fit.go): the filter
// every pod goes through (pods count, cpu, memory, ephemeral storage,
// extended resources), and the score of the profile's strategy
// (LeastAllocated by default: the emptier node wins).
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// Every failing resource is listed, not only the first.
FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni);

// LeastAllocated over cpu and memory (weight 1 each): per resource
// (alloc − req) × 100 / alloc with req = the node's non-zero requested plus
// the pod's non-zero request, 0 when req > alloc; a resource with alloc 0 is
// left out of the mean; integer division as upstream.
std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept;

class NodeResourcesFit final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_resources_fit; }
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
};

}  // namespace toysched::sched
