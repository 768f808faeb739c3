#include "toysched/sched/plugins/pod_topology_spread.hpp"
#include "toysched/sched/plugin_args.hpp"

#include "toysched/kube/labels.hpp"
#include "toysched/sched/plugins/node_affinity.hpp"
#include "toysched/sched/plugins/taint_toleration.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace toysched::sched {
namespace {

// Upstream's invalidScore: a node Score ignores, 0 after NormalizeScore.
// Real raw scores are never negative (maxSkew >= 1).
constexpr std::int64_t kIgnored = -1;

// The pod's selector plus `key: value` for each matchLabelKeys key the pod
// has a label for; false when nothing is added (or there is no selector:
// it stays "nothing", as upstream's merge leaves labels.Nothing()).
bool merge_match_label_keys(const kube::Pod& pod, const kube::TopologySpreadConstraint& c, kube::LabelSelector& out) {
  if (!c.label_selector || c.match_label_keys.empty()) return false;
  bool added = false;
  for (const auto& key : c.match_label_keys) {
    const std::string* v = kube::find_value(pod.labels, key);
    if (v == nullptr) continue;
    if (!added) {
      out = *c.label_selector;
      added = true;
    }
    out.match_labels.emplace_back(key, *v);
  }
  return added;
}

// The value of a node's label, "" when absent (a Go map's zero value,
// which upstream's scoring reads for nodes missing a key).
const std::string& label_or_empty(const kube::Node& node, std::string_view key) noexcept {
  static const std::string empty;
  const std::string* v = kube::find_value(node.labels, key);
  return v == nullptr ? empty : *v;
}

}  // namespace

std::size_t TopologyValueIds::slot_of(const std::string& value, std::size_t hash) const noexcept {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kNone || (s.hash == hash && values_[s.id] == value)) return i;
  }
}

void TopologyValueIds::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<std::size_t>(64, old.size() * 2), Slot{});
  for (const Slot& s : old) {
    if (s.id != kNone) slots_[slot_of(values_[s.id], s.hash)] = s;
  }
}

std::uint32_t TopologyValueIds::intern(const std::string& value) {
  if ((values_.size() + 1) * 2 > slots_.size()) grow();
  const std::size_t hash = std::hash<std::string>{}(value);
  Slot& s = slots_[slot_of(value, hash)];
  if (s.id == kNone) {
    s = {hash, static_cast<std::uint32_t>(values_.size())};
    values_.push_back(value);
  }
  return s.id;
}

std::uint32_t TopologyValueIds::find(const std::string& value) const noexcept {
  if (slots_.empty()) return kNone;
  return slots_[slot_of(value, std::hash<std::string>{}(value))].id;
}

void TopologyValueIds::clear() noexcept {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  values_.clear();
}

