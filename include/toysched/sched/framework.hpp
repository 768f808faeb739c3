// The plugin framework: what a plugin is, what it says about a node, and
// the extension points a scheduling decision calls, in kube-scheduler's
// order (pkg/scheduler/framework/interface.go):
//
//   PreFilter (once per pod: skip, narrow, or reject every node)
//     → Filter (per node, in profile order; the first rejection decides)
//     → PreScore (once per pod over the feasible nodes: skip or prepare)
//     → Score (per node) → NormalizeScore (over the feasible nodes)
//     → × the plugin's weight, summed
//
// Two differences from upstream, both for the hot path:
//  - Filter and Score take a span of nodes, not one node: one virtual call
//    per plugin per chunk of nodes, and the per-node loop is the plugin's
//    own, inlined, with no status object built for a node that passes.
//    Running the filters plugin by plugin over a chunk keeps upstream's
//    result exactly: a node's reasons come from the first plugin, in
//    profile order, that rejects it.
//  - Per-pod state (upstream's CycleState) lives in the plugin object:
//    one thread schedules (docs/architecture.md), a plugin instance belongs to one
//    profile, and state kept in members is reused across cycles, so a warm
//    cycle allocates nothing. PreFilter/PreScore overwrite it every cycle.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/image_states.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/registry.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {

// Preemption may only help on `unschedulable` nodes: evicting pods frees
// resources and ports, never changes taints, labels or names.
enum class Code : std::uint8_t { success, unschedulable, unresolvable };
// Upstream's name of a status code, as its Code.String() prints it
// ("UnschedulableAndUnresolvable").
std::string_view code_name(Code c) noexcept;

// Why a filter rejected a node: one per line of TOYSCHED_REASONS
// (registry.hpp), which also holds each one's text.
enum class Reason : std::uint8_t {
#define TOYSCHED_REASON(id, text) id,
  TOYSCHED_REASONS(TOYSCHED_REASON)
#undef TOYSCHED_REASON
};
#define TOYSCHED_REASON(id, text) +1
inline constexpr int kReasonCount = 0 TOYSCHED_REASONS(TOYSCHED_REASON);
#undef TOYSCHED_REASON
// A node's reasons are bits of one word.
using ReasonBits = std::uint64_t;
static_assert(kReasonCount <= 64, "FilterStatus::reasons holds one bit per Reason");

// Upstream's text for reasons that carry no detail; empty for the one that
// does (insufficient_extended).
std::string_view reason_text(Reason r) noexcept;
// "Insufficient NAME"
std::string insufficient_text(std::string_view resource);
// Reason text → how many nodes gave it.
using ReasonHistogram = std::map<std::string, int, std::less<>>;
// framework.FitError.Error()'s shape: "0/N nodes are available: " then
// "COUNT REASON" for each reason, sorted as whole strings (so "10 x" sorts
// before "2 y", as Go's sort.Strings does), ", "-joined, then ".". The
// decision's message and preemption's both read so.
std::string nodes_unavailable_text(std::size_t total_nodes, const ReasonHistogram& reasons);

// Why one node was rejected. Allocates nothing: reasons are bits,
// insufficient extended resources are indices into the pod's request
// (valid for as long as the pod is). Strings are built only to report.
struct FilterStatus {
  Code code = Code::success;
  PluginId plugin = PluginId::none;  // the filter that rejected the node
  ReasonBits reasons = 0;            // bit (1 << Reason)
  // Bit i: the pod's requests.extended[i] does not fit. Indices >= 64 (a pod
  // asking for more than 64 distinct extended resources) go to the vector,
  // which otherwise stays empty and allocates nothing.
  std::uint64_t extended = 0;
  std::vector<std::uint32_t> extended_overflow;

  bool ok() const noexcept { return code == Code::success; }
  bool has(Reason r) const noexcept { return (reasons >> static_cast<int>(r)) & 1U; }
  void add(Reason r) noexcept { reasons |= ReasonBits{1} << static_cast<int>(r); }
  // Upstream's reason strings in the order upstream lists them (for tests
  // and logs; the scheduling cycle never calls this).
  std::vector<std::string> reason_strings(const kube::Pod& pod) const;
};

FilterStatus reject(PluginId p, Code c, Reason r);
// A lister's NotFound text ("persistentvolumeclaim \"data\" not found"),
// which upstream's volume plugins pass on as their rejection.
inline std::string not_found_text(std::string_view resource, std::string_view name) {
  return std::string(resource) + " \"" + std::string(name) + "\" not found";
}

// Told about every node the filters reject, with why.
class FilterSink {
 public:
  virtual void rejected(const NodeInfo& ni, const FilterStatus& why) = 0;

 protected:
  ~FilterSink() = default;
};

// What plugins look up beyond nodes and pods, from the Scheduler's
// informers (namespaces, the workloads that own or select pods, and the
// claims, volumes and classes of pods' storage).
class Nominator;          // nominator.hpp
class VolumeAssumptions;  // volume_assumptions.hpp

