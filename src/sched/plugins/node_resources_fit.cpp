#include "toysched/sched/plugins/node_resources_fit.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace toysched::sched {
namespace {

// config.MaxCustomPriorityScore: a shape's scores are 0..10.
constexpr std::int64_t kMaxCustomPriorityScore = 10;
constexpr std::int64_t kMaxUtilization = 100;
constexpr std::int64_t kMaxResourceWeight = 100;

// noderesources.leastRequestedScore
inline std::int64_t least_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  if (capacity == 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

// noderesources.mostRequestedScore: requested past capacity (pods with no
// requests count the defaults) counts as full.
inline std::int64_t most_requested(std::int64_t requested, std::int64_t capacity) noexcept {
  if (capacity == 0) return 0;
  return std::min(requested, capacity) * kMaxNodeScore / capacity;
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

// A field path as upstream's field.Path prints it, under `root`.
std::string field(std::string_view root, std::string_view rel) {
  std::string f(root);
  if (!f.empty()) f += '.';
  f += rel;
  return f;
}

// utilerrors.NewAggregate(...).Error(): one message alone, several in
// brackets, each distinct message once.
std::string aggregate(const std::vector<std::string>& errs) {
  std::vector<std::string_view> seen;
  std::string out;
  for (const std::string& e : errs) {
    if (std::find(seen.begin(), seen.end(), e) != seen.end()) continue;
    if (!seen.empty()) out += ", ";
    seen.push_back(e);
    out += e;
  }
  return seen.size() > 1 ? "[" + out + "]" : out;
}

// validateFunctionShape
void validate_shape(const std::vector<UtilizationShapePoint>& shape, const std::string& path,
                    std::vector<std::string>& errs) {
  if (shape.empty()) {
    errs.push_back(path + ": Required value: at least one point must be specified");
    return;
  }
  const auto at = [&](std::size_t i, std::string_view child) {
    return path + "[" + std::to_string(i) + "]." + std::string(child);
  };
  for (std::size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(at(i, "utilization") + ": Invalid value: " + std::to_string(shape[i].utilization) +
                     ": values must be sorted in increasing order");
      break;
    }
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const auto& p = shape[i];
    if (p.utilization < 0 || p.utilization > kMaxUtilization) {
      errs.push_back(at(i, "utilization") + ": Invalid value: " + std::to_string(p.utilization) +
                     ": not in valid range [0, 100]");
    }
    if (p.score < 0 || p.score > kMaxCustomPriorityScore) {
      errs.push_back(at(i, "score") + ": Invalid value: " + std::to_string(p.score) + ": not in valid range [0, 10]");
    }
  }
}

}  // namespace

std::string_view scoring_strategy_name(ScoringStrategyType t) noexcept {
  switch (t) {
    case ScoringStrategyType::least_allocated:
      return "LeastAllocated";
    case ScoringStrategyType::most_allocated:
      return "MostAllocated";
    case ScoringStrategyType::requested_to_capacity_ratio:
      return "RequestedToCapacityRatio";
  }
  return "";
}

std::optional<ScoringStrategyType> parse_scoring_strategy_type(std::string_view name) noexcept {
  for (auto t : {ScoringStrategyType::least_allocated, ScoringStrategyType::most_allocated,
                 ScoringStrategyType::requested_to_capacity_ratio}) {
    if (scoring_strategy_name(t) == name) return t;
  }
  return std::nullopt;
}

std::string unsupported_scoring_strategy_error(std::string_view name, std::string_view path) {
  // field.NotSupported prints the value as JSON. Quotes and backslashes are
  // escaped as Go's encoder does; it also escapes control characters and
  // <, >, &, which this leaves as they are.
  std::string quoted = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  return field(path, "scoringStrategy.type") + ": Unsupported value: " + quoted +
         R"(: supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")";
}

void set_fit_args_defaults(FitArgs& args) {
  if (args.resources.empty()) args.resources = FitArgs{}.resources;
  for (ResourceSpec& r : args.resources) {
    if (r.weight == 0) r.weight = 1;
  }
}

