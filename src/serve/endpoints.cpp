#include "toysched/serve/endpoints.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "toysched/json/writer.hpp"
#include "toysched/sched/cluster_objects.hpp"

namespace toysched::serve {

namespace {

// Every family /metrics shows, registered once.
struct Families {
  CounterFamily& attempts;
  HistogramFamily& attempt_duration;
  HistogramFamily& algorithm_duration;
  HistogramFamily& sli;
  HistogramFamily& pod_attempts;
  HistogramFamily& plugin_duration;
  HistogramFamily& stages;
  GaugeFamily& pending;
  CounterFamily& conflicts;
  CounterFamily& bind_errors;
  GaugeFamily& in_flight;
  CounterFamily& watch_restarts;
  CounterFamily& api_requests;
  GaugeFamily& cache_size;
  CounterFamily& task_failures;
  CounterFamily& preemption_attempts;
  HistogramFamily& preemption_victims;
  GaugeFamily* leader = nullptr;         // with --leader-elect
  CounterFamily* transitions = nullptr;  // with --leader-elect
};

Families register_families(Registry& reg, bool leader_election) {
  Families f{
      reg.counter("scheduler_schedule_attempts_total", "Number of attempts to schedule pods, by the result.",
                  {"result", "profile"}),
      reg.histogram("scheduler_scheduling_attempt_duration_seconds",
                    "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
                    attempt_duration_buckets(), {"result", "profile"}),
      // kube-scheduler's name for the same time (schedulePod alone), without
      // labels as upstream: benchmarks compare the two schedulers on it.
      reg.histogram("scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds.",
                    attempt_duration_buckets()),
      reg.histogram("scheduler_pod_scheduling_sli_duration_seconds",
                    "E2e latency for a pod being scheduled, from the time the pod enters the "
                    "scheduling queue until it is bound, by the number of attempts.",
                    sli_duration_buckets(), {"attempts"}),
      reg.histogram("scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
                    {1, 2, 4, 8, 16}),
      reg.histogram("scheduler_plugin_execution_duration_seconds",
                    "Duration for running a plugin at a specific extension point (one decision in ten; Filter "
                    "and Score per chunk of nodes).",
                    plugin_duration_buckets(), {"plugin", "extension_point", "status"}),
      reg.histogram("toysched_pod_scheduling_stage_duration_seconds",
                    "Where a bound pod's time went, by stage: decode (watch read to queue), queue, decide, "
                    "slot (waiting for a bind slot), limiter (client rate limit), connect (a connection in hand), "
                    "post (the binding request), total (watch read to the binding's answer).",
                    stage_duration_buckets(), {"stage"}),
      reg.gauge("scheduler_pending_pods", "Number of pending pods, by the queue type.", {"queue"}),
      reg.counter("toysched_bind_conflicts_total",
                  "Binds refused with 409: another scheduler bound the pod first (a lost race)."),
      reg.counter("toysched_bind_errors_total", "Binds that failed for another reason."),
      reg.gauge("toysched_binds_in_flight", "Binding requests in flight."),
      reg.counter("toysched_watch_restarts_total",
                  "Watches started again, by resource and reason (expired: 410, relist; "
                  "closed: the server ended it; error: connection lost or refused).",
                  {"resource", "reason"}),
      reg.counter("toysched_api_requests_total",
                  "Requests to the API server by verb and HTTP code ('error': no answer).", {"verb", "code"}),
      reg.gauge("scheduler_cache_size", "Number of nodes, pods, and assumed pods in the cache.", {"type"}),
      reg.counter("toysched_task_failures_total",
                  "Tasks that ended with an exception, by task (bind, events/post: one per pod; the rest are "
                  "critical and end the process).",
                  {"task"}),
      reg.counter("scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now"),
      reg.histogram("scheduler_preemption_victims", "Number of selected preemption victims", {1, 2, 4, 8, 16, 32, 64}),
  };
  if (leader_election) {
    f.leader = &reg.gauge("leader_election_master_status",
                          "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
                          "indicates master. 'name' is the string used to identify the lease.",
                          {"name"});
    f.transitions =
        &reg.counter("toysched_leader_election_transitions_seen_total",
                     "Changes of the lease's holder this process has seen (its own takeovers included).", {"name"});
  }
  return f;
}

// Counters mirror the scheduler's own totals at each scrape, so the hot
// path only increments plain integers.
void sync(Counter& c, double total) { c.inc(total - c.value()); }

void collect_scheduler(Families& f, const Sources& src) {
  const auto& st = src.scheduler.stats();
  sync(f.conflicts.with({}), static_cast<double>(st.bind_conflicts));
  sync(f.bind_errors.with({}), static_cast<double>(st.bind_errors));
  sync(f.preemption_attempts.with({}), static_cast<double>(st.preemption_attempts));
  f.in_flight.with({}).set(st.binds_in_flight);
  const auto& q = src.scheduler.queue();
  f.pending.with({"active"}).set(static_cast<double>(q.active_size()));
  f.pending.with({"backoff"}).set(static_cast<double>(q.backoff_size()));
  f.pending.with({"unschedulable"}).set(static_cast<double>(q.unschedulable_size()));
  f.pending.with({"gated"}).set(0);
  auto& cache = src.scheduler.cache();
  f.cache_size.with({"nodes"}).set(static_cast<double>(cache.node_count()));
  f.cache_size.with({"pods"}).set(static_cast<double>(cache.bound_count()));
  f.cache_size.with({"assumed_pods"}).set(static_cast<double>(cache.assumed_count()));
}

void collect_clients(Families& f, const Sources& src) {
  std::vector<std::pair<const char*, const kube::ReflectorStats*>> watches = {
      {"pods", &src.scheduler.informers().pod_watch_stats()}, {"nodes", &src.scheduler.informers().node_watch_stats()}};
  for (const auto& i : src.scheduler.informers().cluster().informers()) watches.push_back({i.resource, i.stats});
  for (const auto& [resource, w] : watches) {
    sync(f.watch_restarts.with({resource, "expired"}), static_cast<double>(w->relists_expired));
    sync(f.watch_restarts.with({resource, "closed"}), static_cast<double>(w->rewatch_clean));
    sync(f.watch_restarts.with({resource, "error"}), static_cast<double>(w->rewatch_error));
  }
  std::map<std::pair<std::string, std::string>, std::uint64_t> total;
  for (const auto* t : src.transports)
    for (const auto& [k, v] : t->request_counts()) total[k] += v;
  for (const auto& [k, v] : total) sync(f.api_requests.with({k.first, k.second}), static_cast<double>(v));
  if (src.supervisor)
    for (const auto& [task, n] : src.supervisor->failures()) sync(f.task_failures.with({task}), static_cast<double>(n));
  if (src.elector) {
    f.leader->with({src.lease_name}).set(src.elector->stats().leading ? 1 : 0);
    sync(f.transitions->with({src.lease_name}), static_cast<double>(src.elector->stats().transitions_seen));
  }
}

// The sampled plugin timings into their histogram.
class PluginDurations final : public sched::PluginTimings {
 public:
  explicit PluginDurations(HistogramFamily& h) : h_(h) {}
  void observe(std::string_view point, sched::PluginId plugin, std::string_view status, double seconds) override {
    h_.with({sched::plugin_name(plugin), point, status}).observe(seconds);
  }

