// The binding cycle and preemption's writes: coroutines the scheduling
// cycle spawns and never waits for (upstream's bindingCycle, and its
// preemption Executor run asynchronously, its default):
//
//   bind/<ns>/<pod>: a status patch of the pod in flight? wait (OrderingGate)
//     ─► PreBind (the pod's volumes written and bound; pre_bind.hpp)
//          failed ─► unreserve; forget; backoff; FailedScheduling event
//     ─► a slot (bind_parallelism) ─► [--bind-delay] ─► POST binding, if the
//        bind gate still lets us act
//          201 ─────────────────────────► done in the queue; Scheduled event;
//                                          the watch confirms it
//          409 to a replayed POST, and the pod on our node: our first send
//              bound it ─────────────────► the same
//          409 ─► a race lost: forget the assumption; done, never retried
//          404 ─► forget; out of the queue (the pod is gone)
//          not sent (the gate closed) ─► forget; backoff; no event
//          anything else ─► forget; backoff; FailedScheduling event
//   preempt/<ns>/<pod>: for each victim, PATCH DisruptionTarget, DELETE with
//     its UID as precondition, Preempted event (preemption_executor.cpp)
//
// Invariants, whatever fails and wherever an exception leaves a coroutine:
// the bind slot goes back; a bind not answered 201 (nor ours) leaves no
// assumption in the cache and its pod in the queue (or done, after a 409);
// binds_in_flight counts exactly the bind coroutines alive; a pod whose
// preemption is running does not preempt again until it ends.
//
// The bind connections are looked after here too (WarmConnections): opened
// once the informers have synced, before the first pod is decided, and kept
// warm through quiet spells.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "toysched/async/slots.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/warm_connections.hpp"
#include "toysched/sched/bind_parallelism.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/latency.hpp"
#include "toysched/sched/ordering_gate.hpp"
#include "toysched/sched/pre_bind.hpp"
#include "toysched/sched/queue.hpp"
#include "toysched/sched/reports.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

// A bind answered 409 was our own when the transport had sent it twice (its
// first connection died before any answer, so the server may have applied
// the first send) and the pod, the same object, is now on the node we chose.
// Anything else is a race lost to another scheduler, or a pod changed under
// us. `now` is the pod as the server has it (nullptr: unknown).
bool bind_conflict_was_ours(const kube::ApiError& err, const kube::Pod* now, const std::string& uid,
                            const std::string& node);

// What a bind coroutine needs to report its outcome as kube-scheduler does.
struct BindRequest {
  kube::Pod pod;
  std::string node;
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
  int attempts = 0;
  Queue::clock::time_point first_queued;
  PodTimeline times;
  // What Reserve left to do before the binding (pre_bind.hpp); each is
  // unreserved if the binding cycle fails.
  std::vector<std::unique_ptr<PreBind>> pre_binds{};
};

struct PreemptRequest {
  kube::Pod preemptor;
  std::string node;
  std::vector<kube::Pod> victims;  // copies: the cache may drop them meanwhile
  // Pods of lower priority nominated to `node`: the preemptor takes the
  // room they were promised, so their nominations are cleared first.
  std::vector<kube::Pod> outranked;
};

// What the binding cycle reads and updates, owned by the Scheduler.
struct BinderContext {
  Cache& cache;
  Queue& queue;
  EventRecorder& events;
  OrderingGate& order;
  SchedulerStats& stats;
  const SchedulerObserver& observer;
  const std::function<void(const Outcome&)>& outcome;
  // The pod (ns/name) as the pod informer last saw it, or nullptr.
  std::function<const kube::Pod*(const kube::Pod&)> informer_pod;
  // A change that may let unschedulable pods fit: they go back to be tried.
  std::function<void(const char* event)> move_unschedulable;
  // Wakes the scheduling loop (a bind ended, the connections opened).
  std::function<void()> wake;
};

struct BinderOptions {
  int bind_parallelism = kDefaultBindParallelism;
  std::chrono::milliseconds bind_delay{0};  // --bind-delay: each bind waits this before its POST
};

class Binder {
 public:
  Binder(kube::Api& api, BinderContext ctx, BinderOptions opts, async::Supervisor& supervisor);

  // Asked right before each bind and eviction is sent: false drops it
  // unsent (a leader past its renew deadline). Unset: always send.
  void set_gate(std::function<bool()> gate) { gate_ = std::move(gate); }

  // Spawns bind/<ns>/<pod>: the pod is assumed in the cache, and counts in
  // binds_in_flight until its coroutine ends.
  void spawn_bind(BindRequest req);
  // Spawns preempt/<ns>/<preemptor>: until it ends, preempting(uid).
  void spawn_preempt(PreemptRequest req);
  bool preempting(const std::string& pod_uid) const { return preempting_.contains(pod_uid); }

  // Starts the task that opens the bind connections and keeps them warm
  // (once; later calls do nothing). The loop decides no pod before it is open.
  void open_connections();
  bool connections_open() const noexcept { return warm_.open(); }

  // The connections are no longer looked after (the loop has stopped).
  void stop_connections() noexcept { warm_.stop(); }
  // That, and binds waiting for a slot give up (undone, requeued).
  void stop();
  const async::Slots& slots() const noexcept { return slots_; }

 private:
  boost::asio::awaitable<void> bind(BindRequest req);
  boost::asio::awaitable<bool> replayed_bind_was_ours(trace::TaskScope& task, const BindRequest& req,
                                                      const kube::ApiError& err);
  void finish_binding(const BindRequest& req);
  void report_latency(const BindRequest& req);
  void log_stages(const BindRequest& req, std::string_view what);
  void handle_bind_failure(const BindRequest& req, const kube::ApiError& err);
  boost::asio::awaitable<bool> pre_bind(trace::TaskScope& task, BindRequest& req);
  void handle_pre_bind_failure(const BindRequest& req, PluginId plugin, const std::string& error);
  boost::asio::awaitable<void> preempt(PreemptRequest req);
  boost::asio::awaitable<bool> evict(trace::TaskScope& task, const PreemptRequest& req, const kube::Pod& victim);
  boost::asio::awaitable<bool> clear_outranked(trace::TaskScope& task, const PreemptRequest& req);
  boost::asio::awaitable<void> keep_connections_warm();

  kube::Api& api_;
  BinderContext ctx_;
  BinderOptions opts_;
  async::Supervisor& supervisor_;
  std::function<bool()> gate_;
  async::Slots slots_;  // bind_parallelism: POSTs (and connections) in flight
  // Pods whose preempt task is running (upstream's Executor.preempting).
  std::unordered_set<std::string> preempting_;
  kube::WarmConnections warm_;
  bool warming_ = false;  // the connections task was started
};

}  // namespace toysched::sched
