// Preemption's writes (Binder's preempt/<ns>/<pod> task) against the
// scripted transport, every await point failed in turn, then the bind gate
// closed at each point in turn. Two victims on n1 make room for a
// preemptor. Whatever fails:
//   - a victim is deleted only after its DisruptionTarget condition landed,
//     and only the victim itself (the DELETE carries its UID);
//   - a Preempted event is posted only about a victim that is gone;
//   - the task ends: the preemptor may preempt again; after a failure it
//     counts as one, and the unschedulable pods (the preemptor among them)
//     are sent back to be tried; otherwise every victim counts as evicted;
//   - no write leaves after the gate closed.
#include <doctest/doctest.h>

#include <string>

#include "support/binder_world.hpp"
#include "support/every_point.hpp"

using namespace toysched;
using testing::BinderWorld;
using testing::Injection;
namespace http = boost::beast::http;

namespace {

std::size_t run(const std::optional<Injection>& inject, std::size_t gate_closes_at = 0) {
  BinderWorld w;
  w.server.add("a", "v1", "uv1", "n1");
  w.server.add("a", "v2", "uv2", "n1");
  w.server.add("a", "pre", "upre");
  if (inject) w.fake.fail_at(inject->point, inject->fault);
  if (gate_closes_at != 0) w.fake.at(gate_closes_at, [&] { w.gate_open = false; });
  sched::PreemptRequest req{w.pod("a/pre"), "n1", {w.pod("a/v1"), w.pod("a/v2")}};
  w.binder.spawn_preempt(std::move(req));
  CHECK(w.binder.preempting("upre"));
  REQUIRE(w.run_until([&] { return !w.binder.preempting("upre"); }));
  w.finish();

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
    CHECK(w.stats.victims_evicted <= 1);
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
