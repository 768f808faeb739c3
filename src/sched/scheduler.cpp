#include "toysched/sched/scheduler.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/json/writer.hpp"
#include "toysched/log/log.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

namespace {
std::string key(const kube::Pod& p) { return p.ns + "/" + p.name; }

// Whether an update to a pending pod could change where it fits. Status-only
// updates (our own PodScheduled patch among them) must not send an
// unschedulable pod round again, or every failure would retry itself.
bool scheduling_spec_changed(const kube::Pod& a, const kube::Pod& b) {
  return a.requests != b.requests || a.node_selector != b.node_selector || a.required_affinity != b.required_affinity ||
         a.preferred_affinity != b.preferred_affinity || a.tolerations != b.tolerations ||
         a.host_ports != b.host_ports || a.priority != b.priority || a.scheduling_gated != b.scheduling_gated;
}
}  // namespace

// Event handlers only route (kube-scheduler's eventhandlers.go): bound pods
// to the cache, our pending pods to the queue.
struct Scheduler::PodEvents final : kube::Handler<kube::Pod> {
  Scheduler& s;
  explicit PodEvents(Scheduler& sch) : s(sch) {}
  void on_add(const kube::Pod& p) override {
    if (!p.node_name.empty()) {
      TS_LOG(3, "Add event for scheduled pod", {"pod", key(p)}, {"node", p.node_name});
      s.queue_.remove(p.uid);
      s.cache_.add_pod(p);
    } else if (s.responsible_for(p)) {
      TS_LOG(3, "Add event for unscheduled pod", {"pod", key(p)});
      s.queue_.add_or_update(p, clock::now());
      TS_LOG(5, "Pod moved to an internal scheduling queue", {"pod", key(p)}, {"event", "PodAdd"}, {"queue", "Active"});
      s.wake();
    }
  }
  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    if (!now.node_name.empty()) {
      if (old.node_name.empty()) {
        TS_LOG(3, "Update event for scheduled pod", {"pod", key(now)}, {"node", now.node_name});
        s.queue_.remove(now.uid);
        s.cache_.add_pod(now);
      } else {
        s.cache_.update_pod(old, now);
      }
    } else if (s.responsible_for(now)) {
      if (!s.responsible_for(old) || scheduling_spec_changed(old, now)) {
        s.queue_.add_or_update(now, clock::now());
        s.wake();
      }
    } else {
      s.queue_.remove(now.uid);  // being deleted, or handed to another scheduler
    }
  }
  void on_delete(const kube::Pod& last) override {
    bool counted = !last.node_name.empty() || s.cache_.contains(last.uid);
    s.queue_.remove(last.uid);
    s.events_.forget(last.uid);
    if (counted) {
      TS_LOG(3, "Delete event for scheduled pod", {"pod", key(last)});
      s.cache_.remove_pod(last);
      s.queue_.move_all_to_active_or_backoff(clock::now());  // its room is free now
      s.wake();
    }
  }
};

struct Scheduler::NodeEvents final : kube::Handler<kube::Node> {
  Scheduler& s;
  explicit NodeEvents(Scheduler& sch) : s(sch) {}
  void on_add(const kube::Node& n) override {
    TS_LOG(3, "Add event for node", {"node", n.name});
    s.cache_.add_node(n);
    s.queue_.move_all_to_active_or_backoff(clock::now());
    s.wake();
  }
  void on_update(const kube::Node&, const kube::Node& n) override {
    TS_LOG(3, "Update event for node", {"node", n.name});
    s.cache_.update_node(n);
    s.queue_.move_all_to_active_or_backoff(clock::now());
    s.wake();
  }
  void on_delete(const kube::Node& n) override {
    TS_LOG(3, "Delete event for node", {"node", n.name});
    s.cache_.remove_node(n.name);
  }
};

Scheduler::Scheduler(kube::Api& api, kube::Api& events_api, SchedulerOptions opts)
    : api_(api),
      opts_(std::move(opts)),
      events_(events_api, opts_.scheduler_name, opts_.instance.empty() ? opts_.scheduler_name : opts_.instance),
      rng_(opts_.seed),
      search_{opts_.percentage_of_nodes_to_score, 0},
      pod_events_(std::make_unique<PodEvents>(*this)),
      node_events_(std::make_unique<NodeEvents>(*this)) {
  events_.set_busy([this] { return stats_.binds_in_flight > 0 || queue_.active_size() > 0; });
  // All non-terminal pods: bound ones count against their nodes; a pod that
  // finishes leaves the selector and arrives as a delete, freeing its room.
  kube::ListOptions pod_opts;
  pod_opts.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  pods_ = std::make_unique<kube::Reflector<kube::Pod>>(api_, *pod_events_, pod_opts);
  nodes_ = std::make_unique<kube::Reflector<kube::Node>>(api_, *node_events_, kube::ListOptions{});
}

Scheduler::~Scheduler() = default;

bool Scheduler::responsible_for(const kube::Pod& p) const {
  return p.scheduler_name == opts_.scheduler_name && !p.deleting && !p.scheduling_gated;
}

bool Scheduler::synced() const noexcept { return pods_->synced() && nodes_->synced(); }

void Scheduler::wake() {
  if (wake_) wake_->cancel();
}

asio::awaitable<void> Scheduler::run_informers() {
  using namespace asio::experimental::awaitable_operators;
  // Nodes first in effect: both start now; the loop waits for both to sync.
  co_await (nodes_->run() && pods_->run());
}

