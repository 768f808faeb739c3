// Elector::run against the scripted transport: it takes a released Lease,
// renews it, and hands it back (release(), as at SIGTERM) after three
// renews; first with every await point failed in turn, then with another
// replica taking the lease at each await point in turn (and handing it back
// three points later). Whatever happens:
//   - no write of ours is accepted while another replica holds the lease
//     (the model refuses a write over any other version than its own, 409);
//   - once run() reports the lease lost, nothing more is sent;
//   - a release asked while we lead leaves the lease free (holder ""), and
//     is written over the version our last renew left;
//   - once run() has returned, we no longer lead nor may act.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>

#include "support/every_point.hpp"
#include "support/scripted_transport.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/decode.hpp"
#include "toysched/lease/elector.hpp"

using namespace toysched;
using namespace std::chrono_literals;
using testing::Injection;
using testing::Reply;
using testing::ScriptedTransport;
using testing::StreamScript;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

constexpr const char* kCollection = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
constexpr const char* kLease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched";

// The server's one Lease.
struct LeaseServer {
  kube::Lease lease;
  std::uint64_t rv = 5;
  int accepted_mine = 0;        // writes from "me" the server applied
  int accepted_over_other = 0;  // ...of them, over a lease another replica held
  bool taken = false, handed_back = false;
  std::function<void()> on_mine;  // after each accepted write from "me"

  LeaseServer() {
    lease.ns = "kube-system";
    lease.name = "sched";
    lease.uid = "lease-uid";
    lease.lease_duration_seconds = 15;
    lease.lease_transitions = 3;
    lease.renew_time = lease.acquire_time = std::chrono::system_clock::now();
  }
  std::string json() {
    lease.resource_version = std::to_string(rv);
    return kube::encode_lease(lease);
  }
  Reply put(const kube::HttpRequest& req) {
    auto l = kube::decode_lease(req.body);
    REQUIRE(l.has_value());
    if (l->resource_version != std::to_string(rv))
      return testing::status_reply(409, "Conflict", "the object has been modified");
    if (lease.holder_identity == "other") ++accepted_over_other;
    lease = *l;
    ++rv;
    ++accepted_mine;
    if (on_mine) on_mine();
    return Reply{200, json()};
  }
  // Another replica writes itself in (its own renew): a new version.
  void take_over() {
    lease.holder_identity = "other";
    lease.renew_time = std::chrono::system_clock::now();
    ++rv;
    taken = true;
  }
  // ...and later hands it back, as at its SIGTERM.
  void hand_back() {
    if (lease.holder_identity != "other") return;
    lease.holder_identity.clear();
    lease.lease_duration_seconds = 1;
    ++rv;
    handed_back = true;
  }
  void serve_on(ScriptedTransport& t) {
    t.on(http::verb::get, kLease, [this](const kube::HttpRequest&) { return Reply{200, json()}; });
    t.on(http::verb::put, kLease, [this](const kube::HttpRequest& r) { return put(r); });
    t.on(http::verb::get, kCollection, [this](const kube::HttpRequest&) {
      return Reply{200, R"({"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":")" +
                            std::to_string(rv) + R"("},"items":[)" + json() + "]}"};
    });
    t.on_watch(kCollection, [](const std::string&) { return StreamScript{{}, StreamScript::End::park}; });
  }
};

LeaderElectionOptions options() {
  LeaderElectionOptions o;
  o.enabled = true;
  o.lease_duration = 15s;  // nobody's lease runs out during a run
  o.renew_deadline = 5s;   // nor does our renew deadline pass
  o.retry_period = 2ms;
  o.resource_namespace = "kube-system";
  o.resource_name = "sched";
  o.identity = "me";
  return o;
}

// What happens besides the script: a failure, another replica taking the
// lease at a point (and handing it back three points later), SIGTERM at a
// point (else after three renews).
struct Story {
  std::optional<Injection> inject;
  std::size_t takeover_at = 0;
  std::size_t sigterm_at = 0;
};

std::size_t run(const Story& story) {
  const auto& inject = story.inject;
  const std::size_t takeover_at = story.takeover_at;
  asio::io_context io;
  ScriptedTransport fake(io.get_executor());
  kube::Api api(fake);
  LeaseServer server;
  server.lease.holder_identity = "";  // released by its last holder
  server.serve_on(fake);
  async::Supervisor supervisor;
  lease::Elector elector(api, options(), supervisor);
  elector.set_watch_timing({1ms, 2ms, 1ms});
  if (inject) fake.fail_at(inject->point, inject->fault);
  if (takeover_at != 0) {
    fake.at(takeover_at, [&] { server.take_over(); });
    fake.at(takeover_at + 3, [&] { server.hand_back(); });
  }

  bool leading_seen = false, released_while_leading = false, release_started = false;
  std::optional<bool> result;
  std::size_t points_at_end = 0;
  auto sigterm = [&] {
    if (release_started) return;
    release_started = true;
    released_while_leading = elector.stats().leading;
    asio::co_spawn(io, elector.release(), [](std::exception_ptr e) { CHECK_FALSE(e); });
  };
  if (story.sigterm_at != 0) {
    fake.at(story.sigterm_at, sigterm);
  } else {
    server.on_mine = [&] {
      if (server.accepted_mine >= 4) sigterm();  // three renews after an acquire
    };
  }
  asio::co_spawn(io, elector.run([&] { leading_seen = true; }), [&](std::exception_ptr e, bool released) {
    CHECK_FALSE(e);
    result = released;
    if (!released) elector.stop();  // lost: as main, leave without a release
    points_at_end = fake.points();
  });
  io.run_for(10s);
  REQUIRE(io.stopped());
  REQUIRE(result.has_value());

  if (inject) CHECK(fake.fault_fired());
  CHECK(fake.unexpected().empty());
  CHECK_FALSE(elector.stats().leading);
  CHECK_FALSE(elector.may_act(std::chrono::steady_clock::now()));
  CHECK(server.accepted_over_other == 0);
  if (!*result) {
    CHECK(server.taken);                    // lost only to another replica
    CHECK(fake.points() == points_at_end);  // and nothing sent after
  } else if (released_while_leading) {
    // Handed back; or, taken by the other while we let go, left to it.
    if (server.lease.holder_identity != "")
      CHECK((server.taken && !server.handed_back && server.lease.holder_identity == "other"));
  } else {
    // Asked to stop before it led: whatever an acquire on its way took is
    // handed back.
    CHECK(story.sigterm_at != 0);
    CHECK(server.lease.holder_identity == "");
  }
  if (!inject && !server.taken) {  // nothing else wrote: none of our writes was on a stale version
    for (const auto& put : fake.sent_matching(http::verb::put, kLease)) CHECK(put.status == 200);
  }
  return fake.points();
}

}  // namespace

TEST_CASE("Elector::run: after any one failure it leads, renews only what it read, and hands the lease back") {
  CHECK(testing::every_await_point(testing::every_fault(), [](const auto& inject) { return run({inject}); }) >= 8);
}

TEST_CASE("Elector::run: another replica taking the lease at any await point is never overwritten") {
  testing::at_every_await_point("another replica takes the lease", [](std::size_t i) {
    return run({std::nullopt, i});
  });
}

TEST_CASE("Elector::run: SIGTERM at any await point hands the lease back over the version it holds") {
  testing::at_every_await_point("SIGTERM", [](std::size_t i) { return run({std::nullopt, 0, i}); });
}
