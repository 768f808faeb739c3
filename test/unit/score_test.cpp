// Score plugins: exact numbers for worked examples computed by hand with
// upstream's formulas (noderesources/least_allocated.go,
// balanced_allocation.go, tainttoleration, nodeaffinity,
// helper.DefaultNormalizeScore).
#include "builders.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/plugins.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

using namespace toysched;
using sched::NodeInfo;
using test::make_node;
using test::make_pod;
using test::term;

TEST_CASE("LeastAllocated and BalancedAllocation: worked example") {
  // Node: 4 cpu, 32Gi. Already on it: 1 cpu, 4Gi. Incoming: 500m, 2Gi.
  //
  // LeastAllocated (non-zero requests, including the incoming pod):
  //   cpu    req = 1000 + 500 = 1500m   (4000 − 1500) × 100 / 4000 = 62 (62.5)
  //   memory req = 4Gi + 2Gi = 6Gi      (32 − 6)Gi × 100 / 32Gi    = 81 (81.25)
  //   mean = (62 + 81) / 2 = 71 (71.5, integer division)
  //
  // BalancedAllocation (real requests), the node's balance with and without the pod:
  //   with:    f_cpu = 1500 / 4000 = 0.375, f_mem = 6 / 32 = 0.1875
  //            std = |0.375 − 0.1875| / 2 = 0.09375 → (1 − std) × 100 = 90.625 → 90
  //   without: f_cpu = 0.25, f_mem = 0.125 → std 0.0625 → 93.75 → 93
  //   50 + (50 + 90 − 93) / 2 = 50 + 23 = 73
  NodeInfo ni = make_node().cpu("4").memory("32Gi").info();
  ni.add_pod(make_pod().name("old").cpu("1").memory("4Gi"));
  const kube::Pod pod = make_pod().cpu("500m").memory("2Gi");
  CHECK(sched::score_least_allocated(pod, ni) == 71);
  CHECK(sched::score_balanced_allocation(pod, ni) == 73);
}

TEST_CASE("LeastAllocated counts missing requests as 100m / 200Mi") {
  // Existing best-effort pod and incoming best-effort pod: 200m, 400Mi.
  //   cpu    (4000 − 200) × 100 / 4000 = 95
  //   memory (32768Mi − 400Mi) × 100 / 32768Mi = 98 (98.77)
  //   mean = (95 + 98) / 2 = 96
  NodeInfo ni = make_node().cpu("4").memory("32Gi").info();
  ni.add_pod(make_pod().name("be"));
  const kube::Pod pod = make_pod();
  CHECK(sched::score_least_allocated(pod, ni) == 96);
  // Upstream skips BalancedAllocation for best-effort pods.
  CHECK(sched::is_best_effort(pod));
  CHECK(sched::score_balanced_allocation(pod, ni) == 0);
}

TEST_CASE("LeastAllocated: over capacity scores 0, an absent resource leaves the mean") {
  NodeInfo ni = make_node().cpu("1").memory("1Gi").info();
  ni.add_pod(make_pod().name("big").cpu("2").memory("512Mi"));
  // cpu over → 0; memory (1024 − 512 − 256) × 100 / 1024 = 25 → (0 + 25) / 2 = 12
  CHECK(sched::score_least_allocated(make_pod().cpu("100m").memory("256Mi"), ni) == 12);

  // No memory advertised: the mean is over cpu alone, (4000 − 1000) × 100 / 4000 = 75.
  const NodeInfo cpu_only = make_node().cpu("4").memory("0").info();
  CHECK(sched::score_least_allocated(make_pod().cpu("1").memory("1Gi"), cpu_only) == 75);
  const NodeInfo nothing = make_node().cpu("0").memory("0").info();
  CHECK(sched::score_least_allocated(make_pod().cpu("1"), nothing) == 0);
}

