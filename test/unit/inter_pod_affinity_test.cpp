// InterPodAffinity: tables follow upstream's interpodaffinity/filtering_test.go
// (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes) and
// scoring_test.go (TestPreferredAffinity,
// TestPreferredAffinityWithHardPodAffinitySymmetricWeight), case by case
// under upstream's names, same pods, labels and expected statuses/scores;
// then FitError messages through schedule_pod, and the Cache keeping the
// counts right across assume/forget.
#include <doctest/doctest.h>

#include "inter_pod_affinity_fixtures.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/profile.hpp"

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

using namespace toysched;
using sched::InterPodAffinity;
using sched::NodeInfo;
using test::make_pod;
using namespace test::affinity;

// upstream TestRequiredAffinitySingleNode: one node {region: r1, zone: z11}.
TEST_CASE("TestRequiredAffinitySingleNode cases") {
  const Labels security_scan = {{"service", "securityscan"}};
  const Labels s1 = {{"security", "S1"}};
  const std::vector<kube::Node> nodes = {node("node1", {{"region", "r1"}, {"zone", "z11"}})};
  const kube::Pod existing = pod("", security_scan, "node1");
  const auto in_scan = [](std::string topo) { return term("service", "In", {"securityscan", "value2"}, topo); };
  const auto team1 = expr("team", "In", {"team1"});

  SUBCASE("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods") {
    CHECK(filter(pod("", {}), World(nodes, {})) == Strings{"skip"});
  }
  SUBCASE("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator") {
    CHECK(filter(req_aff(pod("", s1), in_scan("region")), World(nodes, {existing})) == Strings{""});
  }
  SUBCASE("satisfies the pod with ... PodAffinity using not in operator in labelSelector") {
    const auto t = term("service", "NotIn", {"securityscan3", "value3"}, "region");
    CHECK(filter(req_aff(pod("", s1), t), World(nodes, {existing})) == Strings{""});
  }
  SUBCASE("Does not satisfy the PodAffinity with labelSelector because of diff Namespace") {
    auto t = in_scan("");
    t.namespaces = {"DiffNameSpace"};
    CHECK(filter(req_aff(pod("", s1), t), World(nodes, {pod("ns", security_scan, "node1")})) == Strings{kAff});
  }
  SUBCASE("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod") {
    const auto t = term("service", "In", {"antivirusscan", "value2"}, "");
    CHECK(filter(req_aff(pod("", security_scan), t), World(nodes, {existing})) == Strings{kAff});
  }
  SUBCASE("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod") {
    const auto anti = term("service", "In", {"antivirusscan", "value2"}, "node");
    const kube::Pod placed = req_anti(pod("", security_scan, "node1"), anti);
    CHECK(filter(req_anti(req_aff(pod("", s1), in_scan("region")), anti), World(nodes, {placed})) == Strings{""});
  }
  SUBCASE("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod") {
    const auto p = req_anti(req_aff(pod("", s1), in_scan("region")), in_scan("zone"));
    CHECK(filter(p, World(nodes, {existing})) == Strings{kAnti});
  }
  SUBCASE("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry") {
    const auto p = req_anti(req_aff(pod("", security_scan), in_scan("region")),
                            term("service", "In", {"antivirusscan", "value2"}, "node"));
    const kube::Pod placed = req_anti(pod("", security_scan, "node1"), in_scan("zone"));
    CHECK(filter(p, World(nodes, {placed})) == Strings{kExisting});
  }
  SUBCASE("pod matches its own Label in PodAffinity and that matches the existing pod Labels") {
    const auto t = term("service", "NotIn", {"securityscan", "value2"}, "region");
    CHECK(filter(req_aff(pod("", security_scan), t), World(nodes, {pod("", security_scan, "node2")})) == Strings{kAff});
  }
  SUBCASE("PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints") {
    const kube::Pod placed = req_anti(pod("", security_scan, "node1"), in_scan("zone"));
    CHECK(filter(pod("", security_scan), World(nodes, {placed})) == Strings{kExisting});
    const auto not_in = term("service", "NotIn", {"securityscan", "value2"}, "zone");
    CHECK(filter(pod("", security_scan), World(nodes, {req_anti(pod("", security_scan, "node1"), not_in)})) ==
          Strings{"skip"});
  }
  SUBCASE("affinity with NamespaceSelector / with non-matching NamespaceSelector") {
    const auto p = req_aff(pod("", s1), with_ns_selector(in_scan("region"), team1));
    CHECK(filter(p, World(nodes, {pod("subteam1.team1", security_scan, "node1")})) == Strings{""});
    CHECK(filter(p, World(nodes, {pod("subteam1.team2", security_scan, "node1")})) == Strings{kAff});
  }
  SUBCASE("anti-affinity with matching / matching all / non-matching NamespaceSelector") {
    const auto p = req_anti(pod("subteam1.team1", s1), with_ns_selector(in_scan("zone"), team1));
    CHECK(filter(p, World(nodes, {pod("subteam2.team1", security_scan, "node1")})) == Strings{kAnti});
    CHECK(filter(p, World(nodes, {pod("subteam1.team2", security_scan, "node1")})) == Strings{""});
    const auto all = req_anti(pod("subteam1.team1", s1), with_ns_selector(in_scan("zone"), {}));
    CHECK(filter(all, World(nodes, {pod("subteam2.team1", security_scan, "node1")})) == Strings{kAnti});
    // {} selects every namespace, even one no Namespace object exists for
    CHECK(filter(all, World(nodes, {pod("nowhere", security_scan, "node1")})) == Strings{kAnti});
  }
}

