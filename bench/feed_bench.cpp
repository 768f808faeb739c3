// What one open live page costs the scheduler's thread: the CPU time of one
// feed round (ui::Feed::delta, every 250 ms per open page) at N nodes in 3
// zones, as in the 10 000-pod benchmark burst:
//   reset   the first round, before the burst: every node written;
//   burst   K pods bound since the last round (the benchmark's burst binds
//           about 2 500 pods/s: about 625 a round), until 2 pods a node;
//   idle    after it, nothing changed: a digest and a lookup per key.
// Usage: feed-bench [nodes=5000] [burst pods per round=625] [idle rounds=40]
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/ui/feed.hpp"

#include "../test/unit/builders.hpp"

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace toysched;
using test::make_node;
using test::make_pod;

namespace {

double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Row {
  const char* name;
  std::vector<double> us;
  std::size_t bytes = 0;
};

void print(const Row& r) {
  std::vector<double> s = r.us;
  std::sort(s.begin(), s.end());
  std::printf("| %s | %zu | %.0f | %.0f | %.0f | %zu |\n", r.name, s.size(), s[s.size() / 2], s.front(), s.back(),
              r.bytes / std::max<std::size_t>(1, s.size()));
}

kube::Pod bound_pod(int i, int nodes) {
  kube::Pod p =
      make_pod().ns("bench").name("p-" + std::to_string(i)).uid("u-" + std::to_string(i)).cpu("100m").memory("500Mi");
  p.node_name = "node-" + std::to_string(i % nodes);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int burst = argc > 2 ? std::atoi(argv[2]) : 625;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 40;
  boost::asio::io_context io;
  kube::ClientConfig config;
  config.server.host = "127.0.0.1";
  config.server.port = 9;  // never contacted: the feed reads memory only
  auto transport = kube::HttpTransport::create(io.get_executor(), config, {});
  if (!transport) return 1;
  kube::Api api(**transport);
  async::Supervisor supervisor;
  sched::Scheduler s(api, api, sched::SchedulerOptions{}, supervisor);
  for (int i = 0; i < nodes; ++i) {
    kube::Node n = make_node().name("node-" + std::to_string(i)).cpu("4").memory("32Gi").pods(110);
    n.labels.emplace_back("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3));
    s.cache().add_node(n);
  }
  ui::Feed feed({s, nullptr, ""});
  ui::ClientView view;
  Row reset{"reset (every node)", {}}, busy{"burst", {}}, idle{"idle (no change)", {}};
  for (int r = 0; r < rounds; ++r) {
    ui::ClientView fresh;
    double t0 = cpu_us();
    std::string body = feed.delta(fresh, {}, true);
    reset.us.push_back(cpu_us() - t0);
    reset.bytes += body.size();
  }
  feed.delta(view, {}, true);
  for (int next = 0; next < 2 * nodes;) {
    for (int k = 0; k < burst && next < 2 * nodes; ++k, ++next) s.cache().add_pod(bound_pod(next, nodes));
    double t0 = cpu_us();
    std::string body = feed.delta(view, {}, false);
    busy.us.push_back(cpu_us() - t0);
    busy.bytes += body.size();
  }
  for (int r = 0; r < rounds; ++r) {
    double t0 = cpu_us();
    std::string body = feed.delta(view, {}, false);
    idle.us.push_back(cpu_us() - t0);
    idle.bytes += body.size();
  }
  std::printf("feed rounds at %d nodes; the burst binds %d pods a round up to %d\n\n", nodes, burst, 2 * nodes);
  std::printf("| round | rounds | CPU µs (median) | min | max | bytes sent (mean) |\n|---|---:|---:|---:|---:|---:|\n");
  print(reset);
  print(busy);
  print(idle);
  return 0;
}
