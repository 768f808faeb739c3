#include "toysched/sched/plugins/taint_toleration.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>

namespace toysched::sched {

bool tolerates(const kube::Toleration& tol, const kube::Taint& taint) noexcept {
  if (tol.effect != kube::TaintEffect::all && tol.effect != taint.effect) return false;
  if (!tol.key.empty() && tol.key != taint.key) return false;
  switch (tol.op) {
    case kube::TolerationOp::equal:
      return tol.value == taint.value;
    case kube::TolerationOp::exists:
      return true;
    case kube::TolerationOp::unknown:
      return false;
  }
  return false;
}

bool tolerates_any(std::span<const kube::Toleration> tols, const kube::Taint& taint) noexcept {
  return std::any_of(tols.begin(), tols.end(), [&](const kube::Toleration& t) { return tolerates(t, taint); });
}

const kube::Taint* first_untolerated_hard_taint(const kube::Pod& pod, const kube::Node& node) noexcept {
  for (const auto& taint : node.taints) {
    if (taint.effect != kube::TaintEffect::no_schedule && taint.effect != kube::TaintEffect::no_execute) continue;
    if (!tolerates_any(pod.tolerations, taint)) return &taint;
  }
  return nullptr;
}

// Since v1.35 upstream's reason names no taint ("node(s) had untolerated
// taint(s)"): one text for every node, counted as one line of the message.
FilterStatus filter_taint_toleration(const kube::Pod& pod, const NodeInfo& ni) {
  if (first_untolerated_hard_taint(pod, ni.node) == nullptr) return {};
  return reject(PluginId::taint_toleration, Code::unresolvable, Reason::untolerated_taint);
}

std::int64_t count_intolerable_prefer_no_schedule(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  std::int64_t count = 0;
  for (const auto& taint : ni.node.taints) {
    if (taint.effect != kube::TaintEffect::prefer_no_schedule) continue;
    // Only tolerations that could apply to PreferNoSchedule count
    // (getAllTolerationPreferNoSchedule): empty effect or that effect.
    const bool tolerated = std::any_of(pod.tolerations.begin(), pod.tolerations.end(), [&](const kube::Toleration& t) {
      return (t.effect == kube::TaintEffect::all || t.effect == kube::TaintEffect::prefer_no_schedule) &&
             tolerates(t, taint);
    });
    if (!tolerated) ++count;
  }
  return count;
}

PreFilterResult TaintToleration::pre_filter(const kube::Pod& /*pod*/, const Cluster& cluster) {
  if (cluster.tainted_nodes == 0) return {PreFilterResult::Kind::skip, {}, nullptr};
  return {};
}

bool TaintToleration::pre_score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> /*feasible*/,
                                const Cluster& cluster) {
  untainted_ = cluster.tainted_nodes == 0;
  return true;  // even then: every node gets the full score, as upstream reports it
}

std::size_t TaintToleration::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(
      nodes, sink, [](const NodeInfo& ni) { return ni.node.taints.empty(); },
      [&](const NodeInfo& ni) { return filter_taint_toleration(pod, ni); });
}

void TaintToleration::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                            std::span<std::int64_t> out) {
  if (untainted_) {  // no taint to count anywhere
    std::fill(out.begin(), out.end(), 0);
    return;
  }
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    const NodeInfo& ni = *feasible[i];
    out[i] = ni.node.taints.empty() ? 0 : count_intolerable_prefer_no_schedule(pod, ni);
  }
}

void TaintToleration::normalize(std::span<std::int64_t> scores) {
  // All zero, reversed: the best score everywhere, without the pass that
  // finds the highest count (/debug/explain still shows raw 0, as upstream's).
  if (untainted_) {
    std::fill(scores.begin(), scores.end(), kMaxNodeScore);
    return;
  }
  default_normalize_score(scores, kMaxNodeScore, /*reverse=*/true);
}

std::unique_ptr<Plugin> make_taint_toleration(const PluginArgs& /*args*/) {
  return std::make_unique<TaintToleration>();
}

}  // namespace toysched::sched
