#include "toysched/sched/plugins/node_resources_fit.hpp"

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

}  // namespace

FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni) {
  FilterStatus s;
  const auto& alloc = ni.node.allocatable;
  const auto& used = ni.requested;
  const auto& want = pod.requests;
  if (ni.pod_count + 1 > alloc.pods) s.add(Reason::too_many_pods);
  if (!want.empty()) {
    if (want.milli_cpu > 0 && want.milli_cpu > alloc.milli_cpu - used.milli_cpu) s.add(Reason::insufficient_cpu);
    if (want.memory > 0 && want.memory > alloc.memory - used.memory) s.add(Reason::insufficient_memory);
    if (want.ephemeral_storage > 0 && want.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
      s.add(Reason::insufficient_ephemeral_storage);
    }
    for (std::size_t i = 0; i < want.extended.size(); ++i) {
      const auto& [name, q] = want.extended[i];
      if (q == 0) continue;
      // A resource the node does not advertise at all is allocatable 0.
      if (q <= alloc.extended_value(name) - used.extended_value(name)) continue;
      s.add(Reason::insufficient_extended);
      if (i < 64) {
        s.extended |= std::uint64_t{1} << i;
      } else {
        s.extended_overflow.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  if (s.reasons != 0) {
    s.code = Code::unschedulable;
    s.plugin = PluginId::node_resources_fit;
  }
  return s;
}

std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return least_allocated(nonzero_milli_cpu(pod.requests), nonzero_memory(pod.requests), ni);
}

std::size_t NodeResourcesFit::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  // The pod's numbers are hoisted: stores into `nodes` could otherwise
  // alias them for the compiler and force a reload per node.
  const bool extended = !pod.requests.extended.empty();
  const std::int64_t cpu = pod.requests.milli_cpu;
  const std::int64_t mem = pod.requests.memory;
  const std::int64_t eph = pod.requests.ephemeral_storage;
  std::size_t kept = 0;
  for (const NodeInfo* ni : nodes) {
    // The usual case inline, building no status: everything fits.
    const auto& a = ni->node.allocatable;
    const auto& u = ni->requested;
    if (!extended && ni->pod_count + 1 <= a.pods && (cpu == 0 || cpu <= a.milli_cpu - u.milli_cpu) &&
        (mem == 0 || mem <= a.memory - u.memory) && (eph == 0 || eph <= a.ephemeral_storage - u.ephemeral_storage)) {
      nodes[kept++] = ni;
      continue;
    }
    FilterStatus st = filter_node_resources_fit(pod, *ni);
    if (st.ok()) {
      nodes[kept++] = ni;
    } else {
      sink.rejected(*ni, st);
    }
  }
  return kept;
}

void NodeResourcesFit::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                             std::span<std::int64_t> out) {
  const std::int64_t cpu = nonzero_milli_cpu(pod.requests);
  const std::int64_t mem = nonzero_memory(pod.requests);
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = least_allocated(cpu, mem, *feasible[i]);
}

}  // namespace toysched::sched
