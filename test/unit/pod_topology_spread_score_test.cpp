// PodTopologySpread PreScore/Score/NormalizeScore: the tables follow
// upstream's podtopologyspread/scoring_test.go (TestPodTopologySpreadScore,
// TestPreScoreSkip), each SUBCASE named as the upstream case it follows,
// with the same nodes, pods and expected normalized scores.
#include "pod_topology_spread_fixtures.hpp"

using namespace toysched;
using namespace toysched::test::spread;
using test::make_pod;

namespace {

using Scores = std::map<std::string, std::int64_t>;

// ClusterObjects for the system default constraints: one selector, as the
// Services/controllers of the pod would give it.
class FixedObjects final : public sched::ClusterObjects {
 public:
  explicit FixedObjects(kube::LabelSelector s) : selector_(std::move(s)) {}
  const kube::StringPairs* namespace_labels(std::string_view /*ns*/) const override { return nullptr; }
  kube::LabelSelector default_selector(const kube::Pod& /*pod*/) const override { return selector_; }

 private:
  kube::LabelSelector selector_;
};

// PreScore over `feasible` (the cluster is feasible + failed), Score,
// NormalizeScore: the normalized score per feasible node; empty when
// PreScore skips.
Scores score_nodes(const kube::Pod& pod, const std::vector<kube::Node>& feasible, const std::vector<kube::Node>& failed,
                   const std::vector<kube::Pod>& pods, const sched::ClusterObjects* objects = nullptr) {
  std::vector<kube::Node> all = feasible;
  all.insert(all.end(), failed.begin(), failed.end());
  const World w(all, pods);
  sched::Cluster cluster(w.all);
  cluster.objects = objects;
  const std::span<const sched::NodeInfo* const> cand(w.all.data(), feasible.size());
  sched::PodTopologySpread pl;
  if (!pl.pre_score(pod, cand, cluster)) return {};
  std::vector<std::int64_t> raw(cand.size(), -7);
  pl.score(pod, cand, raw);
  pl.normalize(raw);
  Scores out;
  for (std::size_t i = 0; i < cand.size(); ++i) out[cand[i]->node.name] = raw[i];
  return out;
}

kube::Node host(std::string name, Labels extra = {}) {
  Labels l = std::move(extra);
  l.emplace_back("kubernetes.io/hostname", name);
  return node(std::move(name), std::move(l));
}

std::vector<kube::Pod> foo_pods(const std::vector<std::pair<std::string, int>>& per_node) {
  std::vector<kube::Pod> out;
  for (const auto& [n, count] : per_node) {
    for (int i = 1; i <= count; ++i) out.push_back(existing("p-" + n + std::to_string(i), n, {{"foo", ""}}));
  }
  return out;
}

constexpr const char* kHost = "kubernetes.io/hostname";

}  // namespace

