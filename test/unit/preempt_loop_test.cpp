// Preemption's writes (Binder's preempt/<ns>/<pod> task) against the
// scripted transport, every await point failed in turn, then the bind gate
// closed at each point in turn. Two victims on n1 make room for a
// preemptor; a pod of lower priority nominated to n1 loses its nomination
// (upstream's clearNominatedNodeName). Whatever fails:
//   - the outranked pod's nomination is cleared before any victim is
//     written to, and it is never deleted; a failure to clear it does not
//     stop the evictions but counts as the task's failure;
//   - a victim is deleted only after its DisruptionTarget condition landed,
//     and only the victim itself (the DELETE carries its UID);
//   - a Preempted event is posted only about a victim that is gone;
//   - the task ends: the preemptor may preempt again; after a failure it
//     counts as one, and the unschedulable pods (the preemptor among them)
//     are sent back to be tried; otherwise every victim counts as evicted;
//   - no write leaves after the gate closed.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/binder_world.hpp"
#include "support/every_point.hpp"

using namespace toysched;
using testing::BinderWorld;
using testing::Injection;
namespace http = boost::beast::http;

namespace {

// The outranked pod's nomination: cleared before the first victim write,
// unless the failure was its own patch's (then the evictions go on).
void check_outranked(BinderWorld& w, bool clear_failed) {
  REQUIRE(w.server.find("a/low") != nullptr);  // never deleted
  const auto& points = w.fake.point_log();
  auto first = [&](const char* what) {
    return std::find_if(points.begin(), points.end(), [&](const std::string& p) { return p.find(what) != p.npos; });
  };
  REQUIRE(first("/pods/low/status") != points.end());   // always tried,
  CHECK(first("/pods/low/status") < first("/pods/v"));  // and before any victim
  const bool cleared = w.server.find("a/low")->nominated.empty();
  if (w.stats.preemption_errors == 0) CHECK(cleared);
  if (!clear_failed) CHECK(cleared);
  if (!cleared) CHECK(w.stats.preemption_errors == 1);
}

std::size_t run(const std::optional<Injection>& inject, std::size_t gate_closes_at = 0) {
  BinderWorld w;
  w.server.add("a", "v1", "uv1", "n1");
  w.server.add("a", "v2", "uv2", "n1");
  w.server.add("a", "pre", "upre");
  w.server.add("a", "low", "ulow").nominated = "n1";
  if (inject) w.fake.fail_at(inject->point, inject->fault);
  if (gate_closes_at != 0) w.fake.at(gate_closes_at, [&] { w.gate_open = false; });
  kube::Pod low = w.pod("a/low");
  low.nominated_node_name = "n1";
  sched::PreemptRequest req{w.pod("a/pre"), "n1", {w.pod("a/v1"), w.pod("a/v2")}, {low}};
  w.binder.spawn_preempt(std::move(req));
  CHECK(w.binder.preempting("upre"));
  REQUIRE(w.run_until([&] { return !w.binder.preempting("upre"); }));
  w.finish();

  // Where the failure struck: the clear's own patch, or the gate closed before it left.
  auto struck_clear = [&](std::size_t point) {
    return point != 0 && w.fake.point_log()[point - 1].find("/pods/low/status") != std::string::npos;
  };
  const bool clear_failed = (inject && struck_clear(inject->point)) || struck_clear(gate_closes_at);
  check_outranked(w, clear_failed);
  CHECK(w.server.deleted_undisrupted() == 0);
  CHECK(w.server.find("a/pre") != nullptr);  // never touched
  int gone = 0;
  for (const char* v : {"a/v1", "a/v2"}) gone += w.server.find(v) == nullptr;
  for (const auto& e : w.fake.sent_matching(http::verb::post, "/events")) {
    if (e.body.find("\"Preempted\"") == std::string::npos) continue;
    for (const char* v : {"v1", "v2"})
      if (e.body.find(std::string("\"name\":\"") + v + "\"") != std::string::npos)
        CHECK(w.server.find(std::string("a/") + v) == nullptr);
  }
  if (w.stats.preemption_errors == 0) {
    CHECK(w.stats.victims_evicted == 2);
  } else {
    CHECK(w.stats.preemption_errors == 1);
    CHECK(w.moved >= 1);  // the unschedulable pods are tried again
    if (!clear_failed) CHECK(w.stats.victims_evicted <= 1);
  }
  if (!inject && gate_closes_at == 0) {
    CHECK(gone == 2);
    CHECK(w.stats.preemption_errors == 0);
  }
  if (inject) CHECK(w.fake.fault_fired());
  if (gate_closes_at != 0) {
    for (const auto& s : w.fake.sent())
      if (s.verb == http::verb::patch || s.verb == http::verb::delete_) CHECK(s.point < gate_closes_at);
  }
  CHECK(w.fake.unexpected().empty());
  CHECK(w.supervisor.failures().empty());
  CHECK(w.events.pending() == 0);
  return w.fake.points();
}

}  // namespace

TEST_CASE("preemption: after any one failure, no victim is deleted undisrupted and the preemptor may try again") {
  CHECK(testing::every_await_point(testing::every_fault(), [](const auto& inject) { return run(inject); }) >= 4);
}

TEST_CASE("preemption: the gate closed at any await point, no victim is written to after it") {
  testing::at_every_await_point("the bind gate closes", [](std::size_t i) { return run(std::nullopt, i); });
}

TEST_CASE("preemption: every victim already being deleted, nothing is written, no nomination cleared either") {
  BinderWorld w;
  w.server.add("a", "v1", "uv1", "n1");
  w.server.add("a", "pre", "upre");
  w.server.add("a", "low", "ulow").nominated = "n1";
  kube::Pod v1 = w.pod("a/v1");
  v1.deleting = true;
  kube::Pod low = w.pod("a/low");
  low.nominated_node_name = "n1";
  w.binder.spawn_preempt(sched::PreemptRequest{w.pod("a/pre"), "n1", {v1}, {low}});
  REQUIRE(w.run_until([&] { return !w.binder.preempting("upre"); }));
  w.finish();
  CHECK(w.server.find("a/low")->nominated == "n1");  // upstream starts no goroutine: the nomination stays
  CHECK(w.fake.sent().empty());
  CHECK(w.stats.preemption_errors == 0);
}