 private:
  HistogramFamily& h_;
};

}  // namespace

void register_metrics(Registry& reg, Sources& src) {
  const std::string profile = src.scheduler_name;
  Families f = register_families(reg, src.elector != nullptr);
  add_task_metrics(reg);
  add_process_metrics(reg);
  src.plugin_timings = std::make_shared<PluginDurations>(f.plugin_duration);
  // Every result of the first profile from the start, so a rate() reads 0
  // rather than "no data"; other profiles' series appear with their first pod.
  for (const char* result : {"scheduled", "unschedulable", "error"}) f.attempts.with({result, profile});
  src.scheduler.set_observer(sched::SchedulerObserver{
      [&c = f.attempts, &h = f.attempt_duration](const char* result, const std::string& p, double seconds) {
        c.with({result, p}).inc();
        h.with({result, p}).observe(seconds);
      },
      [&a = f.algorithm_duration](double seconds) { a.with({}).observe(seconds); },
      [&h = f.sli, &n = f.pod_attempts](int attempts, double seconds) {
        h.with({std::to_string(attempts)}).observe(seconds);
        n.with({}).observe(attempts);
      },
      [&h = f.stages](const sched::PodTimeline& t) {
        auto s = sched::stage_seconds(t);
        for (std::size_t i = 0; i < s.size(); ++i) h.with({std::string(sched::stage_names[i])}).observe(s[i]);
      },
      src.plugin_timings.get(),
      [&h = f.preemption_victims](std::size_t victims) { h.with({}).observe(static_cast<double>(victims)); }});
  reg.on_collect([f, &src]() mutable {
    collect_scheduler(f, src);
    collect_clients(f, src);
  });
}

namespace {

// /debug/cache: per node allocatable, requested, pod count; assumed pods.
std::string cache_json(sched::Cache& cache) {
  json::Writer w;
  w.object().key("nodes").array();
  for (const sched::NodeInfo* n : cache.nodes()) {
    w.object().field("name", n->node.name);
    const auto& alloc = n->node.allocatable;
    w.key("allocatable").object().field("cpu_millis", alloc.milli_cpu).field("memory", alloc.memory);
    w.field("pods", alloc.pods).end();
    w.key("requested").object().field("cpu_millis", n->requested.milli_cpu).field("memory", n->requested.memory);
    w.end().field("pods", n->pod_count).end();
  }
  w.end().key("assumed").array();
  const auto now = std::chrono::steady_clock::now();
  for (const auto& a : cache.assumed()) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - a.since).count();
    w.object().field("pod", a.key).field("node", a.node).field("assumed_ms", static_cast<std::int64_t>(ms)).end();
  }
  w.end().field("bound_pods", static_cast<std::uint64_t>(cache.bound_count()));
  w.field("assumed_pods", static_cast<std::uint64_t>(cache.assumed_count())).end();
  return std::move(w).str();
}