void DomainCounts::begin() noexcept {
  present_.clear();
  if (++epoch_ == 0) {  // wrapped: no stale stamp may equal the new epoch
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
}

void DomainCounts::add(std::uint32_t id, std::int64_t n) {
  if (id >= stamp_.size()) {
    stamp_.resize(id + 1, 0);
    count_.resize(id + 1, 0);
  }
  if (stamp_[id] != epoch_) {
    stamp_[id] = epoch_;
    count_[id] = 0;
    present_.push_back(id);
  }
  count_[id] += n;
}

std::int64_t DomainCounts::min() const noexcept {
  std::int64_t m = std::numeric_limits<std::int32_t>::max();
  for (auto id : present_) m = std::min(m, count_[id]);
  return m;
}

// Values of nodes that left stay interned; past a few times the nodes, the
// table starts over (before any count of this cycle refers to an id).
void PodTopologySpread::begin_counts(std::vector<DomainCounts>& counts, std::size_t n, const Cluster& cluster) {
  if (values_.size() > 4 * cluster.nodes.size() + 1024) values_.clear();
  if (counts.size() < n) counts.resize(n);
  for (std::size_t i = 0; i < n; ++i) counts[i].begin();
}

int SpreadConstraint::count_on(const kube::Pod& pod, const NodeInfo& ni) const {
  const kube::LabelSelector* sel = selector();
  // Upstream counts nothing for a nil (Nothing) or an empty (Everything) selector.
  if (sel == nullptr || sel->empty()) return 0;
  return ni.count_pods([&](const PodGroup& g) { return g.ns == pod.ns && kube::selector_matches(*sel, g.labels); },
                       false);
}

bool SpreadConstraint::includes(const kube::Pod& pod, const kube::Node& node) const noexcept {
  if (node_affinity_policy == kube::InclusionPolicy::honor && !required_affinity_matches(pod, node)) return false;
  if (node_taints_policy == kube::InclusionPolicy::honor && first_untolerated_hard_taint(pod, node) != nullptr)
    return false;
  return true;
}

void spread_constraints(const kube::Pod& pod, kube::WhenUnsatisfiable when, std::vector<SpreadConstraint>& out) {
  out.clear();
  for (const auto& c : pod.topology_spread) {
    if (c.when_unsatisfiable != when) continue;
    SpreadConstraint& sc = out.emplace_back();
    sc.max_skew = c.max_skew;
    sc.topology_key = c.topology_key;
    sc.source = c.label_selector ? &*c.label_selector : nullptr;
    sc.use_merged = merge_match_label_keys(pod, c, sc.merged);
    sc.self_match = sc.selector() != nullptr && kube::selector_matches(*sc.selector(), pod.labels);
    sc.min_domains = c.min_domains.value_or(1);
    sc.node_affinity_policy = c.node_affinity_policy;
    sc.node_taints_policy = c.node_taints_policy;
  }
}

bool has_all_keys(const kube::Node& node, std::span<const SpreadConstraint> cs) noexcept {
  return std::all_of(cs.begin(), cs.end(), [&](const SpreadConstraint& c) {
    return kube::find_value(node.labels, c.topology_key) != nullptr;
  });
}

// ---- Filter ----

PreFilterResult PodTopologySpread::pre_filter(const kube::Pod& pod, const Cluster& cluster) {
  // The system defaults are all ScheduleAnyway: a pod without constraints of
  // its own has no hard ones.
  if (pod.topology_spread.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  spread_constraints(pod, kube::WhenUnsatisfiable::do_not_schedule, hard_);
  if (hard_.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  begin_counts(hard_counts_, hard_.size(), cluster);
  for (const NodeInfo* ni : cluster.nodes) {
    if (!has_all_keys(ni->node, hard_)) continue;
    for (std::size_t i = 0; i < hard_.size(); ++i) {
      const SpreadConstraint& c = hard_[i];
      if (!c.includes(pod, ni->node)) continue;
      hard_counts_[i].add(values_.intern(*kube::find_value(ni->node.labels, c.topology_key)), c.count_on(pod, *ni));
    }
  }
  hard_min_.resize(hard_.size());
  for (std::size_t i = 0; i < hard_.size(); ++i) hard_min_[i] = hard_counts_[i].min();
  return {};
}

void PodTopologySpread::pre_filter_update(const kube::Pod& pod, const kube::Pod& other, const NodeInfo& ni, int sign) {
  // Counted as PreFilter counts: same namespace, not terminating, on a node
  // with every key that the constraint includes.
  if (hard_.empty() || other.ns != pod.ns || other.deleting || !has_all_keys(ni.node, hard_)) return;
  for (std::size_t i = 0; i < hard_.size(); ++i) {
    const SpreadConstraint& c = hard_[i];
    const kube::LabelSelector* sel = c.selector();
    if (sel == nullptr || sel->empty() || !kube::selector_matches(*sel, other.labels)) continue;
    if (!c.includes(pod, ni.node)) continue;
    const std::uint32_t id = values_.find(*kube::find_value(ni.node.labels, c.topology_key));
    if (id == TopologyValueIds::kNone || !hard_counts_[i].present(id)) continue;
    hard_counts_[i].add(id, sign);
    hard_min_[i] = hard_counts_[i].min();
  }
}

FilterStatus PodTopologySpread::check(const kube::Pod& /*pod*/, const NodeInfo& ni) const {
  for (std::size_t i = 0; i < hard_.size(); ++i) {
    const SpreadConstraint& c = hard_[i];
    const std::string* value = kube::find_value(ni.node.labels, c.topology_key);
    if (value == nullptr) {
      return reject(PluginId::pod_topology_spread, Code::unresolvable, Reason::pod_topology_spread_missing_label);
    }
    const DomainCounts& counts = hard_counts_[i];
    // Fewer eligible domains than minDomains: the global minimum is 0.
    const std::int64_t min = counts.domains() < static_cast<std::size_t>(std::max(c.min_domains, 0)) ? 0 : hard_min_[i];
    const std::uint32_t id = values_.find(*value);
    const std::int64_t matching = id == TopologyValueIds::kNone ? 0 : counts.get(id);
    if (matching + (c.self_match ? 1 : 0) - min > c.max_skew) {
      return reject(PluginId::pod_topology_spread, Code::unschedulable, Reason::pod_topology_spread);
    }
  }
  return {};
}

std::size_t PodTopologySpread::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) { return check(pod, ni); });
}

// ---- Score ----

