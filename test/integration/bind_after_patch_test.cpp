// A pod found unschedulable gets a PodScheduled=False patch; if a node then
// makes room and the pod is bound while that patch is still on its way, the
// patch must not land after the bind, or the bound pod reads "Unschedulable"
// for good (upstream's e2e "verify pod overhead is accounted for" fails on
// exactly that: a pod with a node and PodScheduled=False).
//
// The whole Scheduler runs in-process against a private lab. Its events
// client (status patches and events) goes through a relay that holds every
// byte 3 s; its binds go straight to the server. So the patch is sent first
// and, unless the bind waits for it, lands seconds after the bind.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <string>
#include <utility>

#include "async_run.hpp"
#include "delay_relay.hpp"
#include "lab_client.hpp"
#include "lab_fixture.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/log/log.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/trace/tasks.hpp"

using namespace toysched;
using testing::Lab;
using testing::pump_until;
namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST_CASE("a bind waits for its pod's PodScheduled=False patch already sent, which then cannot land after it") {
  log::set_verbosity(4);
  auto lab = Lab::start({"--nodes", "1", "--no-kubelet"});
  const std::string node = lab.kubectl({"get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"});
  // One unit of a resource no node has yet: unschedulable until the node
  // gets it.
  lab.kubectl({"run", "beard", "--image=registry.k8s.io/pause:3.10", "--restart=Never",
               R"(--overrides={"spec":{"schedulerName":"toy-scheduler","containers":[{"name":"beard",)"
               R"("image":"registry.k8s.io/pause:3.10","resources":{"requests":{"example.com/beard":"1"},)"
               R"("limits":{"example.com/beard":"1"}}}]}})"});

  asio::io_context io;
  testing::LabClient direct(io, lab.kubeconfig());
  const auto& cfg = direct.transport->config();
  constexpr auto kHeld = 3s;
  testing::DelayRelay relay(io, cfg.server.host, cfg.server.port, kHeld);
  kube::ClientConfig slow_cfg = cfg;
  slow_cfg.server.port = relay.port();
  auto slow_transport = kube::HttpTransport::create(io.get_executor(), slow_cfg);
  REQUIRE(slow_transport.has_value());
  kube::Api slow(**slow_transport);

  async::Supervisor supervisor;
  sched::SchedulerOptions opts;
  opts.pod_initial_backoff = 100ms;
  opts.pod_max_backoff = 100ms;
  sched::Scheduler scheduler(*direct.api, slow, std::move(opts), supervisor);
  int running = 3;
  auto done = [&](std::exception_ptr e) {
    --running;
    if (e) std::rethrow_exception(e);
  };
  asio::co_spawn(io, scheduler.run_informers(), done);
  asio::co_spawn(io, scheduler.run_events(), done);
  asio::co_spawn(io, scheduler.run_scheduling_loop(), done);

  // Found unschedulable, and its patch on the way (the relay holds it).
  REQUIRE(pump_until(
      io, [&] { return scheduler.stats().attempts_unschedulable >= 1 && relay.received() > 0; }, 60s));
  const auto waits_before = trace::point_stats()[trace::points::bind_status_patch.id].arrivals;
  lab.kubectl({"patch", "node", node, "--subresource=status", "--type=merge", "-p",
               R"({"status":{"capacity":{"example.com/beard":"1"},"allocatable":{"example.com/beard":"1"}}})"});
  REQUIRE(pump_until(
      io, [&] { return scheduler.stats().binds_ok >= 1; }, 60s));
  CHECK(trace::point_stats()[trace::points::bind_status_patch.id].arrivals == waits_before + 1);

  // Long enough for anything the relay held to land (a new TLS connection
  // costs it two round trips of kHeld), then nothing may be held still.
  pump_until(
      io, [] { return false; }, 2 * kHeld + 2s);
  CHECK(relay.held() == 0);
  CHECK(lab.kubectl({"get", "pod", "beard", "-o", "jsonpath={.spec.nodeName}"}) == node);
  CHECK(lab.kubectl({"get", "pod", "beard", "-o",
                     R"(jsonpath={range .status.conditions[?(@.type=="PodScheduled")]}{.status}/{.reason}{end})"}) ==
        "True/");

  scheduler.stop();
  CHECK(pump_until(
      io, [&] { return running == 0; }, 30s));
}
