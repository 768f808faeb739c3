// Why here, why not: what one decision looked at, node by node, kept per pod
// for /debug/explain and the -v=10 score lines.
//
// kube-scheduler answers "why is my pod pending?" with one summary line
// ("0/3 nodes are available: …") and "why did it go there?" with nothing
// short of -v=10. A DecisionTrace records, for one attempt, the node each
// filter rejected and why, and every score plugin's raw, normalized and
// weighted score on every feasible node; an ExplainRecorder keeps the last
// attempt of recent pods within a memory budget.
//
// Recording costs a copy of the scores the decision made anyway and a
// number per node (NodeNames keeps the names; no plugin runs twice), so it
// is always on: the question comes after the fact, when turning a flag on
// would be too late.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/framework.hpp"
#include "toysched/sched/node_names.hpp"

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace toysched::sched {

struct Decision;

// A node's name number: the one the cache gave it, else its name interned now.
inline NodeNames::Id name_id_of(const NodeInfo& ni) {
  return ni.name_id != 0 ? ni.name_id : NodeNames::intern(ni.node.name);
}

// The names of the nodes a decision listed, as NodeNames numbers: a
// decision records hundreds, and a number costs neither a copy nor a read
// of the node's name (node_names.hpp says what that saved).
class NameList {
 public:
  void push_back(const NodeInfo& ni) { ids_.push_back(name_id_of(ni)); }
  void push_back(std::string_view name) { ids_.push_back(NodeNames::intern(name)); }
  std::string_view operator[](std::size_t i) const { return NodeNames::name(ids_[i]); }
  std::string_view front() const { return (*this)[0]; }
  std::size_t size() const noexcept { return ids_.size(); }
  bool empty() const noexcept { return ids_.empty(); }
  void clear() noexcept { ids_.clear(); }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < size(); ++i) out.emplace_back((*this)[i]);
    return out;
  }

 private:
  std::vector<NodeNames::Id> ids_;
};

// Filled by schedule_pod when it is given one (algorithm.hpp). Names are
// kept by NodeNames, so a trace outlives the cache's NodeInfos.
struct DecisionTrace {
  struct Rejection {
    NodeNames::Id node_id = 0;  // a number, as the feasible nodes are (NameList)
    PluginId plugin = PluginId::none;
    // Unschedulable, or unresolvable (preemption would not help here):
    // what the differential judge compares with upstream's status code.
    Code code = Code::unschedulable;
    std::string reason;  // upstream's reason strings, ", "-joined
    std::string_view node() const { return NodeNames::name(node_id); }
  };
  // A PreFilter that rejected every node before any was filtered, and its
  // reason (upstream's status message; a copy: VolumeBinding's names a claim
  // and lives only until its next PreFilter).
  PluginId pre_filter_rejected_by = PluginId::none;
  std::string pre_filter_reason;
  std::vector<Rejection> rejected;  // in the order the nodes were filtered
  // Nodes a PreFilter left out by name (NodeAffinity's matchFields).
  int left_out = 0;
  // The feasible nodes, in the order filtered; scored when two or more.
  NameList feasible;
  // The score plugins that ran (PreScore did not skip them), in profile order.
  std::vector<PluginId> scorers;
  std::vector<std::int64_t> weights;

  // One plugin's scores over the feasible nodes. Many columns hold one
  // value on every node (a plugin with nothing to tell the nodes apart
  // by: no taints, no affinity, no images); such a column is kept as that
  // value alone; and a normalized column equal to its raw one (a plugin
  // whose scores are already in 0..100) points at the raw values. Copying
  // whole columns into a trace, most of them of equal values, was most of
  // what recording cost (15 000 nodes, 750 scored: 9.5 of the 13 µs it
  // added to a 14.5 µs decision).
  struct Column {
    static constexpr std::uint32_t kConstant = ~std::uint32_t{0};
    std::uint32_t at = kConstant;  // where its values start in `values`, unless constant
    std::int64_t constant = 0;
  };
  std::vector<Column> raw_columns, normalized_columns;  // one per scorer
  std::vector<std::int64_t> values;                     // the columns that vary, one after another

