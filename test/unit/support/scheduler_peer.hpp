// The Scheduler's insides a unit test drives by hand (Scheduler befriends
// SchedulerTestPeer), and a rig of a Scheduler with no informers and no
// loop over the scripted transport: the test puts pods where the informers
// would have (the cache, the nominator) and runs one cycle at a time.
#pragma once

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include "scripted_transport.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/scheduler.hpp"

namespace toysched::sched {

struct SchedulerTestPeer {
  static Queue& queue(Scheduler& s) { return s.queue_; }
  static Nominator& nominator(Scheduler& s) { return s.nominator_; }
  static EventRecorder& events(Scheduler& s) { return s.events_; }
  static const Binder& binder(const Scheduler& s) { return s.binder_; }
  static void schedule_one(Scheduler& s, Queue::Item item) { s.schedule_one(std::move(item)); }
};

}  // namespace toysched::sched

namespace toysched::testing {

struct SchedulerRig {
  boost::asio::io_context io;
  ScriptedTransport transport{io.get_executor()};
  kube::Api api{transport};
  async::Supervisor supervisor;
  sched::Scheduler s;

  explicit SchedulerRig(sched::SchedulerOptions opts = {}) : s(api, api, std::move(opts), supervisor) {}
  sched::Queue& queue() { return sched::SchedulerTestPeer::queue(s); }
  // Queues the pod, pops it and runs one cycle on it, at `now`.
  void decide(const kube::Pod& pod, sched::Queue::clock::time_point now = sched::Queue::clock::now()) {
    queue().add_or_update(pod, now);
    auto item = queue().pop(now);
    REQUIRE(item);
    sched::SchedulerTestPeer::schedule_one(s, std::move(*item));
  }
};

}  // namespace toysched::testing
