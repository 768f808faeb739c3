// Score plugins: exact numbers for worked examples computed by hand with
// upstream's formulas (noderesources/least_allocated.go,
// balanced_allocation.go, tainttoleration, nodeaffinity,
// helper.DefaultNormalizeScore).
#include "builders.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/plugins.hpp"

#include <doctest/doctest.h>

#include <cstdint>
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
  // BalancedAllocation (real requests, including the incoming pod):
  //   f_cpu = 1500 / 4000 = 0.375, f_mem = 6 / 32 = 0.1875
  //   std = |0.375 − 0.1875| / 2 = 0.09375
  //   (1 − 0.09375) × 100 = 90.625 → 90
  NodeInfo ni = make_node().cpu("4").memory("32Gi").info();
  ni.add_pod(make_pod().name("old").cpu("1").memory("4Gi"));
  const kube::Pod pod = make_pod().cpu("500m").memory("2Gi");
  CHECK(sched::score_least_allocated(pod, ni) == 71);
  CHECK(sched::score_balanced_allocation(pod, ni) == 90);
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

TEST_CASE("BalancedAllocation: fractions cap at 1, perfect balance is 100") {
  NodeInfo ni = make_node().cpu("4").memory("4Gi").info();
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1").memory("1Gi"), ni) == 100);
  // f_cpu = min(8/4, 1) = 1, f_mem = 1/4 → std 0.375 → 62.5 → 62
  CHECK(sched::score_balanced_allocation(make_pod().cpu("8").memory("1Gi"), ni) == 62);
  // cpu only: f_mem = 0 → std 0.125 → 87.5 → 87
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1"), ni) == 87);
  // Real requests, not the non-zero ones: a best-effort pod already on the
  // node adds nothing here (it would give cpu 1100/4000 vs memory
  // 1224Mi/4096Mi → 98 if the 100m/200Mi defaults leaked in).
  NodeInfo with_be = make_node().cpu("4").memory("4Gi").info();
  with_be.add_pod(make_pod().name("be"));
  CHECK(sched::score_balanced_allocation(make_pod().cpu("1").memory("1Gi"), with_be) == 100);
  // With only one resource advertised std is 0.
  const NodeInfo cpu_only = make_node().cpu("4").memory("0").info();
  CHECK(sched::score_balanced_allocation(make_pod().cpu("3").memory("1Gi"), cpu_only) == 100);
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