bool PodTopologySpread::build_soft_constraints(const kube::Pod& pod, const Cluster& cluster) {
  if (!pod.topology_spread.empty()) {
    require_all_keys_ = true;
    spread_constraints(pod, kube::WhenUnsatisfiable::schedule_anyway, soft_);
    return !soft_.empty();
  }
  // System defaults. Nodes without a zone label still get hostname
  // spreading: missing keys do not make a node ignored.
  require_all_keys_ = false;
  soft_.clear();
  if (!system_defaulting_ || cluster.objects == nullptr) return false;
  default_selector_ = cluster.objects->default_selector(pod);
  if (default_selector_.empty()) return false;
  for (auto [key, skew] : {std::pair{kLabelHostname, 3}, std::pair{kLabelTopologyZone, 5}}) {
    SpreadConstraint& sc = soft_.emplace_back();
    sc.max_skew = skew;
    sc.topology_key = key;
    sc.source = &default_selector_;
    sc.self_match = kube::selector_matches(default_selector_, pod.labels);
  }
  return true;
}

void PodTopologySpread::count_soft_domains(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                                           const Cluster& cluster) {
  begin_counts(soft_counts_, soft_.size(), cluster);
  std::size_t ignored = 0;
  // The domains are those of the feasible nodes; a missing key (allowed
  // with the system defaults) is the domain "", as upstream's map lookup.
  for (const NodeInfo* ni : feasible) {
    if (require_all_keys_ && !has_all_keys(ni->node, soft_)) {
      ++ignored;
      continue;
    }
    for (std::size_t i = 0; i < soft_.size(); ++i) {
      if (soft_[i].topology_key == kLabelHostname) continue;  // counted per node in Score
      soft_counts_[i].add(values_.intern(label_or_empty(ni->node, soft_[i].topology_key)), 0);
    }
  }
  soft_weight_.resize(soft_.size());
  for (std::size_t i = 0; i < soft_.size(); ++i) {
    const std::size_t domains =
        soft_[i].topology_key == kLabelHostname ? feasible.size() - ignored : soft_counts_[i].domains();
    soft_weight_[i] = std::log(static_cast<double>(domains + 2));
  }
  // Pods are counted on every node of those domains, feasible or not.
  for (const NodeInfo* ni : cluster.nodes) {
    if (require_all_keys_ && !has_all_keys(ni->node, soft_)) continue;
    for (std::size_t i = 0; i < soft_.size(); ++i) {
      const SpreadConstraint& c = soft_[i];
      if (c.topology_key == kLabelHostname || !c.includes(pod, ni->node)) continue;
      const std::uint32_t id = values_.find(label_or_empty(ni->node, c.topology_key));
      if (id != TopologyValueIds::kNone && soft_counts_[i].present(id)) soft_counts_[i].add(id, c.count_on(pod, *ni));
    }
  }
}

bool PodTopologySpread::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                                  const Cluster& cluster) {
  if (cluster.nodes.empty()) return false;
  if (!build_soft_constraints(pod, cluster)) return false;
  count_soft_domains(pod, feasible, cluster);
  return true;
}

void PodTopologySpread::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                              std::span<std::int64_t> out) {
  for (std::size_t k = 0; k < feasible.size(); ++k) {
    const NodeInfo& ni = *feasible[k];
    if (require_all_keys_ && !has_all_keys(ni.node, soft_)) {
      out[k] = kIgnored;
      continue;
    }
    double score = 0;
    for (std::size_t i = 0; i < soft_.size(); ++i) {
      const SpreadConstraint& c = soft_[i];
      const std::string* v = kube::find_value(ni.node.labels, c.topology_key);
      if (v == nullptr) continue;
      std::int64_t n = 0;
      if (c.topology_key == kLabelHostname) {
        n = c.count_on(pod, ni);
      } else if (const std::uint32_t id = values_.find(*v); id != TopologyValueIds::kNone) {
        n = soft_counts_[i].get(id);
      }
      score += static_cast<double>(n) * soft_weight_[i] + static_cast<double>(c.max_skew - 1);
    }
    out[k] = static_cast<std::int64_t>(std::round(score));
  }
}

// Fewer matching pods is better: reversed between the smallest and the
// largest raw score; ignored nodes get 0.
void PodTopologySpread::normalize(std::span<std::int64_t> scores) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = 0;
  for (auto s : scores) {
    if (s == kIgnored) continue;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  for (auto& s : scores) {
    if (s == kIgnored) {
      s = 0;
    } else if (hi == 0) {
      s = kMaxNodeScore;
    } else {
      s = kMaxNodeScore * (hi + lo - s) / hi;
    }
  }
}

std::unique_ptr<Plugin> make_pod_topology_spread(const PluginArgs& args) {
  return std::make_unique<PodTopologySpread>(args.spread_system_defaulting);
}

}  // namespace toysched::sched
