// The scheduling cycle alone, no API: time per pod to filter and score every
// node and pick one, at 500 and 5 000 nodes, on scheduler_perf's
// SchedulingBasic shapes (nodes 4 CPU / 32Gi / 110 pods; pods 100m / 500Mi),
// with 1 000 pods already placed and each decided pod added to its node as
// the cache's assume does; then InterPodAffinity's scheduler_perf shapes
// (required anti-affinity, preferred affinity) and PodTopologySpread's
// (scheduler_perf's topology spreading: DoNotSchedule on hostname and
// ScheduleAnyway on zone, maxSkew 1, nodes in 10 zones) at 5 000 nodes;
// then all of them at once. Prints a markdown table; never passes or fails.
// `cycle-bench RUNS default`: the plain rows only (for a profiler).
// `cycle-bench RUNS explain`: the default rows also with each decision
// recorded for /debug/explain, as the scheduler records it (the recording's
// cost is the difference). `cycle-bench RUNS scale`: the scale run's shape
// (15 000 nodes, 150 000 pods placed), without and with the recording;
// `scale-recorded`: that row alone, for a profiler.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "../test/unit/builders.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/explain.hpp"

using namespace toysched;
using test::make_node;
using test::make_pod;

namespace {

bool g_record = false;  // record each decision as the scheduler does (/debug/explain)

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The pods: scheduler_perf's pod-default, or its pod-with-pod-anti-affinity
// (required, hostname, color=green) / pod-with-preferred-pod-affinity
// (weight 1, hostname, color=red) templates, for InterPodAffinity.
enum class Shape { plain, anti_affinity, preferred_affinity, spread };

kube::TopologySpreadConstraint spread_on(std::string key, kube::WhenUnsatisfiable when) {
  kube::TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = std::move(key);
  c.when_unsatisfiable = when;
  c.label_selector = kube::LabelSelector{{{"app", "bench"}}, {}};
  return c;
}

kube::Pod make_shape(Shape shape) {
  kube::Pod p = make_pod().ns("sched-0").name("p").cpu("100m").memory("500Mi");
  if (shape == Shape::plain) return p;
  if (shape == Shape::spread) {
    p.labels = {{"app", "bench"}};
    p.topology_spread.push_back(spread_on("kubernetes.io/hostname", kube::WhenUnsatisfiable::do_not_schedule));
    p.topology_spread.push_back(spread_on("topology.kubernetes.io/zone", kube::WhenUnsatisfiable::schedule_anyway));
    return p;
  }
  const std::string color = shape == Shape::anti_affinity ? "green" : "red";
  p.labels = {{"color", color}};
  kube::PodAffinityTerm t;
  t.label_selector = kube::LabelSelector{{{"color", color}}, {}};
  t.namespaces = {"sched-1", "sched-0"};
  t.topology_key = "kubernetes.io/hostname";
  if (shape == Shape::anti_affinity) {
    p.pod_anti_affinity.required.push_back(t);
  } else {
    p.pod_affinity.preferred.push_back({1, t});
  }
  return p;
}

// The nodes with their pods, kept where NodeInfo's pointers expect them,
// and the counts the Cache keeps for a Cluster.
struct World {
  std::vector<std::unique_ptr<sched::NodeInfo>> infos;
  std::vector<const sched::NodeInfo*> view;
  std::deque<kube::Pod> pods;
  sched::Cluster cluster{view, 0, 0};  // no node is tainted or cordoned, and the cache knows it

