// The binding cycle (binder.hpp). Preemption's writes are in
// preemption_executor.cpp.
#include "toysched/sched/binder.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/log/log.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::sched {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

namespace {
double seconds_since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }
}  // namespace

bool bind_conflict_was_ours(const kube::ApiError& err, const kube::Pod* now, const std::string& uid,
                            const std::string& node) {
  return err.is_conflict() && err.replayed && now && now->uid == uid && now->node_name == node;
}

Binder::Binder(kube::Api& api, BinderContext ctx, BinderOptions opts, async::Supervisor& supervisor)
    : api_(api),
      ctx_(std::move(ctx)),
      opts_(opts),
      supervisor_(supervisor),
      slots_(static_cast<std::size_t>(std::max(1, opts.bind_parallelism))),
      warm_(api.transport(), static_cast<std::size_t>(std::max(1, opts.bind_parallelism))) {}

void Binder::spawn_bind(BindRequest req) {
  ++ctx_.stats.binds_in_flight;
  std::string task = "bind/" + key(req.pod);
  asio::co_spawn(api_.transport().executor(), bind(std::move(req)),
                 supervisor_.handler("bind", std::move(task), async::Criticality::expendable));
}

void Binder::open_connections() {
  if (warming_) return;
  warming_ = true;
  asio::co_spawn(api_.transport().executor(), keep_connections_warm(),
                 supervisor_.handler("bind/keep-warm", "bind/keep-warm", async::Criticality::expendable));
}

// The HTTP/2 connection (or, without it, one HTTP/1.1 connection per bind
// in flight), opened before the first burst: the informers' sync starts
// this, so it happens at start-up (and /readyz waits for it), not while the
// first pods wait.
asio::awaitable<void> Binder::keep_connections_warm() {
  trace::TaskScope task("bind/connections");
  co_await warm_.run(task, trace::points::bind_keep_warm, ctx_.wake);
}

void Binder::stop() {
  warm_.stop();
  slots_.close();
}

// Whatever happens, including an exception, the bind slot is given back and
// a bind that did not succeed leaves no assumption behind.
asio::awaitable<void> Binder::bind(BindRequest req) {
  trace::TaskScope task{"bind/", req.pod.ns, "/", req.pod.name};
  bool settled = false;  // set once the answer is handled; declared first, so it outlives the guard
  util::scope_exit release([&] {
    --ctx_.stats.binds_in_flight;
    if (!settled) {  // an exception or a stop: undo the assumption, try again later
      for (auto& work : req.pre_binds) work->unreserve();
      ctx_.cache.forget(req.pod.uid);
      ctx_.queue.backoff(req.pod.uid, clock::now());
      ctx_.move_unschedulable("AssignedPodDelete");
    }
    ctx_.wake();
  });
  TS_LOG(3, "Attempting to bind pod to node", {"pod", key(req.pod)}, {"node", req.node});
  // A PodScheduled=False patch of this pod already on its way (an earlier
  // attempt failed) must land first: after the bind, it would mark the
  // bound pod unschedulable.
  if (ctx_.order.in_flight(req.pod.uid)) {
    TS_LOG(4, "Bind waits for the pod's status patch in flight", {"pod", key(req.pod)});
    co_await ctx_.order.settled(req.pod.uid, task, trace::points::bind_status_patch);
  }
  if (!req.pre_binds.empty() && !co_await pre_bind(task, req)) {
    settled = true;
    co_return;
  }
  auto slot = co_await slots_.acquire(task, trace::points::bind_slot);
  if (!slot) co_return;                // stopping: undone by the guard
  if (opts_.bind_delay.count() > 0) {  // --bind-delay: a debug pause, holding the slot as a slow POST would
    asio::steady_timer delay(co_await asio::this_coro::executor, opts_.bind_delay);
    co_await trace::traced(task, trace::points::bind_delay, delay.async_wait(asio::use_awaitable));
  }
  req.times.slotted = clock::now();
  kube::RequestLimits limits;
  limits.may_send = gate_;
  kube::RequestTrace sent;
  auto r = co_await trace::traced(task, trace::points::bind_post,
                                  api_.bind(req.pod.ns, req.pod.name, req.pod.uid, req.node, std::move(limits), &sent));
  req.times.admitted = sent.admitted;
  req.times.connected = sent.connected;
  req.times.fresh_connection = sent.fresh_connection;
  req.times.answered = clock::now();
  if (!r && !co_await replayed_bind_was_ours(task, req, r.error())) {
    settled = true;
    handle_bind_failure(req, r.error());
    co_return;
  }
  settled = true;
  finish_binding(req);
}