TEST_CASE("TestPodTopologySpreadScore") {
  const auto pod1 = incoming({{"foo", ""}}, {{1, kHost, kSoft, kFoo}});
  const std::vector<kube::Node> abcd = {host("node-a"), host("node-b"), host("node-c"), host("node-d")};
  SUBCASE("one constraint on node, no existing pods") {
    CHECK(score_nodes(pod1, {host("node-a"), host("node-b")}, {}, {}) == Scores{{"node-a", 100}, {"node-b", 100}});
  }
  SUBCASE("one constraint on node, only one node is candidate") {
    CHECK(score_nodes(pod1, {host("node-a")}, {host("node-b")}, foo_pods({{"node-a", 2}, {"node-b", 1}})) ==
          Scores{{"node-a", 100}});
  }
  SUBCASE("one constraint on node, all nodes have the same number of matching pods") {
    CHECK(score_nodes(pod1, {host("node-a"), host("node-b")}, {}, foo_pods({{"node-a", 1}, {"node-b", 1}})) ==
          Scores{{"node-a", 100}, {"node-b", 100}});
  }
  const auto pods_2103 = foo_pods({{"node-a", 2}, {"node-b", 1}, {"node-d", 3}});
  SUBCASE("one constraint on node, all 4 nodes are candidates") {
    CHECK(score_nodes(pod1, abcd, {}, pods_2103) ==
          Scores{{"node-a", 20}, {"node-b", 60}, {"node-c", 100}, {"node-d", 0}});
  }
  SUBCASE("one constraint on node, null selector") {
    const auto pod = incoming({{"foo", ""}}, {{1, kHost, kSoft, std::nullopt}});
    CHECK(score_nodes(pod, abcd, {}, pods_2103) ==
          Scores{{"node-a", 100}, {"node-b", 100}, {"node-c", 100}, {"node-d", 100}});
  }
  SUBCASE("one constraint on node, all 4 nodes are candidates, maxSkew=2") {
    const auto pod = incoming({{"foo", ""}}, {{2, kHost, kSoft, kFoo}});
    CHECK(score_nodes(pod, abcd, {}, pods_2103) ==
          Scores{{"node-a", 33}, {"node-b", 66}, {"node-c", 100}, {"node-d", 16}});
  }
  const auto pods_4321 = foo_pods({{"node-a", 4}, {"node-b", 3}, {"node-c", 2}, {"node-d", 1}});
  const Scores want_4321{{"node-a", 44}, {"node-b", 66}, {"node-c", 77}, {"node-d", 100}};
  SUBCASE("one constraint on node, all 4 nodes are candidates, maxSkew=3") {
    const auto pod = incoming({{"foo", ""}}, {{3, kHost, kSoft, kFoo}});
    CHECK(score_nodes(pod, abcd, {}, pods_4321) == want_4321);
  }
  SUBCASE("system defaulting, nodes don't have zone, pods match service") {
    const FixedObjects service(kube::LabelSelector{{{"foo", ""}}, {}});
    CHECK(score_nodes(incoming({{"foo", ""}}, {}), abcd, {}, pods_4321, &service) == want_4321);
  }
  const auto pods_4213 = foo_pods({{"node-a", 4}, {"node-b", 2}, {"node-x", 1}, {"node-y", 3}});
  SUBCASE("one constraint on node, 3 out of 4 nodes are candidates") {
    CHECK(score_nodes(pod1, {host("node-a"), host("node-b"), host("node-x")}, {host("node-y")}, pods_4213) ==
          Scores{{"node-a", 33}, {"node-b", 83}, {"node-x", 100}});
  }
  SUBCASE("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key") {
    CHECK(score_nodes(pod1, {host("node-a"), node("node-b", {{"n", "node-b"}}), host("node-x")}, {host("node-y")},
                      pods_4213) == Scores{{"node-a", 16}, {"node-b", 0}, {"node-x", 100}});
  }
  SUBCASE("one constraint on zone, 3 out of 4 nodes are candidates") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kSoft, kFoo}});
    CHECK(score_nodes(pod,
                      {host("node-a", {{"zone", "zone1"}}), host("node-b", {{"zone", "zone1"}}),
                       host("node-x", {{"zone", "zone2"}})},
                      {host("node-y", {{"zone", "zone2"}})},
                      pods_4213) == Scores{{"node-a", 75}, {"node-b", 75}, {"node-x", 100}});
  }
  SUBCASE("two Constraints on zone and node, 2 out of 4 nodes are candidates") {
    const auto pod = incoming({{"foo", ""}}, {{1, "zone", kSoft, kFoo}, {1, kHost, kSoft, kFoo}});
    CHECK(score_nodes(pod, {host("node-a", {{"zone", "zone1"}}), host("node-x", {{"zone", "zone2"}})},
                      {host("node-b", {{"zone", "zone1"}}), host("node-y", {{"zone", "zone2"}})},
                      foo_pods({{"node-a", 2}, {"node-b", 1}, {"node-x", 2}, {"node-y", 4}})) ==
          Scores{{"node-a", 100}, {"node-x", 63}});
  }
}

