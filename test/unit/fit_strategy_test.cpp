// NodeResourcesFit's scoring strategies and their args, case by case after
// upstream's tables (each TEST_CASE names the Go test it follows):
//   framework/plugins/noderesources/least_allocated_test.go,
//   most_allocated_test.go, requested_to_capacity_ratio_test.go,
//   apis/config/validation/validation_pluginargs_test.go.
//
// Upstream's quantities are kept as written: "cpu": "4000" is 4000 cores
// and "memory": "10000" is 10000 bytes; only ratios matter. Upstream builds
// requests from containers; ours is the pod's sum, so a pod with two
// containers {1000, 2000} and {2000, 3000} is cpu 3000, memory 5000 here.
//
// Cases left out: those whose incoming pod has no containers at all
// (upstream counts its non-zero request as 0; a real pod has a container,
// so ours counts the 100m / 200Mi defaults), and the IgnoredResources args
// (not in this build).
#include "builders.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/plugins/node_resources_fit.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace toysched;
using sched::FitArgs;
using sched::NodeInfo;
using sched::ResourceSpec;
using sched::ScoringStrategyType;
using sched::UtilizationShapePoint;
using test::make_node;
using test::make_pod;
using Scores = std::vector<std::int64_t>;
using Shape = std::vector<UtilizationShapePoint>;

namespace {

constexpr ScoringStrategyType kLeast = ScoringStrategyType::least_allocated;
constexpr ScoringStrategyType kMost = ScoringStrategyType::most_allocated;
constexpr ScoringStrategyType kRatio = ScoringStrategyType::requested_to_capacity_ratio;

const std::vector<ResourceSpec> kDefaultResources = {{"cpu", 1}, {"memory", 1}};
// util_test.go's extendedRes / extendedResourceSet
const std::string kExtendedRes = "abc.com/xyz";
const std::vector<ResourceSpec> kExtendedResourceSet = {{"cpu", 1}, {"memory", 1}, {kExtendedRes, 1}};

FitArgs args(ScoringStrategyType type, std::vector<ResourceSpec> resources, std::optional<Shape> shape = {}) {
  FitArgs a;
  a.type = type;
  a.resources = std::move(resources);
  a.shape = std::move(shape);
  return a;
}

// PreScore then Score over `nodes`, as a scheduling cycle calls them; a
// plugin that skips at PreScore adds 0 to every node.
Scores scores(const FitArgs& a, const kube::Pod& pod, const std::vector<NodeInfo>& nodes) {
  sched::NodeResourcesFit fit(a);
  std::vector<const NodeInfo*> view;
  for (const NodeInfo& n : nodes) view.push_back(&n);
  Scores out(nodes.size(), 0);
  if (fit.pre_score(pod, view, sched::Cluster{view})) fit.score(pod, view, out);
  return out;
}

// "cpu": c, "memory": m in upstream's units (cores, bytes).
NodeInfo node(std::string_view c, std::string_view m) { return make_node().cpu(c).memory(m).info(); }

// Upstream's existing pods that ask for memory "0" explicitly keep 0 as
// their non-zero memory (only a missing request gets the default). Our Pod
// cannot tell an explicit 0 from none, so these nodes get upstream's sums.
NodeInfo with_counted(NodeInfo ni, std::string_view cpu, std::string_view memory) {
  ni.requested.milli_cpu = ni.nonzero_milli_cpu = test::milli(cpu);
  ni.requested.memory = ni.nonzero_memory = test::value(memory);
  ++ni.pod_count;
  return ni;
}

kube::Pod pod_3000_5000() { return make_pod().cpu("3000").memory("5000"); }

}  // namespace