  // Adds a column of scores (one per feasible node), raw first, then normalized.
  void add_raw(std::span<const std::int64_t> column) { raw_columns.push_back(add_column(column)); }
  void add_normalized(std::span<const std::int64_t> column);

  // The decision scores whenever two or more nodes fit.
  bool scored() const noexcept { return feasible.size() >= 2; }
  std::int64_t raw(std::size_t node, std::size_t scorer) const noexcept { return read(raw_columns[scorer], node); }
  std::int64_t normalized(std::size_t node, std::size_t scorer) const noexcept {
    return read(normalized_columns[scorer], node);
  }
  std::int64_t weighted(std::size_t node, std::size_t scorer) const noexcept {
    return normalized(node, scorer) * weights[scorer];
  }
  // Sum of normalized × weight: what the decision compared.
  std::int64_t total(std::size_t node) const noexcept {
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < scorers.size(); ++k) sum += weighted(node, k);
    return sum;
  }
  // The rows this trace holds, for the recorder's budget.
  std::size_t rows() const noexcept { return rejected.size() + feasible.size() + 1; }
  // Empty, its buffers kept for the next decision.
  void clear();

 private:
  std::int64_t read(const Column& c, std::size_t node) const noexcept {
    return c.at == Column::kConstant ? c.constant : values[c.at + node];
  }
  Column add_column(std::span<const std::int64_t> column);
};

// One pod's last attempt, as /debug/explain shows it.
struct Explanation {
  std::string pod;  // namespace/name
  std::string uid;
  std::string profile;
  int attempt = 0;  // 1 for the first
  std::chrono::system_clock::time_point at;
  std::string result;  // scheduled, unschedulable, unresolvable, error; "dry-run" when not bound on purpose
  std::string node;    // chosen node, when scheduled
  std::string message;
  int nodes = 0;  // in the cache at the time
  int evaluated = 0;
  DecisionTrace trace;
};

// JSON: every field of the Explanation, nodes as objects.
std::string explain_json(const Explanation& e);
// A plain-text report: a header, the rejected nodes as a table, the scores
// as a table (one column per plugin, "weighted (raw → normalized)" rows).
std::string explain_text(const Explanation& e);

class ExplainRecorder {
 public:
  // Keeps the last attempt of each pod until the traces hold more than
  // `row_budget` node rows (a pod counts one row, plus one per node it
  // lists), oldest first out. ~100 bytes a row: the default, 100 000, is
  // ~10 MB, 200 pods of a 5 000-node cluster (~500 nodes scored each) or
  // every pod of a small one. 0 keeps nothing (--explain-rows=0).
  static constexpr std::size_t kDefaultRows = 100'000;
  explicit ExplainRecorder(std::size_t row_budget = kDefaultRows) : budget_(row_budget) {}
  bool keeps() const noexcept { return budget_ > 0; }

  // Starts recording an attempt: the returned trace goes to schedule_pod.
  DecisionTrace* begin(const kube::Pod& pod, int attempt, int nodes);
  // Ends it: the Decision's outcome is stored with the trace, replacing
  // the pod's previous attempt. `dry_run` marks a decision not bound.
  void finish(const Decision& d, bool dry_run);  // keeps nothing when !keeps()
  // The pod's last attempt ("namespace/name"), or nullptr.
  const Explanation* find(std::string_view pod) const;
  // The pod is gone: its attempt is no longer asked for.
  void forget(std::string_view pod);
  std::size_t size() const noexcept { return order_.size(); }

 private:
  void evict();

  std::size_t budget_;
  std::size_t rows_ = 0;
  Explanation current_;
  std::list<Explanation> order_;  // oldest first
  // An evicted attempt, kept for its buffers: the next begin() reuses them,
  // so a warm recorder allocates little.
  std::optional<Explanation> spare_;
  std::unordered_map<std::string_view, std::list<Explanation>::iterator> by_pod_;  // keys view into order_
};

}  // namespace toysched::sched