TEST_CASE("TestPodTopologySpreadScore: different selectors") {
  const auto pod = incoming({{"foo", ""}, {"bar", ""}}, {{1, "zone", kSoft, kFoo}, {1, kHost, kSoft, kBar}});
  const std::vector<kube::Node> zoned = {host("node-a", {{"zone", "zone1"}}), host("node-b", {{"zone", "zone1"}}),
                                         host("node-x", {{"zone", "zone2"}}), host("node-y", {{"zone", "zone2"}})};
  const std::vector<kube::Pod> pods = {
      existing("p-a1", "node-a", {{"foo", ""}}), existing("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
      existing("p-y1", "node-y", {{"foo", ""}}), existing("p-y2", "node-y", {{"bar", ""}})};
  SUBCASE("two Constraints on zone and node, with different labelSelectors") {
    CHECK(score_nodes(pod, zoned, {}, pods) == Scores{{"node-a", 60}, {"node-b", 20}, {"node-x", 100}, {"node-y", 60}});
  }
  SUBCASE("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods") {
    const std::vector<kube::Pod> few = {existing("p-b1", "node-b", {{"bar", ""}}),
                                        existing("p-x1", "node-x", {{"foo", ""}}),
                                        existing("p-y1", "node-y", {{"foo", ""}, {"bar", ""}})};
    CHECK(score_nodes(pod, zoned, {}, few) == Scores{{"node-a", 100}, {"node-b", 60}, {"node-x", 40}, {"node-y", 0}});
  }
  SUBCASE("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates") {
    CHECK(score_nodes(pod, {zoned[0], zoned[1], zoned[2]}, {zoned[3]}, pods) ==
          Scores{{"node-a", 50}, {"node-b", 25}, {"node-x", 100}});
  }
  SUBCASE("two Constraints on zone, 2 out of 4 nodes are candidates") {
    const auto two_zone = incoming({{"foo", ""}, {"bar", ""}}, {{1, "zone", kSoft, kFoo}, {1, "zone", kSoft, kBar}});
    const std::vector<kube::Pod> ps = {
        existing("p-a1", "node-a", {{"foo", ""}, {"bar", ""}}), existing("p-a2", "node-a", {{"foo", ""}}),
        existing("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}), existing("p-y1", "node-y", {{"foo", ""}}),
        existing("p-y2", "node-y", {{"foo", ""}, {"bar", ""}}), existing("p-y3", "node-y", {{"foo", ""}})};
    CHECK(score_nodes(two_zone, {node("node-a", {{"zone", "zone1"}}), node("node-x", {{"zone", "zone2"}})},
                      {node("node-b", {{"zone", "zone1"}}), node("node-y", {{"zone", "zone2"}})},
                      ps) == Scores{{"node-a", 85}, {"node-x", 100}});
  }
  SUBCASE("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty") {
    Spread z{1, "zone", kSoft, kube::LabelSelector{}};
    z.match_label_keys = {"foo"};
    Spread h{1, kHost, kSoft, kube::LabelSelector{}};
    h.match_label_keys = {"bar"};
    const std::vector<kube::Pod> ps = {
        existing("p-a1", "node-a", {{"foo", ""}}), existing("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
        existing("p-y1", "node-c", {{"foo", ""}}), existing("p-y2", "node-c", {{"bar", ""}})};
    const std::vector<kube::Node> abcd = {host("node-a", {{"zone", "zone1"}}), host("node-b", {{"zone", "zone1"}}),
                                          host("node-c", {{"zone", "zone2"}}), host("node-d", {{"zone", "zone2"}})};
    CHECK(score_nodes(incoming({{"foo", ""}, {"bar", ""}}, {z, h}), abcd, {}, ps) ==
          Scores{{"node-a", 60}, {"node-b", 20}, {"node-c", 60}, {"node-d", 100}});
  }
  SUBCASE("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty") {
    Spread h{1, kHost, kSoft, kBar};
    h.match_label_keys = {"baz"};
    const std::vector<kube::Pod> ps = {
        existing("p-a1", "node-a", {{"foo", ""}}), existing("p-b1", "node-b", {{"foo", ""}, {"bar", ""}, {"baz", ""}}),
        existing("p-c1", "node-c", {{"foo", ""}}), existing("p-c2", "node-c", {{"bar", ""}}),
        existing("p-d3", "node-c", {{"bar", ""}, {"baz", ""}})};
    const std::vector<kube::Node> abcd = {host("node-a", {{"zone", "zone1"}}), host("node-b", {{"zone", "zone1"}}),
                                          host("node-c", {{"zone", "zone2"}}), host("node-d", {{"zone", "zone2"}})};
    CHECK(score_nodes(incoming({{"foo", ""}, {"bar", ""}, {"baz", ""}}, {{1, "zone", kSoft, kFoo}, h}), abcd, {}, ps) ==
          Scores{{"node-a", 60}, {"node-b", 20}, {"node-c", 60}, {"node-d", 100}});
  }
}

TEST_CASE("TestPodTopologySpreadScore: namespaces, terminating pods, minDomains, inclusion policies") {
  SUBCASE("existing pods in a different namespace do not count") {
    const auto pod = incoming({{"foo", ""}}, {{1, kHost, kSoft, kFoo}});
    const std::vector<kube::Pod> ps = {
        existing("p-a1", "node-a", {{"foo", ""}}, "ns1"), existing("p-a2", "node-a", {{"foo", ""}}),
        existing("p-b1", "node-b", {{"foo", ""}}), existing("p-b2", "node-b", {{"foo", ""}})};
    CHECK(score_nodes(pod, {host("node-a"), host("node-b")}, {}, ps) == Scores{{"node-a", 100}, {"node-b", 33}});
  }
  SUBCASE("terminating Pods should be excluded") {
    const auto pod = incoming({{"foo", ""}}, {{1, kHost, kSoft, kFoo}});
    const std::vector<kube::Pod> ps = {terminating(existing("p-a", "node-a", {{"foo", ""}})),
                                       existing("p-b", "node-b", {{"foo", ""}})};
    CHECK(score_nodes(pod, {host("node-a"), host("node-b")}, {}, ps) == Scores{{"node-a", 100}, {"node-b", 0}});
  }
  const std::vector<kube::Node> abc = {node("node-a", {{"node", "node-a"}}), node("node-b", {{"node", "node-b"}}),
                                       node("node-c", {{"node", "node-c"}})};
  SUBCASE("minDomains has no effect when ScheduleAnyway") {
    const auto pod = incoming({{"foo", ""}}, {{2, "node", kSoft, kFoo, 10}});
    CHECK(score_nodes(pod, abc, {}, foo_pods({{"node-a", 2}, {"node-b", 2}, {"node-c", 1}})) ==
          Scores{{"node-a", 75}, {"node-b", 75}, {"node-c", 100}});
  }
  const std::vector<kube::Node> foo_ab = {node("node-a", {{"node", "node-a"}, {"foo", ""}}),
                                          node("node-b", {{"node", "node-b"}, {"foo", ""}}),
                                          node("node-c", {{"node", "node-c"}})};
  const auto ps = foo_pods({{"node-a", 2}, {"node-b", 1}, {"node-c", 1}});
  const Scores honored{{"node-a", 0}, {"node-b", 33}, {"node-c", 100}};
  const Scores ignored{{"node-a", 66}, {"node-b", 100}, {"node-c", 100}};
  SUBCASE("NodeAffinityPolicy honoed with labelSelectors") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo}}, make_pod().node_selector("foo", ""));
    CHECK(score_nodes(pod, foo_ab, {}, ps) == honored);
  }
  SUBCASE("NodeAffinityPolicy ignored with labelSelectors") {
    const auto pod =
        incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo, std::nullopt, kIgnore}}, make_pod().node_selector("foo", ""));
    CHECK(score_nodes(pod, foo_ab, {}, ps) == ignored);
  }
  SUBCASE("NodeAffinityPolicy honoed with nodeAffinity") {
    const auto pod =
        incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo}}, make_pod().required(test::term().expr("foo", "In", {""})));
    CHECK(score_nodes(pod, foo_ab, {}, ps) == honored);
  }
  SUBCASE("NodeAffinityPolicy ignored with nodeAffinity") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo, std::nullopt, kIgnore}},
                              make_pod().required(test::term().expr("foo", "In", {""})));
    CHECK(score_nodes(pod, foo_ab, {}, ps) == ignored);
  }
  std::vector<kube::Node> tainted = abc;
  tainted[2] = node("node-c", {{"node", "node-c"}}, true);
  SUBCASE("NodeTaintsPolicy honored") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo, std::nullopt, kHonor, kHonor}});
    CHECK(score_nodes(pod, tainted, {}, ps) == honored);
  }
  SUBCASE("NodeTaintsPolicy ignored") {
    const auto pod = incoming({{"foo", ""}}, {{1, "node", kSoft, kFoo}});
    CHECK(score_nodes(pod, tainted, {}, ps) == ignored);
  }
}

