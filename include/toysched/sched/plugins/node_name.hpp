// NodeName (framework/plugins/nodename): a pod that names its node in
// spec.nodeName fits only there.
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

FilterStatus filter_node_name(const kube::Pod& pod, const NodeInfo& ni);

class NodeName final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_name; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
};

}  // namespace toysched::sched
