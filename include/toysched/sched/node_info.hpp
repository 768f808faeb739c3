// What the cache knows about one node: the Node itself plus the running sums
// the filters and scores read, so a scheduling cycle never walks a node's
// pods. kube-scheduler keeps the same aggregate (framework/types.go NodeInfo).
//
// Invariant: the sums equal the fold of add_pod over the pods counted here,
// bound or assumed; remove_pod is its exact inverse, so assume → forget
// leaves every field as it was.
#pragma once

#include "toysched/kube/objects.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace toysched::sched {

// The cpu and memory a pod counts for on its node in scoring (NodeInfo's
// non-zero sums), and those NodeResourcesFit scores the pod being scheduled
// with: kube::Pod::nonzero and nonzero_incoming, or for a pod made by hand
// its request with 0 taken as absent (100m / 200MB). Filtering never uses these.
inline kube::NonZeroRequests as_one_container(const kube::Resources& r) noexcept {
  return {r.milli_cpu != 0 ? r.milli_cpu : kube::kDefaultMilliCpuRequest,
          r.memory != 0 ? r.memory : kube::kDefaultMemoryRequest};
}
inline kube::NonZeroRequests nonzero_requests(const kube::Pod& p) noexcept {
  return p.nonzero ? *p.nonzero : as_one_container(p.requests);
}
inline kube::NonZeroRequests nonzero_incoming_requests(const kube::Pod& p) noexcept {
  return p.nonzero_incoming ? *p.nonzero_incoming : as_one_container(p.requests);
}

// Pods of one namespace with the same labels and the same deletion state,
// counted together. PodTopologySpread and InterPodAffinity count, node by
// node, the pods a selector matches; the replicas of a workload share their
// labels, so a node holds a few groups where it holds many pods, and a
// count is a few selector matches per node, not one per pod.
struct PodGroup {
  std::string ns;
  kube::StringPairs labels;
  bool deleting = false;  // PodTopologySpread does not count terminating pods
  std::uint64_t hash = 0;
  int count = 0;
};

struct NodeInfo {
  // The sums first, then the Node: a decision reads these and the Node's
  // first fields for every node, and packed together they span fewer cache
  // lines (the cycle benchmark is mostly cache misses).
  //
  // Sum of the effective requests of every pod counted here. `extended`
  // stays sorted by name and holds no zero entries, so add then remove
  // compares equal to the start.
  kube::Resources requested;
  std::int64_t nonzero_milli_cpu = 0;  // scoring only: see nonzero_requests()
  std::int64_t nonzero_memory = 0;
  int pod_count = 0;
  // node.name's NodeNames number (0 when only a test made this NodeInfo),
  // beside pod_count, which every decision reads: what a recorded decision
  // keeps of each node it lists (node_names.hpp).
  std::uint32_t name_id = 0;
  std::vector<kube::HostPort> used_ports;  // a multiset: two pods may bind the same port on different IPs
  kube::Node node;

  std::vector<PodGroup> pod_groups;
  // Every pod counted here, in no order (preemption looks for victims among
  // them). Pointers to the pods add_pod was given, as below.
  std::vector<const kube::Pod*> pods;
  // Pods with any pod affinity or anti-affinity term (InterPodAffinity's
  // symmetry: an existing pod's terms apply to the incoming one), and those
  // of them with required anti-affinity. Pointers to the pods add_pod was
  // given: the caller keeps each pod alive, unmoved, until remove_pod.
  std::vector<const kube::Pod*> pods_with_affinity;
  std::vector<const kube::Pod*> pods_with_required_anti_affinity;
  // image_hashes(node), for ImageLocality: kept by whoever sets `node`.
  std::vector<std::uint64_t> image_hashes;

  // `p` must stay where it is until remove_pod(p) (the Cache holds it).
  void add_pod(const kube::Pod& p);
  void remove_pod(const kube::Pod& p);
  // Pods counted here whose namespace and labels satisfy `matches(group)`,
  // terminating pods included or not.
  template <class Match>
  int count_pods(Match&& matches, bool count_deleting) const {
    int n = 0;
    for (const PodGroup& g : pod_groups) {
      if ((count_deleting || !g.deleting) && matches(g)) n += g.count;
    }
    return n;
  }
};

}  // namespace toysched::sched
