#include "toysched/sched/preemption.hpp"

#include "toysched/kube/labels.hpp"
#include "toysched/sched/what_if.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string_view>

namespace toysched::sched {
namespace {

// Upstream's texts for nodes preemption did not help on.
constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";

// Counts reasons node by node and writes them as framework.FitError does,
// after "preemption: " (DefaultPreemption's PostFilter prefix).
class Reasons {
 public:
  void add(std::string_view reason, int n = 1) {
    if (n > 0) histogram_[std::string(reason)] += n;
  }
  std::string message(std::size_t total_nodes) const {
    return "preemption: " + nodes_unavailable_text(total_nodes, histogram_);
  }

 private:
  ReasonHistogram histogram_;
};

// The pod's active filters after PreFilter, and the node names one of them
// narrowed the search to (nullptr: every node).
struct Filters {
  std::vector<Plugin*> active;
  const NodeNameSet* names = nullptr;
  const Nominator* nominated = nullptr;
  std::span<const kube::PodDisruptionBudget* const> pdbs;  // every budget
};

// PreFilter of every filter plugin; nullopt when one rejects the pod (no
// node is then worth examining).
std::optional<Filters> pre_filter(const Profile& profile, const kube::Pod& pod, const Cluster& cluster) {
  Filters f;
  f.nominated = cluster.nominated;
  if (cluster.objects != nullptr) f.pdbs = cluster.objects->pdbs();
  for (Plugin* p : profile.filters()) {
    const PreFilterResult pre = p->pre_filter(pod, cluster);
    if (pre.kind == PreFilterResult::Kind::reject) return std::nullopt;
    if (pre.kind == PreFilterResult::Kind::skip) continue;
    if (pre.names != nullptr) f.names = pre.names;
    f.active.push_back(p);
  }
  return f;
}

// NodeAffinity's PreFilter left the node out: no eviction brings it in.
bool left_out(const Filters& f, const NodeInfo& ni) { return f.names != nullptr && !f.names->contains(ni.node.name); }
FilterStatus not_named() {
  return reject(PluginId::node_affinity, Code::unresolvable, Reason::node_affinity_prefilter);
}

// The active filters on a what-if node, in profile order; the first rejection.
FilterStatus filter_node(const Filters& f, const NodeWhatIf& ni) {
  return left_out(f, ni.node()) ? not_named() : ni.filter();
}

// Whether `pod` fits on `ni` as it is, nominated pods counted (a copy of
// the node only where some are).
FilterStatus filter_node_now(const Filters& f, const kube::Pod& pod, const NodeInfo& ni) {
  if (left_out(f, ni)) return not_named();
  if (std::optional<FilterStatus> st = filter_with_nominated(f.active, pod, ni, f.nominated)) return *st;
  return filter_one(f.active, pod, ni);
}

kube::TimePoint started(const kube::Pod& p, kube::TimePoint now) { return p.start_time.value_or(now); }

struct Candidate {
  const NodeInfo* node = nullptr;
  std::vector<const kube::Pod*> victims;  // most important first
  int pdb_violations = 0;
};

// Whether budget `b` counts pod `p`: same namespace, a selector neither
// absent, empty nor invalid that matches the pod's labels (upstream's
// filterPodsWithPDBViolation: a pod without labels matches no budget).
bool budget_covers(const kube::PodDisruptionBudget& b, const kube::Pod& p) {
  if (p.labels.empty() || b.ns != p.ns || !b.selector || b.selector->empty() || !kube::selector_valid(*b.selector)) {
    return false;
  }
  return kube::selector_matches(*b.selector, p.labels);
}

// filterPodsWithPDBViolation: `pods` (most important first) split, order
// kept, into those whose eviction would take some budget below zero,
// counting the evictions before it in the list, and the others. A pod the
// budget already lists as disrupted is not counted again.
std::pair<std::vector<const kube::Pod*>, std::vector<const kube::Pod*>> split_by_budget(
    std::span<const kube::PodDisruptionBudget* const> pdbs, const std::vector<const kube::Pod*>& pods) {
  std::pair<std::vector<const kube::Pod*>, std::vector<const kube::Pod*>> out;
  if (pdbs.empty()) {
    out.second = pods;
    return out;
  }
  std::vector<std::int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const kube::PodDisruptionBudget* b : pdbs) allowed.push_back(b->disruptions_allowed);
  for (const kube::Pod* p : pods) {
    bool violates = false;
    for (std::size_t i = 0; i < pdbs.size(); ++i) {
      if (!budget_covers(*pdbs[i], *p) || pdbs[i]->disrupted(p->name)) continue;
      if (--allowed[i] < 0) violates = true;
    }
    (violates ? out.first : out.second).push_back(p);
  }
  return out;
}

// SelectVictimsOnNode: the fewest pods to evict from `ni` for `pod` to fit,
// keeping the most important ones; nullopt with why (into `why`) when no set works.
std::optional<Candidate> select_victims(const Filters& f, const kube::Pod& pod, const NodeInfo& ni, Reasons& why,
                                        kube::TimePoint now) {
  std::vector<const kube::Pod*> potential;
  for (const kube::Pod* p : ni.pods) {
    if (p->priority < pod.priority) potential.push_back(p);
  }
  if (potential.empty()) {
    why.add(kNoVictims);
    return std::nullopt;
  }
  NodeWhatIf copy(f.active, pod, ni);
  if (f.nominated != nullptr) copy.add(f.nominated->counted_on(pod, ni.node.name));
  for (const kube::Pod* p : potential) copy.remove(*p);
  if (const FilterStatus st = filter_node(f, copy); !st.ok()) {
    for (const std::string& r : st.reason_strings(pod)) why.add(r);
    return std::nullopt;
  }
  auto by_importance = [&](const kube::Pod* a, const kube::Pod* b) { return more_important(*a, *b, now); };
  std::sort(potential.begin(), potential.end(), by_importance);
  // Those whose eviction would violate a budget are put back first, so
  // they are the last to be chosen; each one that stays a victim counts.
  const auto [violating, others] = split_by_budget(f.pdbs, potential);
  Candidate c{&ni, {}, 0};
  auto reprieve = [&](const kube::Pod* p) {
    copy.add(*p);
    if (filter_node(f, copy).ok()) return true;
    copy.remove(*p);
    c.victims.push_back(p);
    return false;
  };
  for (const kube::Pod* p : violating) {
    if (!reprieve(p)) ++c.pdb_violations;
  }
  for (const kube::Pod* p : others) reprieve(p);
  if (!violating.empty() && !others.empty()) std::stable_sort(c.victims.begin(), c.victims.end(), by_importance);
  if (c.victims.empty()) {
    // The pod fits beside every pod of lower priority, so it should have
    // fit before: upstream calls this an error on the node, and so do we.
    why.add("expected at least one victim pod on node \"" + ni.node.name + "\"");
    return std::nullopt;
  }
  return c;
}

// pickOneNodeForPreemption: each criterion keeps the candidates that score
// best on it; the first criterion that leaves one decides.
const Candidate& pick(const std::vector<Candidate>& all, kube::TimePoint now) {
  using Score = std::int64_t;
  auto highest = [](const Candidate& c) -> Score { return -static_cast<Score>(c.victims.front()->priority); };
  auto sum = [](const Candidate& c) -> Score {
    Score s = 0;  // each priority + 2^31, so that every term is >= 0
    for (const kube::Pod* p : c.victims) s += static_cast<Score>(p->priority) + (Score{1} << 31);
    return -s;
  };
  auto earliest_start = [now](const Candidate& c) -> Score {
    // Of the victims with the highest priority: the earliest start.
    const std::int32_t top = c.victims.front()->priority;
    auto t = kube::TimePoint::max();
    for (const kube::Pod* p : c.victims) {
      if (p->priority == top) t = std::min(t, started(*p, now));
    }
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  const std::vector<std::function<Score(const Candidate&)>> criteria = {
      [](const Candidate& c) -> Score { return -c.pdb_violations; },
      highest,
      sum,
      [](const Candidate& c) -> Score { return -static_cast<Score>(c.victims.size()); },
      earliest_start,
  };
  std::vector<const Candidate*> left;
  for (const Candidate& c : all) left.push_back(&c);
  for (const auto& score : criteria) {
    Score best = std::numeric_limits<Score>::min();
    std::vector<const Candidate*> kept;
    for (const Candidate* c : left) {
      const Score s = score(*c);
      if (s > best) {
        best = s;
        kept.clear();
      }
      if (s == best) kept.push_back(c);
    }
    left = std::move(kept);
    if (left.size() == 1) break;
  }
  return *left.front();
}

PreemptionResult not_eligible(std::string message) {
  PreemptionResult r;
  r.outcome = PreemptionResult::Outcome::not_eligible;
  r.message = std::move(message);
  return r;
}

PreemptionResult not_helpful(std::size_t nodes) {
  Reasons why;
  why.add(kNotHelpful, static_cast<int>(nodes));
  PreemptionResult r;
  r.message = why.message(nodes);
  return r;
}

// A pod nominated to a node where a lower-priority pod is still going away
// because of a preemption waits for it rather than preempt again.
bool waits_on_nominated_node(const kube::Pod& pod, const NodeInfo& ni) {
  return std::any_of(ni.pods.begin(), ni.pods.end(),
                     [&](const kube::Pod* p) { return p->priority < pod.priority && p->terminating_by_preemption; });
}

}  // namespace

bool more_important(const kube::Pod& a, const kube::Pod& b, kube::TimePoint now) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return started(a, now) < started(b, now);
}

