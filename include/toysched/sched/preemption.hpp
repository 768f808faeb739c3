// Preemption: what kube-scheduler's DefaultPreemption plugin decides when a
// pod fits nowhere (PostFilter; framework/preemption/preemption.go and
// plugins/defaultpreemption). Pure and synchronous like schedule_pod: it
// reads the cache's nodes and the pods counted on them and says which pods
// to evict from which node; the Scheduler carries that out (scheduler.hpp).
//
//   eligible?   preemptionPolicy Never: no. Nominated to a node where a pod
//               of lower priority is still terminating because of an earlier
//               preemption: no, wait for it (unless that node cannot take
//               the pod any more).
//   candidates  every node whose filters failed for a reason evicting pods
//               can cure (Code::unschedulable: resources, ports, pod
//               anti-affinity), from a random offset, until enough are
//               found (upstream's 10 %, at least 100): on a copy of the
//               node, remove every pod of lower priority; if the pod still
//               does not fit, the node is out; else put the victims back,
//               those whose eviction would violate a PodDisruptionBudget
//               first, then the others, each group most important first,
//               keeping each one the pod still fits beside. The rest are
//               the node's victims; those of the first group count as
//               violations.
//   choice      fewest PodDisruptionBudget violations, then the lowest
//               highest-victim priority, the smallest sum of priorities,
//               the fewest victims, the latest start among the most
//               important victims; then the first found.
//
// The filters' PreFilter state moves as victims are removed and put back
// and as nominated pods are added (what_if.hpp), as upstream's
// PreFilterExtensions move it (PodTopologySpread, InterPodAffinity).
//
// Differences from upstream, on purpose or not yet done:
//  - Nominated pods (Cluster::nominated) of at least the pod's priority
//    count on their node as upstream's first pass counts them; its second
//    pass (without them) can only fail where the first did, for the
//    filters we have.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/framework.hpp"
#include "toysched/sched/profile.hpp"

#include <random>
#include <string>
#include <vector>

namespace toysched::sched {

struct PreemptionResult {
  enum class Outcome : std::uint8_t {
    nominated,     // evict `victims` from `node`; the pod should fit there then
    not_eligible,  // the pod may not preempt (now): `message` says why
    no_candidate,  // no node can be freed for it: `message` says why, node by node
  } outcome = Outcome::no_candidate;
  std::string node;
  std::vector<const kube::Pod*> victims;  // most important first; point into the cluster's NodeInfos
  int pdb_violations = 0;
  // Upstream's PostFilter message, which ends the FailedScheduling text
  // after the fit error: "preemption: 0/3 nodes are available: 3 No
  // preemption victims found for incoming pod." Empty when nominated.
  std::string message;
};

// Whether a is more important than b: higher priority, then the earlier
// start (a pod not started yet counts as starting now).
bool more_important(const kube::Pod& a, const kube::Pod& b, kube::TimePoint now);

// How many candidates a preemption looks for among `potential` nodes:
// the args' percentage of them, at least their absolute number, at most
// all of them (by default 10 %, at least 100).
std::size_t preemption_candidates_to_find(std::size_t potential, const PreemptionArgs& args) noexcept;

// For a pod that `profile` found no node for; a profile without
// preemption() returns no_candidate with no message. `unresolvable_only`: the
// decision said no node failed for a reason preemption can cure (then no
// node is examined). `rng` picks where the search starts.
PreemptionResult preempt(const Profile& profile, const kube::Pod& pod, const Cluster& cluster, bool unresolvable_only,
                         std::mt19937_64& rng, kube::TimePoint now);

}  // namespace toysched::sched
