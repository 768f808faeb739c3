#include "toysched/sched/algorithm.hpp"

#include "toysched/sched/explain.hpp"
#include "toysched/sched/what_if.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <map>
#include <optional>
#include <string_view>

namespace toysched::sched {
namespace {

constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// Reused across cycles so a warm cycle allocates nothing but the Decision's
// strings. One thread runs the scheduling cycle, so one set is enough.
struct Scratch {
  std::vector<const NodeInfo*> feasible;
  std::vector<Plugin*> filters;                // this pod's, after PreFilter
  std::vector<WeightedPlugin> scorers;         // this pod's, after PreScore
  std::vector<std::vector<std::int64_t>> raw;  // one column per scorer
  std::vector<std::int64_t> total;
  std::vector<int> extended_counts;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Why the nodes failed, counted per reason as the filters report it. The
// strings are made once, at the end, only when the pod did not fit.
class Diagnosis final : public FilterSink {
 public:
  Diagnosis(const kube::Pod& pod, Scratch& s) : pod_(pod), s_(s) {
    s_.extended_counts.assign(pod.requests.extended.size(), 0);
  }

  void rejected(const NodeInfo& /*ni*/, const FilterStatus& st) override {
    if (st.code == Code::unschedulable) resolvable_ = true;
    // Usually one bit: walk the set bits, not every reason.
    for (std::uint32_t bits = st.reasons; bits != 0; bits &= bits - 1) {
      ++counts_[static_cast<std::size_t>(std::countr_zero(bits))];
    }
    if (st.extended != 0) {
      for (std::size_t j = 0; j < 64 && j < s_.extended_counts.size(); ++j) {
        if ((st.extended >> j) & 1U) ++s_.extended_counts[j];
      }
    }
    for (auto j : st.extended_overflow) ++s_.extended_counts[j];
  }

  // Nodes NodeAffinity's PreFilter left out: UnschedulableAndUnresolvable.
  void add_absent(int n) { counts_[static_cast<int>(Reason::node_affinity_prefilter)] += n; }

  bool any_resolvable() const { return resolvable_; }

  // framework.FitError.Error() (nodes_unavailable_text).
  std::string message(std::size_t total_nodes) const {
    ReasonHistogram histogram;
    for (int i = 0; i < kReasonCount; ++i) {
      const auto r = static_cast<Reason>(i);
      if (counts_[i] == 0 || r == Reason::insufficient_extended) continue;
      histogram[std::string(reason_text(r))] += counts_[i];
    }
    for (std::size_t j = 0; j < s_.extended_counts.size(); ++j) {
      if (s_.extended_counts[j] != 0) {
        histogram[insufficient_text(pod_.requests.extended[j].first)] += s_.extended_counts[j];
      }
    }
    return nodes_unavailable_text(total_nodes, histogram);
  }

 private:
  const kube::Pod& pod_;
  Scratch& s_;
  std::array<int, kReasonCount> counts_{};
  bool resolvable_ = false;
};

// Forwards to the Diagnosis and writes each rejection, with its reasons
// in full, to the decision's trace (only when one is asked for).
class TracingSink final : public FilterSink {
 public:
  TracingSink(const kube::Pod& pod, FilterSink& next, DecisionTrace& trace) : pod_(pod), next_(next), t_(trace) {}

  void rejected(const NodeInfo& ni, const FilterStatus& st) override {
    next_.rejected(ni, st);
    std::string reason;
    for (const std::string& r : st.reason_strings(pod_)) reason += (reason.empty() ? "" : ", ") + r;
    t_.rejected.push_back({name_id_of(ni), st.plugin, st.code, std::move(reason)});
  }

