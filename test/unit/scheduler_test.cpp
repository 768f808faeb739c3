// One scheduling cycle (schedule_one) driven by hand, without the loop or a
// server: the Scheduler's client is the scripted transport with no script,
// and nothing here may send a request.
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include "builders.hpp"
#include "support/scripted_transport.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/scheduler.hpp"

namespace toysched::sched {
struct SchedulerTestPeer {
  static Queue& queue(Scheduler& s) { return s.queue_; }
  static void schedule_one(Scheduler& s, Queue::Item item) { s.schedule_one(std::move(item)); }
};
}  // namespace toysched::sched

using namespace toysched;
using sched::SchedulerTestPeer;
using test::make_node;
using test::make_pod;

TEST_CASE("a pod whose assume fails is not lost: it goes to the error backoff, counted as an error") {
  boost::asio::io_context io;
  testing::ScriptedTransport transport(io.get_executor());
  kube::Api api(transport);
  async::Supervisor supervisor;
  sched::Scheduler s(api, api, sched::SchedulerOptions{}, supervisor);

  s.cache().add_node(make_node().name("n1").cpu("4").memory("32Gi").pods(110));
  kube::Pod pod = make_pod().ns("a").name("p").uid("u1").cpu("100m");
  // The cache already counts a pod with this UID (as after a missed delete):
  // the decision finds n1, the assume refuses.
  kube::Pod counted = pod;
  counted.node_name = "n1";
  s.cache().add_pod(counted);

  auto& queue = SchedulerTestPeer::queue(s);
  const auto now = sched::Queue::clock::now();
  queue.add_or_update(pod, now);
  auto item = queue.pop(now);
  REQUIRE(item);
  SchedulerTestPeer::schedule_one(s, std::move(*item));

  CHECK(s.stats().attempts_error == 1);
  CHECK(s.stats().binds_in_flight == 0);
  CHECK_FALSE(queue.in_flight("u1"));        // not left as if bound
  CHECK(queue.backoff_size() == 1);          // tried again after a backoff
  queue.flush(now + std::chrono::hours(1));  // once its backoff is over...
  auto again = queue.pop(now + std::chrono::hours(1));
  REQUIRE(again);  // ...it is tried again
  CHECK(again->pod.uid == "u1");
  io.run();                        // whatever the cycle spawned
  CHECK(transport.points() == 0);  // and nothing was sent
}
