#include "toysched/serve/endpoints.hpp"

namespace toysched::serve {

void register_metrics(Registry& reg, Sources& src) {
  const std::string profile = src.scheduler_name;
  auto& attempts = reg.counter("scheduler_schedule_attempts_total",
                               "Number of attempts to schedule pods, by the result.", {"result", "profile"});
  auto& attempt_duration = reg.histogram("scheduler_scheduling_attempt_duration_seconds",
                                         "Scheduling attempt latency in seconds (scheduling algorithm).",
                                         attempt_duration_buckets(), {"result", "profile"});
  auto& sli = reg.histogram("scheduler_pod_scheduling_sli_duration_seconds",
                            "E2e latency for a pod being scheduled, from the time the pod enters the "
                            "scheduling queue until it is bound, by the number of attempts.",
                            sli_duration_buckets(), {"attempts"});
  auto& pending = reg.gauge("scheduler_pending_pods", "Number of pending pods, by the queue type.", {"queue"});
  auto& conflicts = reg.counter("toysched_bind_conflicts_total",
                                "Binds refused with 409: another scheduler bound the pod first (a lost race).");
  auto& bind_errors = reg.counter("toysched_bind_errors_total", "Binds that failed for another reason.");
  auto& in_flight = reg.gauge("toysched_binds_in_flight", "Binding requests in flight.");
  auto& watch_restarts = reg.counter("toysched_watch_restarts_total",
                                     "Watches started again, by resource and reason (expired: 410, relist; "
                                     "closed: the server ended it; error: connection lost or refused).",
                                     {"resource", "reason"});
  auto& api_requests =
      reg.counter("toysched_api_requests_total",
                  "Requests to the API server by verb and HTTP code ('error': no answer).", {"verb", "code"});
  auto& cache_size =
      reg.gauge("scheduler_scheduler_cache_size", "Number of nodes, pods, and assumed pods in the cache.", {"type"});
  add_task_metrics(reg);

  src.scheduler.set_observer(
      sched::SchedulerObserver{[&attempt_duration, profile](const char* result, double seconds) {
                                 attempt_duration.with({result, profile}).observe(seconds);
                               },
                               [&sli](int n, double seconds) { sli.with({std::to_string(n)}).observe(seconds); }});

  GaugeFamily* leader = nullptr;
  CounterFamily* transitions = nullptr;
  if (src.elector) {
    leader = &reg.gauge("leader_election_master_status",
                        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
                        "indicates master. 'name' is the string used to identify the lease.",
                        {"name"});
    transitions =
        &reg.counter("toysched_leader_election_transitions_seen_total",
                     "Changes of the lease's holder this process has seen (its own takeovers included).", {"name"});
  }

  // Counters mirror the scheduler's own totals at each scrape, so the hot
  // path only increments plain integers.
  auto sync = [](Counter& c, double total) { c.inc(total - c.value()); };
  reg.on_collect([&, sync, profile, leader, transitions] {
    const auto& st = src.scheduler.stats();
    sync(attempts.with({"scheduled", profile}), static_cast<double>(st.attempts_scheduled));
    sync(attempts.with({"unschedulable", profile}), static_cast<double>(st.attempts_unschedulable));
    sync(attempts.with({"error", profile}), static_cast<double>(st.attempts_error));
    sync(conflicts.with({}), static_cast<double>(st.bind_conflicts));
    sync(bind_errors.with({}), static_cast<double>(st.bind_errors));
    in_flight.with({}).set(st.binds_in_flight);
    const auto& q = src.scheduler.queue();
    pending.with({"active"}).set(static_cast<double>(q.active_size()));
    pending.with({"backoff"}).set(static_cast<double>(q.backoff_size()));
    pending.with({"unschedulable"}).set(static_cast<double>(q.unschedulable_size()));
    pending.with({"gated"}).set(0);
    auto& cache = src.scheduler.cache();
    cache_size.with({"nodes"}).set(static_cast<double>(cache.node_count()));
    cache_size.with({"pods"}).set(static_cast<double>(cache.bound_count()));
    cache_size.with({"assumed_pods"}).set(static_cast<double>(cache.assumed_count()));
    for (auto [resource, w] :
         {std::pair{"pods", &src.scheduler.pod_watch_stats()}, std::pair{"nodes", &src.scheduler.node_watch_stats()}}) {
      sync(watch_restarts.with({resource, "expired"}), static_cast<double>(w->relists_expired));
      sync(watch_restarts.with({resource, "closed"}), static_cast<double>(w->rewatch_clean));
      sync(watch_restarts.with({resource, "error"}), static_cast<double>(w->rewatch_error));
    }
    std::map<std::pair<std::string, std::string>, std::uint64_t> total;
    for (const auto* t : src.transports)
      for (const auto& [k, v] : t->request_counts()) total[k] += v;
    for (const auto& [k, v] : total) sync(api_requests.with({k.first, k.second}), static_cast<double>(v));
    if (src.elector) {
      leader->with({src.lease_name}).set(src.elector->stats().leading ? 1 : 0);
      sync(transitions->with({src.lease_name}), static_cast<double>(src.elector->stats().transitions_seen));
    }
  });
}

void add_routes(Routes& routes, Registry& reg, Sources& src) {
  std::vector<HealthCheck> live;
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
                     return std::string("pods and nodes not listed yet");
                   }});
  add_health_route(routes, "/healthz", live);
  add_health_route(routes, "/livez", live);
  add_health_route(routes, "/readyz", ready);
  add_metrics_route(routes, reg);
  add_debug_tasks_route(routes);
  add_debug_flags_v_route(routes);
  add_json_route(routes, "/debug/cache", [&src] { return src.scheduler.debug_cache_json(); });
}

}  // namespace toysched::serve