TEST_CASE("BalancedAllocation: fractions cap at 1, a pod that changes nothing scores 75") {
  NodeInfo ni = make_node().cpu("4").memory("4Gi").info();
  // Balance 100 before and after: 50 + (50 + 0) / 2.
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1").memory("1Gi"), ni) == 75);
  // f_cpu = min(8/4, 1) = 1, f_mem = 1/4 → std 0.375 → 62; 50 + (50 + 62 − 100) / 2 = 56
  CHECK(sched::score_balanced_allocation(make_pod().cpu("8").memory("1Gi"), ni) == 56);
  // cpu only: f_mem = 0 → std 0.125 → 87; 50 + (50 − 13) / 2 = 68
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1"), ni) == 68);
  // Real requests, not the non-zero ones: a best-effort pod already on the
  // node adds nothing here (the 100m/200Mi defaults would unbalance the
  // node before the pod and give 76).
  NodeInfo with_be = make_node().cpu("4").memory("4Gi").info();
  with_be.add_pod(make_pod().name("be"));
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1").memory("1Gi"), with_be) == 75);
  // With only one resource advertised std is 0, before and after.
  const NodeInfo cpu_only = make_node().cpu("4").memory("0").info();
  CHECK(sched::score_balanced_allocation(make_pod().cpu("3").memory("1Gi"), cpu_only) == 75);
}

// balanced_allocation_test.go TestNodeResourcesBalancedAllocation, the
// cases over cpu and memory (the args toy-scheduler accepts). Upstream's
// pods have two containers; their sums are what the plugin reads. Nodes are
// makeNode(name, milliCPU, memory bytes).
TEST_CASE("BalancedAllocation: TestNodeResourcesBalancedAllocation") {
  auto node = [](std::string_view cpu, std::string_view mem) { return make_node().cpu(cpu).memory(mem).info(); };
  // Both containers: 1000m/2000 + 2000m/3000.
  const kube::Pod both = make_pod().cpu("3").memory("5000");
  auto scores = [](const kube::Pod& pod, const std::vector<NodeInfo>& nodes) {
    std::vector<std::int64_t> out;
    for (const NodeInfo& ni : nodes) out.push_back(sched::score_balanced_allocation(pod, ni));
    return out;
  };
  using Scores = std::vector<std::int64_t>;
  SUBCASE("nothing scheduled, nothing requested, skip in PreScore") {
    sched::BalancedAllocation plugin;
    const kube::Pod pod = make_pod();
    const std::vector<NodeInfo> nodes = {node("4", "10000"), node("4", "10000")};
    std::vector<const NodeInfo*> feasible = {&nodes[0], &nodes[1]};
    CHECK_FALSE(plugin.pre_score(pod, feasible, sched::Cluster(feasible)));
  }
  SUBCASE("nothing scheduled, resources requested, differently sized nodes") {
    CHECK(scores(both, {node("4", "10000"), node("6", "10000")}) == Scores{68, 75});
  }
  SUBCASE("resources requested, pods scheduled with resources") {
    std::vector<NodeInfo> nodes = {node("10", "20000"), node("10", "20000")};
    nodes[0].add_pod(make_pod().name("a").cpu("3"));
    nodes[1].add_pod(make_pod().name("b").cpu("3").memory("5000"));
    CHECK(scores(both, nodes) == Scores{73, 74});
  }
  SUBCASE("resources requested, pods scheduled with resources, differently sized nodes") {
    std::vector<NodeInfo> nodes = {node("10", "20000"), node("10", "50000")};
    nodes[0].add_pod(make_pod().name("a").cpu("3"));
    nodes[1].add_pod(make_pod().name("b").cpu("3").memory("5000"));
    CHECK(scores(both, nodes) == Scores{73, 70});
  }
  SUBCASE("resources requested, pods scheduled with resources, nodes to reach min/max score") {
    std::vector<NodeInfo> nodes = {node("3", "5000"), node("3", "5000")};
    nodes[0].add_pod(make_pod().name("a").cpu("3"));
    CHECK(scores(make_pod().memory("5000"), nodes) == Scores{100, 50});
  }
  SUBCASE("requested resources at node capacity") {
    std::vector<NodeInfo> nodes = {node("6", "10000"), node("6", "10000")};
    nodes[0].add_pod(make_pod().name("a").cpu("3"));
    nodes[1].add_pod(make_pod().name("b").cpu("3").memory("5000"));
    CHECK(scores(make_pod().cpu("3"), nodes) == Scores{62, 62});
  }
  SUBCASE("scalar resource is not included in the score computation if pod doesn't request the scalar resource") {
    std::vector<NodeInfo> nodes = {make_node().cpu("3500m").memory("40000").extended("nvidia.com/gpu", "8").info(),
                                   node("3500m", "40000")};
    CHECK(scores(both, nodes) == Scores{56, 56});
  }
}

