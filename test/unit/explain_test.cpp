// Why here, why not: a decision's trace names each rejected node's filter
// and reasons, and each feasible node's scores add up to its total; the
// recorder keeps the last attempt per pod within its budget; the JSON and
// text renderings show it all.
#include "toysched/sched/explain.hpp"
#include "builders.hpp"
#include "profile_fixtures.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace toysched;
using sched::Decision;
using sched::DecisionTrace;
using sched::NodeInfo;
using sched::PluginId;
using test::make_node;
using test::make_pod;

namespace {

Decision run(const kube::Pod& pod, const std::vector<NodeInfo>& nodes, DecisionTrace* trace,
             std::vector<sched::NodeScore>* scores = nullptr, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  const auto p = test::node_ptrs(nodes);
  return sched::schedule_pod(test::default_profile(), pod, p, rng, scores, nullptr, trace);
}

// Three nodes, each turned away by a different filter. "small" has 3 cpus,
// 2 of them taken: short of room for a 2-cpu pod, not too small for it
// (that would be unresolvable).
std::vector<NodeInfo> three_refusals() {
  static const kube::Pod busy = make_pod().name("busy").cpu("2");
  std::vector<NodeInfo> nodes = {
      make_node().name("small").cpu("3").label("disk", "ssd").info(),
      make_node().name("tainted").taint("dedicated", "gpu", "NoSchedule").label("disk", "ssd").info(),
      make_node().name("spinning").label("disk", "hdd").info(),
  };
  nodes[0].add_pod(busy);
  return nodes;
}

}  // namespace

TEST_CASE("a pending pod: each node's rejecting filter and its reasons, as the FitError counts them") {
  const auto nodes = three_refusals();
  DecisionTrace t;
  const auto d = run(make_pod().cpu("2").node_selector("disk", "ssd"), nodes, &t);
  REQUIRE(d.status == Decision::Status::unschedulable);
  REQUIRE(t.rejected.size() == 3);
  // Filters run plugin by plugin in profile order: TaintToleration, then
  // NodeAffinity, then NodeResourcesFit.
  CHECK(t.rejected[0].node() == "tainted");
  CHECK(t.rejected[0].plugin == PluginId::taint_toleration);
  CHECK(t.rejected[0].reason == "node(s) had untolerated taint(s)");
  CHECK(t.rejected[1].node() == "spinning");
  CHECK(t.rejected[1].plugin == PluginId::node_affinity);
  CHECK(t.rejected[1].reason == "node(s) didn't match Pod's node affinity/selector");
  CHECK(t.rejected[2].node() == "small");
  CHECK(t.rejected[2].plugin == PluginId::node_resources_fit);
  CHECK(t.rejected[2].reason == "Insufficient cpu");
  CHECK(t.feasible.empty());
  CHECK_FALSE(t.scored());
  // The same three reasons the one-line summary counts.
  CHECK(d.message ==
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 "
        "node(s) had untolerated taint(s).");
}

TEST_CASE("a node short of two resources: both reasons, in upstream's order") {
  const std::vector<NodeInfo> nodes = {make_node().name("tiny").cpu("1").memory("1Gi").info()};
  DecisionTrace t;
  run(make_pod().cpu("2").memory("2Gi"), nodes, &t);
  REQUIRE(t.rejected.size() == 1);
  CHECK(t.rejected[0].reason == "Insufficient cpu, Insufficient memory");
}

TEST_CASE("a bound pod: per-plugin weighted scores add up to each node's total, the chosen node's the highest") {
  std::vector<NodeInfo> nodes = {
      make_node().name("busy").info(),
      make_node().name("idle").info(),
      make_node().name("half").info(),
  };
  nodes[0].add_pod(make_pod().name("x").uid("x").cpu("3").memory("24Gi"));
  nodes[2].add_pod(make_pod().name("y").uid("y").cpu("2").memory("16Gi"));
  DecisionTrace t;
  std::vector<sched::NodeScore> scores;
  const auto d = run(make_pod().cpu("1").memory("1Gi"), nodes, &t, &scores);
  REQUIRE(d.status == Decision::Status::scheduled);
  CHECK(d.node == "idle");
  REQUIRE(t.feasible.strings() == std::vector<std::string>{"busy", "idle", "half"});
  REQUIRE(t.scored());
  REQUIRE(scores.size() == 3);
  std::int64_t best = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(t.total(i) == scores[i].total);  // the recorded columns add up to what the decision compared
    REQUIRE(scores[i].plugins.size() == t.scorers.size());
    for (std::size_t k = 0; k < t.scorers.size(); ++k) {
      CHECK(t.scorers[k] == scores[i].plugins[k].first);
      CHECK(t.weighted(i, k) == scores[i].plugins[k].second);  // every cell, constant columns or not
    }
    best = std::max(best, t.total(i));
  }
  CHECK(t.total(1) == best);
  // NodeResourcesFit (LeastAllocated) on busy: cpu (4-3-1)/4 → 0, memory (32-24-1)/32 → 21; raw (0+21)/2.
  const auto fit = static_cast<std::size_t>(
      std::find(t.scorers.begin(), t.scorers.end(), PluginId::node_resources_fit) - t.scorers.begin());
  REQUIRE(fit < t.scorers.size());
  CHECK(t.raw(0, fit) == 10);
  // TaintToleration normalizes (reverse) to 100 on every untainted node, weight 3.
  const auto tt = static_cast<std::size_t>(std::find(t.scorers.begin(), t.scorers.end(), PluginId::taint_toleration) -
                                           t.scorers.begin());
  REQUIRE(tt < t.scorers.size());
  CHECK(t.raw(0, tt) == 0);
  CHECK(t.normalized(0, tt) == 100);
  CHECK(t.weights[tt] == 3);
  CHECK(t.weighted(0, tt) == 300);
}

