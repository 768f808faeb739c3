#include "toysched/sched/profile.hpp"

#include "toysched/sched/plugins/balanced_allocation.hpp"
#include "toysched/sched/plugins/image_locality.hpp"
#include "toysched/sched/plugins/inter_pod_affinity.hpp"
#include "toysched/sched/plugins/node_affinity.hpp"
#include "toysched/sched/plugins/node_name.hpp"
#include "toysched/sched/plugins/node_ports.hpp"
#include "toysched/sched/plugins/node_resources_fit.hpp"
#include "toysched/sched/plugins/node_unschedulable.hpp"
#include "toysched/sched/plugins/pod_topology_spread.hpp"
#include "toysched/sched/plugins/taint_toleration.hpp"
#include "toysched/sched/plugins/volume_binding.hpp"

#include <algorithm>

namespace toysched::sched {
namespace {

// Records the first rejection, as a decision's diagnosis would.
class FirstRejection final : public FilterSink {
 public:
  void rejected(const NodeInfo& /*ni*/, const FilterStatus& why) override {
    if (status.ok()) status = why;
  }
  FilterStatus status;
};

}  // namespace

Plugin& Profile::add(std::unique_ptr<Plugin> p) {
  owned_.push_back(std::move(p));
  return *owned_.back();
}

Plugin* Profile::find(PluginId id) const noexcept {
  auto it = std::find_if(owned_.begin(), owned_.end(), [&](const auto& p) { return p->id() == id; });
  return it == owned_.end() ? nullptr : it->get();
}

Profile Profile::make_default() { return make_default(FitArgs{}); }

Profile Profile::make_default(const FitArgs& fit_args) {
  Profile p;
  Plugin& unschedulable = p.add(std::make_unique<NodeUnschedulable>());
  Plugin& node_name = p.add(std::make_unique<NodeName>());
  Plugin& taints = p.add(std::make_unique<TaintToleration>());
  Plugin& affinity = p.add(std::make_unique<NodeAffinity>());
  Plugin& ports = p.add(std::make_unique<NodePorts>());
  Plugin& fit = p.add(std::make_unique<NodeResourcesFit>(fit_args));
  Plugin& balanced = p.add(std::make_unique<BalancedAllocation>());
  Plugin& images = p.add(std::make_unique<ImageLocality>());
  Plugin& spread = p.add(std::make_unique<PodTopologySpread>());
  Plugin& pod_affinity = p.add(std::make_unique<InterPodAffinity>());
  Plugin& volumes = p.add(std::make_unique<VolumeBinding>());
  // Upstream's filter order: a node's reasons come from the first that rejects it.
  for (Plugin* f : {&unschedulable, &node_name, &taints, &affinity, &ports, &fit, &volumes, &spread, &pod_affinity}) {
    p.enable_filter(*f);
  }
  p.enable_score(taints, 3);
  p.enable_score(affinity, 2);
  p.enable_score(fit, 1);
  // Upstream's multiPoint lists it with weight 1; its PreScore skips unless
  // storage capacity scoring is on, so it adds nothing (ours always skips).
  p.enable_score(volumes, 1);
  p.enable_score(spread, 2);
  p.enable_score(pod_affinity, 2);
  p.enable_score(balanced, 1);
  p.enable_score(images, 1);
  return p;
}

FilterStatus Profile::filter_one(const kube::Pod& pod, const NodeInfo& ni) const {
  const NodeInfo* one[] = {&ni};
  const Cluster cluster{std::span<const NodeInfo* const>(one)};
  FirstRejection sink;
  for (Plugin* f : filters_) {
    const PreFilterResult pre = f->pre_filter(pod, cluster);
    if (pre.kind == PreFilterResult::Kind::skip) continue;
    if (pre.kind == PreFilterResult::Kind::reject) {
      FilterStatus s;  // the whole pod fails: no per-node reason (upstream's PreFilter message says why)
      s.code = Code::unresolvable;
      s.plugin = f->id();
      return s;
    }
    if (pre.names != nullptr && !pre.names->contains(ni.node.name)) {
      return reject(f->id(), Code::unresolvable, Reason::node_affinity_prefilter);
    }
    if (f->filter(pod, std::span<const NodeInfo*>(one), sink) == 0) return sink.status;
  }
  return {};
}

}  // namespace toysched::sched