class ClusterObjects {
 public:
  // The labels of namespace `ns`; nullptr when no such namespace is known
  // (InterPodAffinity's namespaceSelector then matches nothing there).
  virtual const kube::StringPairs* namespace_labels(std::string_view ns) const = 0;
  // upstream's helper.DefaultSelector, for PodTopologySpread's system
  // default constraints: the selectors of the Services selecting the pod
  // merged, plus the selector of its controller when that is a
  // ReplicationController, ReplicaSet or StatefulSet. Empty when none.
  virtual kube::LabelSelector default_selector(const kube::Pod& pod) const = 0;
  // The storage objects VolumeBinding reads; nullptr when not known. Not
  // pure: a double that has no storage knows none.
  virtual const kube::PersistentVolumeClaim* claim(std::string_view /*ns*/, std::string_view /*name*/) const {
    return nullptr;
  }
  virtual const kube::PersistentVolume* volume(std::string_view /*name*/) const { return nullptr; }
  virtual const kube::StorageClass* storage_class(std::string_view /*name*/) const { return nullptr; }
  // The volumes of storage class `name` ("" for those of none), in no order.
  virtual std::vector<const kube::PersistentVolume*> volumes_of_class(std::string_view /*name*/) const { return {}; }
  // VolumeBinding's assumptions (volume_assumptions.hpp): a scheduler-side
  // overlay on the informers' objects, which Reserve writes even though a
  // decision sees the objects as const. nullptr: none kept (a double).
  virtual VolumeAssumptions* volume_assumptions() const { return nullptr; }
  // NodeVolumeLimits: the node's CSINode (nullptr: none), and the
  // VolumeAttachments naming the node (in no order).
  virtual const kube::CSINode* csi_node(std::string_view /*node*/) const { return nullptr; }
  virtual std::span<const kube::VolumeAttachment> attachments(std::string_view /*node*/) const { return {}; }
  // VolumeBinding's capacity check: the CSIDriver named (nullptr: none),
  // and the CSIStorageCapacities of a storage class (in no order).
  virtual const kube::CSIDriver* csi_driver(std::string_view /*name*/) const { return nullptr; }
  virtual std::vector<const kube::CSIStorageCapacity*> storage_capacities(std::string_view /*class_name*/) const {
    return {};
  }
  // Every PodDisruptionBudget, for preemption (upstream lists them all and
  // matches each victim against those of its namespace). Sorted by
  // namespace, then name: one namespace's budgets are adjacent and the
  // order is the same run to run. Valid until the next PDB event, i.e. for
  // one scheduling cycle. Empty by default: a double knows no budget.
  virtual std::span<const kube::PodDisruptionBudget* const> pdbs() const { return {}; }

 protected:
  ~ClusterObjects() = default;
};

// Where a sampled decision reports how long each plugin call took
// (scheduler_plugin_execution_duration_seconds). `point` and `status` are
// upstream's label values ("PreFilter", "Filter", "PreScore", "Score",
// "ScoreExtensionNormalize"; "Success", "Skip", "Unschedulable",
// "UnschedulableAndUnresolvable"). Filter and Score are timed per call,
// which here is one chunk of nodes, not one node.
class PluginTimings {
 public:
  virtual void observe(std::string_view point, PluginId plugin, std::string_view status, double seconds) = 0;

 protected:
  ~PluginTimings() = default;
};

// The cluster as PreFilter and PreScore see it: every node, not only those
// this decision filters (InterPodAffinity and PodTopologySpread count pods
// on all of them).
struct Cluster {
  Cluster(std::span<const NodeInfo* const> all) : nodes(all) {}     // NOLINT: a node list is a cluster
  Cluster(const std::vector<const NodeInfo*>& all) : nodes(all) {}  // NOLINT
  Cluster(std::span<const NodeInfo* const> all, std::int64_t tainted, std::int64_t unschedulable)
      : nodes(all), tainted_nodes(tainted), unschedulable_nodes(unschedulable) {}

  std::span<const NodeInfo* const> nodes;
  // How many of `nodes` have a taint, or are cordoned, when the caller keeps
  // count (the Cache does); -1 when unknown. With 0, TaintToleration and
  // NodeUnschedulable skip their pass over the nodes, the common case.
  std::int64_t tainted_nodes = -1;
  std::int64_t unschedulable_nodes = -1;
  // How many pods on `nodes` have any pod affinity or anti-affinity term,
  // and how many a required anti-affinity term, when the caller keeps count
  // (the Cache does; it may count more, never fewer); -1 when unknown. With
  // 0, InterPodAffinity skips its pass over the nodes.
  std::int64_t pods_with_affinity = -1;
  std::int64_t pods_with_required_anti_affinity = -1;
  // nullptr in unit tests that need none: no namespace labels, no default
  // selectors.
  const ClusterObjects* objects = nullptr;
  // The images the nodes report (the Cache keeps them); nullptr: none.
  const ImageStates* images = nullptr;
  // Set on the decisions whose plugin calls are timed (one in ten, as
  // upstream samples them); nullptr: not timed.
  PluginTimings* timings = nullptr;
  // The pods nominated to nodes by preemptions (nominator.hpp): a node
  // must also take, beside the pod, those of them of at least its priority.
  // nullptr: none (the usual case, which costs nothing).
  const Nominator* nominated = nullptr;
};