// A 409 to a replayed bind: ask the informer, then (the watch may lag, or be
// down with the connection that died) the server, where the pod now is.
asio::awaitable<bool> Binder::replayed_bind_was_ours(trace::TaskScope& task, const BindRequest& req,
                                                     const kube::ApiError& err) {
  if (!err.is_conflict() || !err.replayed) co_return false;
  bool ours = bind_conflict_was_ours(err, ctx_.informer_pod(req.pod), req.pod.uid, req.node);
  if (!ours) {
    auto now = co_await trace::traced(task, trace::points::bind_check, api_.get_pod(req.pod.ns, req.pod.name));
    ours = bind_conflict_was_ours(err, now ? &*now : nullptr, req.pod.uid, req.node);
  }
  if (ours)
    TS_LOG(2, "Bind replayed on a new connection got 409, but the pod is on our node: our first send bound it",
           {"pod", key(req.pod)}, {"node", req.node});
  co_return ours;
}

void Binder::finish_binding(const BindRequest& req) {
  ++ctx_.stats.binds_ok;
  const auto& observer = ctx_.observer;
  if (observer.attempt) observer.attempt("scheduled", req.pod.scheduler_name, seconds_since(req.times.popped));
  if (observer.bound) observer.bound(req.attempts, seconds_since(req.first_queued));
  ctx_.queue.done(req.pod.uid);  // stays out of the queue; the watch will confirm it
  TS_LOG(2, "Successfully bound pod to node", {"pod", key(req.pod)}, {"node", req.node},
         {"evaluatedNodes", req.evaluated_nodes}, {"feasibleNodes", req.feasible_nodes});
  report_latency(req);
  ctx_.events.scheduled(req.pod, req.node);
  if (ctx_.outcome) ctx_.outcome(Outcome{Outcome::Kind::bound, req.pod, req.node, {}});
}

// One line per bound pod at -v=5, and the stage histograms: where the time
// between the watch event and the 201 went.
void Binder::report_latency(const BindRequest& req) {
  if (ctx_.observer.stages) ctx_.observer.stages(req.times);
  log_stages(req, "Pod bound: milliseconds by stage");
}

// The same line for a bind that lost its race (409): where our time went
// while the other scheduler's binding got in first.
void Binder::log_stages(const BindRequest& req, std::string_view what) {
  if (!log::enabled(5)) return;
  auto s = stage_seconds(req.times);
  auto ms = [&](std::size_t i) { return s[i] * 1e3; };
  TS_LOG(5, what, {"pod", key(req.pod)}, {"decode", ms(0)}, {"queue", ms(1)}, {"decide", ms(2)}, {"slot", ms(3)},
         {"limiter", ms(4)}, {"connect", ms(5)}, {"post", ms(6)}, {"total", ms(7)},
         {"freshConnection", req.times.fresh_connection});
}

// PreBind, plugin by plugin: false when one failed (handled here).
asio::awaitable<bool> Binder::pre_bind(trace::TaskScope& task, BindRequest& req) {
  const kube::Pod& pod = req.pod;
  ++ctx_.stats.binds_waiting_for_volumes;
  util::scope_exit done([this] { --ctx_.stats.binds_waiting_for_volumes; });
  auto pod_exists = [this, &pod] {
    const kube::Pod* now = ctx_.informer_pod(pod);
    return now != nullptr && now->uid == pod.uid;
  };
  for (auto& work : req.pre_binds) {
    std::string error = co_await work->run(PreBindContext{api_, task, pod_exists, gate_});
    if (!error.empty()) {
      handle_pre_bind_failure(req, work->plugin(), error);
      co_return false;
    }
  }
  co_return true;
}

