// A what-if on one node, for the decisions that ask "would the pod fit here
// if these pods were gone, or those were here too": preemption removes
// victims and puts some back, nominated pods are added (upstream's
// SelectVictimsOnNode and RunFilterPluginsWithNominatedPods, which clone
// the NodeInfo and the CycleState).
//
// The NodeInfo is copied; the active filters' PreFilter state lives in the
// plugins (framework.hpp), so it is moved in place, pod by pod
// (Plugin::pre_filter_update), and moved back when the what-if ends.
#pragma once

#include "toysched/sched/framework.hpp"
#include "toysched/sched/nominator.hpp"

#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace toysched::sched {

class NodeWhatIf {
 public:
  // `filters`: those PreFilter left active for `pod`. The pods added later
  // must outlive the what-if.
  NodeWhatIf(std::span<Plugin* const> filters, const kube::Pod& pod, const NodeInfo& ni)
      : filters_(filters), pod_(pod), original_(ni), node_(ni) {}
  NodeWhatIf(const NodeWhatIf&) = delete;
  NodeWhatIf& operator=(const NodeWhatIf&) = delete;
  ~NodeWhatIf() {
    for (auto it = edits_.rbegin(); it != edits_.rend(); ++it) {
      for (Plugin* p : filters_) p->pre_filter_update(pod_, *it->first, original_, -it->second);
    }
  }

  void add(const kube::Pod& other) { edit(other, +1); }
  void add(std::span<const kube::Pod* const> others) {
    for (const kube::Pod* p : others) edit(*p, +1);
  }
  void remove(const kube::Pod& other) { edit(other, -1); }
  // The filters' answer for the pod on the node as it now stands.
  FilterStatus filter() const { return filter_one(filters_, pod_, node_); }
  const NodeInfo& node() const noexcept { return node_; }

 private:
  void edit(const kube::Pod& other, int sign) {
    if (sign > 0) {
      node_.add_pod(other);
    } else {
      node_.remove_pod(other);
    }
    for (Plugin* p : filters_) p->pre_filter_update(pod_, other, original_, sign);
    edits_.emplace_back(&other, sign);
  }

  std::span<Plugin* const> filters_;
  const kube::Pod& pod_;
  // The plugins are told of the node as the cluster holds it: what they
  // keep of its labels must outlive this copy.
  const NodeInfo& original_;
  NodeInfo node_;
  std::vector<std::pair<const kube::Pod*, int>> edits_;
};

// The filters' answer for `pod` on `ni` with the pods nominated there that
// a decision for it counts (upstream's RunFilterPluginsWithNominatedPods,
// whose first pass is the stricter one for every filter we have); nullopt,
// copying nothing, when none count: the node as it is answers then.
inline std::optional<FilterStatus> filter_with_nominated(std::span<Plugin* const> filters, const kube::Pod& pod,
                                                         const NodeInfo& ni, const Nominator* nominated) {
  if (nominated == nullptr) return std::nullopt;
  const std::vector<const kube::Pod*> counted = nominated->counted_on(pod, ni.node.name);
  if (counted.empty()) return std::nullopt;
  NodeWhatIf with(filters, pod, ni);
  with.add(counted);
  return with.filter();
}

}  // namespace toysched::sched
