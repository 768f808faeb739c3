// PodTopologySpread Filter: the tables follow upstream's
// podtopologyspread/filtering_test.go (TestSingleConstraint,
// TestMultipleConstraints), each SUBCASE named as the upstream case it
// follows, with the same nodes, pods and expected codes. Upstream runs its
// inclusion-policy cases with the feature enabled; it is GA and locked on
// in v1.36, so every case here runs with it. Upstream names two cases
// "NodeAffinityPolicy ignored with labelSelectors"; the second (it uses
// nodeAffinity) is "... with nodeAffinity" here.
#include "pod_topology_spread_fixtures.hpp"

using namespace toysched;
using namespace toysched::test::spread;
using sched::Code;
using test::make_pod;

namespace {

constexpr Code kOk = Code::success;
constexpr Code kNo = Code::unschedulable;
constexpr Code kNever = Code::unresolvable;

}  // namespace

TEST_CASE("TestSingleConstraint") {
  const auto& nodes = four_nodes();
  SUBCASE("no existing pods") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}});
    CHECK(filter_codes(pod, nodes, {}) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
  }
  SUBCASE("no existing pods, incoming pod doesn't match itself") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kBar}});
    CHECK(filter_codes(pod, nodes, {}) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
  }
  SUBCASE("existing pods in a different namespace do not count") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}});
    const std::vector<kube::Pod> pods = {
        existing("p-a1", "node-a", {{"foo", ""}}, "ns1"), existing("p-b1", "node-a", {{"foo", ""}}, "ns2"),
        existing("p-x1", "node-x", {{"foo", ""}}), existing("p-y1", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}});
  }
  SUBCASE("existing pods do not match null selector") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, std::nullopt}});
    const std::vector<kube::Pod> pods = {existing("p-x1", "node-x", {{"foo", ""}}),
                                         existing("p-y1", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
  }
  SUBCASE("pods spread across zones as 3/3, all nodes fit") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}});
    const std::vector<kube::Pod> pods = {
        existing("p-a1", "node-a", {{"foo", ""}}), existing("p-a2", "node-a", {{"foo", ""}}),
        existing("p-b1", "node-b", {{"foo", ""}}), existing("p-y1", "node-y", {{"foo", ""}}),
        existing("p-y2", "node-y", {{"foo", ""}}), existing("p-y3", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
  }
  SUBCASE("pods spread across zones as 1/2 due to absence of label 'zone' on node-b") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}});
    std::vector<kube::Node> ns = nodes;
    ns[1] = node("node-b", {{"zon", "zone1"}, {"node", "node-b"}});
    const std::vector<kube::Pod> pods = {
        existing("p-a1", "node-a", {{"foo", ""}}), existing("p-b1", "node-b", {{"foo", ""}}),
        existing("p-x1", "node-x", {{"foo", ""}}), existing("p-y1", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, ns, pods) == Codes{{"node-a", kOk}, {"node-b", kNever}, {"node-x", kNo}, {"node-y", kNo}});
  }
  SUBCASE("pod cannot be scheduled as all nodes don't have label 'rack'") {
    const auto pod = incoming({{"foo", ""}}, {{1, "rack", kHard, kFoo}});
    const std::vector<kube::Node> ns = {node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                                        node("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
    CHECK(filter_codes(pod, ns, {}) == Codes{{"node-a", kNever}, {"node-x", kNever}});
  }
}

TEST_CASE("TestSingleConstraint: spread across nodes, node affinity, terminating pods") {
  const auto& nodes = four_nodes();
  SUBCASE("pods spread across nodes as 2/1/0/3, only node-x fits") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}});
    CHECK(filter_codes(pod, nodes, spread_2103()) ==
          Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit") {
    const auto pod = incoming({{"foo", ""}}, {{2, "node", kHard, kFoo}});
    CHECK(filter_codes(pod, nodes, spread_2103()) ==
          Codes{{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("pods spread across nodes as 2/1/0/3, but pod doesn't match itself") {
    const auto pod = incoming({{"bar", ""}}, {{1, "node", kHard, kFoo}});
    CHECK(filter_codes(pod, nodes, spread_2103()) ==
          Codes{{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}},
                              make_pod().required(test::term().expr("node", "In", {"node-a", "node-y"})));
    CHECK(filter_codes(pod, nodes, spread_2103()) ==
          Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("terminating Pods should be excluded") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}});
    const std::vector<kube::Node> ns = {node("node-a", {{"node", "node-a"}}), node("node-b", {{"node", "node-b"}})};
    const std::vector<kube::Pod> pods = {terminating(existing("p-a", "node-a", {{"foo", ""}})),
                                         existing("p-b", "node-b", {{"foo", ""}})};
    CHECK(filter_codes(pod, ns, pods) == Codes{{"node-a", kOk}, {"node-b", kNo}});
  }
  SUBCASE("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}},
                              make_pod().required(test::term().expr("node", "NotIn", {"node-b"})));
    const std::vector<kube::Pod> pods = {existing("p-b1", "node-b", {{"foo", ""}}),
                                         existing("p-b2", "node-b", {{"foo", ""}}),
                                         existing("p-y1", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}});
  }
}

