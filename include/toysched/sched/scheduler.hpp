// The scheduler: informers feed the cache and the queue; one task pops pods
// and decides (synchronous CPU work, no I/O); each decision's bind runs as a
// coroutine of its own (binder.hpp), which takes one of bind_parallelism
// slots before its POST, so the cycle never waits on the network or on other
// binds. Upstream's ScheduleOne, split the same way:
//
//   watch/nodes ─┐                  (informers.hpp: they only route)
//   watch/pods ──┼─► Cache ◄──── assume ──┐
//                └─► Queue ── pop ─► schedule_one: decide (filter, score)
//   watch/namespaces, services, … ─► ClusterObjects ──┘ (cluster_objects.hpp)
//                                      │ no fit ─► preemption (preemption.hpp): victims?
//                                      │            └ yes ─► Binder: spawn preempt/<ns>/<pod>: nominations of
//                                      │                     lower priority there cleared; for each victim
//                                      │                     DisruptionTarget, DELETE, Preempted event
//                                      │           ─► handle_scheduling_failure (nominatedNodeName)
//                                      └ fit ─► assume ─► Binder: spawn bind/<ns>/<pod>
//                                                           │ 201: wait for the watch
//                                                           └ else: forget the assumption
//                                                              409: lost a race, done
//                                                                (unless our own replayed bind)
//                                                              other: backoff
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/bind_parallelism.hpp"
#include "toysched/sched/binder.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/explain.hpp"
#include "toysched/sched/informers.hpp"
#include "toysched/sched/latency.hpp"
#include "toysched/sched/nominator.hpp"
#include "toysched/sched/ordering_gate.hpp"
#include "toysched/sched/preemption.hpp"
#include "toysched/sched/queue.hpp"
#include "toysched/sched/reports.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

// One profile of a scheduler: the pods whose spec.schedulerName is `name`
// are decided by `profile` (upstream's KubeSchedulerProfile).
struct NamedProfile {
  std::string name;
  Profile profile;
  std::optional<int> percentage_of_nodes_to_score;  // unset: the scheduler's
};

