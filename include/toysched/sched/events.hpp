// Tells users why, in the words `kubectl describe pod` shows:
//   Normal   Scheduled         Successfully assigned ns/p to n1
//   Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient cpu.
// plus the PodScheduled=False condition (reason Unschedulable) on the pod.
//
// Posting is off the scheduling path: scheduled() and failed_scheduling()
// only queue. One task (`events`) drains the queue on a client of its own,
// so events never eat the binds' rate limit (kube-scheduler does the same).
// Binds come first: while the scheduler has pods to decide or binds in
// flight, events wait (at most 5 s; older ones go out one at a time), eight
// at once when it is idle. On a saturated API server an event costs about
// what a bind does; the benchmark showed them taking a sixth of its
// capacity in a burst. So in a burst, events trail the binds and catch up
// right after. Coalesced: the same FailedScheduling message for the same pod
// is not sent again within 10 minutes; beyond 20 000 queued, the oldest are
// dropped.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"
#include "toysched/kube/api.hpp"

namespace toysched::sched {

class EventRecorder {
 public:
  EventRecorder(kube::Api& api, std::string controller, std::string instance, async::Supervisor& supervisor);
  // Whether binds are waiting: events then go one at a time.
  void set_busy(std::function<bool()> busy) { busy_ = std::move(busy); }

  void scheduled(const kube::Pod& pod, const std::string& node);
  void failed_scheduling(const kube::Pod& pod, const std::string& message, bool scheduler_error = false);
  void forget(const std::string& pod_uid);  // the pod is gone: drop its coalescing state

  boost::asio::awaitable<void> run();  // the `events` task
  void stop();

 private:
  struct Item {
    kube::Api::Event event;
    std::string pod_ns, pod_name;
    std::string condition_patch;  // empty: no status patch
    std::chrono::steady_clock::time_point queued;
  };
  void push(Item item);
  boost::asio::awaitable<void> post(Item item);

  kube::Api& api_;
  std::string controller_, instance_;
  std::deque<Item> queue_;
  struct Last {
    std::string message;
    std::chrono::steady_clock::time_point at;
  };
  std::unordered_map<std::string, Last> last_failure_;  // by pod UID
  async::Supervisor& supervisor_;
  async::Wakeup wakeup_;  // something queued, posted, or stop
  bool stopping_ = false;
  std::function<bool()> busy_;
  int in_flight_ = 0;
};

// {"status":{"conditions":[{"type":"PodScheduled","status":"False",...}]}}
std::string pod_scheduled_false_patch(const std::string& reason, const std::string& message);

}  // namespace toysched::sched
