#include "toysched/sched/plugins/node_name.hpp"
#include "toysched/sched/plugin_args.hpp"

namespace toysched::sched {

FilterStatus filter_node_name(const kube::Pod& pod, const NodeInfo& ni) {
  if (pod.node_name.empty() || pod.node_name == ni.node.name) return {};
  return reject(PluginId::node_name, Code::unresolvable, Reason::node_name);
}

PreFilterResult NodeName::pre_filter(const kube::Pod& pod, const Cluster& /*cluster*/) {
  if (pod.node_name.empty()) return {PreFilterResult::Kind::skip, {}};
  return {};
}

std::size_t NodeName::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) { return filter_node_name(pod, ni); });
}

std::unique_ptr<Plugin> make_node_name(const PluginArgs& /*args*/) { return std::make_unique<NodeName>(); }

}  // namespace toysched::sched
