// NodeAffinity (framework/plugins/nodeaffinity, component-helpers'
// nodeaffinity): spec.nodeSelector and required node affinity filter,
// preferred node affinity scores. PreFilter narrows the search to the
// nodes named by matchFields metadata.name when every required term pins
// one.
#pragma once

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// One matchExpressions entry against node labels (labels.Requirement):
// In/NotIn need >= 1 value, Exists/DoesNotExist none, Gt/Lt exactly one
// integer; a malformed requirement matches nothing. Gt/Lt compare the label
// as a base-10 int64, a non-integer label never matches. NotIn and
// DoesNotExist match a node without the label.
bool label_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::StringPairs& labels) noexcept;
// One matchFields entry: only key metadata.name, only In/NotIn with exactly
// one value; anything else matches nothing.
bool field_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::Node& node) noexcept;
// A term with neither expressions nor fields matches nothing.
bool term_matches(const kube::NodeSelectorTerm& t, const kube::Node& node) noexcept;
// nodeSelector (every pair present with that value) AND, if the pod has
// required terms, at least one term matching.
bool required_affinity_matches(const kube::Pod& pod, const kube::Node& node) noexcept;

// When every required term has a matchFields metadata.name In, only the
// union over terms of (the intersection within each term) can pass.
// `names` points into the pod.
NodeNameSet prefilter_node_names(const kube::Pod& pod);
// PreFilter failure when no name satisfies every term: the message is then
// "0/N nodes are available: pod affinity terms conflict."
inline constexpr std::string_view kPodAffinityTermsConflict = "pod affinity terms conflict";

FilterStatus filter_node_affinity(const kube::Pod& pod, const NodeInfo& ni);

// Raw score: the sum of the weights of the preferred terms the node
// matches. Normalized (not reversed) across the feasible nodes.
std::int64_t preferred_affinity_sum(const kube::Pod& pod, const NodeInfo& ni) noexcept;

class NodeAffinity final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_affinity; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;
  void normalize(std::span<std::int64_t> scores) override;

 private:
  NodeNameSet names_;  // this cycle's PreFilter result
};

}  // namespace toysched::sched