// As upstream's binding-cycle error: the pod's assumptions are undone and it
// is tried again after its backoff, with a FailedScheduling event.
void Binder::handle_pre_bind_failure(const BindRequest& req, PluginId plugin, const std::string& error) {
  const kube::Pod& pod = req.pod;
  if (ctx_.observer.attempt) ctx_.observer.attempt("error", pod.scheduler_name, seconds_since(req.times.popped));
  for (auto& work : req.pre_binds) work->unreserve();
  ctx_.cache.forget(pod.uid);
  ctx_.move_unschedulable("AssignedPodDelete");
  ++ctx_.stats.bind_errors;
  const std::string message = "running PreBind plugin \"" + std::string(plugin_name(plugin)) + "\": " + error;
  TS_ERROR("Failed to bind volumes of pod", {"pod", key(pod)}, {"node", req.node}, {"err", message});
  ctx_.queue.backoff(pod.uid, clock::now());
  // No longer allowed to write (as for a bind not sent): no event, and no
  // PodScheduled=False patch that could land after the next leader's bind.
  if (gate_ && !gate_()) return;
  const std::optional<std::string> clear =
      pod.nominated_node_name.empty() ? std::nullopt : std::optional<std::string>("");
  ctx_.events.failed_scheduling(pod, message, true, clear);
}

void Binder::handle_bind_failure(const BindRequest& req, const kube::ApiError& err) {
  const kube::Pod& pod = req.pod;
  for (auto& work : req.pre_binds) work->unreserve();
  // A failed binding cycle is an "error" attempt upstream, a lost race included.
  if (ctx_.observer.attempt) ctx_.observer.attempt("error", pod.scheduler_name, seconds_since(req.times.popped));
  ctx_.cache.forget(pod.uid);
  // As upstream (handleBindingCycleError): a forgotten assumption frees
  // room like an assigned pod deleted, so the pods it kept out are retried
  // now. Else one whose rival then goes away unseen by the cache (deleted
  // while in backoff) would wait for the 5-minute flush.
  ctx_.move_unschedulable("AssignedPodDelete");
  if (err.is_conflict()) {
    // Another scheduler bound it first (or it is being deleted): the API
    // server is the arbiter. Forget our decision; the watch tells the rest.
    ++ctx_.stats.bind_conflicts;
    ctx_.cache.lost_race(pod.uid);
    ctx_.queue.done(pod.uid);
    if (ctx_.outcome) {
      const kube::Pod* now = ctx_.informer_pod(pod);
      ctx_.outcome(
          Outcome{Outcome::Kind::lost, pod, now != nullptr ? std::string_view(now->node_name) : "", err.message});
    }
    TS_LOG(2, "Binding rejected: conflict, pod already assigned or changed", {"pod", key(pod)}, {"node", req.node},
           {"err", err.message});
    log_stages(req, "Bind lost: milliseconds by stage");
  } else if (err.is_not_found()) {
    ctx_.queue.remove(pod.uid);
  } else if (err.code == kube::errc::cancelled) {
    // Not sent: we may no longer act (the lease's renew deadline passed).
    // Whoever leads next will schedule it; no event from us.
    TS_LOG(2, "Bind not sent: no longer allowed to bind", {"pod", key(pod)}, {"node", req.node});
    ctx_.queue.backoff(pod.uid, clock::now());
  } else {
    ++ctx_.stats.bind_errors;
    TS_ERROR("Failed to bind pod", {"pod", key(pod)}, {"node", req.node}, {"err", err.message});
    ctx_.queue.backoff(pod.uid, clock::now());
    // A failed binding cycle ends the pod's nomination too (upstream's
    // handleBindingCycleError passes clearNominatedNode): the cycle took
    // it out of the nominator when it assumed the pod.
    const std::optional<std::string> clear =
        pod.nominated_node_name.empty() ? std::nullopt : std::optional<std::string>("");
    ctx_.events.failed_scheduling(pod, "Binding rejected: " + err.message, true, clear);
  }
}

}  // namespace toysched::sched
