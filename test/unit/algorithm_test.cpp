// One scheduling decision end to end: FitError messages exactly as
// kube-scheduler writes them, the status classification, scoring changing
// the choice, tie-breaking, and spreading.
#include "toysched/sched/algorithm.hpp"
#include "builders.hpp"
#include "profile_fixtures.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace toysched;
using sched::Decision;
using sched::NodeInfo;
using test::default_profile;
using test::make_node;
using test::make_pod;
using test::node_ptrs;
using test::term;

namespace {

Decision run(const kube::Pod& pod, const std::vector<NodeInfo>& nodes, std::uint64_t seed = 1,
             std::vector<sched::NodeScore>* scores = nullptr) {
  std::mt19937_64 rng(seed);
  const auto p = node_ptrs(nodes);
  return sched::schedule_pod(default_profile(), pod, p, rng, scores);
}

}  // namespace

TEST_CASE("FitError: insufficient cpu and an untolerated taint") {
  std::vector<NodeInfo> nodes = {
      make_node().name("n1").cpu("2").info(),
      make_node().name("n2").taint("dedicated", "gpu", "NoSchedule").info(),
      make_node().name("n3").taint("dedicated", "gpu", "NoSchedule").info(),
  };
  nodes[0].add_pod(make_pod().name("x").cpu("1"));
  const auto d = run(make_pod().cpu("2"), nodes);
  CHECK(d.status == Decision::Status::unschedulable);  // n1 could be freed by preemption
  CHECK(d.message == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).");
  CHECK(d.node.empty());
  CHECK(d.evaluated_nodes == 3);
  CHECK(d.feasible_nodes == 0);
}

TEST_CASE("FitError: every node short of cpu") {
  std::vector<NodeInfo> nodes = {
      make_node().name("n1").cpu("2").info(),
      make_node().name("n2").cpu("2").info(),
      make_node().name("n3").cpu("2").info(),
  };
  for (NodeInfo& ni : nodes) ni.add_pod(make_pod().name("x-" + ni.node.name).cpu("1"));
  const auto d = run(make_pod().cpu("1500m"), nodes);
  CHECK(d.status == Decision::Status::unschedulable);
  CHECK(d.message == "0/3 nodes are available: 3 Insufficient cpu.");
}

// Issue 47 item 4: more than a node's whole allocatable is
// UnschedulableAndUnresolvable there (fit.go), so preemption, which looks
// only at the other nodes, has none to look at.
TEST_CASE("FitError: a request larger than every node is unresolvable") {
  const std::vector<NodeInfo> nodes = {
      make_node().name("n1").cpu("1").info(),
      make_node().name("n2").cpu("1").info(),
      make_node().name("n3").cpu("1").info(),
  };
  const auto d = run(make_pod().cpu("1500m"), nodes);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.message == "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST_CASE("FitError: a node with two reasons counts in both; lines sort as strings") {
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(make_node().name("m" + std::to_string(i)).memory("1Gi").info());
  nodes.push_back(make_node().name("c").cpu("1").memory("1Gi").info());
  nodes.push_back(make_node().name("p").pods(0).info());
  const auto d = run(make_pod().cpu("2").memory("2Gi"), nodes);
  // Node "c" fails cpu and memory and counts under both. The lines sort as
  // whole strings in byte order (Go's sort.Strings), count included: ' ' <
  // '1', so "1 Too many pods" comes before "11 Insufficient memory".
  CHECK(d.message == "0/12 nodes are available: 1 Insufficient cpu, 1 Too many pods, 11 Insufficient memory.");

  std::vector<NodeInfo> many;
  for (int i = 0; i < 10; ++i) many.push_back(make_node().name("m" + std::to_string(i)).memory("1Gi").info());
  for (int i = 0; i < 2; ++i)
    many.push_back(make_node().name("t" + std::to_string(i)).taint("k", "v", "NoExecute").info());
  CHECK(run(make_pod().memory("2Gi"), many).message ==
        "0/12 nodes are available: 10 Insufficient memory, 2 node(s) had untolerated taint(s).");
}

TEST_CASE("unresolvable when no failing node could be helped by preemption") {
  const std::vector<NodeInfo> nodes = {
      make_node().name("n1").taint("dedicated", "gpu", "NoSchedule").info(),
      make_node().name("n2").unschedulable().info(),
      make_node().name("n3").label("zone", "b").info(),
  };
  const auto d = run(make_pod().node_selector("zone", "a"), nodes);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.message ==
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint(s), 1 node(s) were unschedulable.");
}

TEST_CASE("FitError: nodes with different untolerated taints count as one reason (upstream v1.35+)") {
  // Upstream's TaintToleration names no taint since v1.35, so nodes
  // tainted differently add up under one text, not one line per taint.
  const std::vector<NodeInfo> nodes = {
      make_node().name("n1").taint("dedicated", "gpu", "NoSchedule").info(),
      make_node().name("n2").taint("spot", "true", "NoExecute").info(),
      make_node().name("n3").taint("dedicated", "db", "NoSchedule").info(),
  };
  const auto d = run(make_pod(), nodes);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.message == "0/3 nodes are available: 3 node(s) had untolerated taint(s).");
}