std::size_t preemption_candidates_to_find(std::size_t potential, const PreemptionArgs& args) noexcept {
  const auto pct = static_cast<std::size_t>(std::max(args.min_candidate_nodes_percentage, 0));
  const auto absolute = static_cast<std::size_t>(std::max(args.min_candidate_nodes_absolute, 0));
  return std::min(std::max(potential * pct / 100, absolute), potential);
}

PreemptionResult preempt(const Profile& profile, const kube::Pod& pod, const Cluster& cluster, bool unresolvable_only,
                         std::mt19937_64& rng, kube::TimePoint now) {
  if (!profile.preemption()) return {};
  if (pod.preempt_never) return not_eligible("preemption: not eligible due to preemptionPolicy=Never.");
  const std::span<const NodeInfo* const> nodes = cluster.nodes;
  if (nodes.empty()) return {};  // upstream runs no PostFilter without nodes
  if (unresolvable_only) return not_helpful(nodes.size());
  const std::optional<Filters> filters = pre_filter(profile, pod, cluster);
  if (!filters) return not_helpful(nodes.size());

  // The nodes whose failure evicting pods may cure.
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* ni : nodes) {
    const FilterStatus st = filter_node_now(*filters, pod, *ni);
    if (st.code == Code::unschedulable) potential.push_back(ni);
    if (st.code != Code::unresolvable && ni->node.name == pod.nominated_node_name &&
        waits_on_nominated_node(pod, *ni)) {
      return not_eligible("preemption: not eligible due to a terminating pod on the nominated node.");
    }
  }
  if (potential.empty()) return not_helpful(nodes.size());

  const std::size_t want = preemption_candidates_to_find(potential.size(), *profile.preemption());
  const std::size_t offset = std::uniform_int_distribution<std::size_t>(0, potential.size() - 1)(rng);
  std::vector<Candidate> candidates;
  Reasons why;
  for (std::size_t i = 0; i < potential.size() && candidates.size() < want; ++i) {
    const NodeInfo& ni = *potential[(offset + i) % potential.size()];
    if (auto c = select_victims(*filters, pod, ni, why, now)) candidates.push_back(std::move(*c));
  }
  if (candidates.empty()) {
    why.add(kNotHelpful, static_cast<int>(nodes.size() - potential.size()));
    PreemptionResult r;
    r.message = why.message(nodes.size());
    return r;
  }
  const Candidate& best = pick(candidates, now);
  PreemptionResult r;
  r.outcome = PreemptionResult::Outcome::nominated;
  r.node = best.node->node.name;
  r.victims = best.victims;
  r.pdb_violations = best.pdb_violations;
  return r;
}

}  // namespace toysched::sched
