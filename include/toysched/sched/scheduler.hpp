// The scheduler: informers feed the cache and the queue; one task pops pods
// and decides (synchronous CPU work, no I/O); each decision's bind runs as a
// coroutine of its own, at most bind_parallelism at once, so the cycle never
// waits on the network.
//
//   watch/nodes ─┐
//   watch/pods ──┼─► Cache ◄──── assume ──┐
//                └─► Queue ── pop ─► decide (filter, score) ─► spawn bind/<ns>/<pod>
//                                                                  │ 201: wait for the watch
//                                                                  │ 409: lost a race: forget, count, log
//                                                                  └ other: forget, backoff
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "toysched/kube/api.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/queue.hpp"

namespace toysched::sched {

struct SchedulerOptions {
  std::string scheduler_name = "toy-scheduler";
  int bind_parallelism = 16;
  int percentage_of_nodes_to_score = 0;
  std::uint64_t seed = std::random_device{}();  // tie-breaking between equal nodes
  std::string instance;                         // reportingInstance of events
};

// Hooks for /metrics, so the scheduling code does not depend on them.
struct SchedulerObserver {
  // Each attempt: "scheduled", "unschedulable" or "error", and its CPU time.
  std::function<void(const char* result, double seconds)> attempt;
  // A pod bound: its attempts and the time from first queued to bound.
  std::function<void(int attempts, double seconds)> bound;
};

struct SchedulerStats {
  std::uint64_t attempts_scheduled = 0;
  std::uint64_t attempts_unschedulable = 0;
  std::uint64_t attempts_error = 0;
  std::uint64_t binds_ok = 0;
  std::uint64_t bind_conflicts = 0;  // 409: another scheduler was first
  std::uint64_t bind_errors = 0;
  int binds_in_flight = 0;
};

class Scheduler {
 public:
  // `api` makes the binds; `events_api` (its own client and rate limit)
  // posts events and status patches.
  Scheduler(kube::Api& api, kube::Api& events_api, SchedulerOptions opts);
  ~Scheduler();

  // Informers: run from start to stop, also on a standby replica.
  boost::asio::awaitable<void> run_informers();
  // The scheduling loop; returns after stop_scheduling() once idle.
  boost::asio::awaitable<void> run_scheduling_loop();
  boost::asio::awaitable<void> run_events() { return events_.run(); }

  void stop_scheduling();  // take no more pods (binds in flight go on)
  void stop();             // everything
  bool synced() const noexcept;
  int binds_in_flight() const noexcept { return stats_.binds_in_flight; }

  const SchedulerStats& stats() const noexcept { return stats_; }
  void set_observer(SchedulerObserver o) { observer_ = std::move(o); }
  const kube::ReflectorStats& pod_watch_stats() const noexcept { return pods_->stats(); }
  const kube::ReflectorStats& node_watch_stats() const noexcept { return nodes_->stats(); }
  // /debug/cache: per node allocatable, requested, pod count; assumed pods.
  std::string debug_cache_json();
  Cache& cache() noexcept { return cache_; }
  const Queue& queue() const noexcept { return queue_; }

 private:
  struct PodEvents;
  struct NodeEvents;
  bool responsible_for(const kube::Pod& p) const;
  void wake();
  boost::asio::awaitable<void> bind(kube::Pod pod, std::string node, int evaluated, int feasible, int attempts,
                                    Queue::clock::time_point first_queued);

  kube::Api& api_;
  SchedulerOptions opts_;
  Cache cache_;
  Queue queue_;
  EventRecorder events_;
  std::mt19937_64 rng_;
  Search search_;  // where the next sampled search starts
  SchedulerStats stats_;
  SchedulerObserver observer_;
  std::unique_ptr<PodEvents> pod_events_;
  std::unique_ptr<NodeEvents> node_events_;
  std::unique_ptr<kube::Reflector<kube::Pod>> pods_;
  std::unique_ptr<kube::Reflector<kube::Node>> nodes_;
  std::unique_ptr<boost::asio::steady_timer> wake_;
  bool scheduling_ = true;
  bool stopping_ = false;
};

}  // namespace toysched::sched
