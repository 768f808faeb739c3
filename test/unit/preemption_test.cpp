// Preemption's decision (preemption.hpp) over a Cache, through the default
// profile: which node, which victims, and upstream's PostFilter messages
// (framework/preemption/preemption.go, plugins/defaultpreemption).
#include "toysched/sched/preemption.hpp"
#include "builders.hpp"
#include "pod_topology_spread_fixtures.hpp"
#include "profile_fixtures.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/cache.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

using namespace toysched;
using sched::PreemptionResult;
using test::make_node;
using test::make_pod;
using Outcome = PreemptionResult::Outcome;

namespace {

const kube::TimePoint kNow = kube::TimePoint{} + std::chrono::hours(24 * 365 * 50);

// A cluster in a Cache, and the preemption for a pod that did not fit.
// The PodDisruptionBudgets a test's cluster has, and nothing else.
class Budgets final : public sched::ClusterObjects {
 public:
  void add(kube::PodDisruptionBudget b) {
    all_.push_back(std::make_unique<kube::PodDisruptionBudget>(std::move(b)));
    ptrs_.push_back(all_.back().get());
  }
  const kube::StringPairs* namespace_labels(std::string_view /*ns*/) const override { return nullptr; }
  kube::LabelSelector default_selector(const kube::Pod& /*pod*/) const override { return {}; }
  std::span<const kube::PodDisruptionBudget* const> pdbs() const override { return ptrs_; }

 private:
  std::vector<std::unique_ptr<kube::PodDisruptionBudget>> all_;
  std::vector<const kube::PodDisruptionBudget*> ptrs_;
};

// A budget over pods labelled app=APP in namespace default.
kube::PodDisruptionBudget budget(std::string app, std::int32_t allowed, std::vector<std::string> disrupted = {}) {
  kube::PodDisruptionBudget b;
  b.ns = "default";
  b.name = "pdb-" + app;
  b.selector = kube::LabelSelector{};
  b.selector->match_labels = {{"app", std::move(app)}};
  b.disruptions_allowed = allowed;
  b.disrupted_pods = std::move(disrupted);
  return b;
}

struct World {
  sched::Cache cache;
  Budgets budgets;

  void node(kube::Node n) { cache.add_node(n); }
  // A bound pod on `node_name`.
  void pod(test::PodBuilder b, const std::string& node_name) { cache.add_pod(b.node_name(node_name).obj()); }

  // The decision first, as the scheduler runs it: preemption only follows a failure.
  PreemptionResult preempt(const kube::Pod& p, std::uint64_t seed = 1) {
    sched::Cluster cluster = cache.cluster();
    cluster.objects = &budgets;
    std::mt19937_64 rng(seed);
    const sched::Decision d = sched::schedule_pod(test::default_profile(), p, cluster, rng);
    REQUIRE(d.status != sched::Decision::Status::scheduled);
    return sched::preempt(test::default_profile(), p, cluster, d.status == sched::Decision::Status::unresolvable, rng,
                          kNow);
  }
};

std::vector<std::string> names(const PreemptionResult& r) {
  std::vector<std::string> out;
  for (const kube::Pod* p : r.victims) out.push_back(p->name);
  return out;
}

}  // namespace

TEST_CASE("Preemption: the fewest, least important victims on the node that costs least") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.node(make_node().name("n2").cpu("4"));
  // n1: four 1-cpu pods; n2: two 2-cpu pods; all priority 0.
  for (int i = 0; i < 4; ++i) w.pod(make_pod().name("small-" + std::to_string(i)).cpu("1"), "n1");
  for (int i = 0; i < 2; ++i) w.pod(make_pod().name("big-" + std::to_string(i)).cpu("2"), "n2");

  SUBCASE("two victims on n1 against one on n2: the smaller sum of priorities wins") {
    const auto r = w.preempt(make_pod().name("hi").cpu("2").priority(100));
    CHECK(r.outcome == Outcome::nominated);
    CHECK(r.node == "n2");
    CHECK(r.victims.size() == 1);
    CHECK(r.message.empty());
  }
  SUBCASE("one cpu: one victim on either node; n1's 1-cpu pod and n2's 2-cpu pod tie on every count") {
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(100));
    CHECK(r.outcome == Outcome::nominated);
    CHECK(r.victims.size() == 1);
  }
}

