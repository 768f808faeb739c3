// TaintToleration (framework/plugins/tainttoleration).
// Filter: a node's first NoSchedule/NoExecute taint the pod does not
// tolerate rejects it. Score: the fewer PreferNoSchedule taints the pod
// does not tolerate, the better (normalized reversed).
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// v1.Toleration.ToleratesTaint: an empty effect matches every effect; an
// empty key matches every key; Exists ignores the value, Equal compares it.
bool tolerates(const kube::Toleration& tol, const kube::Taint& taint) noexcept;
bool tolerates_any(std::span<const kube::Toleration> tols, const kube::Taint& taint) noexcept;

// The node's first NoSchedule/NoExecute taint the pod does not tolerate,
// or nullptr: the filter's rule, also PodTopologySpread's nodeTaintsPolicy.
const kube::Taint* first_untolerated_hard_taint(const kube::Pod& pod, const kube::Node& node) noexcept;
FilterStatus filter_taint_toleration(const kube::Pod& pod, const NodeInfo& ni);

// Raw score: PreferNoSchedule taints not tolerated by the pod's tolerations
// with an empty or PreferNoSchedule effect.
std::int64_t count_intolerable_prefer_no_schedule(const kube::Pod& pod, const NodeInfo& ni) noexcept;

class TaintToleration final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::taint_toleration; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
  void normalize(std::span<std::int64_t> scores) override;

 private:
  bool untainted_ = false;  // this cycle: no node has a taint, every raw score is 0
};

}  // namespace toysched::sched