// Issue 47's probe, where the pre-1.36 rule (the balance after the pod
// alone) picks the first node: 10 CPU / 10Gi each; a 10m / 2Gi pod.
//   first  (2 CPU, 2Gi on it): without 100; with f .201/.4 → 90 → 50 + (50 − 10) / 2 = 70
//   second (4 CPU, 1Mi on it): without .4/.0001 → 80; with .401/.2001 → 89 → 50 + (50 + 9) / 2 = 79
// LeastAllocated gives both 69, so the second wins.
TEST_CASE("BalancedAllocation: the node whose balance the pod improves wins") {
  NodeInfo first = make_node().name("first").cpu("10").memory("10Gi").info();
  NodeInfo second = make_node().name("second").cpu("10").memory("10Gi").info();
  first.add_pod(make_pod().name("a").cpu("2").memory("2Gi"));
  second.add_pod(make_pod().name("b").cpu("4").memory("1Mi"));
  const kube::Pod probe = make_pod().cpu("10m").memory("2Gi");
  CHECK(sched::score_balanced_allocation(probe, first) == 70);
  CHECK(sched::score_balanced_allocation(probe, second) == 79);
  CHECK(sched::score_least_allocated(probe, first) == 69);
  CHECK(sched::score_least_allocated(probe, second) == 69);
}

// BalancedAllocation::score takes two nodes at a time where every value is
// in the range it computes exactly (requests in [0, 2^52), allocatable in
// [1, 2^52)) and the one-node formula elsewhere; both must give, for every
// node, what score_balanced_allocation (upstream's steps) gives: a node
// without cpu or memory, fractions capped at 1, values at and over 2^52,
// odd counts, a pair split between the two paths.
namespace {

std::int64_t pick(std::mt19937_64& rng, std::initializer_list<std::int64_t> special, std::int64_t below) {
  std::uniform_int_distribution<std::size_t> which(0, special.size());
  const std::size_t k = which(rng);
  if (k < special.size()) return special.begin()[k];
  return std::uniform_int_distribution<std::int64_t>(0, below - 1)(rng);
}

std::vector<NodeInfo> random_nodes(std::mt19937_64& rng, int count) {
  constexpr std::int64_t k2_52 = std::int64_t{1} << 52;
  std::vector<NodeInfo> nodes(static_cast<std::size_t>(count));
  for (NodeInfo& ni : nodes) {
    ni.node.allocatable.milli_cpu = pick(rng, {0, 1, 3500, 4000, 64000, k2_52, k2_52 + 1}, 1 << 20);
    ni.node.allocatable.memory = pick(rng, {0, 1, 5000, 32 * (std::int64_t{1} << 30), k2_52, k2_52 + 1}, k2_52);
    // Mostly below what is allocatable, some over (capped at 1), some huge.
    const std::int64_t cpu_top = std::max<std::int64_t>(ni.node.allocatable.milli_cpu, 1000) * 3 / 2;
    const std::int64_t mem_top = std::max<std::int64_t>(ni.node.allocatable.memory, 1000) * 3 / 2;
    ni.requested.milli_cpu = pick(rng, {0, 1, 100, k2_52 - 1, k2_52, -1}, cpu_top);
    ni.requested.memory = pick(rng, {0, 1, 524288000, k2_52 - 1, k2_52, -1}, mem_top);
  }
  return nodes;
}

void check_score_agrees(sched::BalancedAllocation& plugin, const kube::Pod& pod,
                        std::span<const NodeInfo* const> nodes) {
  std::vector<std::int64_t> out(nodes.size(), -1);
  plugin.score(pod, nodes, out);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    CAPTURE(i);
    CAPTURE(nodes[i]->requested.milli_cpu);
    CAPTURE(nodes[i]->requested.memory);
    CAPTURE(nodes[i]->node.allocatable.milli_cpu);
    CAPTURE(nodes[i]->node.allocatable.memory);
    CHECK(out[i] == sched::score_balanced_allocation(pod, *nodes[i]));
  }
}

}  // namespace

