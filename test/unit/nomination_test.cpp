// status.nominatedNodeName as a scheduling cycle leaves it in the API: one
// Scheduler cycle at a time, driven by hand, its writes (the preempt task's,
// the binds', the event recorder's) going to the scripted transport and a
// model of the server's pods. As kube-scheduler v1.36.3:
//   - a preemptor clears the nominations of the pods of lower priority
//     nominated to the node it takes, those the API shows (executor.go,
//     clearNominatedNodeName), and no other pod's;
//   - a failure that no PostFilter answers with a node clears the pod's
//     own (schedule_one.go, clearNominatedNode): a profile with no PostFilter
//     plugin, no preemption candidate, a failed bind; a PostFilter that
//     answers nothing (not eligible, DynamicResources' alone) leaves it.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>

#include <string>

#include "builders.hpp"
#include "support/pod_server.hpp"
#include "support/scheduler_peer.hpp"

using namespace toysched;
using sched::SchedulerTestPeer;
using test::make_node;
using test::make_pod;
namespace http = boost::beast::http;

namespace {

// The pods are put where the informers would have put them (the cache, the
// nominator), and the server's model holds them too.
struct World : testing::SchedulerRig {
  testing::PodServer server;

  explicit World(sched::SchedulerOptions opts = {}) : SchedulerRig(std::move(opts)) {
    server.serve_on(transport);
    transport.on(http::verb::post, "/apis/events.k8s.io/v1/namespaces/*/events", [](const kube::HttpRequest&) {
      return testing::Reply{201, "{}"};
    });
    // Every pod here is still pending when its FailedScheduling goes out.
    SchedulerTestPeer::events(s).set_still_pending([](const auto&, const auto&, const auto&) { return true; });
    boost::asio::co_spawn(io, s.run_events(), [](std::exception_ptr e) { CHECK_FALSE(e); });
  }

  // A pod of ours: on the server, and bound to `node` in the cache, or
  // pending and nominated to `nominated` (which the server shows when
  // `shown`, as once our nomination has come back through the watch).
  kube::Pod add(const std::string& name, const char* cpu, std::int32_t priority, const std::string& node = "",
                const std::string& nominated = "", bool shown = true) {
    testing::ServerPod& sp = server.add("a", name, "u-" + name, node);
    kube::Pod p = make_pod().ns("a").name(name).uid("u-" + name).cpu(cpu).priority(priority);
    p.scheduler_name = "toy-scheduler";
    p.node_name = node;
    if (!node.empty()) s.cache().add_pod(p);
    if (!nominated.empty()) {
      if (shown) sp.nominated = p.nominated_node_name = nominated;
      SchedulerTestPeer::nominator(s).nominate(p, nominated);
    }
    return p;
  }
  // One cycle; then whatever it spawned (a bind, a preemption) runs to its
  // end before the event recorder stops, so that none of its events is lost.
  void run(const kube::Pod& pod) {
    decide(pod);
    const auto busy = [&] { return s.stats().binds_in_flight > 0 || SchedulerTestPeer::binder(s).preempting(pod.uid); };
    for (int i = 0; i < 100000 && busy(); ++i) io.run_one_for(std::chrono::milliseconds(20));
    CHECK_FALSE(busy());
    SchedulerTestPeer::events(s).stop();
    io.run_for(std::chrono::seconds(5));
    CHECK(io.stopped());  // ran dry
    CHECK(transport.unexpected().empty());
  }
  const std::string& nominated(const std::string& name) { return server.find("a/" + name)->nominated; }
  int patches(const std::string& name) { return server.find("a/" + name)->patches; }
};

}  // namespace

TEST_CASE("a preemptor clears the nominations of lower-priority pods nominated to its node, and no other") {
  World w;
  w.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  w.add("victim", "3", 0, "n1");
  w.add("outranked", "2", 500, "", "n1");
  w.add("unseen", "100m", 500, "", "n1", false);  // our nomination, not back from the API yet
  w.add("equal", "100m", 1000, "", "n1");
  w.add("elsewhere", "100m", 500, "", "n2");
  w.run(w.add("preemptor", "2", 1000));

  CHECK(w.server.find("a/victim") == nullptr);  // evicted
  CHECK(w.nominated("preemptor") == "n1");
  CHECK(w.nominated("outranked").empty());
  CHECK(w.patches("outranked") == 1);
  CHECK(w.patches("unseen") == 0);  // upstream patches only a nomination its copy shows
  CHECK(w.nominated("equal") == "n1");
  CHECK(w.nominated("elsewhere") == "n2");
  CHECK(w.patches("equal") + w.patches("elsewhere") == 0);
  CHECK(w.s.stats().preemption_errors == 0);
}

namespace {

// One profile, named as the pods' scheduler: preemption off, and a
// PostFilter plugin (DynamicResources') left or not.
sched::SchedulerOptions without_preemption(bool other_post_filter) {
  sched::Profile p = sched::Profile::make_default();
  p.set_preemption(std::nullopt);
  p.set_post_filter(other_post_filter);
  sched::SchedulerOptions opts;
  opts.profiles.push_back({"toy-scheduler", std::move(p), {}});
  return opts;
}

// The last status patch the pod's FailedScheduling sent.
std::string last_status_patch(World& w, const std::string& name) {
  const auto patches = w.transport.sent_matching(http::verb::patch, "/pods/" + name + "/status");
  REQUIRE(!patches.empty());
  return patches.back().body;
}

}  // namespace

TEST_CASE("a failure with no PostFilter at all clears the pod's nomination") {
  World w(without_preemption(false));
  w.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  w.add("running", "3", 0, "n1");
  w.run(w.add("stale", "2", 500, "", "n1"));
  CHECK(w.nominated("stale").empty());
  CHECK(last_status_patch(w, "stale").find(R"("nominatedNodeName":null)") != std::string::npos);
  CHECK(w.server.find("a/running") != nullptr);  // nothing preempted
}

TEST_CASE("DynamicResources' PostFilter alone answers no nomination: the pod keeps its own") {
  World w(without_preemption(true));
  w.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  w.add("running", "3", 0, "n1");
  w.run(w.add("kept", "2", 500, "", "n1"));
  CHECK(w.nominated("kept") == "n1");
  CHECK(last_status_patch(w, "kept").find("nominatedNodeName") == std::string::npos);
}

// PostFilter ran: "not eligible" is upstream's nil result (ModeNoop), no
// candidate its NominatingInfo with an empty node (ModeOverride).
TEST_CASE("PostFilter: a pod that may not preempt keeps its nomination; one with no candidate loses it") {
  World w;
  w.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  w.add("running", "3", 1000, "n1");
  kube::Pod never = w.add("never", "2", 500, "", "n1");
  never.preempt_never = true;
  w.run(never);
  CHECK(w.nominated("never") == "n1");

  World v;
  v.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  v.add("running", "3", 1000, "n1");
  v.run(v.add("outranked", "2", 500, "", "n1"));
  CHECK(v.nominated("outranked").empty());
}

TEST_CASE("a failed bind clears the pod's nomination, as upstream's binding cycle error does") {
  World w;
  w.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  w.transport.fail_at(1, {testing::Fault::status, 500});
  w.run(w.add("nominated", "1", 500, "", "n1"));
  REQUIRE(!w.transport.point_log().empty());
  CHECK(w.transport.point_log()[0].find("/pods/nominated/binding") != std::string::npos);
  CHECK(w.server.find("a/nominated")->node.empty());
  CHECK(w.nominated("nominated").empty());
  CHECK(last_status_patch(w, "nominated").find(R"("nominatedNodeName":null)") != std::string::npos);
}