  void place(const kube::Pod& p, sched::NodeInfo& ni) {
    pods.push_back(p);
    ni.add_pod(pods.back());
    if (!p.pod_affinity.empty() || !p.pod_anti_affinity.empty()) ++cluster.pods_with_affinity;
    if (!p.pod_anti_affinity.required.empty()) ++cluster.pods_with_required_anti_affinity;
  }
};

// Microseconds of CPU per decision, over `pods` decisions, after `initial`
// pods of the same shape.
double run_once(int node_count, int initial, int pods, Shape shape, std::uint64_t seed, int percentage) {
  World w;
  for (int i = 0; i < node_count; ++i) {
    auto info = std::make_unique<sched::NodeInfo>();
    info->node = make_node()
                     .name("node-" + std::to_string(i))
                     .cpu("4")
                     .memory("32Gi")
                     .pods(110)
                     .label("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 10));
    w.view.push_back(info.get());
    w.infos.push_back(std::move(info));
  }
  w.cluster = sched::Cluster{w.view, 0, 0};
  w.cluster.pods_with_affinity = 0;
  w.cluster.pods_with_required_anti_affinity = 0;
  const kube::Pod tmpl = make_shape(shape);
  for (int i = 0; i < initial; ++i) {  // scheduler_perf's initial pods
    kube::Pod p = tmpl;
    p.uid = "init-" + std::to_string(i);
    w.place(p, *w.infos[static_cast<std::size_t>(i % node_count)]);
  }
  std::unordered_map<std::string, sched::NodeInfo*> by_name;
  for (auto& ni : w.infos) by_name.emplace(ni->node.name, ni.get());
  std::mt19937_64 rng(seed);
  const sched::Profile profile = sched::Profile::make_default();
  sched::Search search{percentage, 0};
  sched::ExplainRecorder recorder;
  double start = thread_cpu_seconds();
  for (int i = 0; i < pods; ++i) {
    kube::Pod p = tmpl;
    p.uid = "m-" + std::to_string(i);
    p.name = p.uid;
    sched::DecisionTrace* trace = g_record ? recorder.begin(p, 1, node_count) : nullptr;
    auto d = sched::schedule_pod(profile, p, w.cluster, rng, nullptr, percentage < 0 ? nullptr : &search, trace);
    if (g_record) recorder.finish(d, false);
    if (d.status != sched::Decision::Status::scheduled) {
      std::fprintf(stderr, "pod %d not scheduled: %s\n", i, d.message.c_str());
      return -1;
    }
    w.place(p, *by_name.at(d.node));  // the assume: O(1), as the cache's (a linear search here once cost
                                      // more than the decision at 5 000 nodes)
  }
  return (thread_cpu_seconds() - start) * 1e6 / pods;
}

void row(const char* shape_name, int nodes, int initial, int pods, Shape shape, int percentage, int runs) {
  std::vector<double> us;
  for (int r = 0; r < runs; ++r)
    us.push_back(run_once(nodes, initial, pods, shape, 42 + static_cast<std::uint64_t>(r), percentage));
  std::sort(us.begin(), us.end());
  std::size_t scored = percentage < 0 ? static_cast<std::size_t>(nodes)
                                      : sched::feasible_nodes_to_find(static_cast<std::size_t>(nodes), 0);
  std::printf("| %s%s | %d | %s | %zu | %d | %d | %.1f | %.1f | %.1f |\n", shape_name, g_record ? ", recorded" : "",
              nodes, percentage < 0 ? "every node" : "adaptive (default)", scored, pods, runs, us[us.size() / 2],
              us.front(), us.back());
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  // default (the plain pods only, for a profiler), explain, scale, scale-recorded: see the top
  const std::string_view mode = argc > 2 ? argv[2] : "";
  std::printf(
      "| pods | nodes | search | nodes scored | pods per run | runs | CPU µs per pod (median) | min | max |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
  auto plain_rows = [&] {
    for (int nodes : {500, 5000}) {
      for (int percentage : {0, -1}) row("default", nodes, 1000, 2000, Shape::plain, percentage, runs);
    }
  };
  if (mode != "scale-recorded") plain_rows();
  if (mode == "scale" || mode == "scale-recorded") {  // ./dev bench's scale run, without the API
    if (mode == "scale") row("default", 15000, 150000, 2000, Shape::plain, 0, runs);
    g_record = true;
    row("default", 15000, 150000, 2000, Shape::plain, 0, runs);
    return 0;
  }
  if (mode == "explain") {
    g_record = true;
    plain_rows();
    return 0;
  }
  if (mode == "default") return 0;
  // scheduler_perf's SchedulingPodAntiAffinity / SchedulingPreferredPodAffinity
  // at 5000 nodes: 1000 initial pods, 1000 measured, all of the shape.
  row("required anti-affinity", 5000, 1000, 1000, Shape::anti_affinity, 0, runs);
  row("preferred affinity", 5000, 1000, 1000, Shape::preferred_affinity, 0, runs);
  row("topology spread", 5000, 1000, 1000, Shape::spread, 0, runs);
  return 0;
}
