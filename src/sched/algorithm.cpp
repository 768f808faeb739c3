#include "toysched/sched/algorithm.hpp"

#include "toysched/sched/plugins.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <string_view>

namespace toysched::sched {
namespace {

constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// Reused across cycles so a warm cycle allocates nothing but the Decision's
// strings. One thread runs the scheduling cycle, so one set is enough.
struct Scratch {
  std::vector<const NodeInfo*> feasible;
  ScoreTable scores;
  std::vector<int> extended_counts;
  std::vector<const kube::Taint*> taints;
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
    s_.taints.clear();
  }

  void rejected(const NodeInfo& /*ni*/, const FilterStatus& st) override {
    if (st.code == Code::unschedulable) resolvable_ = true;
    // Usually one bit: walk the set bits, not every reason.
    for (std::uint32_t bits = st.reasons; bits != 0; bits &= bits - 1) {
      ++counts_[static_cast<std::size_t>(std::countr_zero(bits))];
    }
    if (st.has(Reason::untolerated_taint) && st.taint != nullptr) s_.taints.push_back(st.taint);
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

  // framework.FitError.Error(): "0/N nodes are available: " then
  // "COUNT REASON" for each reason, sorted as whole strings (so "10 x"
  // sorts before "2 y", as Go's sort.Strings does), ", "-joined, then ".".
  std::string message(std::size_t total_nodes) const {
    std::map<std::string, int, std::less<>> histogram;
    for (int i = 0; i < kReasonCount; ++i) {
      const auto r = static_cast<Reason>(i);
      if (counts_[i] == 0 || r == Reason::untolerated_taint || r == Reason::insufficient_extended) {
        continue;
      }
      histogram[std::string(reason_text(r))] += counts_[i];
    }
    for (const auto* t : s_.taints) ++histogram[untolerated_taint_text(*t)];
    for (std::size_t j = 0; j < s_.extended_counts.size(); ++j) {
      if (s_.extended_counts[j] != 0) {
        histogram[insufficient_text(pod_.requests.extended[j].first)] += s_.extended_counts[j];
      }
    }
    std::vector<std::string> lines;
    lines.reserve(histogram.size());
    for (const auto& [text, n] : histogram) lines.push_back(std::to_string(n) + " " + text);
    std::sort(lines.begin(), lines.end());

    std::string out = "0/" + std::to_string(total_nodes) + " nodes are available:";
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out += i == 0 ? " " : ", ";
      out += lines[i];
    }
    out += '.';
    return out;
  }

