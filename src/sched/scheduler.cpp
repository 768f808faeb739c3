// The scheduling loop, schedule_one and the binding cycle. The informers'
// handlers are in event_handlers.cpp; the decision itself in algorithm.cpp.
#include "toysched/sched/scheduler.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/json/writer.hpp"
#include "toysched/log/log.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

namespace {
double seconds_since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }
// Decisions in a row before the loop lets watches and binds run: a trip
// through the loop per pod would cost more than the decision.
constexpr int kDecisionsPerYield = 8;
// Pods decided whose bind is not answered yet, most of them waiting for a
// bind slot. Decisions run ahead of the POSTs (a pod decided at once is a
// race won when its slot comes), but not without bound: each holds an
// assumption and a coroutine frame.
constexpr int kMaxBindsPending = 1024;
// How often the bind connections are looked after (keep_connections_warm).
constexpr auto kKeepWarmEvery = 15s;
}  // namespace

bool bind_conflict_was_ours(const kube::ApiError& err, const kube::Pod* now, const std::string& uid,
                            const std::string& node) {
  return err.is_conflict() && err.replayed && now && now->uid == uid && now->node_name == node;
}

const kube::Pod* Scheduler::informer_pod(const kube::Pod& p) const { return pods_->store().find(key(p)); }

bool Scheduler::responsible_for(const kube::Pod& p) const {
  return profile_for(p.scheduler_name) != nullptr && !p.deleting && !p.scheduling_gated;
}

Scheduler::ActiveProfile* Scheduler::profile_for(std::string_view scheduler_name) noexcept {
  for (ActiveProfile& p : profiles_)
    if (p.name == scheduler_name) return &p;
  return nullptr;
}

const Scheduler::ActiveProfile* Scheduler::profile_for(std::string_view scheduler_name) const noexcept {
  return const_cast<Scheduler*>(this)->profile_for(scheduler_name);
}

std::vector<std::string> Scheduler::profile_names() const {
  std::vector<std::string> names;
  for (const ActiveProfile& p : profiles_) names.push_back(p.name);
  return names;
}

bool Scheduler::synced() const noexcept { return pods_->synced() && nodes_->synced() && objects_->synced(); }

asio::awaitable<void> Scheduler::run_informers() {
  using namespace asio::experimental::awaitable_operators;
  // Nodes first in effect: both start now; the loop waits for both to sync.
  co_await (nodes_->run() && pods_->run() && objects_->run());
}

// A pod to decide now, if the informers have synced and a bind slot is free.
std::optional<Queue::Item> Scheduler::next_pod(Queue::clock::time_point now) {
  queue_.flush(now);
  if (!synced() || stats_.binds_in_flight >= kMaxBindsPending) return std::nullopt;
  return queue_.pop(now);
}

// Nothing to do: sleep until the next backoff expires or a second passes
// (the periodic unschedulable flush), unless an event wakes us first.
Queue::clock::time_point Scheduler::next_wake(Queue::clock::time_point now) const {
  auto until = now + 1s;
  if (auto b = queue_.next_backoff_expiry(); b && *b < until) until = *b;
  return until;
}

asio::awaitable<void> Scheduler::run_scheduling_loop() {
  trace::TaskScope task("schedule");
  auto ex = co_await asio::this_coro::executor;
  int since_yield = 0;
  loop_started_ = true;
  while (!wakeup_.stopped()) {
    if (!warmed_up_ && synced()) {
      log_synced();
      // The HTTP/2 connection (or, without it, one HTTP/1.1 connection per
      // bind in flight), opened before the first burst: the informers' sync
      // wakes the loop, so this happens at start-up (and /readyz waits for
      // it), not while the first pods wait.
      const auto began = clock::now();
      auto& transport = api_.transport();
      co_await transport.warm_up(static_cast<std::size_t>(opts_.bind_parallelism));
      warmed_up_ = true;
      TS_LOG(2, "Bind connections open", {"protocol", transport.http2() ? "HTTP/2" : "HTTP/1.1"},
             {"connections", transport.http2() ? std::size_t{1} : transport.idle_connections()},
             {"milliseconds", std::chrono::duration<double, std::milli>(clock::now() - began).count()});
      next_keep_warm_ = clock::now() + kKeepWarmEvery;
    }
    auto now = clock::now();
    if (warmed_up_ && !keeping_warm_ && now >= next_keep_warm_) {
      keeping_warm_ = true;
      next_keep_warm_ = now + kKeepWarmEvery;
      asio::co_spawn(ex, keep_connections_warm(),
                     supervisor_.handler("bind/keep-warm", "bind/keep-warm", async::Criticality::expendable));
    }
    auto item = next_pod(now);
    if (!item) {
      if (!co_await wakeup_.sleep_until(task, trace::points::schedule_pop, next_wake(now))) break;
      since_yield = 0;
      continue;
    }
    schedule_one(std::move(*item));
    if (++since_yield >= kDecisionsPerYield) {
      since_yield = 0;
      co_await trace::traced(task, trace::points::schedule_yield, asio::post(ex, asio::use_awaitable));
    }
  }
}