TEST_CASE("TestSingleConstraint: minDomains") {
  const std::vector<kube::Node> abc = {node("node-a", {{"node", "node-a"}}), node("node-b", {{"node", "node-b"}}),
                                       node("node-c", {{"node", "node-c"}})};
  const std::vector<kube::Pod> pods_221 = {
      existing("p-a1", "node-a", {{"foo", ""}}), existing("p-a2", "node-a", {{"foo", ""}}),
      existing("p-b1", "node-b", {{"foo", ""}}), existing("p-b2", "node-b", {{"foo", ""}}),
      existing("p-c1", "node-c", {{"foo", ""}})};
  SUBCASE(
      "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third "
      "node fits") {
    const auto pod = incoming({{"foo", ""}}, {{2, "node", kHard, kFoo, 4}});
    CHECK(filter_codes(pod, abc, pods_221) == Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-c", kOk}});
  }
  SUBCASE(
      "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
      "nodes fit") {
    const auto pod = incoming({{"foo", ""}}, {{2, "node", kHard, kFoo, 2}});
    CHECK(filter_codes(pod, abc, pods_221) == Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-c", kOk}});
  }
  const std::vector<kube::Pod> pods_21 = {existing("p-b1", "node-a", {{"foo", ""}}),
                                          existing("p-b2", "node-b", {{"foo", ""}}),
                                          existing("p-y1", "node-y", {{"foo", ""}})};
  SUBCASE(
      "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
      "fourth nodes fit") {
    const auto pod = incoming({{"foo", ""}}, {{2, "zone", kHard, kFoo, 3}});
    CHECK(filter_codes(pod, four_nodes(), pods_21) ==
          Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}});
  }
  SUBCASE(
      "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes "
      "fit") {
    const auto pod = incoming({{"foo", ""}}, {{2, "zone", kHard, kFoo, 1}});
    CHECK(filter_codes(pod, four_nodes(), pods_21) ==
          Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
  }
}

TEST_CASE("TestSingleConstraint: node inclusion policies") {
  const std::vector<kube::Node> foo_nodes = {
      node("node-a", {{"node", "node-a"}, {"foo", ""}}), node("node-b", {{"node", "node-b"}, {"foo", ""}}),
      node("node-x", {{"node", "node-x"}, {"foo", ""}}), node("node-y", {{"node", "node-y"}})};
  const std::vector<kube::Pod> pods = {existing("p-b1", "node-a", {{"foo", ""}}),
                                       existing("p-b2", "node-b", {{"foo", ""}}),
                                       existing("p-y1", "node-y", {{"foo", ""}})};
  const Codes honored{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}};
  const Codes ignored{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}};
  SUBCASE("NodeAffinityPolicy honored with labelSelectors") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}}, make_pod().node_selector("foo", ""));
    CHECK(filter_codes(pod, foo_nodes, pods) == honored);
  }
  SUBCASE("NodeAffinityPolicy ignored with labelSelectors") {
    const auto pod =
        incoming({{"foo", ""}}, {{1, "node", kHard, kFoo, std::nullopt, kIgnore}}, make_pod().node_selector("foo", ""));
    CHECK(filter_codes(pod, foo_nodes, pods) == ignored);
  }
  SUBCASE("NodeAffinityPolicy honored with nodeAffinity") {
    const auto pod =
        incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}}, make_pod().required(test::term().expr("foo", "In", {""})));
    CHECK(filter_codes(pod, foo_nodes, pods) == honored);
  }
  SUBCASE("NodeAffinityPolicy ignored with nodeAffinity") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo, std::nullopt, kIgnore}},
                              make_pod().required(test::term().expr("foo", "In", {""})));
    CHECK(filter_codes(pod, foo_nodes, pods) == ignored);
  }
  std::vector<kube::Node> tainted = foo_nodes;
  tainted[3] = node("node-y", {{"node", "node-y"}}, true);
  SUBCASE("NodeTaintsPolicy honored") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo, std::nullopt, kHonor, kHonor}});
    CHECK(filter_codes(pod, tainted, pods) == honored);
  }
  SUBCASE("NodeTaintsPolicy ignored") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}});
    CHECK(filter_codes(pod, tainted, pods) == ignored);
  }
}

