// EventRecorder's posts against the scripted transport: a Scheduled event,
// a FailedScheduling (its PodScheduled=False status patch, then its event)
// and a Preempted event, with a bind of the unschedulable pod waiting on the
// ordering gate for its patch; every await point failed in turn, then the
// pod bound (no longer pending) at each await point in turn. Whatever
// happens:
//   - the waiting bind is let go once the patch is answered or has failed,
//     never before and never stuck; nothing is left on the gate;
//   - no PodScheduled=False patch and no FailedScheduling event about a pod
//     is sent once it is no longer pending; a FailedScheduling that did not
//     go out for that reason is counted as dropped;
//   - every queued write is sent or dropped: nothing stays pending.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <string>

#include "support/every_point.hpp"
#include "support/pod_server.hpp"
#include "support/scripted_transport.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/ordering_gate.hpp"

using namespace toysched;
using namespace std::chrono_literals;
using testing::Injection;
using testing::PodServer;
using testing::Reply;
using testing::ScriptedTransport;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

kube::Pod pod_of(const testing::ServerPod& s) {
  kube::Pod p;
  p.ns = s.ns;
  p.name = s.name;
  p.uid = s.uid;
  p.node_name = s.node;
  p.scheduler_name = "toy-scheduler";
  return p;
}

// The bind's part: once the patch is on the wire, wait for it to settle.
asio::awaitable<void> wait_like_a_bind(sched::OrderingGate& order, bool& waited, std::uint64_t& settled_at,
                                       ScriptedTransport& fake) {
  trace::TaskScope task("test/bind");
  waited = true;
  co_await order.settled("u2", task, trace::points::bind_status_patch);
  settled_at = fake.seq();
}

std::size_t run(const std::optional<Injection>& inject, std::size_t bound_at = 0) {
  asio::io_context io;
  ScriptedTransport fake(io.get_executor());
  kube::Api api(fake);
  PodServer server;
  server.serve_on(fake);
  fake.on(http::verb::post, "/apis/events.k8s.io/v1/namespaces/*/events", [](const kube::HttpRequest&) {
    return Reply{201, "{}"};
  });
  const auto& p1 = server.add("a", "p1", "u1", "n1");
  const auto& p2 = server.add("a", "p2", "u2");
  const auto& victim = server.add("a", "v", "uv", "n1");
  async::Supervisor supervisor;
  sched::OrderingGate order;
  sched::EventRecorder events(api, "toy-scheduler", "test", supervisor, order);
  events.set_still_pending([&](const std::string& ns, const std::string& name, const std::string& uid) {
    const auto* p = server.find(ns + "/" + name);
    return p != nullptr && p->uid == uid && p->node.empty();
  });
  if (inject) fake.fail_at(inject->point, inject->fault);
  std::uint64_t bound_seq = 0;
  if (bound_at != 0)
    fake.at(bound_at, [&] {
      server.find("a/p2")->node = "n1";
      bound_seq = fake.seq();
    });

  events.scheduled(pod_of(p1), "n1");
  events.failed_scheduling(pod_of(p2), "0/1 nodes are available: 1 Insufficient cpu.");
  events.preempted(pod_of(victim), pod_of(p2), "n1");
  events.stop();  // sends what is queued, then ends
  bool ran = false, waited = false;
  std::uint64_t settled_at = 0;
  asio::co_spawn(io, events.run(), [&](std::exception_ptr e) {
    ran = true;
    CHECK_FALSE(e);
  });
  // A bind of p2 decided while its patch is on the wire (if it gets there).
  for (int i = 0; i < 1000 && !order.in_flight("u2") && !ran; ++i) io.run_one();
  if (order.in_flight("u2"))
    asio::co_spawn(io, wait_like_a_bind(order, waited, settled_at, fake), [](std::exception_ptr e) { CHECK_FALSE(e); });
  io.run_for(5s);
  REQUIRE(io.stopped());
  CHECK(ran);

  CHECK(events.pending() == 0);
  CHECK(order.in_flight_count() == 0);
  CHECK(order.waiting() == 0);
  CHECK(fake.unexpected().empty());
  CHECK(supervisor.failures().empty());
  if (waited) {  // let go only after the patch's result
    const auto patches = fake.sent_matching(http::verb::patch, "p2/status");
    for (const auto& p : patches) CHECK((p.done_seq != 0 && p.done_seq <= settled_at));
  }
  if (inject) CHECK(fake.fault_fired());
  int failed_writes_sent = 0;
  for (const auto& s : fake.sent()) {
    const bool about_p2 =
        s.target.find("p2/status") != std::string::npos || (s.body.find("FailedScheduling") != std::string::npos);
    failed_writes_sent += about_p2;
    if (bound_at != 0 && about_p2) CHECK(s.sent_seq <= bound_seq);  // nothing about it once bound
  }
  if (!inject && bound_at == 0) {
    CHECK(failed_writes_sent == 2);  // the patch and the event
    CHECK(waited);
    CHECK(events.dropped_stale() == 0);
  }
  if (bound_at != 0 && failed_writes_sent < 2) CHECK(events.dropped_stale() == 1);
  CHECK(server.stale_false_patches() == 0);
  return fake.points();
}

}  // namespace

TEST_CASE("EventRecorder::post: after any one failure, nothing stays pending and the waiting bind goes on") {
  CHECK(testing::every_await_point(testing::every_fault(), [](const auto& inject) { return run(inject); }) >= 4);
}

TEST_CASE("EventRecorder::post: the pod bound at any await point, no FailedScheduling write about it follows") {
  testing::at_every_await_point("the pod is bound", [](std::size_t i) { return run(std::nullopt, i); });
}
