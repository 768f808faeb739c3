// InterPodAffinity scoring (upstream scoring.go): PreScore sums term
// weights per (topology key, value) over every node of the cluster, Score
// adds up the node's values, NormalizeScore maps min..max to 0..100.
#include "toysched/kube/labels.hpp"
#include "toysched/sched/plugins/inter_pod_affinity.hpp"

#include <algorithm>

namespace toysched::sched {

// A placed pod's terms that the incoming pod matches: its required
// affinity (× hardPodAffinityWeight), preferred affinity (+weight) and
// preferred anti-affinity (−weight), for its node's topology value.
void InterPodAffinity::score_placed_pod(const kube::Pod& pod, const kube::Pod& placed, const kube::Node& node) {
  auto add = [&](const kube::PodAffinityTerm& t, std::int64_t w) {
    const std::string* v = kube::find_value(node.labels, t.topology_key);
    if (v != nullptr && existing_term_matches(t, placed, pod, ns_labels_)) scores_.add(t.topology_key, *v, w);
  };
  if (hard_weight_ > 0) {
    for (const kube::PodAffinityTerm& t : placed.pod_affinity.required) add(t, hard_weight_);
  }
  for (const kube::WeightedPodAffinityTerm& wt : placed.pod_affinity.preferred) add(wt.term, wt.weight);
  for (const kube::WeightedPodAffinityTerm& wt : placed.pod_anti_affinity.preferred) add(wt.term, -wt.weight);
}

void InterPodAffinity::score_node(const kube::Pod& pod, const NodeInfo& ni, bool preferred) {
  const kube::StringPairs& labels = ni.node.labels;
  if (labels.empty()) return;  // no topology value for any term
  if (preferred) {
    // The incoming pod's preferred terms, each weighted by the pods on the
    // node that match it.
    auto add = [&](const kube::WeightedPodAffinityTerm& wt, std::int64_t sign) {
      const std::string* v = kube::find_value(labels, wt.term.topology_key);
      if (v == nullptr) return;
      const int n = ni.count_pods(
          [&](const PodGroup& g) { return incoming_term_matches(wt.term, pod, objects_, g.ns, g.labels); },
          /*count_deleting=*/true);
      if (n > 0) scores_.add(wt.term.topology_key, *v, sign * wt.weight * n);
    };
    for (const auto& wt : pod.pod_affinity.preferred) add(wt, 1);
    for (const auto& wt : pod.pod_anti_affinity.preferred) add(wt, -1);
  }
  for (const kube::Pod* placed : ni.pods_with_affinity) score_placed_pod(pod, *placed, ni.node);
}

bool InterPodAffinity::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> /*feasible*/,
                                 const Cluster& cluster) {
  scores_.clear();
  const bool preferred = !pod.pod_affinity.preferred.empty() || !pod.pod_anti_affinity.preferred.empty();
  if (!preferred && cluster.pods_with_affinity == 0) return false;  // the Cache counted none
  // Without preferred terms of its own, only nodes holding pods with
  // affinity can score; a pod that finds none skips (as upstream's index -1).
  bool prepared = false;
  for (const NodeInfo* ni : cluster.nodes) {
    if (!preferred && ni->pods_with_affinity.empty()) continue;
    if (!prepared) {
      objects_ = cluster.objects;
      ns_labels_ = namespace_labels_of(cluster, pod.ns);
      prepared = true;
    }
    score_node(pod, *ni, preferred);
  }
  return !scores_.empty();
}

void InterPodAffinity::score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> feasible,
                             std::span<std::int64_t> out) {
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    std::int64_t s = 0;
    for (std::string_view key : scores_.keys()) {
      const std::string* v = kube::find_value(feasible[i]->node.labels, key);
      if (v != nullptr) s += scores_.get(key, *v);
    }
    out[i] = s;
  }
}

void InterPodAffinity::normalize(std::span<std::int64_t> scores) {
  if (scores.empty()) return;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const std::int64_t min = *lo;
  const std::int64_t diff = *hi - min;
  for (auto& s : scores) {
    // float64 as upstream, so rounding matches to the unit
    const double f =
        diff > 0 ? static_cast<double>(kMaxNodeScore) * (static_cast<double>(s - min) / static_cast<double>(diff))
                 : 0.0;
    s = static_cast<std::int64_t>(f);
  }
}

}  // namespace toysched::sched
