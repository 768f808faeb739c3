// Fixtures of upstream's interpodaffinity filtering_test.go and scoring_test.go
// (namespaces, terms, pods, nodes) and the World they are judged in, kept
// apart from inter_pod_affinity_test.cpp so the tables read on their own.
#pragma once

#include <doctest/doctest.h>

#include "builders.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/plugins/inter_pod_affinity.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace toysched::test::affinity {

using sched::InterPodAffinity;
using sched::NodeInfo;
using test::make_pod;

using Labels = kube::StringPairs;

// upstream's `namespaces` fixture (scoring_test.go).
class Namespaces final : public sched::ClusterObjects {
 public:
  const kube::StringPairs* namespace_labels(std::string_view ns) const override {
    for (const auto& [name, labels] : all_) {
      if (name == ns) return &labels;
    }
    return nullptr;
  }
  kube::LabelSelector default_selector(const kube::Pod& /*pod*/) const override { return {}; }

 private:
  std::vector<std::pair<std::string, Labels>> all_ = {
      {"subteam1.team1", {{"team", "team1"}}},
      {"subteam2.team1", {{"team", "team1"}}},
      {"subteam1.team2", {{"team", "team2"}}},
      {"subteam2.team2", {{"team", "team2"}}},
  };
};
inline const Namespaces kNamespaces;

inline kube::LabelSelector expr(std::string key, std::string_view op, std::vector<std::string> values = {}) {
  kube::LabelSelector s;
  s.match_expressions.push_back(test::req(std::move(key), op, std::move(values)));
  return s;
}

// A term selecting pods by one expression (st.PodAffinityIn / NotIn / Exists).
inline kube::PodAffinityTerm term(std::string key, std::string_view op, std::vector<std::string> values,
                                  std::string topology) {
  kube::PodAffinityTerm t;
  t.label_selector = expr(std::move(key), op, std::move(values));
  t.topology_key = std::move(topology);
  return t;
}
inline kube::PodAffinityTerm with_ns_selector(kube::PodAffinityTerm t, kube::LabelSelector sel,
                                              std::vector<std::string> namespaces = {}) {
  t.namespace_selector = std::move(sel);
  t.namespaces = std::move(namespaces);
  return t;
}

inline kube::Pod pod(std::string ns, Labels labels, std::string node = "") {
  kube::Pod p = make_pod().ns(std::move(ns)).node_name(std::move(node));
  p.labels = std::move(labels);
  return p;
}
inline kube::Pod req_aff(kube::Pod p, kube::PodAffinityTerm t) {
  p.pod_affinity.required.push_back(std::move(t));
  return p;
}
inline kube::Pod req_anti(kube::Pod p, kube::PodAffinityTerm t) {
  p.pod_anti_affinity.required.push_back(std::move(t));
  return p;
}
inline kube::Pod pref_aff(kube::Pod p, std::int32_t w, kube::PodAffinityTerm t) {
  p.pod_affinity.preferred.push_back({w, std::move(t)});
  return p;
}
inline kube::Pod pref_anti(kube::Pod p, std::int32_t w, kube::PodAffinityTerm t) {
  p.pod_anti_affinity.preferred.push_back({w, std::move(t)});
  return p;
}

inline kube::Node node(std::string name, Labels labels) {
  kube::Node n = test::make_node().name(std::move(name));
  n.labels = std::move(labels);  // exactly upstream's labels, no hostname
  return n;
}

// Nodes with placed pods counted, as a snapshot (pods stay put: NodeInfo
// points at them).
struct World {
  World(const std::vector<kube::Node>& nodes, const std::vector<kube::Pod>& placed)
      : pods(placed.begin(), placed.end()) {
    infos.reserve(nodes.size());
    for (const auto& n : nodes) {
      NodeInfo ni;
      ni.node = n;
      infos.push_back(std::move(ni));
    }
    for (const auto& p : pods) {
      for (auto& ni : infos) {
        if (ni.node.name == p.node_name) ni.add_pod(p);
      }
    }
    for (const auto& ni : infos) ptrs.push_back(&ni);
  }
  World(const World&) = delete;
  sched::Cluster cluster() const {
    sched::Cluster c{ptrs};
    c.objects = &kNamespaces;
    return c;
  }
  std::deque<kube::Pod> pods;
  std::vector<NodeInfo> infos;
  std::vector<const NodeInfo*> ptrs;
};

// "skip" when PreFilter skips; else per node "" (passes) or
// "<code>: <reason>" with code U (Unschedulable) or UU (…AndUnresolvable).
inline std::vector<std::string> filter(const kube::Pod& p, const World& w) {
  InterPodAffinity plugin;
  if (plugin.pre_filter(p, w.cluster()).kind == sched::PreFilterResult::Kind::skip) return {"skip"};
  std::vector<std::string> out;
  for (const NodeInfo* ni : w.ptrs) {
    const sched::FilterStatus st = plugin.filter_node(p, *ni);
    if (st.ok()) {
      out.emplace_back();
      continue;
    }
    const auto reasons = st.reason_strings(p);
    REQUIRE(reasons.size() == 1);
    out.push_back(std::string(st.code == sched::Code::unresolvable ? "UU: " : "U: ") + reasons.front());
  }
  return out;
}

// Normalized scores over every node; {} when PreScore skips.
inline std::vector<std::int64_t> scores(const kube::Pod& p, const World& w, std::int32_t hard_weight = 1) {
  InterPodAffinity plugin(hard_weight);
  if (!plugin.pre_score(p, w.ptrs, w.cluster())) return {};
  std::vector<std::int64_t> out(w.ptrs.size());
  plugin.score(p, w.ptrs, out);
  plugin.normalize(out);
  return out;
}

using Strings = std::vector<std::string>;
using Scores = std::vector<std::int64_t>;
inline const std::string kAff = "UU: node(s) didn't match pod affinity rules";
inline const std::string kAnti = "U: node(s) didn't match pod anti-affinity rules";
inline const std::string kExisting = "U: node(s) didn't satisfy existing pods anti-affinity rules";

}  // namespace toysched::test::affinity
