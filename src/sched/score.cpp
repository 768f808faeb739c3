// Score plugins: raw per-node scores and upstream's normalization. The
// arithmetic follows upstream step by step (integer division where it
// divides integers, float64 where it uses floats) so scores, and so ties,
// come out identical.
#include "toysched/sched/plugins.hpp"

#include <algorithm>
#include <cmath>

namespace toysched::sched {
namespace {

// noderesources.leastRequestedScore
inline std::int64_t least_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

// `cpu`/`mem` are the pod's non-zero request.
inline std::int64_t least_allocated(std::int64_t cpu, std::int64_t mem, const NodeInfo& ni) noexcept {
  const auto& alloc = ni.node.allocatable;
  // Each resource has weight 1 (the default ScoringStrategy); a resource the
  // node does not advertise is left out of the mean, not counted as 0.
  std::int64_t sum = 0;
  std::int64_t weights = 0;
  if (alloc.milli_cpu != 0) {
    sum += least_requested(ni.nonzero_milli_cpu + cpu, alloc.milli_cpu);
    ++weights;
  }
  if (alloc.memory != 0) {
    sum += least_requested(ni.nonzero_memory + mem, alloc.memory);
    ++weights;
  }
  // Two resources is the common case: a shift, not a division.
  return weights == 2 ? sum / 2 : sum;
}

// `cpu`/`mem` are the pod's real request.
inline std::int64_t balanced_allocation(std::int64_t cpu, std::int64_t mem, const NodeInfo& ni) noexcept {
  const auto& alloc = ni.node.allocatable;
  // With fewer than two fractions upstream's deviation is 0.
  if (alloc.milli_cpu == 0 || alloc.memory == 0) return kMaxNodeScore;
  const auto fraction = [](std::int64_t requested, std::int64_t allocatable) {
    const double f = static_cast<double>(requested) / static_cast<double>(allocatable);
    return f > 1 ? 1.0 : f;
  };
  const double f_cpu = fraction(ni.requested.milli_cpu + cpu, alloc.milli_cpu);
  const double f_mem = fraction(ni.requested.memory + mem, alloc.memory);
  const double std_dev = std::abs((f_cpu - f_mem) / 2);
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

inline std::int64_t intolerable_prefer_no_schedule(const kube::Pod& pod, const NodeInfo& ni) noexcept {
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

inline std::int64_t affinity_sum(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  std::int64_t sum = 0;
  for (const auto& p : pod.preferred_affinity) {
    if (p.weight != 0 && term_matches(p.term, ni.node)) sum += p.weight;
  }
  return sum;
}

}  // namespace

std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return least_allocated(nonzero_milli_cpu(pod.requests), nonzero_memory(pod.requests), ni);
}

bool is_best_effort(const kube::Pod& pod) noexcept { return pod.requests.milli_cpu == 0 && pod.requests.memory == 0; }

std::int64_t score_balanced_allocation(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return is_best_effort(pod) ? 0 : balanced_allocation(pod.requests.milli_cpu, pod.requests.memory, ni);
}

std::int64_t count_intolerable_prefer_no_schedule(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return intolerable_prefer_no_schedule(pod, ni);
}

std::int64_t preferred_affinity_sum(const kube::Pod& pod, const NodeInfo& ni) noexcept { return affinity_sum(pod, ni); }

void default_normalize_score(std::span<std::int64_t> scores, std::int64_t max_score, bool reverse) noexcept {
  std::int64_t max_count = 0;
  for (auto s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), max_score);
    return;
  }
  for (auto& s : scores) {
    s = max_score * s / max_count;
    if (reverse) s = max_score - s;
  }
}

void score_nodes(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, ScoreTable& out) {
  const std::size_t n = feasible.size();
  out.least_allocated.resize(n);
  out.balanced_allocation.resize(n);
  out.taint_toleration.resize(n);
  out.node_affinity.resize(n);
  out.total.resize(n);
  std::int64_t* const fit = out.least_allocated.data();
  std::int64_t* const bal = out.balanced_allocation.data();
  std::int64_t* const taint = out.taint_toleration.data();
  std::int64_t* const aff = out.node_affinity.data();
  std::int64_t* const total = out.total.data();

  // Plugins with nothing to say for this pod are skipped, as upstream skips
  // them at PreScore: they add 0 to every node (BalancedAllocation for a
  // best-effort pod, NodeAffinity without preferred terms). The pod's
  // numbers are hoisted: the stores below could alias them for the compiler.
  const bool balanced = !is_best_effort(pod);
  const bool affinity = !pod.preferred_affinity.empty();
  const std::int64_t nz_cpu = nonzero_milli_cpu(pod.requests);
  const std::int64_t nz_mem = nonzero_memory(pod.requests);
  const std::int64_t cpu = pod.requests.milli_cpu;
  const std::int64_t mem = pod.requests.memory;
  // Totals assume no node has an intolerable PreferNoSchedule taint (then
  // every node gets the full TaintToleration score) and are redone below
  // only when that turns out wrong.
  constexpr std::int64_t kUntainted = kMaxNodeScore * kWeightTaintToleration;
  std::int64_t max_taint = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const NodeInfo& ni = *feasible[i];
    fit[i] = least_allocated(nz_cpu, nz_mem, ni) * kWeightLeastAllocated;
    bal[i] = balanced ? balanced_allocation(cpu, mem, ni) * kWeightBalancedAllocation : 0;
    taint[i] = ni.node.taints.empty() ? 0 : intolerable_prefer_no_schedule(pod, ni);
    max_taint = std::max(max_taint, taint[i]);
    aff[i] = affinity ? affinity_sum(pod, ni) : 0;
    total[i] = fit[i] + bal[i] + kUntainted;
  }
  if (max_taint == 0) {
    std::fill_n(taint, n, kUntainted);
  } else {
    default_normalize_score(out.taint_toleration, kMaxNodeScore, /*reverse=*/true);
    for (std::size_t i = 0; i < n; ++i) {
      taint[i] *= kWeightTaintToleration;
      total[i] += taint[i] - kUntainted;
    }
  }
  if (affinity) {
    default_normalize_score(out.node_affinity, kMaxNodeScore, /*reverse=*/false);
    for (std::size_t i = 0; i < n; ++i) {
      aff[i] *= kWeightNodeAffinity;
      total[i] += aff[i];
    }
  }
}

}  // namespace toysched::sched
