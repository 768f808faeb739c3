// NodeResourcesFit (framework/plugins/noderesources/fit.go): the filter
// every pod goes through (pods count, cpu, memory, ephemeral storage,
// extended resources), and the score of the profile's strategy over the
// resources its args list (LeastAllocated over cpu and memory, weight 1
// each, by default: the emptier node wins).
#pragma once

#include "toysched/sched/framework.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {

// upstream's ScoringStrategyType
enum class ScoringStrategyType : std::uint8_t { least_allocated, most_allocated, requested_to_capacity_ratio };

// "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
std::string_view scoring_strategy_name(ScoringStrategyType t) noexcept;
// The inverse; nullopt for any other name (then report
// unsupported_scoring_strategy_error).
std::optional<ScoringStrategyType> parse_scoring_strategy_type(std::string_view name) noexcept;
// Upstream's words for a type it does not know, with the field path under
// `path` (e.g. "profiles[0].pluginConfig[1].args"; empty: none):
// `scoringStrategy.type: Unsupported value: "X": supported values: ...`
std::string unsupported_scoring_strategy_error(std::string_view name, std::string_view path = {});

struct ResourceSpec {
  std::string name;  // "cpu", "memory", "ephemeral-storage" or an extended resource ("nvidia.com/gpu")
  std::int64_t weight = 1;
  friend bool operator==(const ResourceSpec&, const ResourceSpec&) = default;
};

// One point of RequestedToCapacityRatio's function: utilization 0..100 (%)
// maps to score 0..10 (scaled to 0..100 when scoring).
struct UtilizationShapePoint {
  std::int64_t utilization = 0;
  std::int64_t score = 0;
  friend bool operator==(const UtilizationShapePoint&, const UtilizationShapePoint&) = default;
};

// NodeResourcesFitArgs.scoringStrategy, after v1 defaulting.
struct FitArgs {
  ScoringStrategyType type = ScoringStrategyType::least_allocated;
  std::vector<ResourceSpec> resources{{"cpu", 1}, {"memory", 1}};
  // requestedToCapacityRatio.shape: present exactly when type is
  // RequestedToCapacityRatio (upstream tells "absent" from "empty").
  std::optional<std::vector<UtilizationShapePoint>> shape;
  friend bool operator==(const FitArgs&, const FitArgs&) = default;
};

// v1's SetDefaults_NodeResourcesFitArgs, for args read from a config: no
// resources → cpu and memory; a weight of 0 (unset) → 1.
void set_fit_args_defaults(FitArgs& args);

// ValidateNodeResourcesFitArgs on the scoring strategy: "" when valid,
// else upstream's message (one error, or "[e1, e2, ...]"), field paths
// under `path` as in unsupported_scoring_strategy_error. Weights must be
// 1..100; the shape needs a point, utilizations strictly increasing in
// 0..100, scores in 0..10.
std::string validate_fit_args(const FitArgs& args, std::string_view path = {});

// helper.BuildBrokenLinearFunction at p: the shape's first score below its
// first point, the last score above its last, linear (integer division)
// in between. `shape` is non-empty and sorted.
std::int64_t broken_linear(std::span<const UtilizationShapePoint> shape, std::int64_t p) noexcept;

// Every failing resource is listed, not only the first. The code is
// unresolvable when some request exceeds the node's allocatable (no
// eviction can make room), else unschedulable.
FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni);

// LeastAllocated over cpu and memory (weight 1 each): per resource
// (alloc − req) × 100 / alloc with req = the node's non-zero requested plus
// the pod's non-zero request, 0 when req > alloc; a resource with alloc 0 is
// left out of the mean; integer division as upstream.
std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept;

class NodeResourcesFit final : public Plugin {
 public:
  NodeResourcesFit() : NodeResourcesFit(FitArgs{}) {}
  // Throws std::invalid_argument with validate_fit_args's message when the
  // args are invalid (upstream's NewFit fails the same way).
  explicit NodeResourcesFit(FitArgs args);

  const FitArgs& args() const noexcept { return args_; }

  PluginId id() const noexcept override { return PluginId::node_resources_fit; }
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  // false when the args list no resource: every node then gets 0 (upstream
  // answers an Error status there; v1 defaulting never leaves it empty).
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;

 private:
  enum class Kind : std::uint8_t { cpu, memory, ephemeral_storage, extended };
  struct Scored {
    Kind kind;
    std::string name;  // extended only
    std::int64_t weight;
  };

  [[gnu::noinline]] void score_general(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                                       std::span<std::int64_t> out);
  std::int64_t score_node(const NodeInfo& ni) const noexcept;

  FitArgs args_;
  // LeastAllocated over exactly cpu and memory with equal weights, the
  // default: today's two-resource loop, no per-resource dispatch.
  bool cpu_memory_least_ = false;
  std::vector<Scored> resources_;
  std::vector<UtilizationShapePoint> shape_;  // scores ×10 (MaxNodeScore / MaxCustomPriorityScore)
  std::vector<std::int64_t> pod_request_;     // per resources_, for the pod being scored
};

}  // namespace toysched::sched
