// One scheduling decision: the synchronous part of kube-scheduler's
// scheduling cycle (schedule_one.go schedulePod), pure and allocation-light.
//
//   PreFilter (each filter plugin: skip, narrow to node names, or reject)
//     → a pod a preemption nominated to a node tries that node first and
//       takes it if it fits there (upstream's evaluateNominatedNode)
//     → Filter nodes (the profile's order, first rejection wins; a node
//       with nominated pods of at least the pod's priority must also fit
//       them, Cluster::nominated), from where
//       the last cycle stopped, until percentageOfNodesToScore of them fit
//       (upstream's numFeasibleNodesToFind: all below 100 nodes, adaptive
//       above; feasible_nodes_to_find below)
//     → 0 feasible: FitError message   1 feasible: take it, unscored
//     → Score + normalize + weight the feasible nodes → highest total,
//       ties broken uniformly at random
//
// Differences from upstream, on purpose:
//  - Preemption is not part of the decision: the Scheduler runs it after a
//    failure (preemption.hpp) and appends its "preemption: …" sentence to
//    the FitError text, as upstream's PostFilter does.
//  - Not thread-parallel: the loop's one thread owns the cache and runs
//    every decision (docs/architecture.md, "The single-thread rules").
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/profile.hpp"

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace toysched::sched {

struct DecisionTrace;  // explain.hpp

struct Decision {
  // unresolvable: every node that failed did so for a reason preemption
  // cannot fix (taint, affinity, cordon, node name), or there are no nodes.
  enum class Status { scheduled, unschedulable, unresolvable, error } status = Status::error;
  std::string node;  // chosen node when scheduled
  int evaluated_nodes = 0, feasible_nodes = 0;
  std::string message;  // FitError text when not scheduled
};

// Per-plugin scores of one feasible node, normalized and multiplied by the
// plugin's weight, as upstream's NodePluginScores holds them and logs them at
// -v=10 ("Plugin scored node for pod", "Calculated node's final score for pod").
// Plugins skipped at PreScore are not listed.
struct NodeScore {
  const NodeInfo* node = nullptr;
  std::vector<std::pair<PluginId, std::int64_t>> plugins;
  std::int64_t total = 0;
  // 0 when the plugin did not score.
  std::int64_t of(PluginId id) const noexcept;
};

// How many nodes a decision looks at, as kube-scheduler's
// percentageOfNodesToScore: filtering stops once this many feasible nodes
// are found, and only those are scored. Below 100 nodes, all of them.
// percentage 0 is kube-scheduler's adaptive rule (50 - nodes/125, at least
// 5 %), 100 is a full search; the result is at least 100.
std::size_t feasible_nodes_to_find(std::size_t nodes, int percentage) noexcept;

// The round-robin state of a sampled search: the next decision starts where
// the last one stopped, so every node gets its turn.
struct Search {
  int percentage = 0;
  std::size_t next_start = 0;
};

// The Decision for a pod with hard constraints we do not evaluate
// (pod.unsupported): unresolvable, its message naming each such field.
Decision refuse_unsupported(const kube::Pod& pod);

// `scores`, when given, receives one entry per feasible node in input order
// (left empty when fewer than two nodes are feasible: nothing is scored then).
// Single-threaded: scratch buffers are reused across calls on one thread.
// Without `search`, every node is filtered and every feasible one scored.
// `trace`, when given, receives what the decision looked at (explain.hpp).
Decision schedule_pod(const Profile& profile, const kube::Pod& pod, const Cluster& cluster, std::mt19937_64& rng,
                      std::vector<NodeScore>* scores = nullptr, Search* search = nullptr,
                      DecisionTrace* trace = nullptr);

}  // namespace toysched::sched