// The bind connections, kept open through quiet spells: the server closes
// one idle for 90 s, so each is replaced after 60 s idle, ahead of need.
asio::awaitable<void> Scheduler::keep_connections_warm() {
  struct done {
    bool& flag;
    ~done() { flag = false; }
  } clear{keeping_warm_};
  co_await api_.transport().keep_warm(static_cast<std::size_t>(opts_.bind_parallelism), 60s);
}

// What one decision sees: the cache's nodes, the informers' objects, the
// nominated pods; one decision in ten timed plugin by plugin (upstream's
// pluginMetricsSamplePercent).
Cluster Scheduler::decision_cluster() {
  Cluster cluster = cache_.cluster();
  cluster.objects = &objects_->objects();
  if (!nominator_.empty()) cluster.nominated = &nominator_;
  if (observer_.plugin_timings != nullptr && ++decisions_ % 10 == 0) cluster.timings = observer_.plugin_timings;
  return cluster;
}

// Upstream's ScheduleOne: decide, assume, and hand the bind to a coroutine
// of its own. Synchronous: the cycle never waits on the network.
void Scheduler::schedule_one(Queue::Item item) {
  // The queue keeps the pod as its last scheduling-relevant update left
  // it; where it is nominated is the nominator's (our own patch of
  // status.nominatedNodeName does not requeue it).
  item.pod.nominated_node_name = nominator_.node_of(item.pod.uid);
  const kube::Pod& pod = item.pod;
  TS_LOG(4, "About to try and schedule pod", {"pod", key(pod)});
  TS_LOG(3, "Attempting to schedule pod", {"pod", key(pod)});
  auto cycle_start = clock::now();
  PodTimeline times;
  times.arrived = item.arrived;
  times.queued = item.queued;
  times.popped = cycle_start;
  const Cluster cluster = decision_cluster();
  // responsible_for let the pod in, so it has a profile; a pod that
  // arrives otherwise is an error, not a crash.
  ActiveProfile* prof = profile_for(pod.scheduler_name);
  // A dry run decides a pod again only when it changed: its last decision
  // (assumed, never bound) makes way for the new one.
  if (opts_.dry_run) cache_.forget(pod.uid);
  // Traced when /debug/explain keeps it or -v=10 logs the scores.
  const bool log_scores_too = log::enabled(10, std::source_location::current().file_name());
  const bool traced = explain_.keeps() || log_scores_too;
  DecisionTrace* trace = traced ? explain_.begin(pod, item.attempts, static_cast<int>(cluster.nodes.size())) : nullptr;
  Decision d;
  const bool decided = prof != nullptr && (opts_.ignore_unsupported_constraints || !pod.unsupported.any());
  if (prof == nullptr) {
    d.message = "no profile named " + pod.scheduler_name;  // Status::error
  } else if (decided) {
    d = schedule_pod(prof->profile, pod, cluster, rng_, nullptr, &prof->search, trace);
  } else {  // refused before any node is looked at: none can be shown to satisfy what we do not evaluate
    d = refuse_unsupported(pod);
  }
  double cycle_seconds = seconds_since(cycle_start);
  if (observer_.algorithm) observer_.algorithm(cycle_seconds);
  if (traced) {
    if (log_scores_too) log_scores(pod, *trace);
    explain_.finish(d, opts_.dry_run);
  }
  if (d.status != Decision::Status::scheduled) {
    std::optional<std::string> nominate;
    // PostFilter: a pod the profile found no node for may preempt (a dry
    // run evicts nothing; a refused pod was not looked at).
    if (decided && !opts_.dry_run && d.status != Decision::Status::error)
      nominate = post_filter(pod, *prof, cluster, d);
    handle_scheduling_failure(pod, d, cycle_seconds, nominate);
    return;
  }
  if (opts_.dry_run) {
    dry_run(item, d, cycle_seconds);
    return;
  }
  if (!cache_.assume(pod, d.node)) {
    // The cache already holds this pod, or lost the node. Not expected; if
    // the watch showed it bound, the queue has dropped it already and this
    // is a no-op; otherwise it must not vanish: try again after a backoff.
    ++stats_.attempts_error;
    if (observer_.attempt) observer_.attempt("error", pod.scheduler_name, cycle_seconds);
    TS_ERROR("Failed to assume pod; requeueing it", {"pod", key(pod)}, {"node", d.node});
    queue_.backoff(pod.uid, clock::now());
    return;
  }
  nominator_.remove(pod.uid);  // it counts on its node as assumed now
  ++stats_.attempts_scheduled;
  ++stats_.binds_in_flight;
  std::string task = "bind/" + key(pod);
  times.decided = clock::now();
  BindRequest req{std::move(item.pod),
                  std::move(d.node),
                  d.evaluated_nodes,
                  d.feasible_nodes,
                  item.attempts,
                  item.first_queued,
                  times};
  asio::co_spawn(api_.transport().executor(), bind(std::move(req)),
                 supervisor_.handler("bind", std::move(task), async::Criticality::expendable));
}