 private:
  const kube::Pod& pod_;
  Scratch& s_;
  std::array<int, kReasonCount> counts_{};
  bool resolvable_ = false;
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
// Filters from search->next_start round the list, in chunks, until `want`
// feasible nodes are found or every node was seen.
FilterOutcome filter_sampled(const kube::Pod& pod, std::span<const NodeInfo* const> nodes, const NodeNameSet& allowed,
                             std::vector<const NodeInfo*>& feasible, FilterSink& sink, std::size_t want,
                             Search& search) {
  constexpr std::size_t kChunk = 128;
  static thread_local std::vector<const NodeInfo*> part;
  FilterOutcome total;
  feasible.clear();
  const std::size_t n = nodes.size();
  std::size_t pos = search.next_start % n, processed = 0;
  while (processed < n && feasible.size() < want) {
    std::size_t len = std::min({kChunk, n - pos, n - processed});
    FilterOutcome fo = filter_nodes(pod, nodes.subspan(pos, len), allowed, part, sink);
    total.evaluated += fo.evaluated;
    total.absent += fo.absent;
    if (fo.null_node) {
      total.null_node = true;
      break;
    }
    const std::size_t room = want - feasible.size();
    if (part.size() > room) {
      // Enough: keep exactly `want`, as upstream does, and start the next
      // search just after the last node kept.
      const NodeInfo* last = part[room - 1];
      feasible.insert(feasible.end(), part.begin(), part.begin() + static_cast<std::ptrdiff_t>(room));
      std::size_t i = 0;
      while (nodes[(pos + i) % n] != last) ++i;
      pos = (pos + i + 1) % n;
      break;
    }
    feasible.insert(feasible.end(), part.begin(), part.end());
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
  add(u.pod_affinity, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  add(u.pod_anti_affinity, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  add(u.topology_spread, "spec.topologySpreadConstraints[].whenUnsatisfiable=DoNotSchedule");
  add(u.pvc, "spec.volumes[].persistentVolumeClaim");
  add(u.ephemeral_volume, "spec.volumes[].ephemeral");
  add(u.resource_claims, "spec.resourceClaims");
  return not_scheduled(Decision{}, false,
                       "toy-scheduler does not evaluate " + fields + ": the pod stays pending rather than be bound " +
                           (count > 1 ? "without them" : "without it") +
                           " (--ignore-unsupported-constraints binds it anyway).");
}

Decision schedule_pod(const kube::Pod& pod, std::span<const NodeInfo* const> nodes, std::mt19937_64& rng,
                      std::vector<NodeScore>* scores, Search* search) {
  if (scores != nullptr) scores->clear();
  Decision d;
  // Upstream answers an empty cluster with ErrNoNodesAvailable, handled as
  // UnschedulableAndUnresolvable: only a new node can help.
  if (nodes.empty()) return not_scheduled(std::move(d), false, std::string(kNoNodesAvailable));

  const NodeNameSet allowed = prefilter_node_names(pod);
  if (allowed.conflict) {
    return not_scheduled(
        std::move(d), false,
        "0/" + std::to_string(nodes.size()) + " nodes are available: " + std::string(kPodAffinityTermsConflict) + ".");
  }

  Scratch& s = scratch();
  Diagnosis diag(pod, s);
  const std::size_t want = search ? feasible_nodes_to_find(nodes.size(), search->percentage) : nodes.size();
  const FilterOutcome fo = want < nodes.size() && allowed.all
                               ? filter_sampled(pod, nodes, allowed, s.feasible, diag, want, *search)
                               : filter_nodes(pod, nodes, allowed, s.feasible, diag);
  if (fo.null_node) {
    d.status = Decision::Status::error;
    d.message = "internal error: a null NodeInfo in the node list";
    return d;
  }
  d.evaluated_nodes = fo.evaluated;
  const int absent = fo.absent;
  d.feasible_nodes = static_cast<int>(s.feasible.size());

  if (s.feasible.empty()) {
    diag.add_absent(absent);
    return not_scheduled(std::move(d), diag.any_resolvable(), diag.message(nodes.size()));
  }
  d.status = Decision::Status::scheduled;
  if (s.feasible.size() == 1) {
    d.node = s.feasible.front()->node.name;
    return d;
  }

  ScoreTable& t = s.scores;
  score_nodes(pod, s.feasible, t);
  const std::size_t n = s.feasible.size();
  const std::int64_t* const total = t.total.data();
  const std::int64_t best = *std::max_element(total, total + n);
  const auto ties = static_cast<std::size_t>(std::count(total, total + n, best));

  // Upstream's selectHost keeps one reservoir sample over the tied nodes,
  // drawing once per tie. Choosing the k-th tied node for one uniform k
  // gives every tied node the same 1/ties chance with a single draw, which
  // matters when thousands of empty nodes tie.
  std::size_t pick = 0;
  if (ties > 1) pick = std::uniform_int_distribution<std::size_t>(0, ties - 1)(rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (total[i] != best) continue;
    if (pick-- == 0) {
      d.node = s.feasible[i]->node.name;
      break;
    }
  }

  if (scores != nullptr) {
    scores->reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      scores->push_back(NodeScore{s.feasible[i], t.least_allocated[i], t.balanced_allocation[i], t.taint_toleration[i],
                                  t.node_affinity[i], total[i]});
    }
  }
  return d;
}

}  // namespace toysched::sched