TEST_CASE("TestMultipleConstraints") {
  const auto& nodes = four_nodes();
  SUBCASE("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}, {1, "node", kHard, kFoo}});
    CHECK(filter_codes(pod, nodes, spread_2103()) ==
          Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}, {1, "node", kHard, kFoo}});
    auto pods = spread_2103();
    pods.push_back(existing("p-y4", "node-y", {{"foo", ""}}));
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}});
  }
  SUBCASE("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]") {
    const auto pod = incoming({{"foo", ""}, {"bar", ""}}, {{1, "zone", kHard, kFoo}, {1, "node", kHard, kBar}});
    const std::vector<kube::Pod> pods = {existing("p-a1", "node-a", {{"foo", ""}}),
                                         existing("p-y1", "node-y", {{"bar", ""}})};
    CHECK(filter_codes(pod, nodes, pods) == Codes{{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}});
  }
  SUBCASE("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}, {1, "node", kHard, kFoo}});
    std::vector<kube::Node> ns = nodes;
    ns[2] = node("node-x", {{"zone", "zone2"}});
    const std::vector<kube::Pod> pods = {existing("p-a1", "node-a", {{"foo", ""}}),
                                         existing("p-y3", "node-y", {{"foo", ""}})};
    CHECK(filter_codes(pod, ns, pods) == Codes{{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNever}, {"node-y", kNo}});
  }
}

TEST_CASE("PodTopologySpread PreFilter skips pods without DoNotSchedule constraints") {
  const World w(four_nodes(), spread_2103());
  sched::PodTopologySpread pl;
  const sched::Cluster cluster(w.all);
  CHECK(pl.pre_filter(make_pod(), cluster).kind == sched::PreFilterResult::Kind::skip);
  const auto soft = incoming({{"foo", ""}}, {{1, "zone", kSoft, kFoo}});
  CHECK(pl.pre_filter(soft, cluster).kind == sched::PreFilterResult::Kind::skip);
  const auto hard = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}});
  CHECK(pl.pre_filter(hard, cluster).kind == sched::PreFilterResult::Kind::run);
}

// matchLabelKeys on a hard constraint: only pods carrying the incoming pod's
// value count. Pods of another revision on node-a do not make it fuller.
TEST_CASE("PodTopologySpread filter: matchLabelKeys narrow the selector") {
  const std::vector<kube::Pod> pods = {existing("old-1", "node-a", {{"foo", ""}, {"rev", "1"}}),
                                       existing("old-2", "node-a", {{"foo", ""}, {"rev", "1"}}),
                                       existing("new-1", "node-x", {{"foo", ""}, {"rev", "2"}})};
  Spread s{1, "node", kHard, kFoo};
  s.match_label_keys = {"rev"};
  const auto pod = incoming({{"foo", ""}, {"rev", "2"}}, {s});
  CHECK(filter_codes(pod, four_nodes(), pods) ==
        Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kOk}});
  // Without matchLabelKeys, node-a's pods count.
  const auto plain = incoming({{"foo", ""}, {"rev", "2"}}, {{1, "node", kHard, kFoo}});
  CHECK(filter_codes(plain, four_nodes(), pods) ==
        Codes{{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kOk}});
  // The apiserver (v1.36) already appended `rev In (2)` to the selector at
  // creation; merging the pair again selects the same pods.
  Spread merged = s;
  merged.selector->match_expressions.push_back(test::req("rev", "In", {"2"}));
  CHECK(filter_codes(incoming({{"foo", ""}, {"rev", "2"}}, {merged}), four_nodes(), pods) ==
        Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kOk}});
}