// -v=10, as kube-scheduler's prioritizeNodes logs them: each plugin's
// weighted score on each node, then each node's total. Called at -v=10 only.
void Scheduler::log_scores(const kube::Pod& pod, const DecisionTrace& t) const {
  if (!t.scored()) return;
  for (std::size_t i = 0; i < t.feasible.size(); ++i) {
    for (std::size_t k = 0; k < t.scorers.size(); ++k) {
      TS_LOG(10, "Plugin scored node for pod", {"pod", key(pod)}, {"plugin", std::string(plugin_name(t.scorers[k]))},
             {"node", t.feasible[i]}, {"score", t.weighted(i, k)});
    }
  }
  for (std::size_t i = 0; i < t.feasible.size(); ++i) {
    TS_LOG(10, "Calculated node's final score for pod", {"pod", key(pod)}, {"node", t.feasible[i]},
           {"score", t.total(i)});
  }
}

// --dry-run: the pod counts on its node from now on, as a bound pod would,
// so the decisions that follow see the cluster they would have seen; but
// nothing is sent. It stays out of the queue until it changes, is deleted,
// or another scheduler binds it (the watch then puts it where it really went).
void Scheduler::dry_run(const Queue::Item& item, const Decision& d, double cycle_seconds) {
  const kube::Pod& pod = item.pod;
  ++stats_.attempts_scheduled;
  if (observer_.attempt) observer_.attempt("scheduled", pod.scheduler_name, cycle_seconds);
  cache_.assume(pod, d.node);
  queue_.done(pod.uid);
  TS_LOG(2, "Dry run: pod would be bound to node", {"pod", key(pod)}, {"node", d.node},
         {"evaluatedNodes", d.evaluated_nodes}, {"feasibleNodes", d.feasible_nodes});
}

void Scheduler::handle_scheduling_failure(const kube::Pod& pod, const Decision& d, double cycle_seconds,
                                          const std::optional<std::string>& nominate) {
  bool error = d.status == Decision::Status::error;
  if (error)
    ++stats_.attempts_error;
  else
    ++stats_.attempts_unschedulable;
  if (observer_.attempt) observer_.attempt(error ? "error" : "unschedulable", pod.scheduler_name, cycle_seconds);
  TS_LOG(2, "Unable to schedule pod; no fit; waiting", {"pod", key(pod)}, {"err", d.message});
  queue_.unschedulable(pod.uid, clock::now());
  if (!opts_.dry_run) events_.failed_scheduling(pod, d.message, false, nominate);  // a dry run writes nothing
  if (outcome_) outcome_(Outcome{Outcome::Kind::failed, pod, {}, d.message});
}

