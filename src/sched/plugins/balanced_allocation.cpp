// The arithmetic follows upstream step by step (float64 where it uses
// floats) so scores, and so ties, come out identical.
#include "toysched/sched/plugins/balanced_allocation.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <cmath>

namespace toysched::sched {
namespace {

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
