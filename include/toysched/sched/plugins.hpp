// The default kube-scheduler plugins we implement, one small function each,
// with upstream's semantics and its exact reason strings
// (pkg/scheduler/framework/plugins/…, apis/config/v1/default_plugins.go).
//
// Filters, in upstream's order; the first one that rejects a node decides
// its reasons, the others are not run (frameworkImpl.RunFilterPlugins):
//
//   NodeUnschedulable → NodeName → TaintToleration → NodeAffinity
//     → NodePorts → NodeResourcesFit
//
// Scores (0..100 after normalization) and their default weights:
//   NodeResourcesFit/LeastAllocated ×1, NodeResourcesBalancedAllocation ×1,
//   TaintToleration ×3, NodeAffinity ×2.
// Not implemented: PodTopologySpread, InterPodAffinity, ImageLocality,
// volume plugins, DRA.
//
// Hot path: filters return a FilterStatus that allocates nothing. Reasons are
// bits; the untolerated taint is a pointer into the node and insufficient
// extended resources are indices into the pod's request, both valid for as
// long as the pod and the NodeInfo are. Strings are built only to report.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/node_info.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {

enum class Plugin : std::uint8_t {
  none,
  node_unschedulable,
  node_name,
  taint_toleration,
  node_affinity,
  node_ports,
  node_resources_fit,
  balanced_allocation,
};
// Upstream's plugin name ("NodeResourcesFit"), for logs.
std::string_view plugin_name(Plugin p) noexcept;

// Preemption (not done here) may only help on `unschedulable` nodes: evicting
// pods frees resources and ports, never changes taints, labels or names.
enum class Code : std::uint8_t { success, unschedulable, unresolvable };

enum class Reason : std::uint8_t {
  node_unschedulable,
  node_name,
  untolerated_taint,  // detail: FilterStatus::taint
  node_affinity,
  node_ports,
  too_many_pods,
  insufficient_cpu,
  insufficient_memory,
  insufficient_ephemeral_storage,
  insufficient_extended,    // detail: FilterStatus::extended / extended_overflow
  node_affinity_prefilter,  // node left out by NodeAffinity's PreFilter (matchFields metadata.name)
};
inline constexpr int kReasonCount = 11;

// Upstream's text for reasons that carry no detail; empty for the two that do.
std::string_view reason_text(Reason r) noexcept;
// "node(s) had untolerated taint {KEY: VALUE}"
std::string untolerated_taint_text(const kube::Taint& t);
// "Insufficient NAME"
std::string insufficient_text(std::string_view resource);
// PreFilter failure when every required term pins metadata.name and no name
// satisfies them all; the whole message is then "0/N nodes are available: pod affinity terms conflict."
inline constexpr std::string_view kPodAffinityTermsConflict = "pod affinity terms conflict";

struct FilterStatus {
  Code code = Code::success;
  Plugin plugin = Plugin::none;  // the filter that rejected the node
  std::uint32_t reasons = 0;     // bit (1 << Reason)
  // Bit i: the pod's requests.extended[i] does not fit. Indices >= 64 (a pod
  // asking for more than 64 distinct extended resources) go to the vector,
  // which otherwise stays empty and allocates nothing.
  std::uint64_t extended = 0;
  std::vector<std::uint32_t> extended_overflow;
  const kube::Taint* taint = nullptr;  // the first untolerated NoSchedule/NoExecute taint

  bool ok() const noexcept { return code == Code::success; }
  bool has(Reason r) const noexcept { return (reasons >> static_cast<int>(r)) & 1U; }
  void add(Reason r) noexcept { reasons |= 1U << static_cast<int>(r); }
  // Upstream's reason strings in the order upstream lists them (for tests
  // and logs; the scheduling cycle never calls this).
  std::vector<std::string> reason_strings(const kube::Pod& pod) const;
};

// --- matching rules, exposed for tests -----------------------------------

// v1.Toleration.ToleratesTaint: an empty effect matches every effect; an
// empty key matches every key; Exists ignores the value, Equal compares it.
bool tolerates(const kube::Toleration& tol, const kube::Taint& taint) noexcept;
bool tolerates_any(std::span<const kube::Toleration> tols, const kube::Taint& taint) noexcept;

// One matchExpressions entry against node labels (labels.Requirement):
// In/NotIn need >= 1 value, Exists/DoesNotExist none, Gt/Lt exactly one
// integer; a malformed requirement matches nothing. Gt/Lt compare the label
// as a base-10 int64, a non-integer label never matches. NotIn and
// DoesNotExist match a node without the label.
bool label_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::StringPairs& labels) noexcept;
// One matchFields entry: only key metadata.name, only In/NotIn with exactly
// one value (component-helpers nodeaffinity); anything else matches nothing.
bool field_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::Node& node) noexcept;
// A term with neither expressions nor fields matches nothing.
bool term_matches(const kube::NodeSelectorTerm& t, const kube::Node& node) noexcept;
// nodeSelector (every pair present with that value) AND, if the pod has
// required terms, at least one term matching.
bool required_affinity_matches(const kube::Pod& pod, const kube::Node& node) noexcept;