// The binding cycle. Whatever happens, including an exception, the bind
// slot is given back and a bind that did not succeed leaves no assumption
// behind.
asio::awaitable<void> Scheduler::bind(BindRequest req) {
  trace::TaskScope task{"bind/", req.pod.ns, "/", req.pod.name};
  struct release {
    Scheduler& s;
    const BindRequest& req;
    bool settled = false;
    ~release() {
      --s.stats_.binds_in_flight;
      if (!settled) {  // an exception: undo the assumption, try again later
        s.cache_.forget(req.pod.uid);
        s.queue_.backoff(req.pod.uid, clock::now());
        s.move_unschedulable("AssignedPodDelete");
      }
      s.wake();
    }
  } guard{*this, req};
  TS_LOG(3, "Attempting to bind pod to node", {"pod", key(req.pod)}, {"node", req.node});
  // A PodScheduled=False patch of this pod already on its way (an earlier
  // attempt failed) must land first: after the bind, it would mark the
  // bound pod unschedulable.
  if (events_.patch_in_flight(req.pod.uid)) {
    TS_LOG(4, "Bind waits for the pod's status patch in flight", {"pod", key(req.pod)});
    co_await events_.patch_settled(req.pod.uid, task, trace::points::bind_status_patch);
  }
  if (!co_await post_slots_.acquire(task, trace::points::bind_slot)) co_return;  // stopping: undone by the guard
  struct give_back {
    async::Slots& slots;
    ~give_back() { slots.release(); }
  } slot{post_slots_};
  if (opts_.bind_delay.count() > 0) {  // --bind-delay: a debug pause, holding the slot as a slow POST would
    asio::steady_timer delay(co_await asio::this_coro::executor, opts_.bind_delay);
    co_await trace::traced(task, trace::points::bind_delay, delay.async_wait(asio::use_awaitable));
  }
  req.times.slotted = clock::now();
  kube::RequestLimits limits;
  limits.may_send = bind_gate_;
  kube::RequestTrace sent;
  auto r = co_await trace::traced(task, trace::points::bind_post,
                                  api_.bind(req.pod.ns, req.pod.name, req.pod.uid, req.node, std::move(limits), &sent));
  req.times.admitted = sent.admitted;
  req.times.connected = sent.connected;
  req.times.fresh_connection = sent.fresh_connection;
  req.times.answered = clock::now();
  if (!r && !co_await replayed_bind_was_ours(task, req, r.error())) {
    guard.settled = true;
    handle_bind_failure(req, r.error());
    co_return;
  }
  guard.settled = true;
  finish_binding(req);
}

// A 409 to a replayed bind: ask the informer, then (the watch may lag, or be
// down with the connection that died) the server, where the pod now is.
asio::awaitable<bool> Scheduler::replayed_bind_was_ours(trace::TaskScope& task, const BindRequest& req,
                                                        const kube::ApiError& err) {
  if (!err.is_conflict() || !err.replayed) co_return false;
  bool ours = bind_conflict_was_ours(err, informer_pod(req.pod), req.pod.uid, req.node);
  if (!ours) {
    auto now = co_await trace::traced(task, trace::points::bind_check, api_.get_pod(req.pod.ns, req.pod.name));
    ours = bind_conflict_was_ours(err, now ? &*now : nullptr, req.pod.uid, req.node);
  }
  if (ours)
    TS_LOG(2, "Bind replayed on a new connection got 409, but the pod is on our node: our first send bound it",
           {"pod", key(req.pod)}, {"node", req.node});
  co_return ours;
}

void Scheduler::finish_binding(const BindRequest& req) {
  ++stats_.binds_ok;
  if (observer_.attempt) observer_.attempt("scheduled", req.pod.scheduler_name, seconds_since(req.times.popped));
  if (observer_.bound) observer_.bound(req.attempts, seconds_since(req.first_queued));
  queue_.done(req.pod.uid);  // stays out of the queue; the watch will confirm it
  TS_LOG(2, "Successfully bound pod to node", {"pod", key(req.pod)}, {"node", req.node},
         {"evaluatedNodes", req.evaluated_nodes}, {"feasibleNodes", req.feasible_nodes});
  report_latency(req);
  events_.scheduled(req.pod, req.node);
  if (outcome_) outcome_(Outcome{Outcome::Kind::bound, req.pod, req.node, {}});
}

// One line per bound pod at -v=5, and the stage histograms: where the time
// between the watch event and the 201 went.
void Scheduler::report_latency(const BindRequest& req) {
  if (observer_.stages) observer_.stages(req.times);
  log_stages(req, "Pod bound: milliseconds by stage");
}

// The same line for a bind that lost its race (409): where our time went
// while the other scheduler's binding got in first.
void Scheduler::log_stages(const BindRequest& req, std::string_view what) {
  if (!log::enabled(5)) return;
  auto s = stage_seconds(req.times);
  auto ms = [&](std::size_t i) { return s[i] * 1e3; };
  TS_LOG(5, what, {"pod", key(req.pod)}, {"decode", ms(0)}, {"queue", ms(1)}, {"decide", ms(2)}, {"slot", ms(3)},
         {"limiter", ms(4)}, {"connect", ms(5)}, {"post", ms(6)}, {"total", ms(7)},
         {"freshConnection", req.times.fresh_connection});
}