TEST_CASE("a trace keeps a column of equal scores as one value, a normalized column equal to its raw one as that") {
  DecisionTrace t;
  t.scorers = {PluginId::taint_toleration, PluginId::node_resources_fit};
  t.weights = {3, 1};
  t.add_raw(std::vector<std::int64_t>{0, 0, 0});
  t.add_raw(std::vector<std::int64_t>{10, 50, 30});
  t.add_normalized(std::vector<std::int64_t>{100, 100, 100});
  t.add_normalized(std::vector<std::int64_t>{10, 50, 30});
  CHECK(t.values.size() == 3);  // the one varying column, its normalized copy pointing at its raw values
  const std::int64_t fit[] = {10, 50, 30};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(t.raw(i, 0) == 0);
    CHECK(t.normalized(i, 0) == 100);
    CHECK(t.raw(i, 1) == fit[i]);
    CHECK(t.normalized(i, 1) == fit[i]);
    CHECK(t.total(i) == 300 + fit[i]);
  }
  t.clear();
  CHECK(t.values.empty());
  CHECK(t.raw_columns.empty());
  CHECK_FALSE(t.scored());
}

TEST_CASE("recording changes no decision") {
  const std::vector<NodeInfo> nodes = {make_node().name("a").info(), make_node().name("b").info(),
                                       make_node().name("c").info(), make_node().name("d").info()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    DecisionTrace t;
    CHECK(run(make_pod(), nodes, &t, nullptr, seed).node == run(make_pod(), nodes, nullptr, nullptr, seed).node);
  }
}

TEST_CASE("one feasible node: listed, chosen unscored") {
  const std::vector<NodeInfo> nodes = {make_node().name("n1").cpu("1").info(), make_node().name("n2").info()};
  DecisionTrace t;
  const auto d = run(make_pod().cpu("2"), nodes, &t);
  CHECK(d.node == "n2");
  CHECK(t.feasible.strings() == std::vector<std::string>{"n2"});
  CHECK(t.rejected.size() == 1);
  CHECK_FALSE(t.scored());
}

TEST_CASE("a PreFilter that rejects every node is named") {
  const std::vector<NodeInfo> nodes = {make_node().name("n1").info()};
  DecisionTrace t;
  const auto d =
      run(make_pod().required(test::term().field("metadata.name", "In", {"n1"}).field("metadata.name", "In", {"n2"})),
          nodes, &t);
  CHECK(d.status == Decision::Status::unresolvable);
  CHECK(t.pre_filter_rejected_by == PluginId::node_affinity);
  CHECK(t.pre_filter_reason == "pod affinity terms conflict");
  CHECK(t.rejected.empty());
  sched::Explanation e;
  e.trace = t;
  const std::string body = explain_json(e);
  CHECK(body.find(R"("preFilterRejectedBy":"NodeAffinity","preFilterReason":"pod affinity terms conflict")") !=
        std::string::npos);
}

namespace {

Decision decided(std::string node) {
  Decision d;
  d.status = Decision::Status::scheduled;
  d.node = std::move(node);
  return d;
}

}  // namespace

TEST_CASE("recorder: the last attempt per pod, the oldest out past the budget, forgotten on delete") {
  sched::ExplainRecorder r(/*row_budget=*/6);
  auto attempt = [&](const std::string& name, int n, int feasible) {
    DecisionTrace* t = r.begin(make_pod().name(name).uid(name), n, 3);
    for (int i = 0; i < feasible; ++i) t->feasible.push_back("n" + std::to_string(i));
    r.finish(decided("n0"), false);
  };
  attempt("a", 1, 1);  // 2 rows
  attempt("a", 2, 1);  // replaces: still 2
  REQUIRE(r.find("default/a") != nullptr);
  CHECK(r.find("default/a")->attempt == 2);
  CHECK(r.size() == 1);
  attempt("b", 1, 2);  // 3 rows: 5 in all
  CHECK(r.size() == 2);
  attempt("c", 1, 1);  // 7 > 6: a goes
  CHECK(r.find("default/a") == nullptr);
  CHECK(r.find("default/b") != nullptr);
  CHECK(r.find("default/c") != nullptr);
  r.forget("default/b");
  CHECK(r.find("default/b") == nullptr);
  attempt("big", 1, 40);  // over the budget alone: kept, the others go
  CHECK(r.size() == 1);
  CHECK(r.find("default/big") != nullptr);
}

