// What the scheduler tells the rest of the program, shared by the
// scheduling cycle (scheduler.hpp) and the binding cycle (binder.hpp): its
// counters, the hooks /metrics sets, and each decision's outcome for the
// live page.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "toysched/kube/objects.hpp"
#include "toysched/sched/framework.hpp"
#include "toysched/sched/latency.hpp"

namespace toysched::sched {

// Hooks for /metrics, so the scheduling code does not depend on them.
struct SchedulerObserver {
  // Each attempt's end, as upstream counts it: "scheduled" once its bind
  // succeeded, "unschedulable", or "error" (the decision or the bind
  // failed); `seconds` from the start of its scheduling cycle, the bind
  // included; `profile` the pod's schedulerName.
  std::function<void(const char* result, const std::string& profile, double seconds)> attempt;
  // Each decision's CPU time (filter and score: upstream's schedulePod).
  std::function<void(double seconds)> algorithm;
  // A pod bound: its attempts and the time from first queued to bound.
  std::function<void(int attempts, double seconds)> bound;
  // A pod bound: where its time went, stage by stage (latency.hpp).
  std::function<void(const PodTimeline&)> stages;
  // One decision in ten times its plugin calls into this (nullptr: none).
  PluginTimings* plugin_timings = nullptr;
  // A preemption chose its victims: how many.
  std::function<void(std::size_t victims)> preemption_victims;
};

// A decision's outcome, for the live page's ticker (ui/feed.hpp).
struct Outcome {
  enum class Kind : std::uint8_t { bound, lost, failed };
  Kind kind;
  const kube::Pod& pod;
  std::string_view node;     // bound: where; lost: where the watch shows it now ("" if not yet)
  std::string_view message;  // failed: why
};

struct SchedulerStats {
  std::uint64_t attempts_scheduled = 0;
  std::uint64_t attempts_unschedulable = 0;
  std::uint64_t attempts_error = 0;
  std::uint64_t binds_ok = 0;
  std::uint64_t bind_conflicts = 0;  // 409: another scheduler was first
  std::uint64_t bind_errors = 0;
  int binds_in_flight = 0;  // decided, bind not answered yet (waiting for a slot included)
  // Of them, waiting in PreBind for the volume controller (for up to
  // bindTimeoutSeconds): not busy binding, nothing to drain at shutdown.
  int binds_waiting_for_volumes = 0;
  std::uint64_t preemption_attempts = 0;  // PostFilter runs (upstream's scheduler_preemption_attempts_total)
  std::uint64_t preemptions = 0;          // of them, with victims chosen
  std::uint64_t victims_evicted = 0;      // victims deleted (or found gone) by our preemptions
  std::uint64_t preemption_errors = 0;    // preemptions stopped by an API error
};

}  // namespace toysched::sched
