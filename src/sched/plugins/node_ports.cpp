#include "toysched/sched/plugins/node_ports.hpp"
#include "toysched/sched/plugin_args.hpp"

namespace toysched::sched {
namespace {

constexpr std::string_view kAllAddresses = "0.0.0.0";

std::string_view or_default(std::string_view v, std::string_view dflt) noexcept { return v.empty() ? dflt : v; }

}  // namespace

bool host_ports_conflict(const kube::HostPort& want, const kube::HostPort& used) noexcept {
  if (want.port <= 0 || want.port != used.port) return false;
  if (or_default(want.protocol, "TCP") != or_default(used.protocol, "TCP")) return false;
  const auto a = or_default(want.host_ip, kAllAddresses);
  const auto b = or_default(used.host_ip, kAllAddresses);
  return a == b || a == kAllAddresses || b == kAllAddresses;
}

FilterStatus filter_node_ports(const kube::Pod& pod, const NodeInfo& ni) {
  for (const auto& want : pod.host_ports) {
    for (const auto& used : ni.used_ports) {
      // Evicting the pod holding the port frees it: resolvable.
      if (host_ports_conflict(want, used)) return reject(PluginId::node_ports, Code::unschedulable, Reason::node_ports);
    }
  }
  return {};
}

PreFilterResult NodePorts::pre_filter(const kube::Pod& pod, const Cluster& /*cluster*/) {
  if (pod.host_ports.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  return {};
}

std::size_t NodePorts::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(
      nodes, sink, [](const NodeInfo& ni) { return ni.used_ports.empty(); },
      [&](const NodeInfo& ni) { return filter_node_ports(pod, ni); });
}

std::unique_ptr<Plugin> make_node_ports(const PluginArgs& /*args*/) { return std::make_unique<NodePorts>(); }

}  // namespace toysched::sched
