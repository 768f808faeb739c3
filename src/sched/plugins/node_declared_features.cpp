// NodeDeclaredFeatures (upstream's nodedeclaredfeatures plugin, beta and on
// by default in v1.36): a pod that needs a node feature only some kubelets
// have is kept off nodes whose status.declaredFeatures does not list it.
//
// Which pod needs which feature is the feature registry of
// k8s.io/component-helpers/nodedeclaredfeatures (v0.36.3). Of its five
// features, two can be needed to schedule a pod:
//
//   RestartAllContainersOnContainerExits  a container's or init container's
//                                         restartPolicyRules has the action
//                                         RestartAllContainers
//   UserNamespacesHostNetworkSupport      hostNetwork with hostUsers: false
//
// The other three (in-place resize of pod-level resources and of init
// containers, WebSockets to the kubelet) are needed only by updates, which
// the scheduler does not place. None has a maximum version, so the set does
// not depend on the scheduler's. A node that lacks a needed feature is
// UnschedulableAndUnresolvable: preemption cannot add one.
//
// This plugin has no header: nothing names its type, the registry makes it.
#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace toysched::sched {
namespace {

class NodeDeclaredFeatures final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_declared_features; }

  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& /*cluster*/) override {
    needed_count_ = 0;
    if (pod.restarts_all_containers) needed_[needed_count_++] = "RestartAllContainersOnContainerExits";
    if (pod.host_network && pod.host_users == false) needed_[needed_count_++] = "UserNamespacesHostNetworkSupport";
    if (needed_count_ == 0) return {PreFilterResult::Kind::skip, {}, nullptr};
    return {};
  }

  std::size_t filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& sink) override {
    return filter_each(
        nodes, sink, [&](const NodeInfo& ni) { return declares_all(ni.node); },
        [](const NodeInfo&) {
          return reject(PluginId::node_declared_features, Code::unresolvable, Reason::node_declared_features);
        });
  }

 private:
  bool declares_all(const kube::Node& node) const {
    const auto& declared = node.declared_features;
    return std::all_of(
        needed_.begin(), needed_.begin() + static_cast<std::ptrdiff_t>(needed_count_),
        [&](std::string_view f) { return std::find(declared.begin(), declared.end(), f) != declared.end(); });
  }

  // What the pod of this cycle needs (PreFilter): at most the two above.
  std::array<std::string_view, 2> needed_{};
  std::size_t needed_count_ = 0;
};

}  // namespace

std::unique_ptr<Plugin> make_node_declared_features(const PluginArgs& /*args*/) {
  return std::make_unique<NodeDeclaredFeatures>();
}

}  // namespace toysched::sched