TEST_CASE("BalancedAllocation::score agrees with the one-node formula, node by node") {
  std::mt19937_64 rng(47);
  const std::vector<NodeInfo> nodes = random_nodes(rng, 4001);
  std::vector<const NodeInfo*> all;
  for (const NodeInfo& ni : nodes) all.push_back(&ni);
  constexpr std::int64_t k2_52 = std::int64_t{1} << 52;
  const std::vector<kube::Pod> pods = {
      make_pod().cpu("100m").memory("500Mi"),
      make_pod().cpu("3").memory("5000"),
      make_pod().cpu("1"),
      make_pod().memory("1Gi"),
      make_pod().cpu("10m").memory("2Gi"),
      make_pod().cpu("8").memory("1Gi"),
  };
  sched::BalancedAllocation plugin;
  for (const kube::Pod& pod : pods) {
    check_score_agrees(plugin, pod, all);
    check_score_agrees(plugin, pod, std::span<const NodeInfo* const>(all).subspan(1));  // the other pairs
    for (std::size_t n = 0; n <= 3; ++n)
      check_score_agrees(plugin, pod, std::span<const NodeInfo* const>(all).first(n));
  }
  // A request at or over 2^52 (only the one-node formula) and just under it.
  for (std::int64_t mem : {k2_52 - 1, k2_52}) {
    kube::Pod pod = make_pod().cpu("1");
    pod.requests.memory = mem;
    check_score_agrees(plugin, pod, all);
  }
  // scheduler_perf's shapes, as cycle-bench runs them: 4 CPU / 32Gi nodes
  // holding 0 to 110 pods of 100m / 500Mi.
  std::vector<NodeInfo> bench(111, make_node().cpu("4").memory("32Gi").info());
  std::vector<const NodeInfo*> bench_view;
  for (std::size_t k = 0; k < bench.size(); ++k) {
    bench[k].requested.milli_cpu = 100 * static_cast<std::int64_t>(k);
    bench[k].requested.memory = 500 * 1024 * 1024 * static_cast<std::int64_t>(k);
    bench_view.push_back(&bench[k]);
  }
  check_score_agrees(plugin, pods[0], bench_view);
}

TEST_CASE("TaintToleration score counts intolerable PreferNoSchedule taints") {
  const NodeInfo ni = make_node()
                          .taint("a", "1", "PreferNoSchedule")
                          .taint("b", "2", "PreferNoSchedule")
                          .taint("c", "3", "NoSchedule")
                          .info();
  CHECK(sched::count_intolerable_prefer_no_schedule(make_pod(), ni) == 2);
  CHECK(sched::count_intolerable_prefer_no_schedule(make_pod().toleration("a", "Equal", "1"), ni) == 1);
  CHECK(sched::count_intolerable_prefer_no_schedule(make_pod().toleration("a", "Exists", "", "PreferNoSchedule"), ni) ==
        1);
  // A toleration for another effect does not count.
  CHECK(sched::count_intolerable_prefer_no_schedule(make_pod().toleration("a", "Exists", "", "NoSchedule"), ni) == 2);
  CHECK(sched::count_intolerable_prefer_no_schedule(make_pod().toleration("", "Exists", ""), ni) == 0);
}

TEST_CASE("NodeAffinity score sums the weights of matching preferred terms") {
  const NodeInfo ni = make_node().label("zone", "a").label("disk", "ssd").info();
  const kube::Pod pod = make_pod()
                            .preferred(10, term().expr("zone", "In", {"a"}))
                            .preferred(5, term().expr("disk", "In", {"hdd"}))
                            .preferred(30, term().expr("disk", "Exists"))
                            .preferred(50, term());  // empty term: matches nothing
  CHECK(sched::preferred_affinity_sum(pod, ni) == 40);
}

TEST_CASE("DefaultNormalizeScore") {
  std::vector<std::int64_t> v{0, 1, 2};
  sched::default_normalize_score(v, 100, /*reverse=*/true);
  CHECK(v == std::vector<std::int64_t>{100, 50, 0});

  v = {3, 7, 0};
  sched::default_normalize_score(v, 100, false);
  CHECK(v == std::vector<std::int64_t>{42, 100, 0});  // 300 / 7 = 42

  v = {0, 0};
  sched::default_normalize_score(v, 100, false);
  CHECK(v == std::vector<std::int64_t>{0, 0});
  sched::default_normalize_score(v, 100, true);
  CHECK(v == std::vector<std::int64_t>{100, 100});
}