TEST_CASE("LeastAllocated: least_allocated_test.go TestLeastAllocatedScoringStrategy") {
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    // cpu 1000·100/4000 = 25, memory 50 → 37; cpu 50, memory 50 → 50
    CHECK(scores(args(kLeast, kDefaultResources), pod_3000_5000(), {node("4000", "10000"), node("6000", "10000")}) ==
          Scores{37, 50});
  }
  SUBCASE("Resources not set, pods scheduled with error") {
    // upstream: Error status and MinNodeScore; here the plugin skips at PreScore
    CHECK(scores(args(kLeast, {}), pod_3000_5000(), {node("4000", "10000"), node("6000", "10000")}) == Scores{0, 0});
  }
  SUBCASE("resources requested, pods scheduled with resources") {
    NodeInfo n2 = node("10000", "20000");
    n2.add_pod(make_pod().name("e2").cpu("3000").memory("5000"));
    CHECK(scores(args(kLeast, kDefaultResources), pod_3000_5000(),
                 {with_counted(node("10000", "20000"), "3000", "0"), n2}) == Scores{57, 45});
  }
  SUBCASE("resources requested, pods scheduled with resources, differently sized nodes") {
    NodeInfo n2 = node("10000", "50000");
    n2.add_pod(make_pod().name("e2").cpu("3000").memory("5000"));
    CHECK(scores(args(kLeast, kDefaultResources), pod_3000_5000(),
                 {with_counted(node("10000", "20000"), "3000", "0"), n2}) == Scores{57, 60});
  }
  SUBCASE("zero node resources, pods scheduled with resources") {
    NodeInfo n1 = with_counted(node("0", "0"), "3000", "0");
    NodeInfo n2 = node("0", "0");
    n2.add_pod(make_pod().name("e2").cpu("3000").memory("5000"));
    CHECK(scores(args(kLeast, kDefaultResources), make_pod(), {n1, n2}) == Scores{0, 0});
  }
  SUBCASE("nothing scheduled, resources requested with different weight on CPU and memory") {
    // (25·1 + 50·2) / 3 = 41; (50 + 100) / 3 = 50
    CHECK(scores(args(kLeast, {{"memory", 2}, {"cpu", 1}}), pod_3000_5000(),
                 {node("4000", "10000"), node("6000", "10000")}) == Scores{41, 50});
  }
  SUBCASE("bypass extended resource if the pod does not request") {
    CHECK(scores(args(kLeast, kExtendedResourceSet), pod_3000_5000(),
                 {node("6000", "10000"), make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info()}) ==
          Scores{50, 50});
  }
  SUBCASE("honor extended resource if the pod requests") {
    // extended: (4 − 2)·100/4 = 50, (10 − 2)·100/10 = 80 → (50+50+50)/3, (50+50+80)/3
    const kube::Pod pod = make_pod().cpu("3000").memory("5000").extended(kExtendedRes, "2");
    CHECK(scores(args(kLeast, kExtendedResourceSet), pod,
                 {make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info(),
                  make_node().cpu("6000").memory("10000").extended(kExtendedRes, "10").info()}) == Scores{50, 60});
  }
  SUBCASE("if the node doesn't have a resource") {
    CHECK(scores(args(kLeast, {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}}), make_pod().cpu("3000").memory("4000"),
                 {node("6000", "10000"), make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info()}) ==
          Scores{55, 55});
  }
  SUBCASE("resource with negative / zero / larger than MaxNodeScore weight: NewFit fails") {
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kLeast, {{"memory", -1}, {"cpu", 1}})), std::invalid_argument);
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kLeast, {{"memory", 1}, {"cpu", 0}})), std::invalid_argument);
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kLeast, {{"memory", 1}, {"cpu", 101}})), std::invalid_argument);
  }
}

