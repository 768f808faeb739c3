// One filter plugin asked about one pod, as upstream's plugin tables ask:
// PreFilter, then Filter on a node unless PreFilter skipped or rejected.
// The answers read as the tables' expectations: "skip", "pass",
// "prefilter: MESSAGE", or the Filter's code and first reason
// ("Unschedulable: node(s) ...").
#pragma once

#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/registry.hpp"

#include <memory>
#include <span>
#include <string>

namespace toysched::test {

struct FilterVerdict {
  explicit FilterVerdict(sched::PluginId id) : plugin(sched::registry_entry(id).make({})) {}
  std::unique_ptr<sched::Plugin> plugin;

  // "skip", "prefilter: MESSAGE", or "run".
  std::string pre_filter(const kube::Pod& pod, const sched::Cluster& cluster) {
    const sched::PreFilterResult r = plugin->pre_filter(pod, cluster);
    if (r.kind == sched::PreFilterResult::Kind::skip) return "skip";
    if (r.kind == sched::PreFilterResult::Kind::reject) return "prefilter: " + std::string(r.message);
    return "run";
  }
  // "pass", or the code and first reason.
  std::string filter(const kube::Pod& pod, const sched::NodeInfo& ni) {
    sched::Plugin* const list[] = {plugin.get()};
    const sched::FilterStatus s = sched::filter_one(list, pod, ni);
    if (s.ok()) return "pass";
    const auto reasons = s.reason_strings(pod);
    return std::string(sched::code_name(s.code)) + ": " + (reasons.empty() ? "" : reasons.front());
  }
};

// Both, on a cluster of `ni` alone whose other objects are `objects`.
inline std::string filter_verdict(sched::PluginId id, const kube::Pod& pod, const sched::NodeInfo& ni,
                                  const sched::ClusterObjects* objects) {
  FilterVerdict v(id);
  const sched::NodeInfo* one[] = {&ni};
  sched::Cluster cluster{std::span<const sched::NodeInfo* const>(one)};
  cluster.objects = objects;
  const std::string pre = v.pre_filter(pod, cluster);
  return pre == "run" ? v.filter(pod, ni) : pre;
}

}  // namespace toysched::test