TEST_CASE("Preemption: the node whose most important victim matters least") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.node(make_node().name("n2").cpu("4"));
  w.pod(make_pod().name("fifty").cpu("4").priority(50), "n1");
  w.pod(make_pod().name("ten").cpu("4").priority(10), "n2");
  const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(100));
  CHECK(r.node == "n2");
  CHECK(names(r) == std::vector<std::string>{"ten"});
}

TEST_CASE("Preemption: the victims that can stay, the most important first, stay") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.pod(make_pod().name("five").cpu("2").priority(5), "n1");
  w.pod(make_pod().name("one").cpu("2").priority(1), "n1");
  w.pod(make_pod().name("zero").cpu("0").priority(0), "n1");  // takes no cpu: reprieved
  const auto r = w.preempt(make_pod().name("hi").cpu("2").priority(10));
  CHECK(r.outcome == Outcome::nominated);
  CHECK(names(r) == std::vector<std::string>{"one"});
}

TEST_CASE("Preemption: victims listed most important first") {
  World w;
  w.node(make_node().name("n1").cpu("3"));
  w.pod(make_pod().name("low").cpu("1").priority(1), "n1");
  w.pod(make_pod().name("mid").cpu("1").priority(2), "n1");
  w.pod(make_pod().name("top").cpu("1").priority(3), "n1");
  const auto r = w.preempt(make_pod().name("hi").cpu("3").priority(10));
  CHECK(names(r) == std::vector<std::string>{"top", "mid", "low"});
}

TEST_CASE("Preemption: equal priority never preempts") {
  World w;
  w.node(make_node().name("n1").cpu("2"));
  w.pod(make_pod().name("peer").cpu("2").priority(10), "n1");
  const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10));
  CHECK(r.outcome == Outcome::no_candidate);
  CHECK(r.message == "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
}

TEST_CASE("Preemption: preemptionPolicy Never preempts nothing") {
  World w;
  w.node(make_node().name("n1").cpu("2"));
  w.pod(make_pod().name("low").cpu("2"), "n1");
  const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(100).preempt_never());
  CHECK(r.outcome == Outcome::not_eligible);
  CHECK(r.victims.empty());
  CHECK(r.message == "preemption: not eligible due to preemptionPolicy=Never.");
}

TEST_CASE("Preemption: a profile without DefaultPreemption preempts nothing and says nothing") {
  World w;
  w.node(make_node().name("n1").cpu("2"));
  w.pod(make_pod().name("low").cpu("2"), "n1");
  sched::Profile off = sched::Profile::make_default();
  off.set_preemption(std::nullopt);
  const kube::Pod hi = make_pod().name("hi").cpu("1").priority(100);
  std::mt19937_64 rng(1);
  const auto r = sched::preempt(off, hi, w.cache.cluster(), false, rng, kNow);
  CHECK(r.outcome == Outcome::no_candidate);
  CHECK(r.victims.empty());
  CHECK(r.message.empty());
}

TEST_CASE("Preemption: only nodes evicting can help are examined") {
  World w;
  w.node(make_node().name("tainted").cpu("2").taint("dedicated", "x", "NoSchedule"));
  w.pod(make_pod().name("low-t").cpu("2"), "tainted");

  SUBCASE("a taint: not helpful") {
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(100));
    CHECK(r.outcome == Outcome::no_candidate);
    CHECK(r.message == "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  }
  SUBCASE("beside a node it can free") {
    w.node(make_node().name("free-able").cpu("2"));
    w.pod(make_pod().name("low-f").cpu("2"), "free-able");
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(100));
    CHECK(r.node == "free-able");
    CHECK(names(r) == std::vector<std::string>{"low-f"});
  }
}

TEST_CASE("Preemption: a node that stays too small once every lower pod is gone says why") {
  World w;
  w.node(make_node().name("n1").cpu("2"));
  w.node(make_node().name("n2").cpu("2"));
  w.pod(make_pod().name("keep").cpu("1").priority(50), "n1");
  w.pod(make_pod().name("low").cpu("1"), "n1");
  w.pod(make_pod().name("peer").cpu("2").priority(50), "n2");
  const auto r = w.preempt(make_pod().name("hi").cpu("2").priority(50));
  CHECK(r.outcome == Outcome::no_candidate);
  CHECK(r.message ==
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod.");
}

TEST_CASE("Preemption: host ports are freed too") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.pod(make_pod().name("web").cpu("1").host_port(80), "n1");
  w.pod(make_pod().name("other").cpu("1"), "n1");
  const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10).host_port(80));
  CHECK(names(r) == std::vector<std::string>{"web"});
}