TEST_CASE("MostAllocated: most_allocated_test.go TestMostAllocatedScoringStrategy") {
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    // (75 + 50) / 2 = 62; (50 + 50) / 2 = 50
    CHECK(scores(args(kMost, kDefaultResources), pod_3000_5000(), {node("4000", "10000"), node("6000", "10000")}) ==
          Scores{62, 50});
  }
  SUBCASE("Resources not set, pods scheduled with error") {
    CHECK(scores(args(kMost, {}), pod_3000_5000(), {node("4000", "10000"), node("6000", "10000")}) == Scores{0, 0});
  }
  SUBCASE("resources requested, pods scheduled with resources") {
    NodeInfo n2 = node("10000", "20000");
    n2.add_pod(make_pod().name("e2").cpu("3000").memory("5000"));
    CHECK(scores(args(kMost, kDefaultResources), pod_3000_5000(),
                 {with_counted(node("10000", "20000"), "3000", "0"), n2}) == Scores{42, 55});
  }
  SUBCASE("resources requested equal node capacity") {
    CHECK(scores(args(kMost, kDefaultResources), make_pod().cpu("5000").memory("9000"),
                 {node("5000", "10000"), node("10000", "9000")}) == Scores{95, 75});
  }
  SUBCASE("nothing scheduled, resources requested, differently sized nodes, memory weight 2") {
    CHECK(scores(args(kMost, {{"memory", 2}, {"cpu", 1}}), pod_3000_5000(),
                 {node("4000", "10000"), node("6000", "10000")}) == Scores{58, 50});
  }
  SUBCASE("no resources requested, pods scheduled, nonzero request for resource") {
    // Every pod has one container and no requests: 100m / 200Mi each.
    // node1: cpu 300m of 250m → 100, memory 600Mi of 1000Mi → 60 → 80
    // node2: cpu 100m → 40, memory 200Mi → 20 → 30
    NodeInfo n1 = node("250m", "1000Mi");
    n1.add_pod(make_pod().name("e1"));
    n1.add_pod(make_pod().name("e2"));
    CHECK(scores(args(kMost, kDefaultResources), make_pod(), {n1, node("250m", "1000Mi")}) == Scores{80, 30});
  }
  SUBCASE("bypass extended resource if the pod does not request") {
    CHECK(scores(args(kMost, kExtendedResourceSet), pod_3000_5000(),
                 {node("6000", "10000"), make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info()}) ==
          Scores{50, 50});
  }
  SUBCASE("honor extended resource if the pod request") {
    const kube::Pod pod = make_pod().cpu("3000").memory("5000").extended(kExtendedRes, "2");
    CHECK(scores(args(kMost, kExtendedResourceSet), pod,
                 {make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info(),
                  make_node().cpu("6000").memory("10000").extended(kExtendedRes, "10").info()}) == Scores{50, 40});
  }
  SUBCASE("if the node doesn't have a resource") {
    CHECK(scores(args(kMost, {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}}), make_pod().cpu("3000").memory("4000"),
                 {node("6000", "10000"), make_node().cpu("6000").memory("10000").extended(kExtendedRes, "4").info()}) ==
          Scores{45, 45});
  }
  SUBCASE("resource with negative / zero / larger than MaxNodeScore weight: NewFit fails") {
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kMost, {{"memory", -1}, {"cpu", 1}})), std::invalid_argument);
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kMost, {{"memory", 1}, {"cpu", 0}})), std::invalid_argument);
    CHECK_THROWS_AS(sched::NodeResourcesFit(args(kMost, {{"memory", 101}})), std::invalid_argument);
  }
}

TEST_CASE("RequestedToCapacityRatio: TestRequestedToCapacityRatioScoringStrategy") {
  const Shape shape = {{0, 10}, {100, 0}};
  // node1's two existing pods have no containers: they count nothing.
  // node1: cpu 75% → 25, memory 50% → 50: round(75 / 2) = 38 (math.Round)
  CHECK(scores(args(kRatio, kDefaultResources, shape), pod_3000_5000(),
               {node("4000", "10000"), node("6000", "10000")}) == Scores{38, 50});
  // Not an upstream case: a resource whose shape score is 0 leaves the mean
  // (requested_to_capacity_ratio.go adds only scores > 0). cpu full → 0,
  // memory 50% → 50: the node scores 50, not (0 + 50) / 2.
  CHECK(scores(args(kRatio, kDefaultResources, shape), make_pod().cpu("4000").memory("5000"),
               {node("4000", "10000")}) == Scores{50});
}

