// The scheduling cycle alone, no API: time per pod to filter and score every
// node and pick one, at 500 and 5 000 nodes, on scheduler_perf's
// SchedulingBasic shapes (nodes 4 CPU / 32Gi / 110 pods; pods 100m / 500Mi),
// with 1 000 pods already placed and each decided pod added to its node as
// the cache's assume does. Prints a markdown table; never passes or fails.
// Second shape, "spread": nodes in 10 zones, every pod labelled app=bench
// with scheduler_perf's topology spreading constraints (DoNotSchedule on
// hostname, maxSkew 1; ScheduleAnyway on zone, maxSkew 1), so
// PodTopologySpread counts pods in PreFilter and PreScore every cycle.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../test/unit/builders.hpp"
#include "toysched/sched/algorithm.hpp"

using namespace toysched;
using test::make_node;
using test::make_pod;

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

kube::TopologySpreadConstraint spread_on(std::string key, kube::WhenUnsatisfiable when) {
  kube::TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = std::move(key);
  c.when_unsatisfiable = when;
  c.label_selector = kube::LabelSelector{{{"app", "bench"}}, {}};
  return c;
}

kube::Pod pod_template(bool spread) {
  kube::Pod tmpl = make_pod().ns("bench").name("p").cpu("100m").memory("500Mi");
  if (spread) {
    tmpl.labels.emplace_back("app", "bench");
    tmpl.topology_spread.push_back(spread_on("kubernetes.io/hostname", kube::WhenUnsatisfiable::do_not_schedule));
    tmpl.topology_spread.push_back(spread_on("topology.kubernetes.io/zone", kube::WhenUnsatisfiable::schedule_anyway));
  }
  return tmpl;
}

// Microseconds of CPU per decision, over `pods` decisions.
double run_once(int node_count, int pods, std::uint64_t seed, int percentage, bool spread) {
  std::vector<std::unique_ptr<sched::NodeInfo>> infos;
  std::vector<const sched::NodeInfo*> view;
  for (int i = 0; i < node_count; ++i) {
    auto info = std::make_unique<sched::NodeInfo>();
    info->node = make_node()
                     .name("node-" + std::to_string(i))
                     .cpu("4")
                     .memory("32Gi")
                     .pods(110)
                     .label("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 10));
    view.push_back(info.get());
    infos.push_back(std::move(info));
  }
  const kube::Pod tmpl = pod_template(spread);
  for (int i = 0; i < 1000; ++i) {  // scheduler_perf's initial pods
    kube::Pod p = tmpl;
    p.uid = "init-" + std::to_string(i);
    infos[static_cast<std::size_t>(i % node_count)]->add_pod(p);
  }
  std::mt19937_64 rng(seed);
  const sched::Profile profile = sched::Profile::make_default();
  // No node is tainted or cordoned, and the scheduler's cache knows it.
  const sched::Cluster cluster{view, 0, 0};
  sched::Search search{percentage, 0};
  double start = thread_cpu_seconds();
  for (int i = 0; i < pods; ++i) {
    kube::Pod p = tmpl;
    p.uid = "m-" + std::to_string(i);
    auto d = sched::schedule_pod(profile, p, cluster, rng, nullptr, percentage < 0 ? nullptr : &search);
    if (d.status != sched::Decision::Status::scheduled) {
      std::fprintf(stderr, "pod %d not scheduled: %s\n", i, d.message.c_str());
      return -1;
    }
    auto it = std::find_if(infos.begin(), infos.end(), [&](auto& n) { return n->node.name == d.node; });
    (*it)->add_pod(p);  // the assume, outside the timing would hide nothing: it is O(1)
  }
  return (thread_cpu_seconds() - start) * 1e6 / pods;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  std::printf(
      "| pods | nodes | search | nodes scored | pods per run | runs | CPU µs per pod (median) | min | max |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (bool spread : {false, true}) {
    for (int nodes : {500, 5000}) {
      const int pods = 2000;
      for (int percentage : {0, -1}) {  // the default (adaptive) and a full search
        std::vector<double> us;
        for (int r = 0; r < runs; ++r)
          us.push_back(run_once(nodes, pods, 42 + static_cast<std::uint64_t>(r), percentage, spread));
        std::sort(us.begin(), us.end());
        std::size_t scored = percentage < 0 ? static_cast<std::size_t>(nodes)
                                            : sched::feasible_nodes_to_find(static_cast<std::size_t>(nodes), 0);
        std::printf("| %s | %d | %s | %zu | %d | %d | %.1f | %.1f | %.1f |\n", spread ? "spread" : "basic", nodes,
                    percentage < 0 ? "every node" : "adaptive (default)", scored, pods, runs, us[us.size() / 2],
                    us.front(), us.back());
      }
    }
  }
  return 0;
}
