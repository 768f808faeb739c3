#include "toysched/sched/plugins/node_unschedulable.hpp"
#include "toysched/sched/plugin_args.hpp"

#include "toysched/sched/plugins/taint_toleration.hpp"

namespace toysched::sched {

FilterStatus filter_node_unschedulable(const kube::Pod& pod, const NodeInfo& ni) {
  if (!ni.node.unschedulable) return {};
  // The taint the node lifecycle controller puts on cordoned nodes.
  static const kube::Taint kCordon{"node.kubernetes.io/unschedulable", "", kube::TaintEffect::no_schedule};
  if (tolerates_any(pod.tolerations, kCordon)) return {};
  return reject(PluginId::node_unschedulable, Code::unresolvable, Reason::node_unschedulable);
}

PreFilterResult NodeUnschedulable::pre_filter(const kube::Pod& /*pod*/, const Cluster& cluster) {
  if (cluster.unschedulable_nodes == 0) return {PreFilterResult::Kind::skip, {}, nullptr};
  return {};
}

std::size_t NodeUnschedulable::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(
      nodes, sink, [](const NodeInfo& ni) { return !ni.node.unschedulable; },
      [&](const NodeInfo& ni) { return filter_node_unschedulable(pod, ni); });
}

std::unique_ptr<Plugin> make_node_unschedulable(const PluginArgs& /*args*/) {
  return std::make_unique<NodeUnschedulable>();
}

}  // namespace toysched::sched
