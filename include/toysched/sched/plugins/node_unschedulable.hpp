// NodeUnschedulable (framework/plugins/nodeunschedulable): a cordoned node
// (spec.unschedulable) admits only pods that tolerate the cordon taint
// node.kubernetes.io/unschedulable:NoSchedule, as DaemonSet pods do.
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

FilterStatus filter_node_unschedulable(const kube::Pod& pod, const NodeInfo& ni);

class NodeUnschedulable final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_unschedulable; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
};

}  // namespace toysched::sched
