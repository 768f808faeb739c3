// What the scheduler knows of the cluster between decisions: nodes, the pods
// bound to them, and the pods it has decided on but not yet seen bound.
//
// Pod states (kube-scheduler's cache, keyed by pod UID):
//
//            assume()               watch shows it bound (add_pod)
//   (none) ───────────► Assumed ───────────────────────────────► Bound
//                         │  forget() (bind failed / lost race)    │ remove_pod()
//                         ▼                                        ▼
//                       (none)                                   (none)
//
// An assumed pod counts against its node at once, so the next decision sees
// the room it took; that is what stops this scheduler over-committing a node
// while binds are in flight. Assumed pods never expire: the watch confirms
// them or the bind's failure forgets them (an expiry was kube-scheduler's
// over-commit bug, kubernetes#106361). Another scheduler's assumed pods are
// invisible here: that is the double decision leader election prevents.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "toysched/kube/objects.hpp"
#include "toysched/sched/framework.hpp"
#include "toysched/sched/node_info.hpp"

namespace toysched::sched {

class Cache {
 public:
  // Nodes from the node informer.
  void add_node(const kube::Node& n);
  void update_node(const kube::Node& n);
  void remove_node(const std::string& name);

  // Bound pods from the pod informer (spec.nodeName set, not terminal).
  void add_pod(const kube::Pod& p);
  void update_pod(const kube::Pod& old, const kube::Pod& now);
  void remove_pod(const kube::Pod& p);

  // Our decision, before the bind is confirmed. False if the pod is already
  // in the cache (assumed or bound) or the node is unknown.
  bool assume(const kube::Pod& p, const std::string& node);
  // Undo assume (the bind failed or lost a race).
  void forget(const std::string& uid);
  bool is_assumed(const std::string& uid) const;
  bool contains(const std::string& uid) const { return pods_.count(uid) > 0; }

  // The nodes a decision is made over, in a stable order (by name). Valid
  // until the next node add/remove; NodeInfo contents track every change.
  const std::vector<const NodeInfo*>& nodes();
  const NodeInfo* node(const std::string& name) const;
  // nodes() with the counts plugins use to skip work (framework.hpp).
  Cluster cluster() {
    Cluster c{nodes(), tainted_nodes_, unschedulable_nodes_};
    c.images = &images_;
    c.pods_with_affinity = affinity_pods_;
    c.pods_with_required_anti_affinity = anti_affinity_pods_;
    return c;
  }
  std::size_t node_count() const noexcept { return nodes_.size(); }

  struct AssumedPod {
    std::string key;  // ns/name
    std::string node;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<AssumedPod> assumed() const;
  std::size_t assumed_count() const noexcept { return assumed_count_; }
  std::size_t bound_count() const noexcept { return pods_.size() - assumed_count_; }

  // Who bound a pod, as far as this process saw (the live page colours by
  // it): us (assumed by us, then seen bound where we sent it), another
  // (first seen bound after mark_listed()), or unknown (bound before).
  enum class BoundBy : std::uint8_t { unknown, us, other };
  // Pods seen from now on were bound while we watched.
  void mark_listed() noexcept { listed_ = true; }
  // A 409 on our bind: whoever bound the pod, it was not us.
  void lost_race(const std::string& uid);
  // f(pod, assumed, bound_by) for every pod, bound or assumed, in no order.
  template <class F>
  void for_each_pod(F&& f) const {
    for (const auto& [uid, st] : pods_) f(st.pod, st.assumed, st.by);
  }

 private:
  struct PodState {
    kube::Pod pod;  // node_name = where it counts
    bool assumed = false;
    std::chrono::steady_clock::time_point since;
    BoundBy by = BoundBy::unknown;
  };
  NodeInfo& info_for(const std::string& node);  // creates a placeholder for pods on unknown nodes
  void count(const kube::Pod& p);
  void tally(const kube::Node& n, int sign);  // the node counts of cluster()
  void uncount(const kube::Pod& p);

  // Nodes that exist (known), and placeholders for nodes that pods name but
  // that are not (yet, or no longer) known: their pods still count if the
  // node comes back.
  struct NodeEntry {
    std::unique_ptr<NodeInfo> info;
    bool known = false;
  };
  std::map<std::string, NodeEntry> nodes_;
  // By UID. Element addresses are stable (rehashing moves no element):
  // NodeInfo keeps pointers to the pods it counts.
  std::unordered_map<std::string, PodState> pods_;
  std::size_t assumed_count_ = 0;
  std::int64_t tainted_nodes_ = 0;        // known nodes with any taint
  std::int64_t unschedulable_nodes_ = 0;  // known nodes cordoned
  // NodeInfo::pods_with_affinity / pods_with_required_anti_affinity summed
  // over every NodeInfo, placeholders included (an upper bound for cluster()).
  std::int64_t affinity_pods_ = 0;
  std::int64_t anti_affinity_pods_ = 0;
  ImageStates images_;  // of the known nodes
  bool listed_ = false;
  std::vector<const NodeInfo*> list_;
  bool list_dirty_ = true;
};

}  // namespace toysched::sched
