// The binding cycle against the scripted transport, every await point failed
// in turn (support/every_point.hpp), and, in a second loop, the bind gate
// closed at each point in turn (a leader past its renew deadline).
//
// Three pods are decided at once onto two bind slots. The third had failed
// before: its PodScheduled=False patch is already on the wire when it is
// decided, so its bind must wait for that patch's answer (OrderingGate).
// Whatever fails, each pod ends in exactly one state that fits what the
// server holds:
//   bound by us (201, or a replayed POST's 409 with the pod on our node):
//     counted bound, assumed in the cache, done in the queue
//   a 409 to a POST sent once (a race lost): forgotten, done, never retried
//   any other failure: forgotten, back in the queue after a backoff, and a
//     FailedScheduling event (none when the gate stopped the POST unsent)
// and no pod is bound twice, no bind is sent while its pod's status patch
// is in flight or after the gate closed, no PodScheduled=False patch lands
// on a bound pod, and nothing is left holding a slot, the gate or a frame.
#include <doctest/doctest.h>

#include <string>

#include "support/binder_world.hpp"
#include "support/every_point.hpp"
#include "toysched/trace/tasks.hpp"

using namespace toysched;
using testing::BinderWorld;
using testing::Fault;
using testing::FaultSpec;
using testing::Injection;
using testing::ScriptedTransport;
namespace http = boost::beast::http;

namespace {

const char* const kPods[] = {"a/p1", "a/p2", "a/p3"};

// The third pod's failure from an earlier attempt: its patch sent, and its
// answer slow to come (until the binds are decided).
void earlier_failure_in_flight(BinderWorld& w) {
  w.fake.hold([](const kube::HttpRequest& r) { return r.verb == http::verb::patch; });
  w.events.failed_scheduling(w.pod("a/p3"), "0/2 nodes are available: 2 Insufficient cpu.");
  REQUIRE(w.run_until([&] { return w.order.in_flight("u3"); }));
}

// A bind of the pod sent while one of its status patches was on the wire.
int binds_during_patch(const ScriptedTransport& fake, const std::string& name) {
  int overlaps = 0;
  for (const auto& bind : fake.sent_matching(http::verb::post, name + "/binding"))
    for (const auto& patch : fake.sent_matching(http::verb::patch, name + "/status"))
      if (patch.sent_seq < bind.sent_seq && (patch.done_seq == 0 || patch.done_seq > bind.sent_seq)) ++overlaps;
  return overlaps;
}

void check_world(BinderWorld& w) {
  for (const char* key : kPods) testing::check_pod(w, key, std::string(key) == "a/p2" ? "n2" : "n1");
  CHECK(binds_during_patch(w.fake, "p3") == 0);
  CHECK(w.server.stale_false_patches() == 0);
  testing::check_idle(w);
  CHECK(w.stats.binds_ok + w.stats.bind_conflicts + w.stats.bind_errors <= 3);
}

std::uint64_t arrivals(trace::Point p) { return trace::point_stats()[p.id].arrivals; }

// The scenario; `gate_closes_at` closes the bind gate at that await point.
std::size_t run(const std::optional<Injection>& inject, std::size_t gate_closes_at = 0) {
  const auto waits_before = arrivals(trace::points::bind_status_patch);
  BinderWorld w;
  for (int i = 1; i <= 3; ++i) w.server.add("a", "p" + std::to_string(i), "u" + std::to_string(i));
  if (inject) w.fake.fail_at(inject->point, inject->fault);
  if (gate_closes_at != 0) w.fake.at(gate_closes_at, [&] { w.gate_open = false; });
  earlier_failure_in_flight(w);
  w.decide("a/p1", "n1");
  w.decide("a/p2", "n2");
  w.decide("a/p3", "n1");
  w.fake.let_go();
  REQUIRE(w.run_until([&] { return w.stats.binds_in_flight == 0; }));
  w.finish();
  check_world(w);
  if (inject) CHECK(w.fake.fault_fired());
  if (!inject && gate_closes_at == 0) {
    CHECK(w.stats.binds_ok == 3);
    CHECK(w.server.find("a/p3")->patches == 1);  // the earlier failure's patch did land, before the bind
    CHECK(arrivals(trace::points::bind_status_patch) == waits_before + 1);  // p3's bind waited for it
  }
  if (gate_closes_at != 0) {
    for (const auto& s : w.fake.sent_matching(http::verb::post, "/binding")) CHECK(s.point < gate_closes_at);
  }
  return w.fake.points();
}

}  // namespace

TEST_CASE("bind: after any one failure, every pod is bound once, requeued, or (409) forgotten; none lost") {
  const auto checks_before = arrivals(trace::points::bind_check);
  CHECK(testing::every_await_point(testing::every_fault(), [](const auto& inject) { return run(inject); }) >= 6);
  CHECK(arrivals(trace::points::bind_check) > checks_before);  // a replayed POST's 409 was settled by a GET
}

TEST_CASE("bind: the gate closed at any await point, no bind is sent after it and the unsent are requeued") {
  testing::at_every_await_point("the bind gate closes", [](std::size_t i) { return run(std::nullopt, i); });
}