struct SchedulerOptions {
  // The first profile's name when `profiles` is empty: it is then the
  // default profile under this name (the --scheduler-name flag).
  std::string scheduler_name = "toy-scheduler";
  // Several profiles share one cache, one queue and the binds, as
  // upstream's (--config).
  std::vector<NamedProfile> profiles;
  int bind_parallelism = kDefaultBindParallelism;  // binds in flight at once
  int percentage_of_nodes_to_score = 0;
  std::chrono::milliseconds pod_initial_backoff{1000};
  std::chrono::milliseconds pod_max_backoff{10'000};
  std::chrono::milliseconds pod_max_in_unschedulable{300'000};
  bool ignore_unsupported_constraints = false;  // see Options: refuse such pods unless set
  std::uint64_t seed = std::random_device{}();  // tie-breaking between equal nodes
  std::string instance;                         // reportingInstance of events
  std::chrono::milliseconds bind_delay{0};      // --bind-delay: each bind waits this before its POST
  // --dry-run: decide and explain, never bind nor write events; a decided
  // pod counts on its node in the cache (assumed) as if bound.
  bool dry_run = false;
  // --explain-rows: how much /debug/explain keeps (ExplainRecorder); 0: nothing.
  std::size_t explain_rows = ExplainRecorder::kDefaultRows;
};

class Scheduler {
 public:
  // `api` makes the binds; `events_api` (its own client and rate limit)
  // posts events and status patches. Binds that throw are reported to
  // `supervisor`.
  Scheduler(kube::Api& api, kube::Api& events_api, SchedulerOptions opts, async::Supervisor& supervisor);
  ~Scheduler();

  // Informers: run from start to stop, also on a standby replica.
  boost::asio::awaitable<void> run_informers();
  // The scheduling loop; returns after stop_scheduling() once idle.
  boost::asio::awaitable<void> run_scheduling_loop();
  boost::asio::awaitable<void> run_events() { return events_.run(); }

  // Asked right before each bind is sent: false drops it unsent (a leader
  // past its renew deadline). Unset: always send.
  void set_bind_gate(std::function<bool()> gate) { binder_.set_gate(std::move(gate)); }
  void stop_scheduling();  // take no more pods (binds in flight go on)
  void stop();             // everything
  bool synced() const noexcept;
  // Scheduling (leading, or no election) but the bind connections are not
  // open yet: a burst now would wait for TCP and TLS handshakes.
  bool opening_connections() const noexcept { return loop_started_ && !binder_.connections_open(); }
  int binds_in_flight() const noexcept { return stats_.binds_in_flight; }
  // Those not waiting for their volumes (a shutdown waits for these only:
  // a pod whose volumes are not bound yet is decided again by whoever
  // schedules next, its claims as far as they got).
  int binds_to_drain() const noexcept { return stats_.binds_in_flight - stats_.binds_waiting_for_volumes; }

  const SchedulerStats& stats() const noexcept { return stats_; }
  void set_observer(SchedulerObserver o) { observer_ = std::move(o); }
  // Each bind won or lost and each unschedulable attempt (nullptr: none).
  void set_outcome_hook(std::function<void(const Outcome&)> f) { outcome_ = std::move(f); }
  // The watches, their stores and counters (/debug, /metrics).
  const Informers& informers() const noexcept { return informers_; }
  // /debug/explain: the pod's (ns/name) last attempt, or nullptr.
  const Explanation* explanation(std::string_view pod) const { return explain_.find(pod); }
  Cache& cache() noexcept { return cache_; }
  const Cache& cache() const noexcept { return cache_; }
  const Queue& queue() const noexcept { return queue_; }
  // The pod's last FailedScheduling message, or nullptr.
  const std::string* last_failure(const std::string& uid) const { return events_.last_failure(uid); }
  // The names of the profiles, as pods' schedulerName says them.
  std::vector<std::string> profile_names() const;

 private:
  friend struct SchedulerTestPeer;  // test/unit/support/scheduler_peer.hpp: one cycle without the loop

  // A profile and where its sampled search starts next.
  struct ActiveProfile {
    std::string name;
    Profile profile;
    Search search;
  };
  // The profile for pods of `scheduler_name`; nullptr when none is ours.
  ActiveProfile* profile_for(std::string_view scheduler_name) noexcept;
  const ActiveProfile* profile_for(std::string_view scheduler_name) const noexcept;
  void wake() noexcept { wakeup_.wake(); }
  std::optional<Queue::Item> next_pod(Queue::clock::time_point now);
  Queue::clock::time_point next_wake(Queue::clock::time_point now) const;
  Cluster decision_cluster();
  void schedule_one(Queue::Item item);
  void log_synced() const;
  void log_scores(const kube::Pod& pod, const DecisionTrace& t) const;
  void dry_run(const Queue::Item& item, const Decision& d, double cycle_seconds);
  // `no_nodes`: the decision saw an empty cluster.
  void handle_scheduling_failure(const kube::Pod& pod, const Decision& d, double cycle_seconds,
                                 const std::optional<std::string>& nominate, bool no_nodes);
  // Preemption for a pod `prof` found no node for: appends its message to
  // d.message; what to set status.nominatedNodeName to (nullopt: leave
  // it); has the binder carry it out when victims are chosen.
  std::optional<std::string> post_filter(const kube::Pod& pod, const ActiveProfile& prof, const Cluster& cluster,
                                         Decision& d);
  // The pod's nomination ends: "" (clear it) if it had one, else nullopt.
  std::optional<std::string> end_nomination(const kube::Pod& pod);

  kube::Api& api_;
  SchedulerOptions opts_;
  Cache cache_;
  Queue queue_;
  OrderingGate order_;  // a bind waits for its pod's status patch in flight
  EventRecorder events_;
  std::vector<ActiveProfile> profiles_;  // never empty; a handful at most, so looked up by a scan
  std::mt19937_64 rng_;
  std::uint64_t decisions_ = 0;  // for sampling plugin timings
  ExplainRecorder explain_;      // each recent pod's last attempt
  SchedulerStats stats_;
  SchedulerObserver observer_;
  std::function<void(const Outcome&)> outcome_;
  async::Wakeup wakeup_;  // the scheduling loop's sleep: woken by pod/node events and finished binds
  // Pods a preemption nominated to a node, until they are decided on.
  Nominator nominator_;
  Informers informers_;  // after the state its handlers route into
  Binder binder_;        // after everything its context refers to
  bool loop_started_ = false;
  bool synced_seen_ = false;  // the loop has seen the informers synced (and said so)
};

}  // namespace toysched::sched