TEST_CASE("RequestedToCapacityRatio: TestBrokenLinearFunction") {
  struct Assertion {
    std::int64_t p, expected;
  };
  const auto check = [](const Shape& points, const std::vector<Assertion>& assertions) {
    for (const auto& [p, expected] : assertions) {
      CAPTURE(p);
      CHECK(sched::broken_linear(points, p) == expected);
    }
  };
  check({{10, 1}, {90, 9}},
        {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}});
  check({{0, 2}, {40, 10}, {100, 0}}, {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}});
  check({{0, 2}, {40, 2}, {100, 2}}, {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}});
}

TEST_CASE("RequestedToCapacityRatio: TestResourceBinPackingSingleExtended") {
  const FitArgs a = args(kRatio, {{"intel.com/foo", 1}}, Shape{{0, 0}, {100, 1}});
  const NodeInfo n1 = make_node().name("node1").extended("intel.com/foo", "8").info();
  NodeInfo n2 = make_node().name("node2").extended("intel.com/foo", "4").info();
  SUBCASE("nothing scheduled, nothing requested") { CHECK(scores(a, make_pod(), {n1, n2}) == Scores{0, 0}); }
  SUBCASE("resources requested, pods scheduled with less resources") {
    // 2/8 → 25% → 2 (of 10); 2/4 → 50% → 5
    CHECK(scores(a, make_pod().extended("intel.com/foo", "2"), {n1, n2}) == Scores{2, 5});
  }
  SUBCASE("resources requested, pods scheduled with resources, on node with existing pod running") {
    n2.add_pod(make_pod().name("e").extended("intel.com/foo", "2"));
    CHECK(scores(a, make_pod().extended("intel.com/foo", "2"), {n1, n2}) == Scores{2, 10});
  }
  SUBCASE("resources requested, pods scheduled with more resources") {
    CHECK(scores(a, make_pod().extended("intel.com/foo", "4"), {n1, n2}) == Scores{5, 10});
  }
}

TEST_CASE("RequestedToCapacityRatio: TestResourceBinPackingMultipleExtended") {
  const FitArgs a = args(kRatio, {{"intel.com/foo", 3}, {"intel.com/bar", 5}}, Shape{{0, 0}, {100, 1}});
  NodeInfo n1 = make_node().name("node1").extended("intel.com/foo", "8").extended("intel.com/bar", "4").info();
  NodeInfo n2 = make_node().name("node2").extended("intel.com/foo", "4").extended("intel.com/bar", "8").info();
  const kube::Pod pod1 = make_pod().extended("intel.com/foo", "2").extended("intel.com/bar", "2");
  const kube::Pod pod2 = make_pod().extended("intel.com/foo", "4").extended("intel.com/bar", "2");
  SUBCASE("nothing scheduled, nothing requested") { CHECK(scores(a, make_pod(), {n1, n2}) == Scores{0, 0}); }
  SUBCASE("resources requested, pods scheduled with less resources") {
    // node1: foo 25% → 2, bar 50% → 5: round((2·3 + 5·5) / 8) = 4; node2: (5·3 + 2·5) / 8 → 3
    CHECK(scores(a, pod1, {n1, n2}) == Scores{4, 3});
  }
  SUBCASE("resources requested, pods scheduled with resources, on node with existing pod running") {
    n2.add_pod(make_pod().name("e").extended("intel.com/foo", "4").extended("intel.com/bar", "2"));
    CHECK(scores(a, pod1, {n1, n2}) == Scores{4, 7});
  }
  SUBCASE("resources requested, pods scheduled with more resources") {
    CHECK(scores(a, pod2, {n1, n2}) == Scores{5, 5});
  }
}

