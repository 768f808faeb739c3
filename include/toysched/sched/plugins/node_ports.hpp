// NodePorts (framework/plugins/nodeports): a pod's host ports must be free
// on the node.
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// HostPortInfo.CheckConflict: same protocol and port, and addresses equal
// or either one 0.0.0.0. Port <= 0 never conflicts; empty protocol is TCP,
// empty address 0.0.0.0.
bool host_ports_conflict(const kube::HostPort& want, const kube::HostPort& used) noexcept;

FilterStatus filter_node_ports(const kube::Pod& pod, const NodeInfo& ni);

class NodePorts final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_ports; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
};

}  // namespace toysched::sched
