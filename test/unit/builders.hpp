// Test builders for the compact Pod and Node structs, in the style of
// kube-scheduler's st.MakePod()/st.MakeNode():
//
//   kube::Pod p = make_pod().ns("a").name("p").cpu("500m").memory("1Gi");
//   kube::Node n = make_node().name("n1").cpu("4").memory("32Gi").pods(110)
//                      .label("zone", "a").taint("dedicated", "gpu", "NoSchedule");
//
// Quantities go through the real parser, so "500m" means what the API
// server means by it. A bad quantity or effect throws: it is a bug in the test.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/kube/quantity.hpp"
#include "toysched/sched/node_info.hpp"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toysched::test {

inline std::int64_t milli(std::string_view q) {
  auto r = kube::parse_quantity_milli(q);
  if (!r) throw std::invalid_argument("bad quantity: " + std::string(q));
  return *r;
}

inline std::int64_t value(std::string_view q) {
  auto r = kube::parse_quantity_value(q);
  if (!r) throw std::invalid_argument("bad quantity: " + std::string(q));
  return *r;
}

// "" (tolerations only) → all; otherwise the API's spelling.
inline kube::TaintEffect effect(std::string_view e) {
  if (e.empty()) return kube::TaintEffect::all;
  if (e == "NoSchedule") return kube::TaintEffect::no_schedule;
  if (e == "PreferNoSchedule") return kube::TaintEffect::prefer_no_schedule;
  if (e == "NoExecute") return kube::TaintEffect::no_execute;
  throw std::invalid_argument("bad effect: " + std::string(e));
}

inline void set_extended(std::vector<std::pair<std::string, std::int64_t>>& ext, std::string_view name,
                         std::int64_t v) {
  auto it =
      std::lower_bound(ext.begin(), ext.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != ext.end() && it->first == name) {
    it->second = v;
  } else {
    ext.emplace(it, std::string(name), v);
  }
}

inline kube::SelectorOp selector_op(std::string_view op) {
  if (op == "In") return kube::SelectorOp::in;
  if (op == "NotIn") return kube::SelectorOp::not_in;
  if (op == "Exists") return kube::SelectorOp::exists;
  if (op == "DoesNotExist") return kube::SelectorOp::does_not_exist;
  if (op == "Gt") return kube::SelectorOp::gt;
  if (op == "Lt") return kube::SelectorOp::lt;
  return kube::SelectorOp::unknown;
}

inline kube::NodeSelectorRequirement req(std::string key, std::string_view op, std::vector<std::string> values = {}) {
  return {std::move(key), selector_op(op), std::move(values)};
}

// term().expr("zone", "In", {"a"}).field("metadata.name", "In", {"n1"})
class TermBuilder {
 public:
  TermBuilder& expr(std::string key, std::string_view op, std::vector<std::string> values = {}) {
    t_.match_expressions.push_back(req(std::move(key), op, std::move(values)));
    return *this;
  }
  TermBuilder& field(std::string key, std::string_view op, std::vector<std::string> values = {}) {
    t_.match_fields.push_back(req(std::move(key), op, std::move(values)));
    return *this;
  }
  kube::NodeSelectorTerm obj() const { return t_; }
  operator kube::NodeSelectorTerm() const { return t_; }  // NOLINT: builder

 private:
  kube::NodeSelectorTerm t_;
};
inline TermBuilder term() { return {}; }