TEST_CASE("Preemption: ties go to the node whose most important victims started last") {
  World w;
  w.node(make_node().name("n1").cpu("1"));
  w.node(make_node().name("n2").cpu("1"));
  w.pod(make_pod().name("old").cpu("1").started(kNow - std::chrono::hours(2)), "n1");
  w.pod(make_pod().name("young").cpu("1").started(kNow - std::chrono::hours(1)), "n2");
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {  // whichever node the search starts at
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10), seed);
    CHECK(r.node == "n2");
  }
}

TEST_CASE("Preemption: a pod waits for the victims of its last preemption") {
  World w;
  w.node(make_node().name("n1").cpu("2"));
  w.node(make_node().name("n2").cpu("2"));
  w.pod(make_pod().name("going").cpu("2").terminating_by_preemption(), "n1");
  w.pod(make_pod().name("low").cpu("2"), "n2");

  SUBCASE("nominated to n1: not eligible") {
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10).nominated("n1"));
    CHECK(r.outcome == Outcome::not_eligible);
    CHECK(r.message == "preemption: not eligible due to a terminating pod on the nominated node.");
  }
  SUBCASE("not nominated: it preempts (a terminating pod is a victim like any)") {
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10));
    CHECK(r.outcome == Outcome::nominated);
  }
  SUBCASE("nominated to a node that can no longer take it: eligible again") {
    const auto r = w.preempt(make_pod().name("hi").cpu("1").priority(10).nominated("n1").node_selector("x", "y"));
    CHECK(r.outcome == Outcome::no_candidate);
    CHECK(r.message == "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  }
}

// test/e2e/scheduling/preemption.go "PodTopologySpread Preemption": one
// victim would free the resources, but the spread needs a second one gone.
TEST_CASE("Preemption: PreFilter's spread counts move as victims are removed and put back") {
  World w;
  for (const char* n : {"a", "b"}) w.node(make_node().name(n).extended("example.com/res", "10").label("spread", n));
  w.pod(make_pod().name("high").label("app", "x").extended("example.com/res", "9").priority(1000), "a");
  for (int i = 1; i <= 3; ++i) {
    w.pod(make_pod()
              .name("low-" + std::to_string(i))
              .label("app", "x")
              .extended("example.com/res", "3")
              .priority(1)
              .started(kNow - std::chrono::minutes(i)),
          "b");
  }
  kube::Pod medium = make_pod().name("medium").label("app", "x").extended("example.com/res", "3").priority(100);
  kube::TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = "spread";
  c.when_unsatisfiable = kube::WhenUnsatisfiable::do_not_schedule;
  c.label_selector = test::spread::exists("app");
  medium.topology_spread.push_back(c);

  const auto r = w.preempt(medium);
  REQUIRE(r.outcome == Outcome::nominated);
  CHECK(r.node == "b");
  // Most important kept: low-3 started first; [high] [medium, low-3].
  CHECK(names(r) == std::vector<std::string>{"low-2", "low-1"});
}

TEST_CASE("Preemption: PreFilter's pod anti-affinity counts move as victims are removed") {
  World w;
  for (const char* n : {"n1", "n2"}) w.node(make_node().name(n).cpu("4"));  // labelled with its hostname
  w.pod(make_pod().name("web-low").label("app", "web").cpu("1").priority(1), "n1");
  w.pod(make_pod().name("web-high").label("app", "web").cpu("1").priority(1000), "n2");
  kube::Pod loner = make_pod().name("loner").cpu("1").priority(100);
  kube::PodAffinityTerm away;
  away.label_selector = kube::LabelSelector{};
  away.label_selector->match_labels = {{"app", "web"}};
  away.topology_key = "kubernetes.io/hostname";
  loner.pod_anti_affinity.required.push_back(away);

  const auto r = w.preempt(loner);
  REQUIRE(r.outcome == Outcome::nominated);
  CHECK(r.node == "n1");
  CHECK(names(r) == std::vector<std::string>{"web-low"});
}

TEST_CASE("Preemption: a PodDisruptionBudget steers the choice of node") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.node(make_node().name("n2").cpu("4"));
  for (int i = 1; i <= 2; ++i) {
    w.pod(make_pod().name("guarded-" + std::to_string(i)).label("app", "guarded").cpu("2").priority(10), "n1");
    w.pod(make_pod().name("mid-" + std::to_string(i)).label("app", "mid").cpu("2").priority(500), "n2");
  }
  const kube::Pod hi = make_pod().name("hi").cpu("2").priority(1000);

  SUBCASE("no budget: the least important victim, on n1") {
    const auto r = w.preempt(hi);
    CHECK(r.node == "n1");
    CHECK(r.pdb_violations == 0);
  }
  SUBCASE("n1's pods may not be disrupted: n2 pays, with no violation") {
    w.budgets.add(budget("guarded", 0));
    const auto r = w.preempt(hi);
    CHECK(r.node == "n2");
    CHECK(r.victims.size() == 1);
    CHECK(r.pdb_violations == 0);
  }
  SUBCASE("one disruption allowed: n1 again") {
    w.budgets.add(budget("guarded", 1));
    CHECK(w.preempt(hi).node == "n1");
  }
  SUBCASE("a pod the budget already counts as disrupted is no violation") {
    w.budgets.add(budget("guarded", 0, {"guarded-1", "guarded-2"}));
    CHECK(w.preempt(hi).node == "n1");
  }
  SUBCASE("a budget in another namespace, or with an empty selector, covers nothing") {
    kube::PodDisruptionBudget elsewhere = budget("guarded", 0);
    elsewhere.ns = "other";
    w.budgets.add(elsewhere);
    kube::PodDisruptionBudget everything = budget("guarded", 0);
    everything.selector = kube::LabelSelector{};
    w.budgets.add(everything);
    CHECK(w.preempt(hi).node == "n1");
  }
}