// HostPortInfo.CheckConflict: same protocol and port, and addresses equal
// or either one 0.0.0.0. Port <= 0 never conflicts; empty protocol is TCP,
// empty address 0.0.0.0.
bool host_ports_conflict(const kube::HostPort& want, const kube::HostPort& used) noexcept;

// --- PreFilter ------------------------------------------------------------

// NodeAffinity's PreFilter: when every required term has a matchFields
// metadata.name In, only the union over terms of (the intersection within
// each term) can pass, and upstream does not even run the filters on the
// other nodes. `names` points into the pod.
struct NodeNameSet {
  bool all = true;                      // no restriction
  bool conflict = false;                // restricted to the empty set
  std::vector<std::string_view> names;  // sorted, unique
  bool contains(std::string_view n) const noexcept;
};
NodeNameSet prefilter_node_names(const kube::Pod& pod);

// --- filters ----------------------------------------------------------------

FilterStatus filter_node_unschedulable(const kube::Pod& pod, const NodeInfo& ni);
FilterStatus filter_node_name(const kube::Pod& pod, const NodeInfo& ni);
FilterStatus filter_taint_toleration(const kube::Pod& pod, const NodeInfo& ni);
FilterStatus filter_node_affinity(const kube::Pod& pod, const NodeInfo& ni);
FilterStatus filter_node_ports(const kube::Pod& pod, const NodeInfo& ni);
// Every failing resource is listed, not only the first.
FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni);
// All of the above in upstream's order, stopping at the first rejection.
FilterStatus run_filters(const kube::Pod& pod, const NodeInfo& ni);

// Told about every node the filters reject, with why.
class FilterSink {
 public:
  virtual void rejected(const NodeInfo& ni, const FilterStatus& why) = 0;

 protected:
  ~FilterSink() = default;
};

struct FilterOutcome {
  int evaluated = 0;       // nodes the filters ran on
  int absent = 0;          // nodes the PreFilter left out
  bool null_node = false;  // a null pointer in the input: nothing else is valid
};

// Runs the filters over `nodes` (those `allowed` admits), replacing the
// contents of `feasible` with the nodes that pass, in input order. Nodes
// that need no more than the resource check (the usual case: no taints, no
// cordon, a pod without selector, ports or extended resources) take an
// inlined fast path that builds no FilterStatus.
FilterOutcome filter_nodes(const kube::Pod& pod, std::span<const NodeInfo* const> nodes, const NodeNameSet& allowed,
                           std::vector<const NodeInfo*>& feasible, FilterSink& sink);

// --- scores -----------------------------------------------------------------

inline constexpr std::int64_t kMaxNodeScore = 100;
inline constexpr std::int64_t kWeightLeastAllocated = 1;
inline constexpr std::int64_t kWeightBalancedAllocation = 1;
inline constexpr std::int64_t kWeightTaintToleration = 3;
inline constexpr std::int64_t kWeightNodeAffinity = 2;

// LeastAllocated over cpu and memory (weight 1 each): per resource
// (alloc − req) × 100 / alloc with req = the node's non-zero requested plus
// the pod's non-zero request, 0 when req > alloc; a resource with alloc 0 is
// left out of the mean; integer division as upstream.
std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept;

// Upstream skips BalancedAllocation for a pod requesting neither cpu nor
// memory (so a flood of best-effort pods does not pile onto one node,
// kubernetes#129138); a skipped plugin adds 0 to every node.
bool is_best_effort(const kube::Pod& pod) noexcept;
// (1 − std) × 100 truncated, std = |f_cpu − f_mem| / 2, f = (node's real
// requested + pod's request) / alloc capped at 1; a resource with alloc 0
// is left out (then std = 0). 0 for best-effort pods.
std::int64_t score_balanced_allocation(const kube::Pod& pod, const NodeInfo& ni) noexcept;

// Raw TaintToleration score: PreferNoSchedule taints not tolerated by the
// pod's tolerations with an empty or PreferNoSchedule effect. Normalized
// reversed across the feasible nodes.
std::int64_t count_intolerable_prefer_no_schedule(const kube::Pod& pod, const NodeInfo& ni) noexcept;

// Raw NodeAffinity score: the sum of the weights of the preferred terms
// the node matches. Normalized (not reversed) across the feasible nodes.
std::int64_t preferred_affinity_sum(const kube::Pod& pod, const NodeInfo& ni) noexcept;

// Every score plugin over the feasible nodes, normalized and weighted; one
// row per node in input order. The vectors are resized, never shrunk, so a
// table reused across cycles stops allocating.
struct ScoreTable {
  std::vector<std::int64_t> least_allocated, balanced_allocation, taint_toleration, node_affinity;
  std::vector<std::int64_t> total;
};
void score_nodes(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, ScoreTable& out);

// helper.DefaultNormalizeScore: scale to 0..max_score by the largest value
// (integer division); reversed means max_score − scaled. All zeros stay 0,
// or become max_score when reversed.
void default_normalize_score(std::span<std::int64_t> scores, std::int64_t max_score, bool reverse) noexcept;

}  // namespace toysched::sched