 private:
  const kube::Pod& pod_;
  FilterSink& next_;
  DecisionTrace& t_;
};

Decision not_scheduled(Decision d, bool resolvable, std::string message) {
  d.status = resolvable ? Decision::Status::unschedulable : Decision::Status::unresolvable;
  d.message = std::move(message);
  return d;
}

}  // namespace

std::size_t feasible_nodes_to_find(std::size_t nodes, int percentage) noexcept {
  constexpr std::size_t kMinFeasible = 100;  // upstream's minFeasibleNodesToFind
  if (nodes < kMinFeasible || percentage >= 100) return nodes;
  long pct = percentage;
  if (pct <= 0) {
    pct = 50 - static_cast<long>(nodes) / 125;  // adaptive, as upstream
    if (pct < 5) pct = 5;
  }
  std::size_t n = nodes * static_cast<std::size_t>(pct) / 100;
  return n < kMinFeasible ? kMinFeasible : n;
}

namespace {

// Times one plugin call when the decision is sampled (cluster.timings).
class PluginClock {
 public:
  explicit PluginClock(PluginTimings* t) : t_(t), start_(t ? std::chrono::steady_clock::now() : Start{}) {}
  void done(std::string_view point, PluginId plugin, std::string_view status) const {
    if (t_ == nullptr) return;
    t_->observe(point, plugin, status,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  using Start = std::chrono::steady_clock::time_point;
  PluginTimings* t_;
  Start start_;
};

struct FilterOutcome {
  int evaluated = 0;       // nodes the filters ran on
  int absent = 0;          // nodes a PreFilter left out
  bool null_node = false;  // a null pointer in the input: nothing else is valid
};

// Of nodes that passed the filters, those that also pass with the pods
// nominated to them of at least the pod's priority (upstream's
// RunFilterPluginsWithNominatedPods runs both passes, in the other order;
// the reasons reported when both fail may differ). Kept in order at the
// front; returns how many.
std::size_t filter_nominated(const kube::Pod& pod, std::span<const NodeInfo*> nodes, std::span<Plugin* const> filters,
                             const Nominator& nominated, FilterSink& sink) {
  std::size_t kept = 0;
  for (const NodeInfo* ni : nodes) {
    if (const auto st = filter_with_nominated(filters, pod, *ni, &nominated); st && !st->ok()) {
      sink.rejected(*ni, *st);
      continue;
    }
    nodes[kept++] = ni;
  }
  return kept;
}

// Filters `chunk` with every active filter, plugin by plugin, and appends
// the nodes that pass to `feasible`, in input order.
void filter_chunk(const kube::Pod& pod, std::span<const NodeInfo* const> chunk, std::span<Plugin* const> filters,
                  const NodeNameSet* names, const Nominator* nominated, std::vector<const NodeInfo*>& feasible,
                  FilterSink& sink, FilterOutcome& out, PluginTimings* timings) {
  const std::size_t base = feasible.size();
  feasible.resize(base + chunk.size());
  std::size_t n = 0;
  for (const NodeInfo* ni : chunk) {
    if (ni == nullptr) {
      out.null_node = true;
      break;
    }
    if (names != nullptr && !names->contains(ni->node.name)) {
      ++out.absent;
      continue;
    }
    feasible[base + n++] = ni;
  }
  out.evaluated += static_cast<int>(n);
  for (Plugin* f : filters) {
    if (n == 0) break;
    const PluginClock clock(timings);
    const std::size_t before = n;
    n = f->filter(pod, std::span<const NodeInfo*>(feasible.data() + base, n), sink);
    clock.done("Filter", f->id(), n == before ? "Success" : "Unschedulable");
  }
  if (nominated != nullptr) n = filter_nominated(pod, std::span(feasible).subspan(base, n), filters, *nominated, sink);
  feasible.resize(base + n);
}

// Filters from search.next_start round the list, in chunks (so each
// plugin's pass over a chunk stays in cache), until `want` feasible nodes
// are found or every node was seen; the next search starts just after the
// last node kept.
FilterOutcome filter_nodes(const kube::Pod& pod, const Cluster& cluster, std::span<Plugin* const> filters,
                           const NodeNameSet* names, std::vector<const NodeInfo*>& feasible, FilterSink& sink,
                           std::size_t want, Search& search) {
  const std::span<const NodeInfo* const> nodes = cluster.nodes;
  constexpr std::size_t kChunk = 128;
  FilterOutcome total;
  feasible.clear();
  const std::size_t n = nodes.size();
  std::size_t pos = search.next_start % n, processed = 0;
  while (processed < n && feasible.size() < want && !total.null_node) {
    const std::size_t len = std::min({kChunk, n - pos, n - processed});
    filter_chunk(pod, nodes.subspan(pos, len), filters, names, cluster.nominated, feasible, sink, total,
                 cluster.timings);
    if (feasible.size() > want) {
      // Enough: keep exactly `want`, as upstream does.
      const NodeInfo* last = feasible[want - 1];
      feasible.resize(want);
      std::size_t i = 0;
      while (nodes[(pos + i) % n] != last) ++i;
      pos = (pos + i + 1) % n;
      break;
    }
    processed += len;
    pos = (pos + len) % n;
  }
  search.next_start = pos;
  return total;
}

}  // namespace

Decision refuse_unsupported(const kube::Pod& pod) {
  const kube::UnsupportedConstraints& u = pod.unsupported;
  std::string fields;
  int count = 0;
  auto add = [&](bool present, std::string_view field) {
    if (!present) return;
    if (count++ > 0) fields += ", ";
    fields += field;
  };
  add(u.resource_claims, "spec.resourceClaims");
  return not_scheduled(Decision{}, false,
                       "toy-scheduler does not evaluate " + fields + ": the pod stays pending rather than be bound " +
                           (count > 1 ? "without them" : "without it") +
                           " (--ignore-unsupported-constraints binds it anyway).");
}

std::int64_t NodeScore::of(PluginId id) const noexcept {
  for (const auto& [p, v] : plugins) {
    if (p == id) return v;
  }
  return 0;
}

namespace {

// total += column × weight. Vectorized even at -O2 (GCC 12 vectorizes only
// the cheapest loops there), through restrict pointers so that `total`
// cannot alias the column, and weight 1 (most plugins) without the
// multiply (x86-64's baseline has no vector 64-bit multiply).
[[gnu::optimize("tree-vectorize")]] void add_weighted(std::int64_t* __restrict total,
                                                      const std::int64_t* __restrict col, std::size_t n,
                                                      std::int64_t weight) noexcept {
  if (weight == 1) {
    for (std::size_t i = 0; i < n; ++i) total[i] += col[i];
  } else {
    for (std::size_t i = 0; i < n; ++i) total[i] += col[i] * weight;
  }
}

// The scorers and their raw scores into the trace.
void trace_raw(const Scratch& s, DecisionTrace& t) {
  const std::size_t n = s.feasible.size();
  for (std::size_t k = 0; k < s.scorers.size(); ++k) {
    t.scorers.push_back(s.scorers[k].plugin->id());
    t.weights.push_back(s.scorers[k].weight);
    t.add_raw(std::span<const std::int64_t>(s.raw[k]).first(n));
  }
}

void trace_normalized(const Scratch& s, DecisionTrace& t) {
  const std::size_t n = s.feasible.size();
  for (std::size_t k = 0; k < s.scorers.size(); ++k) t.add_normalized(std::span<const std::int64_t>(s.raw[k]).first(n));
}

// Every active score plugin over the feasible nodes: raw, normalized,
// weighted, summed into s.total.
void score_nodes(const Profile& profile, const kube::Pod& pod, const Cluster& cluster, Scratch& s,
                 DecisionTrace* trace) {
  const std::size_t n = s.feasible.size();
  s.scorers.clear();
  for (const WeightedPlugin& w : profile.scorers()) {
    const PluginClock clock(cluster.timings);
    const bool run = w.plugin->pre_score(pod, s.feasible, cluster);
    clock.done("PreScore", w.plugin->id(), run ? "Success" : "Skip");
    if (run) s.scorers.push_back(w);
  }
  if (s.raw.size() < s.scorers.size()) s.raw.resize(s.scorers.size());
  for (std::size_t k = 0; k < s.scorers.size(); ++k) s.raw[k].resize(n);
  // Raw scores chunk by chunk, every plugin over one chunk before the next:
  // the chunk's NodeInfos stay in cache from one plugin to the next.
  constexpr std::size_t kChunk = 128;
  const std::span<const NodeInfo* const> all(s.feasible);
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t len = std::min(kChunk, n - at);
    for (std::size_t k = 0; k < s.scorers.size(); ++k) {
      const PluginClock clock(cluster.timings);
      s.scorers[k].plugin->score(pod, all.subspan(at, len), std::span<std::int64_t>(s.raw[k]).subspan(at, len));
      clock.done("Score", s.scorers[k].plugin->id(), "Success");
    }
  }
  if (trace != nullptr) trace_raw(s, *trace);
  s.total.assign(n, 0);
  for (std::size_t k = 0; k < s.scorers.size(); ++k) {
    const PluginClock clock(cluster.timings);
    s.scorers[k].plugin->normalize(s.raw[k]);
    clock.done("ScoreExtensionNormalize", s.scorers[k].plugin->id(), "Success");
    add_weighted(s.total.data(), s.raw[k].data(), n, s.scorers[k].weight);
  }
  if (trace != nullptr) trace_normalized(s, *trace);
}

void report_scores(const Scratch& s, std::vector<NodeScore>& out) {
  out.reserve(s.feasible.size());
  for (std::size_t i = 0; i < s.feasible.size(); ++i) {
    NodeScore ns{s.feasible[i], {}, s.total[i]};
    for (std::size_t k = 0; k < s.scorers.size(); ++k) {
      ns.plugins.emplace_back(s.scorers[k].plugin->id(), s.raw[k][i] * s.scorers[k].weight);
    }
    out.push_back(std::move(ns));
  }
}

// Every PreFilter of the profile: the filters to run go to s.filters, a
// narrowing plugin's node names to `names`. A rejection stops there and is
// message is returned (static storage, as PreFilterResult's) and the plugin
// that said it goes to `rejected_by`.
std::optional<std::string_view> pre_filter(const Profile& profile, const kube::Pod& pod, const Cluster& cluster,
                                           Scratch& s, const NodeNameSet*& names, PluginId& rejected_by) {
  s.filters.clear();
  for (Plugin* f : profile.filters()) {
    const PluginClock clock(cluster.timings);
    const PreFilterResult pre = f->pre_filter(pod, cluster);
    clock.done("PreFilter", f->id(),
               pre.kind == PreFilterResult::Kind::skip     ? "Skip"
               : pre.kind == PreFilterResult::Kind::reject ? "UnschedulableAndUnresolvable"
                                                           : "Success");
    if (pre.kind == PreFilterResult::Kind::skip) continue;
    if (pre.kind == PreFilterResult::Kind::reject) {
      rejected_by = f->id();
      return pre.message;
    }
    if (pre.names != nullptr) names = pre.names;  // one narrowing plugin today (NodeAffinity)
    s.filters.push_back(f);
  }
  return std::nullopt;
}

// The feasible node with the highest total, ties broken uniformly.
std::string best_node(const Scratch& s, std::mt19937_64& rng) {
  const std::size_t n = s.feasible.size();
  const std::int64_t* const total = s.total.data();
  // The best total and how many nodes share it, in one pass.
  std::int64_t best = total[0];
  std::size_t ties = 1;
  for (std::size_t i = 1; i < n; ++i) {
    if (total[i] > best) {
      best = total[i];
      ties = 1;
    } else if (total[i] == best) {
      ++ties;
    }
  }

  // Upstream (v1.36) gives every scored node a random Randomizer and pops
  // the highest total, ties to the highest Randomizer. Choosing the k-th
  // tied node for one uniform k gives every tied node the same 1/ties
  // chance with a single draw, which matters when thousands of nodes score.
  std::size_t pick = 0;
  if (ties > 1) pick = std::uniform_int_distribution<std::size_t>(0, ties - 1)(rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (total[i] != best) continue;
    if (pick-- == 0) return s.feasible[i]->node.name;
  }
  return {};
}

class Ignore final : public FilterSink {
 public:
  void rejected(const NodeInfo& /*ni*/, const FilterStatus& /*why*/) override {}
};

// upstream's evaluateNominatedNode: a pod a preemption made room for tries
// that node first, and takes it, unscored, if it fits there (the victims
// gone). Otherwise the search goes on as for any pod.
std::optional<Decision> on_nominated_node(const kube::Pod& pod, const Cluster& cluster,
                                          std::span<Plugin* const> filters, const NodeNameSet* names,
                                          std::vector<const NodeInfo*>& feasible) {
  if (pod.nominated_node_name.empty()) return std::nullopt;
  const std::span<const NodeInfo* const> nodes = cluster.nodes;
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&](const NodeInfo* ni) { return ni != nullptr && ni->node.name == pod.nominated_node_name; });
  if (it == nodes.end()) return std::nullopt;
  Ignore ignore;
  FilterOutcome out;
  feasible.clear();
  filter_chunk(pod, std::span(it, 1), filters, names, cluster.nominated, feasible, ignore, out, nullptr);
  if (feasible.empty()) return std::nullopt;
  Decision d;
  d.status = Decision::Status::scheduled;
  d.node = feasible.front()->node.name;
  d.evaluated_nodes = d.feasible_nodes = 1;
  return d;
}

}  // namespace

Decision schedule_pod(const Profile& profile, const kube::Pod& pod, const Cluster& cluster, std::mt19937_64& rng,
                      std::vector<NodeScore>* scores, Search* search, DecisionTrace* trace) {
  const std::span<const NodeInfo* const> nodes = cluster.nodes;
  if (scores != nullptr) scores->clear();
  Decision d;
  // Upstream answers an empty cluster with ErrNoNodesAvailable, handled as
  // UnschedulableAndUnresolvable: only a new node can help.
  if (nodes.empty()) return not_scheduled(std::move(d), false, std::string(kNoNodesAvailable));

  Scratch& s = scratch();
  const NodeNameSet* names = nullptr;
  PluginId rejected_by = PluginId::none;
  if (auto reject = pre_filter(profile, pod, cluster, s, names, rejected_by)) {
    if (trace != nullptr) {
      trace->pre_filter_rejected_by = rejected_by;
      trace->pre_filter_reason = *reject;
    }
    return not_scheduled(std::move(d), false,
                         "0/" + std::to_string(nodes.size()) + " nodes are available: " + std::string(*reject) + ".");
  }

  Diagnosis diag(pod, s);
  // A narrowed search looks at every named node; otherwise, from where the
  // last decision stopped, until enough nodes fit.
  Search full{100, 0};
  Search& where = search != nullptr && names == nullptr ? *search : full;
  const std::size_t want = names == nullptr ? feasible_nodes_to_find(nodes.size(), where.percentage) : nodes.size();
  std::optional<TracingSink> tracing;
  if (trace != nullptr) tracing.emplace(pod, diag, *trace);
  FilterSink& sink = tracing ? static_cast<FilterSink&>(*tracing) : diag;
  if (auto d = on_nominated_node(pod, cluster, s.filters, names, s.feasible)) {
    if (trace != nullptr) trace->feasible.push_back(d->node);
    return *std::move(d);
  }
  const FilterOutcome fo = filter_nodes(pod, cluster, s.filters, names, s.feasible, sink, want, where);
  if (fo.null_node) {
    d.status = Decision::Status::error;
    d.message = "internal error: a null NodeInfo in the node list";
    return d;
  }
  d.evaluated_nodes = fo.evaluated;
  d.feasible_nodes = static_cast<int>(s.feasible.size());
  if (trace != nullptr) {
    trace->left_out = fo.absent;
    for (const NodeInfo* ni : s.feasible) trace->feasible.push_back(*ni);
  }

  if (s.feasible.empty()) {
    diag.add_absent(fo.absent);
    return not_scheduled(std::move(d), diag.any_resolvable(), diag.message(nodes.size()));
  }
  d.status = Decision::Status::scheduled;
  if (s.feasible.size() == 1) {
    d.node = s.feasible.front()->node.name;
    return d;
  }

  score_nodes(profile, pod, cluster, s, trace);
  d.node = best_node(s, rng);
  if (scores != nullptr) report_scores(s, *scores);
  return d;
}

}  // namespace toysched::sched