TEST_CASE("Preemption: violating victims are put back first, and counted when they still go") {
  World w;
  w.node(make_node().name("n1").cpu("4"));
  w.pod(make_pod().name("older").label("app", "g").cpu("2").priority(10).started(kNow - std::chrono::hours(2)), "n1");
  w.pod(make_pod().name("newer").label("app", "g").cpu("2").priority(10).started(kNow - std::chrono::hours(1)), "n1");
  w.budgets.add(budget("g", 1));  // "older", more important, takes the one disruption allowed

  SUBCASE("room for one: the violating pod is spared, the other goes") {
    const auto r = w.preempt(make_pod().name("hi").cpu("2").priority(1000));
    CHECK(names(r) == std::vector<std::string>{"older"});
    CHECK(r.pdb_violations == 0);
  }
  SUBCASE("room for both: both go, one violation, most important first") {
    const auto r = w.preempt(make_pod().name("hi").cpu("4").priority(1000));
    CHECK(names(r) == std::vector<std::string>{"older", "newer"});
    CHECK(r.pdb_violations == 1);
  }
}

TEST_CASE("Preemption: how many candidates a search looks for") {
  const sched::PreemptionArgs defaults;
  CHECK(sched::preemption_candidates_to_find(5, defaults) == 5);
  CHECK(sched::preemption_candidates_to_find(100, defaults) == 100);
  CHECK(sched::preemption_candidates_to_find(500, defaults) == 100);
  CHECK(sched::preemption_candidates_to_find(5000, defaults) == 500);
  CHECK(sched::preemption_candidates_to_find(5000, {50, 0}) == 2500);
  CHECK(sched::preemption_candidates_to_find(50, {0, 10}) == 10);
}

TEST_CASE("more_important: priority, then the earlier start, a pod not started counting as now") {
  const kube::Pod a = make_pod().name("a").priority(2);
  const kube::Pod b = make_pod().name("b").priority(1).started(kNow - std::chrono::hours(1));
  CHECK(sched::more_important(a, b, kNow));
  const kube::Pod started = make_pod().name("s").priority(1).started(kNow - std::chrono::hours(1));
  const kube::Pod pending = make_pod().name("p").priority(1);
  CHECK(sched::more_important(started, pending, kNow));
  CHECK_FALSE(sched::more_important(pending, started, kNow));
}
