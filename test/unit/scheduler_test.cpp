// One scheduling cycle (schedule_one) driven by hand, without the loop or a
// server: the Scheduler's client is the scripted transport with no script,
// and nothing here may send a request.
#include <doctest/doctest.h>

#include "builders.hpp"
#include "support/scheduler_peer.hpp"
#include "toysched/log/log.hpp"

using namespace toysched;
using test::make_node;
using test::make_pod;

TEST_CASE("a pod whose assume fails is not lost: it goes to the error backoff, counted as an error") {
  testing::SchedulerRig rig;
  sched::Scheduler& s = rig.s;
  s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  kube::Pod pod = make_pod().ns("a").name("p").uid("u1").cpu("100m");
  // The cache already counts a pod with this UID (as after a missed delete):
  // the decision finds n1, the assume refuses.
  kube::Pod counted = pod;
  counted.node_name = "n1";
  s.cache().add_pod(counted);

  auto& queue = rig.queue();
  const auto now = sched::Queue::clock::now();
  rig.decide(pod, now);

  CHECK(s.stats().attempts_error == 1);
  CHECK(s.stats().binds_in_flight == 0);
  CHECK_FALSE(queue.in_flight("u1"));        // not left as if bound
  CHECK(queue.backoff_size() == 1);          // tried again after a backoff
  queue.flush(now + std::chrono::hours(1));  // once its backoff is over...
  auto again = queue.pop(now + std::chrono::hours(1));
  REQUIRE(again);  // ...it is tried again
  CHECK(again->pod.uid == "u1");
  rig.io.run();                        // whatever the cycle spawned
  CHECK(rig.transport.points() == 0);  // and nothing was sent
}

namespace {

// Nothing scripted: a cycle that sent a request would show in
// transport.points().
struct Cycle : testing::SchedulerRig {
  std::string log;
  Cycle() {
    log::capture_to(&log);
    log::set_verbosity(2);
  }
  ~Cycle() {
    log::capture_to(nullptr);
    log::set_verbosity(0);
  }
};

using namespace std::chrono_literals;

}  // namespace

// Upstream (schedule_one.go, ErrNoNodesAvailable) fails the cycle with no
// rejecting plugin, and its queue then counts a consecutive error: the pod
// goes to the error backoff and is tried again once it ends, without
// waiting for an event (a node added) or the 5-minute flush.
TEST_CASE("a cluster with no nodes: the pod goes to the error backoff, not among the unschedulable pods") {
  Cycle c;
  const auto now = sched::Queue::clock::now();
  c.decide(make_pod().ns("a").name("p").uid("u1").cpu("100m"), now);

  CHECK(c.s.stats().attempts_unschedulable == 1);  // the metric says unschedulable, as upstream's
  CHECK(c.queue().where("u1") == "backoff");
  CHECK(c.queue().unschedulable_size() == 0);
  CHECK_FALSE(c.queue().pop(now));  // an error's backoff is waited out, even with activeQ empty
  c.queue().flush(now + 3s);        // 1 s for a first error, rounded to the 1 s window
  auto again = c.queue().pop(now + 3s);
  REQUIRE(again);
  CHECK(again->pod.uid == "u1");
  CHECK(c.log.find("Unable to schedule pod; no nodes are registered to the cluster; waiting") != std::string::npos);
  c.io.run();
  CHECK(c.transport.points() == 0);
}

TEST_CASE("a cycle that ends in an error: the pod goes to the error backoff, counted as an error") {
  Cycle c;
  c.s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  kube::Pod pod = make_pod().ns("a").name("p").uid("u1").cpu("100m");
  pod.scheduler_name = "no-such-profile";  // no profile to decide with: Status::error
  const auto now = sched::Queue::clock::now();
  c.decide(pod, now);

  CHECK(c.s.stats().attempts_error == 1);
  CHECK(c.s.stats().attempts_unschedulable == 0);
  CHECK(c.queue().where("u1") == "backoff");
  CHECK(c.queue().unschedulable_size() == 0);
  CHECK_FALSE(c.queue().pop(now));
  c.queue().flush(now + 3s);
  auto again = c.queue().pop(now + 3s);
  REQUIRE(again);
  CHECK(again->pod.uid == "u1");
  CHECK(c.log.find("Error scheduling pod; retrying") != std::string::npos);
  c.io.run();
  CHECK(c.transport.points() == 0);
}

// The contrast: plugins that reject the pod park it until an event can help.
TEST_CASE("a pod no node fits waits among the unschedulable pods") {
  Cycle c;
  c.s.cache().add_node(make_node().name("n1").cpu("1").memory("32Gi").pods(110));
  const auto now = sched::Queue::clock::now();
  c.decide(make_pod().ns("a").name("p").uid("u1").cpu("2"), now);

  CHECK(c.s.stats().attempts_unschedulable == 1);
  CHECK(c.queue().where("u1") == "unschedulable");
  c.queue().flush(now + 3s);
  CHECK_FALSE(c.queue().pop(now + 3s));
  CHECK(c.log.find("Unable to schedule pod; no fit; waiting") != std::string::npos);
}