void Scheduler::handle_bind_failure(const BindRequest& req, const kube::ApiError& err) {
  const kube::Pod& pod = req.pod;
  // A failed binding cycle is an "error" attempt upstream, a lost race included.
  if (observer_.attempt) observer_.attempt("error", pod.scheduler_name, seconds_since(req.times.popped));
  cache_.forget(pod.uid);
  // As upstream (handleBindingCycleError): a forgotten assumption frees
  // room like an assigned pod deleted, so the pods it kept out are retried
  // now. Else one whose rival then goes away unseen by the cache (deleted
  // while in backoff) would wait for the 5-minute flush.
  move_unschedulable("AssignedPodDelete");
  if (err.is_conflict()) {
    // Another scheduler bound it first (or it is being deleted): the API
    // server is the arbiter. Forget our decision; the watch tells the rest.
    ++stats_.bind_conflicts;
    cache_.lost_race(pod.uid);
    queue_.done(pod.uid);
    if (outcome_) {
      const kube::Pod* now = informer_pod(pod);
      outcome_(Outcome{Outcome::Kind::lost, pod, now != nullptr ? std::string_view(now->node_name) : "", err.message});
    }
    TS_LOG(2, "Binding rejected: conflict, pod already assigned or changed", {"pod", key(pod)}, {"node", req.node},
           {"err", err.message});
    log_stages(req, "Bind lost: milliseconds by stage");
  } else if (err.is_not_found()) {
    queue_.remove(pod.uid);
  } else if (err.code == kube::errc::cancelled) {
    // Not sent: we may no longer act (the lease's renew deadline passed).
    // Whoever leads next will schedule it; no event from us.
    TS_LOG(2, "Bind not sent: no longer allowed to bind", {"pod", key(pod)}, {"node", req.node});
    queue_.backoff(pod.uid, clock::now());
  } else {
    ++stats_.bind_errors;
    TS_ERROR("Failed to bind pod", {"pod", key(pod)}, {"node", req.node}, {"err", err.message});
    queue_.backoff(pod.uid, clock::now());
    events_.failed_scheduling(pod, "Binding rejected: " + err.message, true);
  }
}

// What the plugins will look up, once: a namespace or kind the scheduler
// could not list shows here as 0 (its 403 is in the log before this).
void Scheduler::log_synced() const {
  std::string objects;
  for (const auto& i : objects_->informers())
    objects += (objects.empty() ? "" : " ") + std::string(i.resource) + "=" + std::to_string(i.objects);
  TS_LOG(2, "Caches are synced", {"nodes", cache_.node_count()}, {"boundPods", cache_.bound_count()},
         {"objects", objects});
}

std::string Scheduler::debug_cluster_objects_json(std::optional<std::string_view> pod) const {
  const auto& informers = *objects_;
  json::Writer w;
  w.object().field("synced", informers.synced());
  w.key("counts").object();
  for (const auto& i : informers.informers()) w.field(i.resource, static_cast<std::uint64_t>(i.objects));
  w.end();
  if (pod) {
    w.key("pod").object().field("name", *pod);
    if (const kube::Pod* p = pods_->store().find(std::string(*pod))) {
      w.key("namespace_labels").object();
      if (const auto* labels = informers.objects().namespace_labels(p->ns))
        for (const auto& [k, v] : *labels) w.field(k, v);
      w.end().field("default_selector", selector_text(informers.objects().default_selector(*p)));
    } else {
      w.field("error", "not in the pod informer");
    }
    w.end();
  }
  w.end();
  return std::move(w).str();
}

std::string Scheduler::debug_cache_json() {
  json::Writer w;
  w.object().key("nodes").array();
  for (const NodeInfo* n : cache_.nodes()) {
    w.object().field("name", n->node.name);
    const auto& alloc = n->node.allocatable;
    w.key("allocatable").object().field("cpu_millis", alloc.milli_cpu).field("memory", alloc.memory);
    w.field("pods", alloc.pods).end();
    w.key("requested").object().field("cpu_millis", n->requested.milli_cpu).field("memory", n->requested.memory);
    w.end().field("pods", n->pod_count).end();
  }
  w.end().key("assumed").array();
  auto now = clock::now();
  for (const auto& a : cache_.assumed()) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - a.since).count();
    w.object().field("pod", a.key).field("node", a.node).field("assumed_ms", static_cast<std::int64_t>(ms)).end();
  }
  w.end().field("bound_pods", static_cast<std::uint64_t>(cache_.bound_count()));
  w.field("assumed_pods", static_cast<std::uint64_t>(cache_.assumed_count())).end();
  return std::move(w).str();
}

void Scheduler::stop_scheduling() { wakeup_.stop(); }

void Scheduler::stop() {
  wakeup_.stop();
  post_slots_.close();  // binds still waiting for a slot give up (undone, requeued)
  pods_->stop();
  nodes_->stop();
  objects_->stop();
  events_.stop();
}

}  // namespace toysched::sched
