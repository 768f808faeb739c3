// The arithmetic follows upstream step by step (float64 where it uses
// floats) so scores, and so ties, come out identical.
#include "toysched/sched/plugins/balanced_allocation.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <cmath>

namespace toysched::sched {
namespace {

// balancedResourceScore over cpu and memory: (1 − std) × 100 truncated,
// std = |f_cpu − f_mem| / 2, each fraction capped at 1. With fewer than two
// fractions (a resource the node does not advertise is left out) std is 0.
inline std::int64_t balance(std::int64_t cpu, std::int64_t mem, const kube::Resources& alloc) noexcept {
  if (alloc.milli_cpu == 0 || alloc.memory == 0) return kMaxNodeScore;
  const auto fraction = [](std::int64_t requested, std::int64_t allocatable) {
    const double f = static_cast<double>(requested) / static_cast<double>(allocatable);
    return f > 1 ? 1.0 : f;
  };
  const double std_dev = std::abs((fraction(cpu, alloc.milli_cpu) - fraction(mem, alloc.memory)) / 2);
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

// balancedResourceScorer: how much the pod improves the node's balance.
// Both balances lie in [50, 100], so their difference in [−50, 50]; the
// score maps it to [50, 100]: 75 when the pod changes nothing.
// `cpu`/`mem` are the pod's real request.
inline std::int64_t balanced_allocation(std::int64_t cpu, std::int64_t mem, const NodeInfo& ni) noexcept {
  const auto& alloc = ni.node.allocatable;
  const auto& used = ni.requested;
  const std::int64_t with_pod = balance(used.milli_cpu + cpu, used.memory + mem, alloc);
  const std::int64_t without_pod = balance(used.milli_cpu, used.memory, alloc);
  return kMaxNodeScore / 2 + (kMaxNodeScore / 2 + with_pod - without_pod) / 2;
}

}  // namespace

bool is_best_effort(const kube::Pod& pod) noexcept { return pod.requests.milli_cpu == 0 && pod.requests.memory == 0; }

std::int64_t score_balanced_allocation(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return is_best_effort(pod) ? 0 : balanced_allocation(pod.requests.milli_cpu, pod.requests.memory, ni);
}

bool BalancedAllocation::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> /*feasible*/,
                                   const Cluster& /*cluster*/) {
  return !is_best_effort(pod);
}

void BalancedAllocation::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                               std::span<std::int64_t> out) {
  const std::int64_t cpu = pod.requests.milli_cpu;
  const std::int64_t mem = pod.requests.memory;
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = balanced_allocation(cpu, mem, *feasible[i]);
}

std::unique_ptr<Plugin> make_balanced_allocation(const PluginArgs& /*args*/) {
  return std::make_unique<BalancedAllocation>();
}

}  // namespace toysched::sched