TEST_CASE("no nodes at all") {
  const auto d = run(make_pod(), {});
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.message == "no nodes available to schedule pods");
}

TEST_CASE("host port conflict is resolvable") {
  std::vector<NodeInfo> nodes = {make_node().name("n1").info()};
  nodes[0].add_pod(make_pod().name("web").host_port(80));
  const auto d = run(make_pod().host_port(80), nodes);
  CHECK(d.status == Decision::Status::unschedulable);
  CHECK(d.message == "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.");
}

TEST_CASE("matchFields metadata.name: other nodes are not evaluated") {
  const std::vector<NodeInfo> nodes = {
      make_node().name("n1").info(),
      make_node().name("n2").cpu("1").info(),
      make_node().name("n3").info(),
  };
  const kube::Pod pinned = make_pod().cpu("2").required(term().field("metadata.name", "In", {"n2"}));
  auto d = run(pinned, nodes);
  CHECK(d.status == Decision::Status::unresolvable);  // n2 has 1 cpu in all
  CHECK(d.evaluated_nodes == 1);
  CHECK(d.message == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].");

  d = run(make_pod().required(term().field("metadata.name", "In", {"n3"})), nodes);
  CHECK(d.status == Decision::Status::scheduled);
  CHECK(d.node == "n3");
  CHECK(d.evaluated_nodes == 1);

  d = run(make_pod().required(term().field("metadata.name", "In", {"n1"}).field("metadata.name", "In", {"n3"})), nodes);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.message == "0/3 nodes are available: pod affinity terms conflict.");
}

TEST_CASE("one feasible node is taken unscored") {
  const std::vector<NodeInfo> nodes = {
      make_node().name("n1").cpu("1").info(),
      make_node().name("n2").info(),
  };
  std::vector<sched::NodeScore> scores{{}};
  const auto d = run(make_pod().cpu("2"), nodes, 1, &scores);
  CHECK(d.status == Decision::Status::scheduled);
  CHECK(d.node == "n2");
  CHECK(d.evaluated_nodes == 2);
  CHECK(d.feasible_nodes == 1);
  CHECK(scores.empty());
}

TEST_CASE("least allocated node wins, with per-plugin scores exposed") {
  std::vector<NodeInfo> nodes = {
      make_node().name("busy").info(),
      make_node().name("idle").info(),
  };
  nodes[0].add_pod(make_pod().name("x").cpu("2").memory("16Gi"));
  std::vector<sched::NodeScore> scores;
  const auto d = run(make_pod().cpu("1").memory("8Gi"), nodes, 1, &scores);
  CHECK(d.node == "idle");
  REQUIRE(scores.size() == 2);
  // busy: cpu (4000−3000)×100/4000 = 25, mem (32−24)/32 → 25; balanced
  //   .5/.5 before, .75/.75 after: 100 both, 50 + (50 + 0) / 2 = 75
  // idle: cpu 75, mem 75; balanced 75 too. No taints: TaintToleration 100 × 3.
  CHECK(scores[0].node == &nodes[0]);
  CHECK(scores[0].of(sched::PluginId::node_resources_fit) == 25);
  CHECK(scores[1].of(sched::PluginId::node_resources_fit) == 75);
  CHECK(scores[0].of(sched::PluginId::balanced_allocation) == 75);
  CHECK(scores[0].of(sched::PluginId::taint_toleration) == 300);
  CHECK(scores[0].of(sched::PluginId::node_affinity) == 0);
  CHECK(scores[0].total == 25 + 75 + 300);
  CHECK(scores[1].total == 75 + 75 + 300);
}

TEST_CASE("preferred node affinity changes the chosen node") {
  std::vector<NodeInfo> nodes = {
      make_node().name("plain").info(),
      make_node().name("ssd").label("disk", "ssd").info(),
  };
  // Make "ssd" the less attractive node by resources: it must still win,
  // by 2 × 100 for affinity against a small LeastAllocated gap.
  nodes[1].add_pod(make_pod().name("x").cpu("1").memory("8Gi"));
  const kube::Pod pod = make_pod().cpu("100m").memory("100Mi").preferred(1, term().expr("disk", "In", {"ssd"}));
  for (std::uint64_t seed = 0; seed < 20; ++seed) CHECK(run(pod, nodes, seed).node == "ssd");
  // Without the preference the emptier node wins.
  CHECK(run(make_pod().cpu("100m").memory("100Mi"), nodes).node == "plain");
}

TEST_CASE("PreferNoSchedule taint steers pods away") {
  std::vector<NodeInfo> nodes = {
      make_node().name("soft").taint("spot", "true", "PreferNoSchedule").info(),
      make_node().name("clean").info(),
  };
  nodes[1].add_pod(make_pod().name("x").cpu("2").memory("16Gi"));
  const kube::Pod pod = make_pod().cpu("100m").memory("100Mi");
  std::vector<sched::NodeScore> scores;
  for (std::uint64_t seed = 0; seed < 20; ++seed) CHECK(run(pod, nodes, seed, &scores).node == "clean");
  CHECK(scores[0].of(sched::PluginId::taint_toleration) == 0);
  CHECK(scores[1].of(sched::PluginId::taint_toleration) == 300);
  // Tolerating it makes the taint count 0 everywhere: back to resources.
  CHECK(run(make_pod().cpu("100m").memory("100Mi").toleration("spot", "Exists", ""), nodes).node == "soft");
}

