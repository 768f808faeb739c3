// PodTopologySpread (framework/plugins/podtopologyspread): the pod's
// DoNotSchedule constraints filter, its ScheduleAnyway constraints score.
// A pod without constraints of its own gets the system defaults
// (PodTopologySpreadArgs defaultingType System): hostname maxSkew 3 and
// zone maxSkew 5, ScheduleAnyway, selecting the pods its Services and
// controller select (ClusterObjects::default_selector).
//
// Counting follows upstream: per constraint, the pods of the incoming
// pod's namespace that the selector matches, terminating ones left out,
// summed per topology value over the nodes that carry every constraint's
// key and pass its nodeAffinityPolicy / nodeTaintsPolicy. An absent
// selector matches nothing; an empty one counts no pod but matches the
// incoming pod itself (upstream's selector.Empty() shortcut).
//
// matchLabelKeys: the values of those keys in the pod's labels are added
// to the selector as matchLabels, as kube-scheduler does. A v1.36
// apiserver (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta, on)
// already appended `key In (value)` expressions at creation when the
// selector is set; adding the same pairs again selects the same pods, so
// the result is kube-scheduler's either way. An absent selector stays
// "nothing" in both.
//
// All counting happens in PreFilter / PreScore, once per pod, over the
// nodes' pod groups; Filter and Score are lookups per node. Preemption's
// what-ifs move PreFilter's counts pod by pod (pre_filter_update).
#pragma once

#include "toysched/sched/framework.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";

// One constraint as the plugin evaluates it (upstream's
// topologySpreadConstraint): the selector resolved, defaults applied.
struct SpreadConstraint {
  std::int32_t max_skew = 1;
  std::string_view topology_key;
  // nullptr: matches no pod. Points into the pod or into the plugin's
  // default selector; when `use_merged`, `merged` is the selector instead
  // (the pod's plus the matchLabelKeys pairs).
  const kube::LabelSelector* source = nullptr;
  kube::LabelSelector merged;
  bool use_merged = false;
  bool self_match = false;  // the selector matches the incoming pod's labels
  std::int32_t min_domains = 1;
  kube::InclusionPolicy node_affinity_policy = kube::InclusionPolicy::honor;
  kube::InclusionPolicy node_taints_policy = kube::InclusionPolicy::ignore;

  const kube::LabelSelector* selector() const noexcept { return use_merged ? &merged : source; }
  // The pods this constraint counts on one node.
  int count_on(const kube::Pod& pod, const NodeInfo& ni) const;
  // The node counts for this constraint (nodeAffinityPolicy, nodeTaintsPolicy).
  bool includes(const kube::Pod& pod, const kube::Node& node) const noexcept;
};

// The pod's own constraints with `when`, resolved into `out` (cleared first).
void spread_constraints(const kube::Pod& pod, kube::WhenUnsatisfiable when, std::vector<SpreadConstraint>& out);
// Every constraint's topology key is a label of the node.
bool has_all_keys(const kube::Node& node, std::span<const SpreadConstraint> cs) noexcept;

// Topology values interned to small ids, kept across cycles: a warm cycle
// looks values up and allocates nothing. Open addressing over one flat
// array of (hash, id), at most half full: a lookup per node is the hot
// path of PreFilter/PreScore at 5 000 nodes, and a node-based hash map
// spent most of it on cache misses.
class TopologyValueIds {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t intern(const std::string& value);
  std::uint32_t find(const std::string& value) const noexcept;
  std::size_t size() const noexcept { return values_.size(); }
  void clear() noexcept;

 private:
  struct Slot {
    std::size_t hash = 0;
    std::uint32_t id = kNone;
  };
  // The slot holding `value`, or the empty slot where it would go.
  std::size_t slot_of(const std::string& value, std::size_t hash) const noexcept;
  void grow();

  std::vector<Slot> slots_;          // size a power of two
  std::vector<std::string> values_;  // by id
};

// Matching pods per topology value (by id) for one constraint, this cycle:
// a domain is present once added to, even with 0. Vectors indexed by id,
// reused across cycles; `epoch` tells this cycle's entries from stale ones.
class DomainCounts {
 public:
  void begin() noexcept;
  void add(std::uint32_t id, std::int64_t n);
  bool present(std::uint32_t id) const noexcept { return id < stamp_.size() && stamp_[id] == epoch_; }
  std::int64_t get(std::uint32_t id) const noexcept { return present(id) ? count_[id] : 0; }
  std::size_t domains() const noexcept { return present_.size(); }
  // The smallest count over the present domains (INT32_MAX when none).
  std::int64_t min() const noexcept;

 private:
  std::vector<std::int64_t> count_;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint32_t> present_;
  std::uint32_t epoch_ = 0;
};

class PodTopologySpread final : public Plugin {
 public:
  // false: PodTopologySpreadArgs defaultingType List with no
  // defaultConstraints, so a pod without constraints of its own gets none.
  explicit PodTopologySpread(bool system_defaulting = true) : system_defaulting_(system_defaulting) {}
  PluginId id() const noexcept override { return PluginId::pod_topology_spread; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  // upstream's updateWithPod: the matching count of `ni`'s domain moves.
  void pre_filter_update(const kube::Pod& pod, const kube::Pod& other, const NodeInfo& ni, int sign) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
  void normalize(std::span<std::int64_t> scores) override;

 private:
  FilterStatus check(const kube::Pod& pod, const NodeInfo& ni) const;
  bool build_soft_constraints(const kube::Pod& pod, const Cluster& cluster);
  void count_soft_domains(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster);
  void begin_counts(std::vector<DomainCounts>& counts, std::size_t n, const Cluster& cluster);

  TopologyValueIds values_;  // shared by every constraint, hard and soft

  // PreFilter's state, this cycle.
  std::vector<SpreadConstraint> hard_;
  std::vector<DomainCounts> hard_counts_;
  std::vector<std::int64_t> hard_min_;  // the smallest count over the domains
  // PreScore's state, this cycle.
  std::vector<SpreadConstraint> soft_;
  std::vector<DomainCounts> soft_counts_;
  std::vector<double> soft_weight_;
  bool require_all_keys_ = true;
  bool system_defaulting_ = true;
  kube::LabelSelector default_selector_;
};

}  // namespace toysched::sched