// An empty selector counts no pod (upstream's selector.Empty() shortcut)
// but matches the incoming pod itself.
TEST_CASE("PodTopologySpread filter: an empty selector counts nothing") {
  const auto pod = incoming({{"foo", ""}}, {{1, "node", kHard, kube::LabelSelector{}}});
  CHECK(filter_codes(pod, four_nodes(), spread_2103()) ==
        Codes{{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}});
}

TEST_CASE("schedule_pod: FitError with PodTopologySpread reasons") {
  std::vector<kube::Node> nodes = {node("n1", {{"zone", "zone1"}}), node("n2", {{"zone", "zone2"}}),
                                   node("n3", {{"rack", "r1"}})};
  nodes[1].allocatable.milli_cpu = 100;  // NodeResourcesFit rejects n2 before PodTopologySpread sees it
  const std::vector<kube::Pod> pods = {existing("a1", "n1", {{"foo", ""}}), existing("a2", "n1", {{"foo", ""}}),
                                       existing("b1", "n2", {{"foo", ""}})};
  const auto pod = incoming({{"foo", ""}}, {{1, "zone", kHard, kFoo}}, make_pod().cpu("500m"));
  const auto d = decide(pod, nodes, pods);
  CHECK(d.status == sched::Decision::Status::unschedulable);
  CHECK(d.message ==
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label).");
}

TEST_CASE("schedule_pod: only missing labels is unresolvable") {
  const std::vector<kube::Node> nodes = {node("n1", {{"zone", "zone1"}}), node("n2", {{"zone", "zone2"}})};
  const auto pod = incoming({{"foo", ""}}, {{1, "rack", kHard, kFoo}});
  const auto d = decide(pod, nodes, {});
  CHECK(d.status == sched::Decision::Status::unresolvable);
  CHECK(d.message ==
        "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints (missing required label).");
}

TEST_CASE("schedule_pod: a hard constraint picks the only node that keeps the skew") {
  const auto d = decide(incoming({{"foo", ""}}, {{1, "node", kHard, kFoo}}), four_nodes(), spread_2103());
  CHECK(d.status == sched::Decision::Status::scheduled);
  CHECK(d.node == "node-x");
}

// The interning table PreFilter/PreScore count by: ids stay stable across
// growth, absent values are kNone, clear starts over.
TEST_CASE("TopologyValueIds: intern, find, grow, clear") {
  sched::TopologyValueIds ids;
  CHECK(ids.find("zone-a") == sched::TopologyValueIds::kNone);
  std::vector<std::uint32_t> got;
  for (int i = 0; i < 1000; ++i) got.push_back(ids.intern("node-" + std::to_string(i)));
  CHECK(ids.size() == 1000);
  for (int i = 0; i < 1000; ++i) {
    CHECK(got[static_cast<std::size_t>(i)] == static_cast<std::uint32_t>(i));
    CHECK(ids.find("node-" + std::to_string(i)) == static_cast<std::uint32_t>(i));
    CHECK(ids.intern("node-" + std::to_string(i)) == static_cast<std::uint32_t>(i));
  }
  CHECK(ids.find("node-1000") == sched::TopologyValueIds::kNone);
  CHECK(ids.intern("") == 1000);  // a missing label reads as ""
  ids.clear();
  CHECK(ids.size() == 0);
  CHECK(ids.find("node-1") == sched::TopologyValueIds::kNone);
  CHECK(ids.intern("node-1") == 0);
}
