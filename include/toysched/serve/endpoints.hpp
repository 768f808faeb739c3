// What toy-scheduler serves at --secure-port (and --metrics-bind-address): health as Kubernetes
// components answer it, Prometheus metrics (kube-scheduler's names where the
// meaning is the same, toysched_* for the rest), and the debug views.
#pragma once

#include <vector>

#include "toysched/kube/transport.hpp"
#include "toysched/lease/elector.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/serve/http_server.hpp"
#include "toysched/serve/metrics.hpp"

namespace toysched::serve {

struct Sources {
  sched::Scheduler& scheduler;
  std::string scheduler_name;
  std::vector<const kube::Transport*> transports;  // every client, for API request counts
  const lease::Elector* elector = nullptr;         // with --leader-elect
  std::string lease_name;
  const async::Supervisor* supervisor = nullptr;         // a dead critical task fails /healthz
  std::shared_ptr<sched::PluginTimings> plugin_timings;  // made by register_metrics
};

// Registers every metric on `reg` and hooks the scheduler's observer.
void register_metrics(Registry& reg, Sources& src);

// /healthz /livez /readyz /metrics /debug/tasks /debug/flags/v /debug/cache.
void add_routes(Routes& routes, Registry& reg, Sources& src);

}  // namespace toysched::serve