std::string validate_fit_args(const FitArgs& args, std::string_view path) {
  std::vector<std::string> errs;
  for (std::size_t i = 0; i < args.resources.size(); ++i) {
    const ResourceSpec& r = args.resources[i];
    if (r.weight <= 0 || r.weight > kMaxResourceWeight) {
      errs.push_back(field(path, "scoringStrategy.resources[" + std::to_string(i) + "].weight") + ": Invalid value: " +
                     std::to_string(r.weight) + ": resource weight of " + r.name + " not in valid range (0, 100]");
    }
  }
  const std::string ratio = field(path, "scoringStrategy.requestedToCapacityRatio");
  if (args.type == ScoringStrategyType::requested_to_capacity_ratio) {
    if (!args.shape) {
      errs.push_back(ratio + ": Required value: must be specified when type is RequestedToCapacityRatio");
    } else {
      validate_shape(*args.shape, ratio + ".shape", errs);
    }
  } else if (args.shape) {
    errs.push_back(ratio + ": Forbidden: must be nil when type is not RequestedToCapacityRatio");
  }
  return aggregate(errs);
}

std::int64_t broken_linear(std::span<const UtilizationShapePoint> shape, std::int64_t p) noexcept {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (p > shape[i].utilization) continue;
    if (i == 0) return shape[0].score;
    const auto& a = shape[i - 1];
    const auto& b = shape[i];
    return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
  }
  return shape.back().score;
}

FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni) {
  FilterStatus s;
  const auto& alloc = ni.node.allocatable;
  const auto& used = ni.requested;
  const auto& want = pod.requests;
  // A request larger than the node's whole allocatable cannot fit there
  // whatever is evicted: upstream then answers UnschedulableAndUnresolvable,
  // and preemption leaves the node out. "Too many pods" is never so.
  bool unresolvable = false;
  auto short_of = [&](std::int64_t q, std::int64_t allocatable, std::int64_t requested) {
    if (q <= allocatable - requested) return false;
    unresolvable = unresolvable || q > allocatable;
    return true;
  };
  if (ni.pod_count + 1 > alloc.pods) s.add(Reason::too_many_pods);
  if (!want.empty()) {
    if (want.milli_cpu > 0 && short_of(want.milli_cpu, alloc.milli_cpu, used.milli_cpu)) {
      s.add(Reason::insufficient_cpu);
    }
    if (want.memory > 0 && short_of(want.memory, alloc.memory, used.memory)) s.add(Reason::insufficient_memory);
    if (want.ephemeral_storage > 0 &&
        short_of(want.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage)) {
      s.add(Reason::insufficient_ephemeral_storage);
    }
    for (std::size_t i = 0; i < want.extended.size(); ++i) {
      const auto& [name, q] = want.extended[i];
      if (q == 0) continue;
      // A resource the node does not advertise at all is allocatable 0.
      if (!short_of(q, alloc.extended_value(name), used.extended_value(name))) continue;
      s.add(Reason::insufficient_extended);
      if (i < 64) {
        s.extended |= std::uint64_t{1} << i;
      } else {
        s.extended_overflow.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  if (s.reasons != 0) {
    s.code = unresolvable ? Code::unresolvable : Code::unschedulable;
    s.plugin = PluginId::node_resources_fit;
  }
  return s;
}

std::int64_t score_least_allocated(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  const kube::NonZeroRequests nz = nonzero_incoming_requests(pod);
  return least_allocated(nz.milli_cpu, nz.memory, ni);
}

NodeResourcesFit::NodeResourcesFit(FitArgs args) : args_(std::move(args)) {
  if (std::string err = validate_fit_args(args_); !err.empty()) {
    throw std::invalid_argument("NodeResourcesFit: " + err);
  }
  for (const ResourceSpec& r : args_.resources) {
    const Kind k = r.name == "cpu"                 ? Kind::cpu
                   : r.name == "memory"            ? Kind::memory
                   : r.name == "ephemeral-storage" ? Kind::ephemeral_storage
                                                   : Kind::extended;
    resources_.push_back({k, k == Kind::extended ? r.name : std::string(), r.weight});
  }
  // Equal weights w: (a·w + b·w) / 2w is (a + b) / 2 exactly, and one
  // resource alone a·w / w is a, so the weightless loop gives the same.
  cpu_memory_least_ = args_.type == ScoringStrategyType::least_allocated && resources_.size() == 2 &&
                      resources_[0].kind != resources_[1].kind && resources_[0].kind <= Kind::memory &&
                      resources_[1].kind <= Kind::memory && resources_[0].weight == resources_[1].weight;
  if (args_.shape) {
    for (const UtilizationShapePoint& p : *args_.shape) {
      shape_.push_back({p.utilization, p.score * (kMaxNodeScore / kMaxCustomPriorityScore)});
    }
  }
  pod_request_.resize(resources_.size());
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

bool NodeResourcesFit::pre_score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> /*feasible*/,
                                 const Cluster& /*cluster*/) {
  return !resources_.empty();
}

// resourceAllocationScorer.score with the strategy's scorer, for one node;
// pod_request_ holds the pod's requests.
std::int64_t NodeResourcesFit::score_node(const NodeInfo& ni) const noexcept {
  const auto& alloc = ni.node.allocatable;
  std::int64_t sum = 0;
  std::int64_t weights = 0;
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    const Scored& r = resources_[i];
    std::int64_t capacity = 0;
    std::int64_t requested = pod_request_[i];
    switch (r.kind) {
      case Kind::cpu:
        capacity = alloc.milli_cpu;
        requested += ni.nonzero_milli_cpu;
        break;
      case Kind::memory:
        capacity = alloc.memory;
        requested += ni.nonzero_memory;
        break;
      case Kind::ephemeral_storage:
        capacity = alloc.ephemeral_storage;
        requested += ni.requested.ephemeral_storage;
        break;
      case Kind::extended:
        // An extended resource the pod does not ask for says nothing
        // about this node: left out, as upstream does.
        if (requested == 0) continue;
        capacity = alloc.extended_value(r.name);
        requested += ni.requested.extended_value(r.name);
        break;
    }
    if (capacity == 0) continue;  // not advertised: out of the mean
    std::int64_t s = 0;
    switch (args_.type) {
      case ScoringStrategyType::least_allocated:
        s = least_requested(requested, capacity);
        break;
      case ScoringStrategyType::most_allocated:
        s = most_requested(requested, capacity);
        break;
      case ScoringStrategyType::requested_to_capacity_ratio:
        s = broken_linear(shape_, requested > capacity ? kMaxUtilization : requested * kMaxUtilization / capacity);
        if (s <= 0) continue;  // upstream leaves a resource scoring 0 out of the mean
        break;
    }
    sum += s * r.weight;
    weights += r.weight;
  }
  if (weights == 0) return 0;
  if (args_.type != ScoringStrategyType::requested_to_capacity_ratio) return sum / weights;
  // RequestedToCapacityRatio rounds (math.Round: halves away from zero).
  return static_cast<std::int64_t>(std::round(static_cast<double>(sum) / static_cast<double>(weights)));
}

void NodeResourcesFit::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                             std::span<std::int64_t> out) {
  if (!cpu_memory_least_) {
    score_general(pod, feasible, out);
    return;
  }
  const kube::NonZeroRequests nz = nonzero_incoming_requests(pod);
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = least_allocated(nz.milli_cpu, nz.memory, *feasible[i]);
}

// Out of line so that the default path above keeps the small frame it had
// before strategies existed.
void NodeResourcesFit::score_general(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                                     std::span<std::int64_t> out) {
  // The pod's side once per call (a few lookups), not once per node.
  const kube::NonZeroRequests nz = nonzero_incoming_requests(pod);
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    switch (resources_[i].kind) {
      case Kind::cpu:
        pod_request_[i] = nz.milli_cpu;
        break;
      case Kind::memory:
        pod_request_[i] = nz.memory;
        break;
      case Kind::ephemeral_storage:
        pod_request_[i] = pod.requests.ephemeral_storage;
        break;
      case Kind::extended:
        pod_request_[i] = pod.requests.extended_value(resources_[i].name);
        break;
    }
  }
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = score_node(*feasible[i]);
}

std::unique_ptr<Plugin> make_node_resources_fit(const PluginArgs& args) {
  return std::make_unique<NodeResourcesFit>(args.fit);
}

}  // namespace toysched::sched