class PodBuilder {
 public:
  PodBuilder& ns(std::string v) {
    p_.ns = std::move(v);
    return *this;
  }
  // The uid follows the name unless set explicitly, so pods built with
  // different names are different pods to a cache keyed by uid.
  PodBuilder& name(std::string v) {
    p_.name = std::move(v);
    if (!uid_set_) p_.uid = "uid-" + p_.name;
    return *this;
  }
  PodBuilder& uid(std::string v) {
    p_.uid = std::move(v);
    uid_set_ = true;
    return *this;
  }
  PodBuilder& node_name(std::string v) {
    p_.node_name = std::move(v);
    return *this;
  }
  PodBuilder& priority(std::int32_t v) {
    p_.priority = v;
    return *this;
  }
  PodBuilder& preempt_never() {
    p_.preempt_never = true;
    return *this;
  }
  PodBuilder& nominated(std::string node) {
    p_.nominated_node_name = std::move(node);
    return *this;
  }
  PodBuilder& started(kube::TimePoint t) {
    p_.start_time = t;
    return *this;
  }
  // deletionTimestamp set, DisruptionTarget True by PreemptionByScheduler.
  PodBuilder& terminating_by_preemption() {
    p_.deleting = true;
    p_.terminating_by_preemption = true;
    return *this;
  }
  PodBuilder& cpu(std::string_view q) {
    p_.requests.milli_cpu = milli(q);
    return *this;
  }
  PodBuilder& memory(std::string_view q) {
    p_.requests.memory = value(q);
    return *this;
  }
  PodBuilder& ephemeral_storage(std::string_view q) {
    p_.requests.ephemeral_storage = value(q);
    return *this;
  }
  PodBuilder& extended(std::string_view res, std::string_view q) {
    set_extended(p_.requests.extended, res, value(q));
    return *this;
  }
  PodBuilder& node_selector(std::string k, std::string v) {
    p_.node_selector.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  // Toleration{key, operator ("Equal"/"Exists"/""), value, effect ("" = all)}.
  PodBuilder& toleration(std::string key, std::string_view op, std::string value, std::string_view eff = "") {
    kube::Toleration t;
    t.key = std::move(key);
    t.op = op == "Exists"                  ? kube::TolerationOp::exists
           : (op == "Equal" || op.empty()) ? kube::TolerationOp::equal
                                           : kube::TolerationOp::unknown;
    t.value = std::move(value);
    t.effect = effect(eff);
    p_.tolerations.push_back(std::move(t));
    return *this;
  }
  PodBuilder& required(kube::NodeSelectorTerm t) {
    p_.required_affinity.push_back(std::move(t));
    return *this;
  }
  PodBuilder& preferred(std::int32_t weight, kube::NodeSelectorTerm t) {
    p_.preferred_affinity.push_back({weight, std::move(t)});
    return *this;
  }
  PodBuilder& label(std::string k, std::string v) {
    p_.labels.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  PodBuilder& host_port(std::int32_t port, std::string protocol = "TCP", std::string ip = "0.0.0.0") {
    p_.host_ports.push_back({port, std::move(protocol), std::move(ip)});
    return *this;
  }
  // A spec.volumes[] entry naming this claim (persistentVolumeClaim.claimName).
  PodBuilder& claim(std::string name) {
    p_.claims.push_back(std::move(name));
    return *this;
  }
  // A spec.volumes[] entry of an in-tree disk (gcePersistentDisk, ...).
  PodBuilder& disk(kube::InlineDisk d) {
    p_.disks.push_back(std::move(d));
    return *this;
  }
  kube::Pod obj() const { return p_; }
  operator kube::Pod() const { return p_; }  // NOLINT: builder

 private:
  kube::Pod p_ = [] {
    kube::Pod p;
    p.ns = "default";
    p.name = "pod";
    p.uid = "uid-pod";
    p.scheduler_name = "toy-scheduler";
    p.phase = "Pending";
    return p;
  }();
  bool uid_set_ = false;
};
inline PodBuilder make_pod() { return {}; }

class NodeBuilder {
 public:
  NodeBuilder& name(std::string v) {
    n_.name = v;
    n_.uid = "uid-" + v;
    for (auto& [k, val] : n_.labels) {
      if (k == "kubernetes.io/hostname") val = v;
    }
    return *this;
  }
  NodeBuilder& cpu(std::string_view q) {
    n_.allocatable.milli_cpu = milli(q);
    return *this;
  }
  NodeBuilder& memory(std::string_view q) {
    n_.allocatable.memory = value(q);
    return *this;
  }
  NodeBuilder& ephemeral_storage(std::string_view q) {
    n_.allocatable.ephemeral_storage = value(q);
    return *this;
  }
  NodeBuilder& pods(std::int64_t n) {
    n_.allocatable.pods = n;
    return *this;
  }
  NodeBuilder& extended(std::string_view res, std::string_view q) {
    set_extended(n_.allocatable.extended, res, value(q));
    return *this;
  }
  NodeBuilder& label(std::string k, std::string v) {
    for (auto& [key, val] : n_.labels) {
      if (key == k) {
        val = std::move(v);
        return *this;
      }
    }
    n_.labels.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  NodeBuilder& taint(std::string key, std::string value, std::string_view eff) {
    n_.taints.push_back({std::move(key), std::move(value), effect(eff)});
    return *this;
  }
  NodeBuilder& unschedulable(bool v = true) {
    n_.unschedulable = v;
    return *this;
  }
  kube::Node obj() const { return n_; }
  operator kube::Node() const { return n_; }  // NOLINT: builder
  // A NodeInfo with no pods counted yet.
  sched::NodeInfo info() const {
    sched::NodeInfo ni;
    ni.node = n_;
    return ni;
  }

 private:
  // scheduler_perf's default node (templates/node-default.yaml): 4 cpu,
  // 32Gi, 110 pods, Ready, labelled with its hostname.
  kube::Node n_ = [] {
    kube::Node n;
    n.name = "node";
    n.uid = "uid-node";
    n.ready = true;
    n.allocatable.milli_cpu = 4000;
    n.allocatable.memory = 32LL << 30;
    n.allocatable.pods = 110;
    n.labels.emplace_back("kubernetes.io/hostname", "node");
    return n;
  }();
};
inline NodeBuilder make_node() { return {}; }

}  // namespace toysched::test
