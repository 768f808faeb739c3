// The scheduling loop and schedule_one, PostFilter included. The binding
// cycle is the Binder's (binder.cpp), the informers' handlers are in
// informers.cpp, the decision itself in algorithm.cpp.
#include "toysched/sched/scheduler.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/log/log.hpp"
#include "toysched/sched/pre_bind.hpp"
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
// assumption and a coroutine frame. Binds waiting for their volumes are
// not counted: a StatefulSet's worth of them must not stop every other pod.
constexpr int kMaxBindsPending = 1024;
}  // namespace

Scheduler::Scheduler(kube::Api& api, kube::Api& events_api, SchedulerOptions opts, async::Supervisor& supervisor)
    : api_(api),
      opts_(std::move(opts)),
      queue_(Queue::Options{opts_.pod_initial_backoff, opts_.pod_max_backoff, opts_.pod_max_in_unschedulable}),
      events_(events_api, opts_.scheduler_name, opts_.instance.empty() ? opts_.scheduler_name : opts_.instance,
              supervisor, order_),
      rng_(opts_.seed),
      explain_(opts_.explain_rows),
      informers_(api_, InformersContext{cache_, queue_, nominator_, events_, explain_,
                                        [this](std::string_view name) { return profile_for(name) != nullptr; },
                                        [this] { wake(); }}),
      binder_(api_,
              BinderContext{cache_, queue_, events_, order_, stats_, observer_, outcome_,
                            [this](const kube::Pod& p) { return informers_.pod(p); },
                            [this](const char* event) { informers_.move_unschedulable(event); }, [this] { wake(); }},
              BinderOptions{opts_.bind_parallelism, opts_.bind_delay}, supervisor) {
  if (opts_.profiles.empty()) opts_.profiles.push_back({opts_.scheduler_name, Profile::make_default(), {}});
  for (NamedProfile& p : opts_.profiles) {
    const int percentage = p.percentage_of_nodes_to_score.value_or(opts_.percentage_of_nodes_to_score);
    profiles_.push_back({std::move(p.name), std::move(p.profile), Search{percentage, 0}});
  }
  opts_.profiles.clear();  // moved into profiles_
  // Busy: binds to post or pods to decide. A bind waiting for its volumes
  // is neither: it must not hold back the events for minutes.
  events_.set_busy([this] { return binds_to_drain() > 0 || queue_.active_size() > 0; });
  // A FailedScheduling still applies only to the very pod it was about,
  // still unbound and undecided: the informer holds it under its name with
  // the same UID, and the cache has no assumption or binding for it.
  events_.set_still_pending([this](const std::string& ns, const std::string& name, const std::string& uid) {
    const kube::Pod* p = informers_.pods().find(ns + "/" + name);
    return p && p->uid == uid && p->node_name.empty() && !p->deleting && !cache_.contains(uid);
  });
}

Scheduler::~Scheduler() = default;

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

bool Scheduler::synced() const noexcept { return informers_.synced(); }

asio::awaitable<void> Scheduler::run_informers() { return informers_.run(); }

