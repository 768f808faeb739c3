// The cluster events that can make an unschedulable pod fit (queue.hpp).
#include "toysched/sched/queue.hpp"

#include <algorithm>

namespace toysched::sched {
namespace {

// As maps: the server's order of labels or conditions carries no meaning.
bool same_entries(const kube::StringPairs& a, const kube::StringPairs& b) {
  if (a.size() != b.size()) return false;
  return std::all_of(a.begin(), a.end(), [&](const auto& kv) {
    const std::string* v = kube::find_value(b, kv.first);
    return v != nullptr && *v == kv.second;
  });
}

}  // namespace

bool node_update_can_help(const kube::Node& old, const kube::Node& now) {
  // Taints are compared in order, as upstream's DeepEqual does: a reorder
  // is rare and a spurious move is harmless.
  return old.unschedulable != now.unschedulable || old.allocatable != now.allocatable || old.taints != now.taints ||
         !same_entries(old.labels, now.labels) || !same_entries(old.conditions, now.conditions) ||
         old.declared_features != now.declared_features;
}

bool assigned_pod_add_can_help(const kube::Pod& pending) {
  if (!pending.pod_affinity.required.empty()) return true;
  return std::any_of(pending.topology_spread.begin(), pending.topology_spread.end(),
                     [](const auto& c) { return c.when_unsatisfiable == kube::WhenUnsatisfiable::do_not_schedule; });
}

bool assigned_pod_relabel_can_help(const kube::Pod& pending) {
  return assigned_pod_add_can_help(pending) || !pending.pod_anti_affinity.required.empty();
}

bool pod_scaled_down(const kube::Pod& old, const kube::Pod& now) {
  const kube::Resources& a = old.requests;
  const kube::Resources& b = now.requests;
  if (b.milli_cpu < a.milli_cpu || b.memory < a.memory || b.ephemeral_storage < a.ephemeral_storage) return true;
  // extended_value() is 0 for a name the new request dropped: also a decrease.
  return std::any_of(a.extended.begin(), a.extended.end(),
                     [&](const auto& e) { return b.extended_value(e.first) < e.second; });
}

}  // namespace toysched::sched
