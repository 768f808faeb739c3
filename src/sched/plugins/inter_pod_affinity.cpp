// InterPodAffinity: term matching, the topology count table, PreFilter and
// Filter (upstream filtering.go). Scoring is in inter_pod_affinity_score.cpp.
#include "toysched/sched/plugins/inter_pod_affinity.hpp"
#include "toysched/kube/labels.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <functional>

namespace toysched::sched {
namespace {

std::uint64_t pair_hash(std::string_view key, std::string_view value) noexcept {
  // libstdc++'s string hash reads 8 bytes at a time; this is the hot spot of
  // a pod with terms (a few thousand pairs per cycle).
  const std::hash<std::string_view> h;
  return h(value) ^ (h(key) * 0x9e3779b97f4a7c15ULL);
}

// Views of one string (a term's topology key) compare without memcmp.
bool same(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// The term's `namespaces`, or the owner's own namespace when it lists none
// and has no namespaceSelector (getNamespacesFromPodAffinityTerm).
bool listed_namespace(const kube::PodAffinityTerm& t, std::string_view owner_ns, std::string_view ns) noexcept {
  if (t.namespaces.empty() && !t.namespace_selector) return ns == owner_ns;
  return std::find(t.namespaces.begin(), t.namespaces.end(), ns) != t.namespaces.end();
}

const kube::StringPairs kNoLabels;

}  // namespace

void TopologyCounts::clear() noexcept {
  for (std::uint32_t i : used_) slots_[i] = Slot{};
  used_.clear();
  keys_.clear();
  nonzero_ = 0;
}

std::size_t TopologyCounts::find(std::uint64_t hash, std::string_view key, std::string_view value) const noexcept {
  // The hash first: every key here is often the same long label name.
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  while (slots_[i].used && (slots_[i].hash != hash || !same(slots_[i].value, value) || !same(slots_[i].key, key))) {
    i = (i + 1) & mask;
  }
  return i;
}

void TopologyCounts::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  used_.clear();
  for (const Slot& s : old) {
    if (!s.used) continue;
    const std::size_t i = find(s.hash, s.key, s.value);
    slots_[i] = s;
    used_.push_back(static_cast<std::uint32_t>(i));
  }
}

void TopologyCounts::add(std::string_view key, std::string_view value, std::int64_t n) {
  if ((used_.size() + 1) * 2 > slots_.size()) grow();  // load factor at most 1/2
  const std::uint64_t h = pair_hash(key, value);
  const std::size_t i = find(h, key, value);
  Slot& s = slots_[i];
  if (!s.used) {
    s = Slot{h, key, value, 0, true};
    used_.push_back(static_cast<std::uint32_t>(i));
    if (std::none_of(keys_.begin(), keys_.end(), [&](std::string_view k) { return same(k, key); })) {
      keys_.push_back(key);
    }
  }
  const bool was_zero = s.count == 0;
  s.count += n;
  if (was_zero != (s.count == 0)) {
    if (was_zero) {
      ++nonzero_;
    } else {
      --nonzero_;
    }
  }
}

std::int64_t TopologyCounts::get(std::string_view key, std::string_view value) const noexcept {
  if (used_.empty()) return 0;
  const Slot& s = slots_[find(pair_hash(key, value), key, value)];
  return s.used ? s.count : 0;
}

const kube::StringPairs* namespace_labels_of(const Cluster& cluster, std::string_view ns) {
  return cluster.objects == nullptr ? nullptr : cluster.objects->namespace_labels(ns);
}

bool incoming_term_matches(const kube::PodAffinityTerm& t, const kube::Pod& owner, const ClusterObjects* objects,
                           std::string_view ns, const kube::StringPairs& labels) {
  bool in_ns = listed_namespace(t, owner.ns, ns);
  if (!in_ns && t.namespace_selector) {
    // Upstream adds the namespaces the selector picks to the term's list,
    // but keeps the selector too (mergeAffinityTermNamespacesIfNotEmpty
    // sets it to Nothing() on a copy), and then matches it against no
    // labels at all (AffinityTerm.Matches(pod, nil)): a selector that an
    // empty label set satisfies (NotIn, DoesNotExist; {} too) matches
    // every namespace, known or not.
    if (kube::selector_matches(*t.namespace_selector, kNoLabels)) {
      in_ns = true;
    } else {
      const kube::StringPairs* ns_labels = objects == nullptr ? nullptr : objects->namespace_labels(ns);
      in_ns = ns_labels != nullptr && kube::selector_matches(*t.namespace_selector, *ns_labels);
    }
  }
  return in_ns && kube::selector_matches(t.label_selector, labels);
}

bool existing_term_matches(const kube::PodAffinityTerm& t, const kube::Pod& owner, const kube::Pod& pod,
                           const kube::StringPairs* pod_ns_labels) {
  const bool in_ns =
      listed_namespace(t, owner.ns, pod.ns) ||
      (t.namespace_selector &&
       kube::selector_matches(*t.namespace_selector, pod_ns_labels != nullptr ? *pod_ns_labels : kNoLabels));
  return in_ns && kube::selector_matches(t.label_selector, pod.labels);
}

// Every placed pod's required anti-affinity term that matches `pod` counts
// once for the topology value of the placed pod's node.
void InterPodAffinity::count_existing_anti_affinity(const kube::Pod& pod, const NodeInfo& ni) {
  for (const kube::Pod* placed : ni.pods_with_required_anti_affinity) {
    for (const kube::PodAffinityTerm& t : placed->pod_anti_affinity.required) {
      const std::string* v = kube::find_value(ni.node.labels, t.topology_key);
      if (v != nullptr && existing_term_matches(t, *placed, pod, ns_labels_)) existing_anti_.add(t.topology_key, *v, 1);
    }
  }
}

// Pods matching ALL the pod's required affinity terms count for each term's
// topology value; pods matching a required anti-affinity term count for
// that term's value. Terminating pods count (upstream's NodeInfo.Pods).
void InterPodAffinity::count_incoming(const kube::Pod& pod, const NodeInfo& ni) {
  if (ni.pod_groups.empty()) return;
  const auto& aff = pod.pod_affinity.required;
  const auto& anti = pod.pod_anti_affinity.required;
  const kube::StringPairs& node_labels = ni.node.labels;
  auto matches = [&](const kube::PodAffinityTerm& t, const PodGroup& g) {
    return incoming_term_matches(t, pod, objects_, g.ns, g.labels);
  };
  const bool any_key = std::any_of(aff.begin(), aff.end(), [&](const kube::PodAffinityTerm& t) {
    return kube::find_value(node_labels, t.topology_key) != nullptr;
  });
  if (any_key) {
    const int n = ni.count_pods(
        [&](const PodGroup& g) {
          return std::all_of(aff.begin(), aff.end(), [&](const kube::PodAffinityTerm& t) { return matches(t, g); });
        },
        /*count_deleting=*/true);
    for (const kube::PodAffinityTerm& t : aff) {
      const std::string* v = kube::find_value(node_labels, t.topology_key);
      if (n > 0 && v != nullptr) affinity_.add(t.topology_key, *v, n);
    }
  }
  for (const kube::PodAffinityTerm& t : anti) {
    const std::string* v = kube::find_value(node_labels, t.topology_key);
    if (v == nullptr) continue;
    const int n = ni.count_pods([&](const PodGroup& g) { return matches(t, g); }, /*count_deleting=*/true);
    if (n > 0) anti_.add(t.topology_key, *v, n);
  }
}

PreFilterResult InterPodAffinity::pre_filter(const kube::Pod& pod, const Cluster& cluster) {
  existing_anti_.clear();
  affinity_.clear();
  anti_.clear();
  objects_ = cluster.objects;
  const bool has_required = !pod.pod_affinity.required.empty() || !pod.pod_anti_affinity.required.empty();
  // The usual pod: no terms, and no placed pod with required anti-affinity
  // (the Cache counts them): nothing to do, not even a pass over the nodes.
  const bool any_anti = cluster.pods_with_required_anti_affinity != 0;
  if (!has_required && !any_anti) return {PreFilterResult::Kind::skip, {}, nullptr};
  ns_labels_ = namespace_labels_of(cluster, pod.ns);
  for (const NodeInfo* ni : cluster.nodes) {  // one pass: the nodes are the cache misses
    if (any_anti) count_existing_anti_affinity(pod, *ni);
    if (has_required) count_incoming(pod, *ni);
  }
  if (!has_required && existing_anti_.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  const auto& aff = pod.pod_affinity.required;
  matches_own_affinity_ = !aff.empty() && std::all_of(aff.begin(), aff.end(), [&](const kube::PodAffinityTerm& t) {
    return incoming_term_matches(t, pod, objects_, pod.ns, pod.labels);
  });
  return {};
}

void InterPodAffinity::pre_filter_update(const kube::Pod& pod, const kube::Pod& other, const NodeInfo& ni, int sign) {
  const kube::StringPairs& labels = ni.node.labels;
  for (const kube::PodAffinityTerm& t : other.pod_anti_affinity.required) {
    const std::string* v = kube::find_value(labels, t.topology_key);
    if (v != nullptr && existing_term_matches(t, other, pod, ns_labels_)) existing_anti_.add(t.topology_key, *v, sign);
  }
  auto matches = [&](const kube::PodAffinityTerm& t) {
    return incoming_term_matches(t, pod, objects_, other.ns, other.labels);
  };
  const auto& aff = pod.pod_affinity.required;
  if (!aff.empty() && std::all_of(aff.begin(), aff.end(), matches)) {
    for (const kube::PodAffinityTerm& t : aff) {
      if (const std::string* v = kube::find_value(labels, t.topology_key)) affinity_.add(t.topology_key, *v, sign);
    }
  }
  for (const kube::PodAffinityTerm& t : pod.pod_anti_affinity.required) {
    const std::string* v = kube::find_value(labels, t.topology_key);
    if (v != nullptr && matches(t)) anti_.add(t.topology_key, *v, sign);
  }
}

FilterStatus InterPodAffinity::filter_node(const kube::Pod& pod, const NodeInfo& ni) const {
  const kube::StringPairs& labels = ni.node.labels;
  // Affinity: every term's topology key on the node, and matching pods in
  // each of its domains, unless no pod matches anywhere and the pod
  // matches its own terms (the first pod of a group that attracts itself).
  bool pods_exist = true;
  for (const kube::PodAffinityTerm& t : pod.pod_affinity.required) {
    const std::string* v = kube::find_value(labels, t.topology_key);
    if (v == nullptr) return reject(PluginId::inter_pod_affinity, Code::unresolvable, Reason::pod_affinity);
    if (affinity_.get(t.topology_key, *v) <= 0) pods_exist = false;
  }
  if (!pods_exist && !(!affinity_.any_nonzero() && matches_own_affinity_)) {
    return reject(PluginId::inter_pod_affinity, Code::unresolvable, Reason::pod_affinity);
  }
  if (!anti_.empty()) {
    for (const kube::PodAffinityTerm& t : pod.pod_anti_affinity.required) {
      const std::string* v = kube::find_value(labels, t.topology_key);
      if (v != nullptr && anti_.get(t.topology_key, *v) > 0) {
        return reject(PluginId::inter_pod_affinity, Code::unschedulable, Reason::pod_anti_affinity);
      }
    }
  }
  if (!existing_anti_.empty()) {
    for (const auto& [k, v] : labels) {
      if (existing_anti_.get(k, v) > 0) {
        return reject(PluginId::inter_pod_affinity, Code::unschedulable, Reason::existing_anti_affinity);
      }
    }
  }
  return {};
}

std::size_t InterPodAffinity::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) { return filter_node(pod, ni); });
}

std::unique_ptr<Plugin> make_inter_pod_affinity(const PluginArgs& args) {
  return std::make_unique<InterPodAffinity>(args.hard_pod_affinity_weight);
}

}  // namespace toysched::sched