TEST_CASE("the cpu+memory LeastAllocated loop agrees with the general one") {
  // The default args take a loop of their own; an extended resource the pod
  // does not ask for is left out of the mean, so adding one forces the
  // general loop with the same expected result. Random nodes and pods.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> cpu(0, 8000), mem(0, 16LL << 30);
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 200; ++i) {
    NodeInfo ni = make_node().name("n" + std::to_string(i)).info();
    ni.node.allocatable.milli_cpu = i % 17 == 0 ? 0 : 1 + cpu(rng);
    ni.node.allocatable.memory = i % 13 == 0 ? 0 : 1 + mem(rng);
    ni.nonzero_milli_cpu = cpu(rng);
    ni.nonzero_memory = mem(rng);
    nodes.push_back(ni);
  }
  for (int k = 0; k < 20; ++k) {
    kube::Pod pod = make_pod();
    pod.requests.milli_cpu = k % 3 == 0 ? 0 : cpu(rng) / 4;
    pod.requests.memory = k % 5 == 0 ? 0 : mem(rng) / 4;
    const Scores fast = scores(args(kLeast, {{"memory", 4}, {"cpu", 4}}), pod, nodes);
    CHECK(fast == scores(args(kLeast, {{"cpu", 1}, {"memory", 1}, {"example.com/none", 9}}), pod, nodes));
    std::vector<std::int64_t> one;
    for (const NodeInfo& n : nodes) one.push_back(sched::score_least_allocated(pod, n));
    CHECK(fast == one);
  }
}

TEST_CASE("ephemeral-storage is scored on real requests, no default") {
  // 10Gi of 100Gi used, the pod asks 0: MostAllocated 10; a pod with no
  // ephemeral request is still scored on it (not an extended resource).
  NodeInfo ni = make_node().ephemeral_storage("100Gi").info();
  ni.add_pod(make_pod().name("e").ephemeral_storage("10Gi"));
  CHECK(scores(args(kMost, {{"ephemeral-storage", 1}}), make_pod(), {ni}) == Scores{10});
  CHECK(scores(args(kMost, {{"ephemeral-storage", 1}}), make_pod().ephemeral_storage("40Gi"), {ni}) == Scores{50});
}

TEST_CASE("args: validation_pluginargs_test.go TestValidateFitArgs") {
  SUBCASE("ScoringStrategy: type is unsupported") {
    CHECK_FALSE(sched::parse_scoring_strategy_type("Invalid").has_value());
    CHECK(sched::unsupported_scoring_strategy_error("Invalid") ==
          R"(scoringStrategy.type: Unsupported value: "Invalid": supported values: "LeastAllocated", )"
          R"("MostAllocated", "RequestedToCapacityRatio")");
    for (auto t : {kLeast, kMost, kRatio})
      CHECK(sched::parse_scoring_strategy_type(sched::scoring_strategy_name(t)) == t);
  }
  SUBCASE("ScoringStrategy: requestedToCapacityRatio field is missing") {
    CHECK(sched::validate_fit_args(args(kRatio, kDefaultResources)) ==
          "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
          "RequestedToCapacityRatio");
  }
  SUBCASE("a shape with another strategy is forbidden") {
    CHECK(sched::validate_fit_args(args(kMost, kDefaultResources, Shape{{0, 0}})) ==
          "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio");
  }
  SUBCASE("under a config path") {
    CHECK(sched::validate_fit_args(args(kLeast, {{"cpu", 0}}), "profiles[0].pluginConfig[1].args") ==
          "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight "
          "of cpu not in valid range (0, 100]");
  }
}

TEST_CASE("args: TestValidateLeastAllocatedScoringStrategy and TestValidateMostAllocatedScoringStrategy") {
  for (auto type : {kLeast, kMost}) {
    CAPTURE(sched::scoring_strategy_name(type));
    CHECK(sched::validate_fit_args(args(type, {})).empty());  // default config
    CHECK(sched::validate_fit_args(args(type, {{"cpu", 1}, {"memory", 10}})).empty());
    CHECK(sched::validate_fit_args(args(type, {{"cpu", 0}})) ==
          "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]");
    CHECK(sched::validate_fit_args(args(type, {{"cpu", 101}})) ==
          "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, "
          "100]");
    CHECK(sched::validate_fit_args(args(type, {{"cpu", 0}, {"memory", 101}})) ==
          "[scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, "
          "100], scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of memory not in valid "
          "range (0, 100]]");
  }
}