// A PreFilter's answer that only some nodes can pass, by name (upstream's
// PreFilterResult.NodeNames): the others are not even filtered.
struct NodeNameSet {
  bool all = true;                      // no restriction
  bool conflict = false;                // restricted to the empty set
  std::vector<std::string_view> names;  // sorted, unique
  bool contains(std::string_view n) const noexcept;
};

struct PreFilterResult {
  enum class Kind : std::uint8_t {
    run,     // call Filter on every node
    skip,    // this pod needs nothing of this plugin: every node passes it
    reject,  // no node can pass: the decision fails with `message`
  } kind = Kind::run;
  std::string_view message;            // reject: upstream's PreFilter status text (static storage)
  const NodeNameSet* names = nullptr;  // run: when set, only these nodes (valid until the next PreFilter)
};

class PreBind;  // pre_bind.hpp

// A plugin implements the extension points it needs; the others keep
// their defaults, which admit every node and score every node 0. A profile
// (profile.hpp) decides which points of which plugin run.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual PluginId id() const noexcept = 0;
  std::string_view name() const noexcept { return plugin_name(id()); }

  virtual PreFilterResult pre_filter(const kube::Pod& /*pod*/, const Cluster& /*cluster*/) { return {}; }
  // upstream's PreFilterExtensions AddPod (sign +1) / RemovePod (−1): after
  // PreFilter for `pod`, `other` is counted on `ni` from now on, or no
  // longer. Preemption removes victims and adds them back; nominated pods
  // are added and removed again. +1 then −1 (or the reverse) leaves the
  // state as it was. `ni` is the node as the cluster holds it (its pods
  // not edited; views into its labels stay valid for the cycle). Default:
  // the plugin's PreFilter state does not depend on other pods.
  virtual void pre_filter_update(const kube::Pod& /*pod*/, const kube::Pod& /*other*/, const NodeInfo& /*ni*/,
                                 int /*sign*/) {}
  // Moves the nodes this plugin admits to the front of `nodes`, keeping
  // their order, and returns how many; tells `sink` about every other one.
  virtual std::size_t filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& /*sink*/) {
    return nodes.size();
  }

  // false: the plugin has nothing to say for this pod and adds 0 to every
  // node (upstream's Skip at PreScore); Score is then not called.
  virtual bool pre_score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> /*feasible*/,
                         const Cluster& /*cluster*/) {
    return true;
  }
  // One raw score per node, into `out` (same length as `feasible`). Called
  // once or more per decision, on consecutive parts of the feasible nodes
  // (PreScore saw them all).
  virtual void score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) {
    std::fill(out.begin(), out.end(), 0);
    (void)feasible;
  }
  // In place, to 0..kMaxNodeScore. Default: already in range.
  virtual void normalize(std::span<std::int64_t> /*scores*/) {}

  // Reserve: the decision put the pod on `ni` (after this plugin's PreFilter
  // and Filter for the pod). What the binding cycle must do for it before
  // the binding (pre_bind.hpp), or nullptr: nothing.
  virtual std::unique_ptr<PreBind> reserve(const kube::Pod& pod, const NodeInfo& ni, const Cluster& cluster);
};

inline constexpr std::int64_t kMaxNodeScore = 100;

// helper.DefaultNormalizeScore: scale to 0..max_score by the largest value
// (integer division); reversed means max_score − scaled. All zeros stay 0,
// or become max_score when reversed.
void default_normalize_score(std::span<std::int64_t> scores, std::int64_t max_score, bool reverse) noexcept;

// The loop most filters are: nodes for which `trivial(ni)` holds pass
// without a FilterStatus being built (the usual case: no taint, no cordon);
// for the others `check(ni)` decides. Nodes that pass are kept in order,
// the others go to `sink`.
template <class Trivial, class Check>
std::size_t filter_each(std::span<const NodeInfo*> nodes, FilterSink& sink, Trivial&& trivial, Check&& check) {
  std::size_t kept = 0;
  for (const NodeInfo* ni : nodes) {
    if (trivial(*ni)) {
      nodes[kept++] = ni;
      continue;
    }
    const FilterStatus st = check(*ni);
    if (st.ok()) {
      nodes[kept++] = ni;
    } else {
      sink.rejected(*ni, st);
    }
  }
  return kept;
}

// `filters` on one node, in order: the first rejection, or success. For
// the few nodes a decision looks at twice (nominated pods, preemption's
// what-ifs); a decision's pass over many nodes goes plugin by plugin.
FilterStatus filter_one(std::span<Plugin* const> filters, const kube::Pod& pod, const NodeInfo& ni);

template <class Check>
std::size_t filter_each(std::span<const NodeInfo*> nodes, FilterSink& sink, Check&& check) {
  return filter_each(
      nodes, sink, [](const NodeInfo&) { return false; }, check);
}

}  // namespace toysched::sched