TEST_CASE("explain_json and explain_text show the rejections and the scores") {
  sched::ExplainRecorder r;
  auto nodes = three_refusals();
  DecisionTrace* t = r.begin(make_pod().ns("web").name("p").cpu("2").node_selector("disk", "ssd"), 3, 3);
  auto d = run(make_pod().cpu("2").node_selector("disk", "ssd"), nodes, t);
  r.finish(d, false);
  const sched::Explanation* e = r.find("web/p");
  REQUIRE(e != nullptr);

  simdjson::dom::parser parser;
  const std::string body = explain_json(*e);
  simdjson::dom::element doc;
  REQUIRE(parser.parse(body).get(doc) == simdjson::SUCCESS);
  CHECK(std::string_view(doc["result"]) == "unschedulable");
  CHECK(std::string_view(doc["pod"]) == "web/p");
  CHECK(int64_t(doc["attempt"]) == 3);
  simdjson::dom::array rejected = doc["rejected"];
  REQUIRE(rejected.size() == 3);
  CHECK(std::string_view(rejected.at(1)["plugin"]) == "NodeAffinity");
  CHECK(std::string_view(rejected.at(2)["reason"]) == "Insufficient cpu");
  // The code, as upstream's status says it: a taint or a label preemption
  // cannot change; a lack of room it might.
  CHECK(std::string_view(rejected.at(0)["code"]) == "UnschedulableAndUnresolvable");
  CHECK(std::string_view(rejected.at(1)["code"]) == "UnschedulableAndUnresolvable");
  CHECK(std::string_view(rejected.at(2)["code"]) == "Unschedulable");

  const std::string text = explain_text(*e);
  CHECK(text.find("Pod web/p (profile toy-scheduler), attempt 3") == 0);
  CHECK(text.find("NODE      FILTER            REASON") != std::string::npos);
  CHECK(text.find("small     NodeResourcesFit  Insufficient cpu") != std::string::npos);

  std::vector<NodeInfo> free = {make_node().name("a").info(), make_node().name("b").info()};
  t = r.begin(make_pod().ns("web").name("q"), 1, 2);
  d = run(make_pod(), free, t);
  r.finish(d, true);
  e = r.find("web/q");
  REQUIRE(e != nullptr);
  CHECK(e->result == "dry-run");
  REQUIRE(parser.parse(explain_json(*e)).get(doc) == simdjson::SUCCESS);
  simdjson::dom::array scored = doc["scores"];
  REQUIRE(scored.size() == 2);
  std::int64_t sum = 0;
  for (auto p : simdjson::dom::array(scored.at(0)["plugins"])) sum += int64_t(p["weighted"]);
  CHECK(sum == int64_t(scored.at(0)["total"]));
  const std::string table = explain_text(*e);
  CHECK(table.find("* " + d.node) != std::string::npos);
  CHECK(table.find("TaintToleration x3") != std::string::npos);
}

TEST_CASE("a trace lists nodes by their NodeNames number: the cache numbers its nodes, the name outlives the node") {
  using sched::NodeNames;
  CHECK(NodeNames::intern("names-a") == NodeNames::intern("names-a"));
  CHECK(NodeNames::intern("names-a") != NodeNames::intern("names-b"));
  CHECK(NodeNames::name(NodeNames::intern("names-b")) == "names-b");
  CHECK(NodeNames::name(0).empty());
  const std::size_t known = NodeNames::size();
  NodeNames::intern("names-new");
  NodeNames::intern("names-new");
  CHECK(NodeNames::size() == known + 1);  // a name is kept once

  DecisionTrace t;
  {
    sched::Cache cache;
    cache.add_node(make_node().name("names-cached").info().node);
    REQUIRE(cache.node("names-cached") != nullptr);
    CHECK(cache.node("names-cached")->name_id == NodeNames::intern("names-cached"));
    std::mt19937_64 rng(1);
    const auto d =
        sched::schedule_pod(test::default_profile(), make_pod().cpu("1"), cache.cluster(), rng, nullptr, nullptr, &t);
    REQUIRE(d.status == Decision::Status::scheduled);
  }  // the cache and its NodeInfos are gone; the trace still names the node
  CHECK(t.feasible.strings() == std::vector<std::string>{"names-cached"});

  // What a decision records is the number a NodeInfo carries, never a read
  // of its name (that read was what recording cost at 15 000 nodes); a
  // NodeInfo made without one (tests, tools) is numbered by its name.
  NodeInfo numbered = make_node().name("names-as-made").info();
  numbered.name_id = NodeNames::intern("names-by-number");
  NodeInfo unnumbered = make_node().name("names-unnumbered").info();
  sched::NameList names;
  names.push_back(numbered);
  names.push_back(unnumbered);
  CHECK(names.strings() == std::vector<std::string>{"names-by-number", "names-unnumbered"});
}