// Issue 47 item 9. Upstream matches the INCOMING pod's terms with no
// namespace labels at all (AffinityTerm.Matches(pod, nil); the selector is
// kept beside the namespaces it picked, as mergeAffinityTermNamespacesIfNotEmpty
// edits a copy): a namespaceSelector that an empty label set satisfies
// selects every namespace. A PLACED pod's terms see the incoming pod's
// real namespace labels.
TEST_CASE("InterPodAffinity: the incoming pod's NotIn / DoesNotExist namespaceSelector matches every namespace") {
  const Labels security_scan = {{"service", "securityscan"}};
  const std::vector<kube::Node> nodes = {node("node1", {{"region", "r1"}, {"zone", "z11"}})};
  const auto in_scan = term("service", "In", {"securityscan", "value2"}, "zone");
  // subteam2.team1 has team=team1: its labels do not satisfy either selector.
  const kube::Pod placed = pod("subteam2.team1", security_scan, "node1");
  for (const auto& sel : {expr("team", "NotIn", {"team1"}), expr("team", "DoesNotExist")}) {
    const auto anti = req_anti(pod("subteam1.team1", {}), with_ns_selector(in_scan, sel));
    CHECK(filter(anti, World(nodes, {placed})) == Strings{kAnti});
    // So does a namespace no Namespace object exists for.
    CHECK(filter(anti, World(nodes, {pod("nowhere", security_scan, "node1")})) == Strings{kAnti});
    const auto aff = req_aff(pod("subteam1.team1", {}), with_ns_selector(in_scan, sel));
    CHECK(filter(aff, World(nodes, {placed})) == Strings{""});
  }
  // An In selector is not satisfied by no labels: the real ones decide.
  const auto in_team2 = req_anti(pod("subteam1.team1", {}), with_ns_selector(in_scan, expr("team", "In", {"team2"})));
  CHECK(filter(in_team2, World(nodes, {placed})) == Strings{""});
  // Preferred terms score the same way: the pod on node1 counts.
  const std::vector<kube::Node> two = {node("node1", {{"zone", "z1"}}), node("node2", {{"zone", "z2"}})};
  const auto pref =
      pref_aff(pod("subteam1.team1", {}), 5,
               with_ns_selector(term("service", "In", {"securityscan"}, "zone"), expr("team", "NotIn", {"team1"})));
  CHECK(scores(pref, World(two, {placed})) == Scores{100, 0});
  // A placed pod's NotIn term against the incoming pod: its namespace's
  // real labels (team=team1) are read, so it does not match.
  const kube::Pod placed_anti =
      req_anti(pod("subteam1.team2", security_scan, "node1"),
               with_ns_selector(term("service", "In", {"securityscan"}, "zone"), expr("team", "NotIn", {"team1"})));
  CHECK(filter(pod("subteam2.team1", security_scan), World(nodes, {placed_anti})) == Strings{"skip"});
}

