// InterPodAffinity (framework/plugins/interpodaffinity): the incoming pod's
// required pod affinity and anti-affinity, and the required anti-affinity
// of the pods already placed (symmetry), filter; preferred terms of both
// sides, plus the placed pods' required affinity terms weighted by
// hardPodAffinityWeight, score.
//
// PreFilter and PreScore count, once per pod, matching pods per (topology
// key, value) over every node, from NodeInfo::pod_groups; Filter and Score
// are then a few hash lookups per node.
//
// matchLabelKeys / mismatchLabelKeys are not read, on purpose:
// kube-apiserver v1.36 merges them into labelSelector when the pod is
// created (registry/core/pod strategy.go PrepareForCreate; feature
// MatchLabelKeysInPodAffinity is GA and locked on since 1.33), and
// kube-scheduler reads only labelSelector. Merging them again here could
// only differ from upstream (after the pod's labels changed).
#pragma once

#include "toysched/sched/framework.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace toysched::sched {

// (topology key, topology value) → count: upstream's topologyToMatchedTermCount
// and scoreMap in one open-addressed table. Keys and values are views into
// the pods' terms and the nodes' labels, valid for one cycle. clear() resets
// only the slots used, so a warm cycle allocates nothing.
class TopologyCounts {
 public:
  void clear() noexcept;
  void add(std::string_view key, std::string_view value, std::int64_t n);
  std::int64_t get(std::string_view key, std::string_view value) const noexcept;
  bool empty() const noexcept { return used_.empty(); }
  // Whether any pair counts other than 0 (upstream deletes a pair whose
  // count returns to 0; here its slot stays, so empty() is not enough).
  bool any_nonzero() const noexcept { return nonzero_ > 0; }
  // The distinct topology keys added since clear().
  std::span<const std::string_view> keys() const noexcept { return keys_; }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::string_view key, value;
    std::int64_t count = 0;
    bool used = false;
  };
  std::size_t find(std::uint64_t hash, std::string_view key, std::string_view value) const noexcept;
  void grow();

  std::vector<Slot> slots_;  // size 0 or a power of two
  std::vector<std::uint32_t> used_;
  std::vector<std::string_view> keys_;
  std::size_t nonzero_ = 0;
};

// The incoming pod's namespace labels, from cluster.objects; nullptr when
// the namespace (or the lister) is unknown.
const kube::StringPairs* namespace_labels_of(const Cluster& cluster, std::string_view ns);

// upstream's AffinityTerm.Matches for a term of the INCOMING pod `owner`
// against pods of namespace `ns` with `labels`. upstream first adds the
// namespaces a non-empty namespaceSelector picks to the term's list, then
// matches the selector itself against no labels: a namespace that does not
// exist (namespace_labels nullptr) matches only a selector that an empty
// label set satisfies ({}, NotIn, DoesNotExist), and such a selector
// matches every namespace whatever its labels.
bool incoming_term_matches(const kube::PodAffinityTerm& t, const kube::Pod& owner, const ClusterObjects* objects,
                           std::string_view ns, const kube::StringPairs& labels);
// A term of the PLACED pod `owner` against the incoming pod, whose
// namespace has labels `pod_ns_labels` (nullptr: unknown, as no labels).
bool existing_term_matches(const kube::PodAffinityTerm& t, const kube::Pod& owner, const kube::Pod& pod,
                           const kube::StringPairs* pod_ns_labels);

class InterPodAffinity final : public Plugin {
 public:
  // upstream's InterPodAffinityArgs.hardPodAffinityWeight (default 1, 0..100).
  explicit InterPodAffinity(std::int32_t hard_pod_affinity_weight = 1) : hard_weight_(hard_pod_affinity_weight) {}
  PluginId id() const noexcept override { return PluginId::inter_pod_affinity; }

  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  // upstream's preFilterState.updateWithPod: `other`'s anti-affinity
  // terms against the pod, the pod's terms against `other`.
  void pre_filter_update(const kube::Pod& pod, const kube::Pod& other, const NodeInfo& ni, int sign) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;

  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
  // Min-max to 0..100, as upstream (float, truncated).
  void normalize(std::span<std::int64_t> scores) override;

  // One node, after pre_filter (tests, and filter's loop).
  FilterStatus filter_node(const kube::Pod& pod, const NodeInfo& ni) const;

 private:
  void count_existing_anti_affinity(const kube::Pod& pod, const NodeInfo& ni);
  void count_incoming(const kube::Pod& pod, const NodeInfo& ni);
  void score_node(const kube::Pod& pod, const NodeInfo& ni, bool preferred);
  void score_placed_pod(const kube::Pod& pod, const kube::Pod& placed, const kube::Node& node);

  std::int32_t hard_weight_;
  // This cycle's state, kept across cycles for its memory.
  const ClusterObjects* objects_ = nullptr;
  const kube::StringPairs* ns_labels_ = nullptr;  // the incoming pod's namespace
  TopologyCounts existing_anti_;                  // placed pods' required anti-affinity matching the pod
  TopologyCounts affinity_;                       // pods matching all the pod's required affinity terms
  TopologyCounts anti_;                           // pods matching each required anti-affinity term
  bool matches_own_affinity_ = false;             // the pod matches all its own required affinity terms
  TopologyCounts scores_;
};

}  // namespace toysched::sched