asio::awaitable<void> Scheduler::run_scheduling_loop() {
  trace::TaskScope task("schedule");
  auto ex = co_await asio::this_coro::executor;
  int since_yield = 0;
  bool warmed = false;
  while (scheduling_ && !stopping_) {
    auto now = clock::now();
    queue_.flush(now);
    if (!warmed && synced()) {
      // One connection per bind in flight, opened before the first burst.
      co_await api_.transport().warm_up(static_cast<std::size_t>(opts_.bind_parallelism));
      warmed = true;
    }
    std::optional<Queue::Item> item;
    if (synced() && stats_.binds_in_flight < opts_.bind_parallelism) item = queue_.pop(now);
    if (!item) {
      // Sleep until something changes: a pod or node event, a bind finishing,
      // the next backoff expiring, or the periodic unschedulable flush.
      auto until = now + 1s;
      if (auto b = queue_.next_backoff_expiry(); b && *b < until) until = *b;
      wake_ = std::make_unique<asio::steady_timer>(ex, until);
      co_await trace::traced(task, trace::points::schedule_pop, wake_->async_wait(asio::as_tuple(asio::use_awaitable)));
      wake_.reset();
      since_yield = 0;
      continue;
    }
    const kube::Pod& pod = item->pod;
    TS_LOG(4, "About to try and schedule pod", {"pod", key(pod)});
    TS_LOG(3, "Attempting to schedule pod", {"pod", key(pod)});
    auto& nodes = cache_.nodes();
    auto cycle_start = clock::now();
    Decision d = schedule_pod(pod, nodes, rng_, nullptr, &search_);
    double cycle_seconds = std::chrono::duration<double>(clock::now() - cycle_start).count();
    if (d.status == Decision::Status::scheduled) {
      if (!cache_.assume(pod, d.node)) {
        // Already in the cache: the watch showed it bound meanwhile.
        ++stats_.attempts_error;
        queue_.remove(pod.uid);
        continue;
      }
      ++stats_.attempts_scheduled;
      if (observer_.attempt) observer_.attempt("scheduled", cycle_seconds);
      ++stats_.binds_in_flight;
      asio::co_spawn(ex, bind(pod, d.node, d.evaluated_nodes, d.feasible_nodes, item->attempts, item->first_queued),
                     asio::detached);
    } else {
      bool error = d.status == Decision::Status::error;
      if (error)
        ++stats_.attempts_error;
      else
        ++stats_.attempts_unschedulable;
      if (observer_.attempt) observer_.attempt(error ? "error" : "unschedulable", cycle_seconds);
      TS_LOG(2, "Unable to schedule pod; no fit; waiting", {"pod", key(pod)}, {"err", d.message});
      queue_.unschedulable(pod.uid, clock::now());
      events_.failed_scheduling(pod, d.message);
    }
    // Let watches and binds run between decisions, without paying a trip
    // through the loop for every pod of a burst.
    if (++since_yield >= 8) {
      since_yield = 0;
      co_await trace::traced(task, trace::points::schedule_yield, asio::post(ex, asio::use_awaitable));
    }
  }
}

asio::awaitable<void> Scheduler::bind(kube::Pod pod, std::string node, int evaluated, int feasible, int attempts,
                                      Queue::clock::time_point first_queued) {
  trace::TaskScope task{"bind/", pod.ns, "/", pod.name};
  TS_LOG(3, "Attempting to bind pod to node", {"pod", key(pod)}, {"node", node});
  auto r = co_await trace::traced(task, trace::points::bind_post, api_.bind(pod.ns, pod.name, pod.uid, node));
  --stats_.binds_in_flight;
  if (r) {
    ++stats_.binds_ok;
    if (observer_.bound) observer_.bound(attempts, std::chrono::duration<double>(clock::now() - first_queued).count());
    queue_.done(pod.uid);  // stays out of the queue; the watch will confirm it
    TS_LOG(2, "Successfully bound pod to node", {"pod", key(pod)}, {"node", node}, {"evaluatedNodes", evaluated},
           {"feasibleNodes", feasible});
    events_.scheduled(pod, node);
  } else if (r.error().is_conflict()) {
    // Another scheduler bound it first (or it is being deleted): the API
    // server is the arbiter. Forget our decision; the watch tells the rest.
    ++stats_.bind_conflicts;
    cache_.forget(pod.uid);
    queue_.done(pod.uid);
    TS_LOG(2, "Binding rejected: conflict, pod already assigned or changed", {"pod", key(pod)}, {"node", node},
           {"err", r.error().message});
  } else if (r.error().is_not_found()) {
    cache_.forget(pod.uid);
    queue_.remove(pod.uid);
  } else {
    ++stats_.bind_errors;
    cache_.forget(pod.uid);
    TS_ERROR("Failed to bind pod", {"pod", key(pod)}, {"node", node}, {"err", r.error().message});
    queue_.backoff(pod.uid, clock::now());
    events_.failed_scheduling(pod, "Binding rejected: " + r.error().message, true);
  }
  wake();
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
  auto now = std::chrono::steady_clock::now();
  for (const auto& a : cache_.assumed()) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - a.since).count();
    w.object().field("pod", a.key).field("node", a.node).field("assumed_ms", static_cast<std::int64_t>(ms)).end();
  }
  w.end().field("bound_pods", static_cast<std::uint64_t>(cache_.bound_count()));
  w.field("assumed_pods", static_cast<std::uint64_t>(cache_.assumed_count())).end();
  return std::move(w).str();
}

void Scheduler::stop_scheduling() {
  scheduling_ = false;
  wake();
}

void Scheduler::stop() {
  stopping_ = true;
  scheduling_ = false;
  pods_->stop();
  nodes_->stop();
  events_.stop();
  wake();
}

}  // namespace toysched::sched