TEST_CASE("ties: a fixed seed repeats, every tied node is chosen across seeds") {
  const std::vector<NodeInfo> nodes = {
      make_node().name("a").info(),
      make_node().name("b").info(),
      make_node().name("c").info(),
  };
  const kube::Pod pod = make_pod().cpu("100m").memory("500Mi");
  const std::string first = run(pod, nodes, 42).node;
  for (int i = 0; i < 5; ++i) CHECK(run(pod, nodes, 42).node == first);

  std::map<std::string, int> chosen;
  for (std::uint64_t seed = 0; seed < 300; ++seed) ++chosen[run(pod, nodes, seed).node];
  CHECK(chosen.size() == 3);
  for (const auto& [name, n] : chosen) {
    CAPTURE(name);
    CHECK(n > 50);  // 100 expected each; far below that means a bias
  }
}

TEST_CASE("spread: 20 identical pods on 3 identical nodes end 7/7/6") {
  std::vector<NodeInfo> nodes = {
      make_node().name("a").info(),
      make_node().name("b").info(),
      make_node().name("c").info(),
  };
  const auto p = node_ptrs(nodes);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    const kube::Pod pod = make_pod().name("p" + std::to_string(i)).cpu("100m").memory("500Mi");
    const auto d = sched::schedule_pod(default_profile(), pod, p, rng);
    REQUIRE(d.status == Decision::Status::scheduled);
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodeInfo& n) { return n.node.name == d.node; });
    REQUIRE(it != nodes.end());
    it->add_pod(pod);
  }
  std::multiset<int> counts;
  for (const auto& n : nodes) counts.insert(n.pod_count);
  CHECK(counts == std::multiset<int>{6, 7, 7});
}

TEST_CASE("nodes to find: kube-scheduler's percentageOfNodesToScore rule") {
  using sched::feasible_nodes_to_find;
  CHECK(feasible_nodes_to_find(3, 0) == 3);
  CHECK(feasible_nodes_to_find(99, 0) == 99);     // below 100: all
  CHECK(feasible_nodes_to_find(100, 0) == 100);   // 50 %, but at least 100
  CHECK(feasible_nodes_to_find(1000, 0) == 420);  // 50 - 1000/125 = 42 %
  CHECK(feasible_nodes_to_find(5000, 0) == 500);  // 10 %
  CHECK(feasible_nodes_to_find(6000, 0) == 300);  // floor of 5 %
  CHECK(feasible_nodes_to_find(5000, 100) == 5000);
  CHECK(feasible_nodes_to_find(5000, 30) == 1500);
  CHECK(feasible_nodes_to_find(200, 10) == 100);  // at least 100
}

TEST_CASE("a sampled search stops early, goes round robin, and still finds a lone fit") {
  std::vector<std::unique_ptr<sched::NodeInfo>> infos;
  std::vector<const sched::NodeInfo*> view;
  for (int i = 0; i < 1000; ++i) {
    auto ni = std::make_unique<sched::NodeInfo>();
    ni->node = make_node().name("n" + std::to_string(i)).cpu(i == 777 ? "8" : "1").memory("32Gi").pods(110);
    view.push_back(ni.get());
    infos.push_back(std::move(ni));
  }
  std::mt19937_64 rng(1);
  sched::Search search{0, 0};
  kube::Pod small = make_pod().ns("a").name("s").uid("s").cpu("100m");
  auto d = sched::schedule_pod(default_profile(), small, view, rng, nullptr, &search);
  CHECK(d.status == sched::Decision::Status::scheduled);
  CHECK(d.feasible_nodes == 420);
  CHECK(search.next_start > 0);  // the next decision starts where this one stopped
  std::size_t first_start = search.next_start;
  sched::schedule_pod(default_profile(), small, view, rng, nullptr, &search);
  CHECK(search.next_start != first_start);
  kube::Pod big = make_pod().ns("a").name("b").uid("b").cpu("4");
  auto only = sched::schedule_pod(default_profile(), big, view, rng, nullptr, &search);
  REQUIRE(only.status == sched::Decision::Status::scheduled);
  CHECK(only.node == "n777");  // every node was looked at before giving up
  CHECK(only.evaluated_nodes == 1000);
}

TEST_CASE("refuse_unsupported: unresolvable, naming the unsupported field") {
  kube::Pod p = make_pod().name("p");
  p.unsupported.resource_claims = true;
  CHECK(p.unsupported.any());
  const Decision d = sched::refuse_unsupported(p);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(d.node.empty());
  CHECK(d.message ==
        "toy-scheduler does not evaluate spec.resourceClaims: the pod stays pending rather than be bound without it "
        "(--ignore-unsupported-constraints binds it anyway).");
}