// upstream TestRequiredAffinityMultipleNodes.
TEST_CASE("TestRequiredAffinityMultipleNodes cases") {
  const Labels foo_bar = {{"foo", "bar"}};
  SUBCASE("A pod can be scheduled onto all the nodes that have the same topology key & label value") {
    const std::vector<kube::Node> nodes = {node("node1", {{"region", "China"}}),
                                           node("node2", {{"region", "China"}, {"az", "az1"}}),
                                           node("node3", {{"region", "India"}})};
    const auto p = req_aff(pod("", {}), term("foo", "In", {"bar"}, "region"));
    CHECK(filter(p, World(nodes, {pod("", foo_bar, "node1")})) == Strings{"", "", kAff});
  }
  const auto collection = [] {
    kube::Pod p = pod("", {{"foo", "bar"}, {"service", "securityscan"}});
    p = req_aff(std::move(p), term("foo", "In", {"bar"}, "zone"));
    return req_aff(std::move(p), term("service", "In", {"securityscan"}, "zone"));
  }();
  SUBCASE("The first pod of the collection should not be blocked from being scheduled onto any node") {
    const std::vector<kube::Node> nodes = {node("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}),
                                           node("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})};
    CHECK(filter(collection, World(nodes, {pod("", foo_bar, "nodeA")})) == Strings{"", ""});
  }
  SUBCASE("The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys") {
    const std::vector<kube::Node> nodes = {node("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
                                           node("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})};
    CHECK(filter(collection, World(nodes, {pod("", foo_bar, "nodeA")})) == Strings{kAff, kAff});
  }
  const std::vector<kube::Node> r1 = {node("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
                                      node("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})};
  SUBCASE("NodeA and nodeB have same topologyKey and label value ... can not be scheduled onto nodeA and nodeB") {
    const auto p = req_anti(pod("", {}), term("foo", "In", {"abc"}, "region"));
    CHECK(filter(p, World(r1, {pod("", {{"foo", "abc"}}, "nodeA")})) == Strings{kAnti, kAnti});
  }
  SUBCASE("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches") {
    const auto p = req_anti(req_anti(pod("", {}), term("foo", "In", {"abc"}, "region")),
                            term("service", "In", {"securityscan"}, "zone"));
    const kube::Pod placed = pod("", {{"foo", "abc"}, {"service", "securityscan"}}, "nodeA");
    CHECK(filter(p, World(r1, {placed})) == Strings{kAnti, kAnti});
  }
  SUBCASE("Test incoming pod's affinity: firstly check if all affinityTerms match, and then all topologyKeys") {
    const std::vector<kube::Node> z1 = {node("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
                                        node("nodeB", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})};
    const auto p =
        req_aff(req_aff(pod("", {}), term("foo", "Exists", {}, "region")), term("bar", "Exists", {}, "zone"));
    CHECK(filter(p, World(z1, {pod("", {{"foo", ""}, {"bar", ""}}, "nodeA")})) == Strings{"", ""});
    // "... and the match logic should be satisfied on the same pod"
    CHECK(filter(p, World(r1, {pod("", {{"foo", ""}}, "nodeA"), pod("", {{"bar", ""}}, "nodeB")})) ==
          Strings{kAff, kAff});
  }
}

namespace {

// upstream TestPreferredAffinity's labels, nodes and preferred terms.
namespace preferred {

const Labels s1 = {{"security", "S1"}}, s2 = {{"security", "S2"}};
const Labels china = {{"region", "China"}}, india = {{"region", "India"}}, az1 = {{"az", "az1"}}, az2 = {{"az", "az2"}},
             china_az1 = {{"region", "China"}, {"az", "az1"}};
kube::PodAffinityTerm s1_in(std::string topo) { return term("security", "In", {"S1"}, std::move(topo)); }
kube::PodAffinityTerm s2_in(std::string topo) { return term("security", "In", {"S2"}, std::move(topo)); }
kube::Pod stay_with_s1(kube::Pod p) { return pref_aff(std::move(p), 5, s1_in("region")); }
kube::Pod stay_with_s2(kube::Pod p) { return pref_aff(std::move(p), 6, s2_in("region")); }
kube::Pod away_from_s1(kube::Pod p) { return pref_anti(std::move(p), 5, s1_in("az")); }
kube::Pod away_from_s2(kube::Pod p) { return pref_anti(std::move(p), 5, s2_in("az")); }
kube::Pod with_s1_away_s2(kube::Pod p) { return pref_anti(pref_aff(std::move(p), 8, s1_in("region")), 5, s2_in("az")); }
const std::vector<kube::Node> three = {node("node1", china), node("node2", india), node("node3", az1)};
const kube::PodAffinityTerm ns_term =
    with_ns_selector(s1_in("region"), expr("team", "In", {"team1"}), {"subteam2.team2"});

}  // namespace preferred
}  // namespace

// upstream TestPreferredAffinity, its cases of affinity and its symmetry.
TEST_CASE("TestPreferredAffinity cases: affinity") {
  using namespace preferred;

  SUBCASE("all nodes are same priority as Affinity is nil") {
    CHECK(scores(pod("", s1), World(three, {})) == Scores{});
  }
  SUBCASE("Affinity: pod that matches topology key & pods in nodes will get high score") {
    const World w(three, {pod("", s1, "node1"), pod("", s2, "node2"), pod("", s1, "node3")});
    CHECK(scores(stay_with_s1(pod("", s1)), w) == Scores{100, 0, 0});
  }
  SUBCASE("All the nodes that have the same topology key & label value ... have the same score") {
    const World w({node("node1", china), node("node2", china_az1), node("node3", india)}, {pod("", s1, "node1")});
    CHECK(scores(stay_with_s1(pod("", {})), w) == Scores{100, 100, 0});
  }
  SUBCASE("Affinity: nodes in one region has more matching pods comparing to other region") {
    const World w(
        {node("node1", china), node("node2", india), node("node3", china), node("node4", china), node("node5", india)},
        {pod("", s2, "node1"), pod("", s2, "node1"), pod("", s2, "node2"), pod("", s2, "node3"), pod("", s2, "node4"),
         pod("", s2, "node5")});
    CHECK(scores(stay_with_s2(pod("", s1)), w) == Scores{100, 0, 100, 100, 0});
  }
  SUBCASE("Affinity: different Label operators and values for pod affinity scheduling preference") {
    kube::PodAffinityTerm t8 = term("security", "NotIn", {"S1"}, "region");
    t8.label_selector->match_expressions.push_back(test::req("security", "In", {"S2"}));
    kube::PodAffinityTerm t2 = term("security", "Exists", {}, "region");
    t2.label_selector->match_expressions.push_back(test::req("wrongkey", "DoesNotExist"));
    const World w(three, {pod("", s1, "node1"), pod("", s2, "node2"), pod("", s1, "node3")});
    CHECK(scores(pref_aff(pref_aff(pod("", s1), 8, t8), 2, t2), w) == Scores{20, 100, 0});
  }
  SUBCASE("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution") {
    const World w(three, {stay_with_s1(pod("", s1, "node1")), stay_with_s2(pod("", s2, "node2"))});
    CHECK(scores(pod("", s2), w) == Scores{0, 100, 0});
  }
  SUBCASE("Affinity symmetry with namespace selector / AntiAffinity symmetry with namespace selector") {
    const World w(three, {pref_aff(pod("", s1, "node1"), 5, ns_term), stay_with_s2(pod("", s2, "node2"))});
    CHECK(scores(pod("subteam1.team1", s1), w) == Scores{100, 0, 0});
    const World anti(three, {pref_anti(pod("", s1, "node1"), 5, ns_term), stay_with_s2(pod("", s2, "node2"))});
    CHECK(scores(pod("subteam1.team1", s1), anti) == Scores{0, 100, 100});
  }
  SUBCASE("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry") {
    const auto hard = [](kube::Pod p) {
      kube::PodAffinityTerm t2 = term("security", "Exists", {}, "region");
      t2.label_selector->match_expressions.push_back(test::req("wrongkey", "DoesNotExist"));
      return req_aff(req_aff(std::move(p), term("security", "In", {"S1", "value2"}, "region")), t2);
    };
    const World w(three, {hard(pod("", s1, "node1")), hard(pod("", s2, "node2"))});
    CHECK(scores(pod("", s1), w) == Scores{100, 100, 0});
  }
}

// upstream TestPreferredAffinity, its cases of anti-affinity, of both, and
// of namespace selectors.
TEST_CASE("TestPreferredAffinity cases: anti-affinity and both") {
  using namespace preferred;

  SUBCASE("Anti Affinity: one node has more matching pods comparing to other node") {
    const World w({node("node1", az1), node("node2", india)},
                  {pod("", s1, "node1"), pod("", s1, "node1"), pod("", s2, "node2")});
    CHECK(scores(away_from_s1(pod("", s1)), w) == Scores{0, 100});
  }
  SUBCASE("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score") {
    const World w({node("node1", az1), node("node2", az2)},
                  {away_from_s2(pod("", s1, "node1")), away_from_s1(pod("", s2, "node2"))});
    CHECK(scores(pod("", s2), w) == Scores{0, 100});
  }
  SUBCASE("Affinity and Anti Affinity: considering both, the pod to schedule and existing pods have the same labels") {
    const World w({node("node1", china_az1), node("node2", india), node("node3", china), node("node4", china),
                   node("node5", india)},
                  {pod("", s1, "node1"), pod("", s1, "node1"), pod("", s1, "node2"), pod("", s1, "node3"),
                   pod("", s1, "node3"), pod("", s1, "node4"), pod("", s1, "node5")});
    CHECK(scores(with_s1_away_s2(pod("", s1)), w) == Scores{100, 0, 100, 100, 0});
  }
  SUBCASE("Affinity and Anti Affinity and symmetry: ... in both pod affinity & anti affinity & symmetry") {
    const World w({node("node1", china), node("node2", az1), node("node3", india), node("node4", az2)},
                  {pod("", s1, "node1"), pod("", s2, "node2"), with_s1_away_s2(pod("", {}, "node3")),
                   away_from_s1(pod("", {}, "node4"))});
    CHECK(scores(with_s1_away_s2(pod("", s1)), w) == Scores{100, 0, 100, 0});
  }
  SUBCASE("Avoid panic when partial nodes in a topology don't have pods with affinity") {
    const World w({node("node1", china), node("node2", china)},
                  {pod("", s1, "node1"), with_s1_away_s2(pod("", {}, "node2"))});
    CHECK(scores(pod("", s1), w) == Scores{0, 0});
  }
  SUBCASE("Affinity with pods matching NamespaceSelector") {
    const World w({node("node1", china), node("node2", india)},
                  {pod("subteam1.team1", s1, "node1"), pod("subteam1.team1", s1, "node1"),
                   pod("subteam1.team2", s1, "node1"), pod("subteam2.team1", s1, "node2")});
    CHECK(scores(pref_aff(pod("subteam1.team1", s1), 5, ns_term), w) == Scores{100, 0});
  }
}

// upstream TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
TEST_CASE("TestPreferredAffinityWithHardPodAffinitySymmetricWeight cases") {
  const auto hard =
      with_ns_selector(term("service", "In", {"S1"}, "region"), expr("team", "In", {"team1"}), {"", "subteam2.team2"});
  const World w(
      {node("node1", {{"region", "China"}}), node("node2", {{"region", "India"}}), node("node3", {{"az", "az1"}})},
      {req_aff(pod("", {}, "node1"), hard), req_aff(pod("", {}, "node2"), hard)});
  const Labels s1 = {{"service", "S1"}};
  CHECK(scores(pod("", s1), w) == Scores{100, 100, 0});                // with default weight
  CHECK(scores(pod("", s1), w, 0) == Scores{});                        // with zero weight
  CHECK(scores(pod("subteam1.team2", s1), w) == Scores{});             // with no matching namespace
  CHECK(scores(pod("subteam1.team1", s1), w) == Scores{100, 100, 0});  // with matching NamespaceSelector
  CHECK(scores(pod("subteam2.team2", s1), w) == Scores{100, 100, 0});  // with matching Namespaces
}

TEST_CASE("normalize maps min..max onto 0..100 truncating, as upstream's float64") {
  InterPodAffinity plugin;
  Scores s = {-5, 0, 1, 10};
  plugin.normalize(s);
  CHECK(s == Scores{0, 33, 40, 100});  // 100*5/15 = 33.3, 100*6/15 = 40
  Scores same = {7, 7};
  plugin.normalize(same);
  CHECK(same == Scores{0, 0});
}

TEST_CASE("TopologyCounts keeps pairs apart, grows, and clears only what it used") {
  sched::TopologyCounts c;
  std::vector<std::string> values;
  for (int i = 0; i < 100; ++i) values.push_back("v" + std::to_string(i));
  for (int i = 0; i < 100; ++i) c.add("zone", values[i], i + 1);
  c.add("region", "v1", 7);
  c.add("zone", "v1", 3);
  CHECK(c.get("zone", "v1") == 5);
  CHECK(c.get("region", "v1") == 7);
  CHECK(c.get("zone", "v99") == 100);
  CHECK(c.get("zone", "nope") == 0);
  CHECK(c.keys().size() == 2);
  c.clear();
  CHECK(c.empty());
  CHECK(c.get("zone", "v1") == 0);
  CHECK(c.keys().empty());
}

namespace {

sched::Decision decide(const kube::Pod& p, const sched::Cluster& cluster) {
  static const sched::Profile profile = sched::Profile::make_default();
  std::mt19937_64 rng(1);
  return sched::schedule_pod(profile, p, cluster, rng);
}

}  // namespace

TEST_CASE("schedule_pod: FitError lists each InterPodAffinity reason, sorted as upstream") {
  // n1: a placed db pod keeps web pods out of its zone (existing anti-affinity);
  // n2: a web pod is there (the pod's own anti-affinity);
  // n3: no zone label (the pod's affinity needs one).
  const kube::Pod web = req_anti(req_aff(pod("default", {{"app", "web"}}), term("app", "In", {"db"}, "zone")),
                                 term("app", "In", {"web"}, "zone"));
  const World w({node("n1", {{"zone", "z1"}}), node("n2", {{"zone", "z2"}}), node("n3", {{"rack", "r1"}})},
                {req_anti(pod("default", {{"app", "db"}}, "n1"), term("app", "In", {"web"}, "zone")),
                 pod("default", {{"app", "db"}}, "n2"), pod("default", {{"app", "web"}}, "n2")});
  const auto d = decide(web, w.cluster());
  CHECK(d.status == sched::Decision::Status::unschedulable);  // anti-affinity: preemption could help
  CHECK(d.message ==
        "0/3 nodes are available: 1 node(s) didn't match pod affinity rules, 1 node(s) didn't match pod "
        "anti-affinity rules, 1 node(s) didn't satisfy existing pods anti-affinity rules.");

  const kube::Pod lonely = req_aff(pod("default", {}), term("app", "In", {"cache"}, "zone"));
  const auto d2 = decide(lonely, w.cluster());
  CHECK(d2.status == sched::Decision::Status::unresolvable);
  CHECK(d2.message == "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
}

TEST_CASE("schedule_pod: preferred affinity picks the zone of the matching pods") {
  const World w({node("n1", {{"zone", "z1"}}), node("n2", {{"zone", "z2"}}), node("n3", {{"zone", "z3"}})},
                {pod("default", {{"app", "db"}}, "n2")});
  const kube::Pod p = pref_aff(pod("default", {}), 10, term("app", "In", {"db"}, "zone"));
  const auto d = decide(p, w.cluster());
  CHECK(d.status == sched::Decision::Status::scheduled);
  CHECK(d.node == "n2");
  const kube::Pod away = pref_anti(pod("default", {}), 10, term("app", "In", {"db"}, "zone"));
  CHECK(decide(away, w.cluster()).node != "n2");
}

TEST_CASE("the Cache's assume and forget keep InterPodAffinity's counts right") {
  sched::Cache cache;
  cache.add_node(node("n1", {{"zone", "z1"}}));
  cache.add_node(node("n2", {{"zone", "z2"}}));
  const auto web = [](std::string name) {
    kube::Pod p = req_anti(pod("default", {{"app", "web"}}), term("app", "In", {"web"}, "zone"));
    p.name = name;
    p.uid = "uid-" + name;
    return p;
  };
  const auto verdicts = [&](const kube::Pod& p) {
    InterPodAffinity plugin;
    const sched::Cluster c = cache.cluster();
    std::vector<std::string> out;
    if (plugin.pre_filter(p, c).kind == sched::PreFilterResult::Kind::skip) return Strings{"skip"};
    for (const NodeInfo* ni : c.nodes) {
      const auto st = plugin.filter_node(p, *ni);
      out.push_back(st.ok() ? "" : st.reason_strings(p).front());
    }
    return out;
  };
  const std::string anti = "node(s) didn't match pod anti-affinity rules";
  const std::string existing = "node(s) didn't satisfy existing pods anti-affinity rules";

  CHECK(cache.cluster().pods_with_required_anti_affinity == 0);
  REQUIRE(cache.assume(web("web-1"), "n1"));
  CHECK(cache.cluster().pods_with_affinity == 1);
  CHECK(cache.cluster().pods_with_required_anti_affinity == 1);
  CHECK(verdicts(web("web-2")) == Strings{anti, ""});
  CHECK(decide(web("web-2"), cache.cluster()).node == "n2");
  // a pod without terms of its own meets web-1's required anti-affinity
  CHECK(verdicts(pod("default", {{"app", "web"}})) == Strings{existing, ""});
  CHECK(verdicts(pod("default", {{"app", "db"}})) == Strings{"skip"});

  cache.forget("uid-web-1");
  CHECK(cache.cluster().pods_with_affinity == 0);
  CHECK(cache.cluster().pods_with_required_anti_affinity == 0);
  CHECK(verdicts(web("web-2")) == Strings{"", ""});
  CHECK(verdicts(pod("default", {{"app", "web"}})) == Strings{"skip"});

  // bound, then removed as the informer would
  kube::Pod bound = web("web-3");
  bound.node_name = "n2";
  cache.add_pod(bound);
  CHECK(verdicts(web("web-2")) == Strings{"", anti});
  cache.remove_pod(bound);
  CHECK(verdicts(web("web-2")) == Strings{"", ""});
  CHECK(cache.cluster().pods_with_required_anti_affinity == 0);
}

// kube-apiserver v1.36 merges matchLabelKeys / mismatchLabelKeys into the
// labelSelector once, at creation, and keeps that selector when the pod's
// labels change (seen on the lab: relabelling pod-template-hash left the
// merged "In [abc123]" as it was). kube-scheduler reads only labelSelector,
// so must we: merging again from today's labels would demand "zzz" here.
TEST_CASE("matchLabelKeys are not merged again: the server's merged selector decides") {
  kube::PodAffinityTerm t = term("pod-template-hash", "In", {"abc123"}, "zone");  // as the server stored it
  t.label_selector->match_labels = {{"app", "web"}};
  t.match_label_keys = {"pod-template-hash"};
  const kube::Pod p = req_aff(pod("default", {{"app", "web"}, {"pod-template-hash", "zzz"}}), t);
  const World w({node("n1", {{"zone", "z1"}}), node("n2", {{"zone", "z2"}})},
                {pod("default", {{"app", "web"}, {"pod-template-hash", "abc123"}}, "n1")});
  CHECK(filter(p, w) == Strings{"", kAff});
}

// The same pods on kube-lab with the real kube-scheduler v1.36.3 (3 nodes):
//   web-4: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. <preemption…>"
//   needy: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. <preemption…>"
// The preemption sentence is the Scheduler's, not the decision's (algorithm.hpp); the rest must be equal.
TEST_CASE("schedule_pod through the Cache: web pods spread one per node, as kube-scheduler did on the lab") {
  sched::Cache cache;
  for (const char* n : {"lab-node-1", "lab-node-2", "lab-node-3"}) {
    cache.add_node(node(n, {{"kubernetes.io/hostname", n}}));
  }
  const auto web = [](int i) {
    kube::Pod p = req_anti(pod("default", {{"app", "web"}}), term("app", "In", {"web"}, "kubernetes.io/hostname"));
    p.name = "web-" + std::to_string(i);
    p.uid = "uid-" + p.name;
    return p;
  };
  std::vector<std::string> placed;
  for (int i = 1; i <= 3; ++i) {
    const auto d = decide(web(i), cache.cluster());
    REQUIRE(d.status == sched::Decision::Status::scheduled);
    placed.push_back(d.node);
    REQUIRE(cache.assume(web(i), d.node));
  }
  std::sort(placed.begin(), placed.end());
  CHECK(placed == Strings{"lab-node-1", "lab-node-2", "lab-node-3"});
  const auto d4 = decide(web(4), cache.cluster());
  CHECK(d4.status == sched::Decision::Status::unschedulable);
  CHECK(d4.message == "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.");
  const kube::Pod needy = req_aff(pod("default", {{"app", "x"}}), term("app", "In", {"db"}, "kubernetes.io/hostname"));
  const auto dn = decide(needy, cache.cluster());
  CHECK(dn.status == sched::Decision::Status::unresolvable);
  CHECK(dn.message == "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.");
}