TEST_CASE("args: TestValidateRequestedToCapacityRatioScoringStrategy") {
  const Shape default_shape = {{30, 3}};
  const auto v = [](std::vector<ResourceSpec> r, Shape s) { return sched::validate_fit_args(args(kRatio, r, s)); };
  const std::string shape = "scoringStrategy.requestedToCapacityRatio.shape";
  CHECK(v({}, {}) == shape + ": Required value: at least one point must be specified");  // no shapes
  CHECK(v({{"cpu", 101}}, default_shape) ==
        "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]");
  CHECK(v({{"cpu", 0}}, default_shape) ==
        "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]");
  CHECK(v({}, default_shape).empty());  // valid shapes
  CHECK(v({}, {{-1, 3}}) == shape + "[0].utilization: Invalid value: -1: not in valid range [0, 100]");
  CHECK(v({}, {{101, 3}}) == shape + "[0].utilization: Invalid value: 101: not in valid range [0, 100]");
  CHECK(v({}, {{10, 3}, {10, 3}}) ==
        shape + "[1].utilization: Invalid value: 10: values must be sorted in increasing order");
  CHECK(v({}, {{10, 3}, {20, 3}, {30, 3}}).empty());  // increasing utilization values
  CHECK(v({}, {{10, 3}, {20, 3}, {15, 3}}) ==
        shape + "[2].utilization: Invalid value: 15: values must be sorted in increasing order");
  CHECK(v({}, {{10, -1}}) == shape + "[0].score: Invalid value: -1: not in valid range [0, 10]");
  CHECK(v({}, {{10, 11}}) == shape + "[0].score: Invalid value: 11: not in valid range [0, 10]");
}

TEST_CASE("args: v1 defaults (SetDefaults_NodeResourcesFitArgs)") {
  FitArgs empty = args(kMost, {});
  sched::set_fit_args_defaults(empty);
  CHECK(empty.resources == kDefaultResources);
  FitArgs unset = args(kLeast, {{"cpu", 0}, {"nvidia.com/gpu", 5}});
  sched::set_fit_args_defaults(unset);
  CHECK(unset.resources == std::vector<ResourceSpec>{{"cpu", 1}, {"nvidia.com/gpu", 5}});
  CHECK(FitArgs{}.resources == kDefaultResources);
  CHECK(FitArgs{}.type == kLeast);
}

TEST_CASE("a profile with MostAllocated packs, the default spreads") {
  // node a already holds 1 cpu / 8Gi of 4 / 32Gi, node b is empty; the pod
  // asks the same. BalancedAllocation gives both 100 (equal fractions), the
  // other scores are equal, so NodeResourcesFit decides: LeastAllocated
  // a 50, b 75; MostAllocated a 50, b 25.
  std::vector<NodeInfo> nodes = {make_node().name("a").info(), make_node().name("b").info()};
  nodes[0].add_pod(make_pod().name("old").cpu("1").memory("8Gi"));
  std::vector<const NodeInfo*> view = {&nodes[0], &nodes[1]};
  const kube::Pod pod = make_pod().cpu("1").memory("8Gi");
  std::mt19937_64 rng(1);
  const sched::Profile spread = sched::Profile::make_default();
  CHECK(sched::schedule_pod(spread, pod, view, rng).node == "b");
  sched::PluginArgs packing;
  packing.fit = args(kMost, kDefaultResources);
  const sched::Profile pack = sched::Profile::make_default(packing);
  CHECK(sched::schedule_pod(pack, pod, view, rng).node == "a");
  const auto* fit = dynamic_cast<const sched::NodeResourcesFit*>(pack.find(sched::PluginId::node_resources_fit));
  REQUIRE(fit != nullptr);
  CHECK(fit->args().type == kMost);
}
