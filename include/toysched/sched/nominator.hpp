// Pods a preemption nominated to a node, not yet bound there (upstream's
// PodNominator, scheduling_queue.go nominator). The victims are being
// deleted for them, so until they bind, decisions for pods of lower or
// equal priority count them on that node (upstream's
// RunFilterPluginsWithNominatedPods): a pod of the replaced ReplicaSet does
// not take the room back before the preemptor, which would then preempt it
// again.
//
// A nomination comes from our own preemption, or from status.nominatedNodeName
// of a pending pod of ours (set by an earlier run of this scheduler). It
// ends when the pod is assumed (decided), bound, deleted, handed to another
// scheduler, or its nomination is cleared.
#pragma once

#include "toysched/kube/objects.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace toysched::sched {

class Nominator {
 public:
  // `pod` (its current copy) is nominated to `node`, replacing any earlier
  // nomination of it. An empty node ends the nomination.
  void nominate(const kube::Pod& pod, const std::string& node);
  void remove(const std::string& uid);
  bool empty() const noexcept { return by_uid_.empty(); }
  std::size_t size() const noexcept { return by_uid_.size(); }
  // Where the pod is nominated; "" when it is not.
  std::string_view node_of(const std::string& uid) const;

  // The pods nominated to `node` that a decision for `pod` counts there:
  // those of priority at least pod's, `pod` itself left out. Empty, and
  // allocating nothing, when there are none. Valid until the next change.
  std::vector<const kube::Pod*> counted_on(const kube::Pod& pod, const std::string& node) const;
  // The pods nominated to `node` of priority below `priority`: those a
  // preemption there may leave without room (upstream's
  // getLowerPriorityNominatedPods). Each as its last copy: its
  // nominated_node_name is what the API last showed ("" until our own
  // nomination of it comes back).
  std::vector<const kube::Pod*> outranked_on(const std::string& node, std::int32_t priority) const;

 private:
  struct Entry {
    kube::Pod pod;
    std::string node;
  };
  void unlink(const std::string& uid, const Entry& e);
  // By UID; element addresses are stable, so by_node_ may point at them.
  std::unordered_map<std::string, Entry> by_uid_;
  std::unordered_map<std::string, std::vector<const kube::Pod*>> by_node_;
};

}  // namespace toysched::sched
