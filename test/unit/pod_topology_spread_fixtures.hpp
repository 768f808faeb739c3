// Fixtures shared by the PodTopologySpread tests, in the shape of upstream's
// podtopologyspread tests: st.MakeNode() nodes with exactly the labels
// given, existing pods by node, spread constraints by field.
#pragma once

#include "builders.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/plugins/pod_topology_spread.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace toysched::test::spread {

using sched::Code;
using Labels = std::vector<std::pair<std::string, std::string>>;

// A node with exactly these labels (upstream's st.MakeNode() adds none).
inline kube::Node node(std::string name, Labels labels, bool tainted = false) {
  kube::Node n = test::make_node().name(name);
  n.labels = std::move(labels);
  // upstream's `taints`: node.kubernetes.io/unschedulable:NoSchedule
  if (tainted) n.taints.push_back({"node.kubernetes.io/unschedulable", "", kube::TaintEffect::no_schedule});
  return n;
}

inline kube::Pod existing(std::string name, std::string on, Labels labels, std::string ns = "default") {
  kube::Pod p = make_pod().name(std::move(name)).ns(std::move(ns)).node_name(std::move(on));
  p.labels = std::move(labels);
  return p;
}

inline kube::Pod terminating(kube::Pod p) {
  p.deleting = true;
  return p;
}

inline kube::LabelSelector exists(std::string key) {
  kube::LabelSelector s;
  s.match_expressions.push_back(test::req(std::move(key), "Exists"));
  return s;
}
inline const kube::LabelSelector kFoo = exists("foo");
inline const kube::LabelSelector kBar = exists("bar");

struct Spread {
  std::int32_t skew = 1;
  std::string key;
  kube::WhenUnsatisfiable when = kube::WhenUnsatisfiable::do_not_schedule;
  std::optional<kube::LabelSelector> selector;
  std::optional<std::int32_t> min_domains = std::nullopt;
  kube::InclusionPolicy affinity = kube::InclusionPolicy::honor;
  kube::InclusionPolicy taints = kube::InclusionPolicy::ignore;
  std::vector<std::string> match_label_keys = {};
};

constexpr auto kHard = kube::WhenUnsatisfiable::do_not_schedule;
constexpr auto kSoft = kube::WhenUnsatisfiable::schedule_anyway;
constexpr auto kHonor = kube::InclusionPolicy::honor;
constexpr auto kIgnore = kube::InclusionPolicy::ignore;

// The incoming pod "p" in namespace default.
inline kube::Pod incoming(Labels labels, std::vector<Spread> spreads, test::PodBuilder b = make_pod()) {
  kube::Pod p = b.name("p");
  p.labels = std::move(labels);
  for (auto& s : spreads) {
    kube::TopologySpreadConstraint c;
    c.max_skew = s.skew;
    c.topology_key = s.key;
    c.when_unsatisfiable = s.when;
    c.label_selector = s.selector;
    c.min_domains = s.min_domains;
    c.node_affinity_policy = s.affinity;
    c.node_taints_policy = s.taints;
    c.match_label_keys = s.match_label_keys;
    p.topology_spread.push_back(std::move(c));
  }
  return p;
}

struct World {
  std::vector<sched::NodeInfo> infos;
  std::vector<const sched::NodeInfo*> all;

  World(const std::vector<kube::Node>& nodes, const std::vector<kube::Pod>& pods) {
    infos.reserve(nodes.size());
    for (const auto& n : nodes) {
      sched::NodeInfo ni;
      ni.node = n;
      infos.push_back(std::move(ni));
    }
    for (const auto& p : pods) {
      for (auto& ni : infos) {
        if (ni.node.name == p.node_name) ni.add_pod(p);
      }
    }
    for (const auto& ni : infos) all.push_back(&ni);
  }
};

class Recorder final : public sched::FilterSink {
 public:
  void rejected(const sched::NodeInfo& ni, const sched::FilterStatus& why) override { got[ni.node.name] = why; }
  std::map<std::string, sched::FilterStatus> got;
};

using Codes = std::map<std::string, Code>;

// PreFilter over every node, then Filter node by node: the code per node.
inline Codes filter_codes(const kube::Pod& pod, const std::vector<kube::Node>& nodes,
                          const std::vector<kube::Pod>& pods) {
  const World w(nodes, pods);
  sched::PodTopologySpread pl;
  const sched::Cluster cluster(w.all);
  Codes out;
  const auto pre = pl.pre_filter(pod, cluster);
  REQUIRE(pre.kind != sched::PreFilterResult::Kind::reject);
  for (const auto* ni : w.all) {
    if (pre.kind == sched::PreFilterResult::Kind::skip) {
      out[ni->node.name] = Code::success;
      continue;
    }
    const sched::NodeInfo* one[] = {ni};
    Recorder r;
    const std::size_t kept = pl.filter(pod, one, r);
    out[ni->node.name] = kept == 1 ? Code::success : r.got.at(ni->node.name).code;
  }
  return out;
}

inline const std::vector<kube::Node>& four_nodes() {
  static const std::vector<kube::Node> n = {
      node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
      node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
      node("node-x", {{"zone", "zone2"}, {"node", "node-x"}}),
      node("node-y", {{"zone", "zone2"}, {"node", "node-y"}}),
  };
  return n;
}

// Matching pods spread as 2/1/0/3 over four_nodes().
inline std::vector<kube::Pod> spread_2103() {
  return {existing("p-a1", "node-a", {{"foo", ""}}), existing("p-a2", "node-a", {{"foo", ""}}),
          existing("p-b1", "node-b", {{"foo", ""}}), existing("p-y1", "node-y", {{"foo", ""}}),
          existing("p-y2", "node-y", {{"foo", ""}}), existing("p-y3", "node-y", {{"foo", ""}})};
}

// One decision with kube-scheduler's default profile.
inline sched::Decision decide(const kube::Pod& pod, const std::vector<kube::Node>& nodes,
                              const std::vector<kube::Pod>& pods, std::vector<sched::NodeScore>* scores = nullptr) {
  static const sched::Profile profile = sched::Profile::make_default();
  const World w(nodes, pods);
  std::mt19937_64 rng(1);
  return sched::schedule_pod(profile, pod, sched::Cluster(w.all), rng, scores);
}

}  // namespace toysched::test::spread