// /debug/cluster-objects[?pod=NS/NAME]: the informers' object counts and,
// for the pod (as the pod informer has it), its namespace's labels and its
// default spread selector.
std::string cluster_objects_json(const sched::Scheduler& scheduler, const std::optional<std::string>& pod) {
  const sched::ClusterInformers& informers = scheduler.informers().cluster();
  json::Writer w;
  w.object().field("synced", informers.synced());
  w.key("counts").object();
  for (const auto& i : informers.informers()) w.field(i.resource, static_cast<std::uint64_t>(i.objects));
  w.end();
  if (pod) {
    w.key("pod").object().field("name", *pod);
    if (const kube::Pod* p = scheduler.informers().pods().find(*pod)) {
      w.key("namespace_labels").object();
      if (const auto* labels = informers.objects().namespace_labels(p->ns))
        for (const auto& [k, v] : *labels) w.field(k, v);
      w.end().field("default_selector", sched::selector_text(informers.objects().default_selector(*p)));
    } else {
      w.field("error", "not in the pod informer");
    }
    w.end();
  }
  w.end();
  return std::move(w).str();
}

// /debug/explain?pod=NS/NAME[&format=text]: the pod's last attempt.
void add_explain_route(Routes& routes, const sched::Scheduler& scheduler) {
  routes.get("/debug/explain", [&scheduler](const Request& r) {
    const std::string pod = r.param("pod").value_or("");
    if (pod.find('/') == std::string::npos) {
      return Response{
          400, "text/plain; charset=utf-8", "want ?pod=NAMESPACE/NAME (and &format=text for a table)\n", {}};
    }
    const sched::Explanation* e = scheduler.explanation(pod);
    if (e == nullptr) {
      return Response{
          404,
          "text/plain; charset=utf-8",
          "no attempt recorded for pod " + pod + ": not ours, not tried yet, deleted, or aged out of the record\n",
          {}};
    }
    if (r.param("format") == "text") {
      return Response{200, "text/plain; charset=utf-8", sched::explain_text(*e), {}};
    }
    return Response{200, "application/json", sched::explain_json(*e), {}};
  });
}

}  // namespace

void add_routes(Routes& routes, Registry& reg, Sources& src) {
  std::vector<HealthCheck> live;
  if (src.supervisor) {
    // A critical task died: the process is on its way out; say so meanwhile.
    live.push_back({"tasks", [&src]() -> std::optional<std::string> {
                      if (!src.supervisor->dead()) return std::nullopt;
                      return "task ended: " + *src.supervisor->dead();
                    }});
  }
  if (src.elector) {
    live.push_back({"leader-election", [&src]() -> std::optional<std::string> {
                      if (src.elector->healthy(std::chrono::steady_clock::now())) return std::nullopt;
                      return "failed to renew leadership on lease " + src.lease_name;
                    }});
  }
  std::vector<HealthCheck> ready = live;
  if (src.elector) {
    ready.push_back(
        {"leader-election-lease", [&src]() -> std::optional<std::string> { return src.elector->failing(); }});
  }
  ready.push_back({"informer-sync", [&src]() -> std::optional<std::string> {
                     if (src.scheduler.synced()) return std::nullopt;
                     return std::string("informers not synced yet");
                   }});
  ready.push_back({"bind-connections", [&src]() -> std::optional<std::string> {
                     if (!src.scheduler.opening_connections()) return std::nullopt;
                     return std::string("opening the bind connections");
                   }});
  add_health_route(routes, "/healthz", live);
  add_health_route(routes, "/livez", live);
  add_health_route(routes, "/readyz", ready);
  add_metrics_route(routes, reg);
  add_debug_tasks_route(routes);
  add_debug_flags_v_route(routes);
  add_json_route(routes, "/debug/cache", [&src] { return cache_json(src.scheduler.cache()); });
  routes.get("/debug/cluster-objects", [&src](const Request& r) {
    return Response{200, "application/json", cluster_objects_json(src.scheduler, r.param("pod")), {}};
  });
  add_explain_route(routes, src.scheduler);
}

}  // namespace toysched::serve
