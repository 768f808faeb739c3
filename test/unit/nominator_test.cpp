// Nominated pods (nominator.hpp): a pod a preemption made room for keeps
// that room against pods of lower or equal priority until it is decided on,
// tries its node first, and counts when the next preemption looks there.
#include "toysched/sched/nominator.hpp"
#include "builders.hpp"
#include "profile_fixtures.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/preemption.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

using namespace toysched;
using sched::Decision;
using test::make_node;
using test::make_pod;

namespace {

const kube::TimePoint kNow = kube::TimePoint{} + std::chrono::hours(24 * 365 * 50);

struct World {
  sched::Cache cache;
  sched::Nominator nominator;

  Decision decide(const kube::Pod& p, std::uint64_t seed = 1) {
    sched::Cluster cluster = cache.cluster();
    if (!nominator.empty()) cluster.nominated = &nominator;
    std::mt19937_64 rng(seed);
    return sched::schedule_pod(test::default_profile(), p, cluster, rng);
  }
  sched::PreemptionResult preempt(const kube::Pod& p) {
    sched::Cluster cluster = cache.cluster();
    if (!nominator.empty()) cluster.nominated = &nominator;
    std::mt19937_64 rng(1);
    const Decision d = sched::schedule_pod(test::default_profile(), p, cluster, rng);
    REQUIRE(d.status != Decision::Status::scheduled);
    return sched::preempt(test::default_profile(), p, cluster, d.status == Decision::Status::unresolvable, rng, kNow);
  }
};

}  // namespace

TEST_CASE("Nominator: a nomination moves, ends, and counts only for pods it outranks or equals") {
  sched::Nominator n;
  const kube::Pod hi = make_pod().name("hi").cpu("1").priority(100).obj();
  n.nominate(hi, "n1");
  CHECK(n.node_of(hi.uid) == "n1");
  n.nominate(hi, "n2");
  CHECK(n.node_of(hi.uid) == "n2");
  CHECK(n.size() == 1);

  const auto counted = [&](const kube::Pod& p, const std::string& node) {
    std::vector<std::string> out;
    for (const kube::Pod* q : n.counted_on(p, node)) out.push_back(q->name);
    return out;
  };
  const std::vector<std::string> just_hi{"hi"};
  CHECK(counted(make_pod().name("low").priority(0).obj(), "n1").empty());
  CHECK(counted(make_pod().name("low").priority(0).obj(), "n2") == just_hi);
  CHECK(counted(make_pod().name("equal").priority(100).obj(), "n2") == just_hi);
  CHECK(counted(make_pod().name("higher").priority(101).obj(), "n2").empty());
  CHECK(counted(hi, "n2").empty());  // never counted against itself

  n.nominate(hi, "");
  CHECK(n.empty());
  CHECK(n.node_of(hi.uid).empty());
  n.nominate(hi, "n1");
  n.remove(hi.uid);
  CHECK(n.empty());
  CHECK(counted(make_pod().name("low").obj(), "n1").empty());
}

TEST_CASE("Nominator: the pods a preemptor outranks on a node are those nominated there of strictly lower priority") {
  sched::Nominator n;
  n.nominate(make_pod().name("low").priority(10).obj(), "n1");
  n.nominate(make_pod().name("equal").priority(100).obj(), "n1");
  n.nominate(make_pod().name("high").priority(1000).obj(), "n1");
  n.nominate(make_pod().name("elsewhere").priority(10).obj(), "n2");
  const auto outranked = [&](const std::string& node, std::int32_t priority) {
    std::vector<std::string> out;
    for (const kube::Pod* q : n.outranked_on(node, priority)) out.push_back(q->name);
    return out;
  };
  CHECK(outranked("n1", 100) == std::vector<std::string>{"low"});
  CHECK(outranked("n1", 1001) == std::vector<std::string>{"low", "equal", "high"});
  CHECK(outranked("n1", 10).empty());
  CHECK(outranked("n3", 1000).empty());
}

TEST_CASE("A nominated pod keeps its room from pods of lower or equal priority, not from higher ones") {
  World w;
  w.cache.add_node(make_node().name("n1").cpu("1").obj());
  w.nominator.nominate(make_pod().name("preemptor").cpu("600m").priority(100).obj(), "n1");

  const Decision low = w.decide(make_pod().name("replacement").cpu("500m").priority(1).obj());
  CHECK(low.status == Decision::Status::unschedulable);
  CHECK(low.message == "0/1 nodes are available: 1 Insufficient cpu.");
  CHECK(w.decide(make_pod().name("equal").cpu("500m").priority(100).obj()).status == Decision::Status::unschedulable);
  const Decision high = w.decide(make_pod().name("critical").cpu("500m").priority(1000).obj());
  CHECK(high.status == Decision::Status::scheduled);
  CHECK(high.node == "n1");
  // A pod that fits beside it still goes there.
  CHECK(w.decide(make_pod().name("small").cpu("400m").priority(1).obj()).status == Decision::Status::scheduled);
}

TEST_CASE("A nominated pod tries its node first and takes it if it fits, unscored") {
  World w;
  w.cache.add_node(make_node().name("busy").cpu("4").obj());
  w.cache.add_node(make_node().name("empty").cpu("4").obj());
  w.cache.add_pod(make_pod().name("filler").cpu("3").node_name("busy").obj());
  const kube::Pod pod = make_pod().name("preemptor").cpu("1").priority(100).obj();
  // LeastAllocated would choose "empty" every time.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) CHECK(w.decide(pod, seed).node == "empty");
  kube::Pod nominated = pod;
  nominated.nominated_node_name = "busy";
  w.nominator.nominate(nominated, "busy");
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Decision d = w.decide(nominated, seed);
    CHECK(d.node == "busy");
    CHECK(d.evaluated_nodes == 1);
  }
  // No longer fits there: the search goes on over every node.
  w.cache.add_pod(make_pod().name("filler-2").cpu("1").node_name("busy").obj());
  const Decision d = w.decide(nominated);
  CHECK(d.node == "empty");
  CHECK(d.evaluated_nodes == 2);
}

TEST_CASE("Preemption counts the nominated pods it cannot evict") {
  World w;
  w.cache.add_node(make_node().name("n1").cpu("2").obj());
  w.cache.add_pod(make_pod().name("low-a").cpu("500m").priority(0).node_name("n1").obj());
  w.cache.add_pod(make_pod().name("low-b").cpu("500m").priority(0).node_name("n1").obj());
  // 1 cpu free; a pod of priority 100 already nominated here for 1 cpu.
  w.nominator.nominate(make_pod().name("first").cpu("1").priority(100).obj(), "n1");

  SUBCASE("a pod of priority 50 needs both victims: the nominated pod's room is not its to take") {
    const auto r = w.preempt(make_pod().name("second").cpu("1").priority(50).obj());
    REQUIRE(r.outcome == sched::PreemptionResult::Outcome::nominated);
    CHECK(r.victims.size() == 2);
  }
  SUBCASE("a pod of priority 50 needing more than the node less the nominated pod: no candidate") {
    const auto r = w.preempt(make_pod().name("big").cpu("1500m").priority(50).obj());
    CHECK(r.outcome == sched::PreemptionResult::Outcome::no_candidate);
  }
}