// A pod to decide now, if the informers have synced, the bind connections
// are open and binds pending are within bounds.
std::optional<Queue::Item> Scheduler::next_pod(Queue::clock::time_point now) {
  queue_.flush(now);
  if (!synced() || !binder_.connections_open() || binds_to_drain() >= kMaxBindsPending) return std::nullopt;
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
    if (!synced_seen_ && synced()) {
      synced_seen_ = true;
      log_synced();
      binder_.open_connections();  // wakes the loop once they are open
    }
    auto now = clock::now();
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

// What one decision sees: the cache's nodes, the informers' objects, the
// nominated pods; one decision in ten timed plugin by plugin (upstream's
// pluginMetricsSamplePercent).
Cluster Scheduler::decision_cluster() {
  Cluster cluster = cache_.cluster();
  cluster.objects = &informers_.cluster().objects();
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
    // run evicts nothing; a refused pod was not looked at). An error ends
    // the cycle before PostFilter, and with it the pod's nomination.
    if (decided && !opts_.dry_run)
      nominate = d.status == Decision::Status::error ? end_nomination(pod) : post_filter(pod, *prof, cluster, d);
    handle_scheduling_failure(pod, d, cycle_seconds, nominate, cluster.nodes.empty());
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
  times.decided = clock::now();
  // Reserve: the plugins assume what the pod's binding needs (its volumes).
  std::vector<std::unique_ptr<PreBind>> pre_binds;
  if (const NodeInfo* ni = cache_.node(d.node)) pre_binds = prof->profile.reserve(pod, *ni, cluster);
  binder_.spawn_bind(BindRequest{std::move(item.pod), std::move(d.node), d.evaluated_nodes, d.feasible_nodes,
                                 item.attempts, item.first_queued, times, std::move(pre_binds)});
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

// Upstream's queue counts an attempt as unschedulable only when plugins
// rejected the pod (a FitError names them); an error, and a cluster with no
// nodes (ErrNoNodesAvailable: no plugin ran), count as consecutive errors, so
// the pod comes back after the error backoff rather than waiting for an
// event. The metric still calls an empty cluster unschedulable, as upstream's.
void Scheduler::handle_scheduling_failure(const kube::Pod& pod, const Decision& d, double cycle_seconds,
                                          const std::optional<std::string>& nominate, bool no_nodes) {
  bool error = d.status == Decision::Status::error;
  if (error)
    ++stats_.attempts_error;
  else
    ++stats_.attempts_unschedulable;
  if (observer_.attempt) observer_.attempt(error ? "error" : "unschedulable", pod.scheduler_name, cycle_seconds);
  if (no_nodes)
    TS_LOG(2, "Unable to schedule pod; no nodes are registered to the cluster; waiting", {"pod", key(pod)});
  else if (error)
    TS_ERROR("Error scheduling pod; retrying", {"pod", key(pod)}, {"err", d.message});
  else
    TS_LOG(2, "Unable to schedule pod; no fit; waiting", {"pod", key(pod)}, {"err", d.message});
  if (error || no_nodes)
    queue_.backoff(pod.uid, clock::now());
  else
    queue_.unschedulable(pod.uid, clock::now());
  if (!opts_.dry_run) events_.failed_scheduling(pod, d.message, false, nominate);  // a dry run writes nothing
  if (outcome_) outcome_(Outcome{Outcome::Kind::failed, pod, {}, d.message});
}

// Upstream's clearNominatedNode: a failure no PostFilter answered with a
// node. Only a pod that has a nomination is written to (upstream patches
// only a field that changes), so that its repeated failures still coalesce.
std::optional<std::string> Scheduler::end_nomination(const kube::Pod& pod) {
  if (pod.nominated_node_name.empty()) return std::nullopt;
  nominator_.remove(pod.uid);
  return std::string();
}

// PostFilter: preemption (preemption.hpp decides; the binder carries it out).
std::optional<std::string> Scheduler::post_filter(const kube::Pod& pod, const ActiveProfile& prof,
                                                  const Cluster& cluster, Decision& d) {
  // Without DefaultPreemption, DynamicResources' PostFilter, when enabled,
  // answers no nomination (the pod keeps its own); with no PostFilter at
  // all, upstream ends it.
  if (!prof.profile.preemption()) return prof.profile.post_filter() ? std::nullopt : end_nomination(pod);
  // Its last preemption is still being carried out: upstream keeps such a
  // pod out of the cycle; here it is tried, and may fit, but preempts no more.
  if (binder_.preempting(pod.uid)) return std::nullopt;
  ++stats_.preemption_attempts;
  PreemptionResult r = sched::preempt(prof.profile, pod, cluster, d.status == Decision::Status::unresolvable, rng_,
                                      std::chrono::system_clock::now());
  if (r.outcome != PreemptionResult::Outcome::nominated) {
    TS_LOG(5, "Status after running PostFilter plugins for pod", {"pod", key(pod)}, {"status", r.message});
    if (!r.message.empty()) d.message += " " + r.message;
    // No candidate anywhere: a nomination from an earlier preemption no
    // longer holds (upstream clears it; "not eligible" leaves it).
    return r.outcome == PreemptionResult::Outcome::no_candidate ? end_nomination(pod) : std::nullopt;
  }
  TS_LOG(2, "the target node for the preemption is determined", {"node", r.node}, {"pod", key(pod)},
         {"victims", static_cast<std::int64_t>(r.victims.size())});
  ++stats_.preemptions;
  if (observer_.preemption_victims) observer_.preemption_victims(r.victims.size());
  PreemptRequest req{pod, r.node, {}, {}};
  req.victims.reserve(r.victims.size());
  for (const kube::Pod* v : r.victims) req.victims.push_back(*v);
  // Only a nomination the API shows is cleared, as upstream patches only
  // the pods whose queued copy carries one.
  for (const kube::Pod* p : nominator_.outranked_on(r.node, pod.priority))
    if (!p->nominated_node_name.empty()) req.outranked.push_back(*p);
  nominator_.nominate(pod, r.node);
  binder_.spawn_preempt(std::move(req));
  return r.node;
}

// What the plugins will look up, once: a namespace or kind the scheduler
// could not list shows here as 0 (its 403 is in the log before this).
void Scheduler::log_synced() const {
  std::string objects;
  for (const auto& i : informers_.cluster().informers())
    objects += (objects.empty() ? "" : " ") + std::string(i.resource) + "=" + std::to_string(i.objects);
  TS_LOG(2, "Caches are synced", {"nodes", cache_.node_count()}, {"boundPods", cache_.bound_count()},
         {"objects", objects});
}

void Scheduler::stop_scheduling() {
  wakeup_.stop();
  binder_.stop_connections();
}

void Scheduler::stop() {
  wakeup_.stop();
  binder_.stop();  // binds still waiting for a slot give up (undone, requeued)
  informers_.stop();
  events_.stop();
}

}  // namespace toysched::sched