TEST_CASE("TestPreScoreSkip and system defaults") {
  const std::vector<kube::Node> ab = {host("node-a", {{"topology.kubernetes.io/zone", "z1"}}),
                                      host("node-b", {{"topology.kubernetes.io/zone", "z2"}})};
  // upstream's "the pod doesn't have soft topology spread Constraints", with
  // a hard one and a Service: own constraints turn the defaults off.
  SUBCASE("the pod has only DoNotSchedule constraints") {
    const auto pod = incoming({}, {{1, "zone", kHard, kFoo}});
    const FixedObjects service(kube::LabelSelector{{{"foo", ""}}, {}});
    CHECK(score_nodes(pod, ab, {}, {}, &service).empty());  // own constraints: no defaults
  }
  SUBCASE("system defaults: no objects, or an empty default selector, skip") {
    CHECK(score_nodes(make_pod(), ab, {}, {}).empty());
    const FixedObjects none(kube::LabelSelector{});
    CHECK(score_nodes(make_pod(), ab, {}, {}, &none).empty());
  }
  SUBCASE("system defaults spread over hostname (maxSkew 3) and zone (maxSkew 5)") {
    const FixedObjects service(kube::LabelSelector{{{"app", "web"}}, {}});
    std::vector<kube::Pod> ps;
    for (int i = 0; i < 6; ++i) ps.push_back(existing("w" + std::to_string(i), "node-a", {{"app", "web"}}));
    ps.push_back(existing("other", "node-b", {{"app", "db"}}));
    // node-a: hostname 6·ln(4)+2 + zone 6·ln(4)+4 = 22.6 → 23; node-b: 2 + 4 = 6.
    // Normalized: 100·(23+6−23)/23 = 26 and 100·(23+6−6)/23 = 100.
    CHECK(score_nodes(make_pod().label("app", "web"), ab, {}, ps, &service) == Scores{{"node-a", 26}, {"node-b", 100}});
  }
}

TEST_CASE("schedule_pod: PodTopologySpread scores with weight 2") {
  const std::vector<kube::Node> nodes = {host("node-a"), host("node-b")};
  const auto pod = incoming({{"foo", ""}}, {{1, kHost, kSoft, kFoo}});
  std::vector<sched::NodeScore> scores;
  const auto d = decide(pod, nodes, foo_pods({{"node-a", 3}}), &scores);
  CHECK(d.node == "node-b");
  REQUIRE(scores.size() == 2);
  CHECK(scores[0].of(sched::PluginId::pod_topology_spread) == 0);
  CHECK(scores[1].of(sched::PluginId::pod_topology_spread) == 200);
  CHECK(sched::plugin_name(sched::PluginId::pod_topology_spread) == "PodTopologySpread");
}
