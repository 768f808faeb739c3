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
//
// A FailedScheduling waits in that queue (and then in the rate limiter); by
// the time it goes out, the pod may have been bound, deleted, or deleted and
// created again under its name. Written by name, it would then tell the new
// pod, or a bound one, that it does not fit. So it is about one object, its
// UID: it is dropped when the pod is no longer pending (asked when it leaves
// the queue and again right before each request is written), and the status
// patch carries `metadata.uid`, which the API server refuses to change
// (422 Invalid, cause field metadata.uid) for a pod recreated since we last
// saw it.
//
// Those checks cannot catch a patch already on its way: sent while the pod
// was pending, it may reach the API server after a bind that came later
// (on another connection), and turn the bound pod's PodScheduled back to
// False. So each patch is marked on the OrderingGate (ordering_gate.hpp)
// from the moment it is let go until it is answered, and a bind of the pod
// waits for it there.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/ordering_gate.hpp"

namespace toysched::sched {

class EventRecorder {
 public:
  // `order` hears of every status patch sent and answered.
  EventRecorder(kube::Api& api, std::string controller, std::string instance, async::Supervisor& supervisor,
                OrderingGate& order);
  // Whether binds are waiting: events then go one at a time.
  void set_busy(std::function<bool()> busy) { busy_ = std::move(busy); }
  // Whether the pod (ns, name, uid) is still waiting to be placed, as far as
  // the caller knows: the same object, not bound, not being deleted, not
  // assumed. A FailedScheduling about a pod that is not is dropped. Unset:
  // every pod is.
  using StillPending = std::function<bool(const std::string& ns, const std::string& name, const std::string& uid)>;
  void set_still_pending(StillPending f) { still_pending_ = std::move(f); }

  void scheduled(const kube::Pod& pod, const std::string& node);
  // `nominate`, when set, also goes into the status patch as
  // status.nominatedNodeName ("" clears it), and is never coalesced away.
  void failed_scheduling(const kube::Pod& pod, const std::string& message, bool scheduler_error = false,
                         const std::optional<std::string>& nominate = std::nullopt);
  // Normal Preempted "Preempted by pod UID on node NODE", about the victim,
  // with the preemptor as the related object.
  void preempted(const kube::Pod& victim, const kube::Pod& preemptor, const std::string& node);
  // The message of the pod's last FailedScheduling event, or nullptr.
  const std::string* last_failure(const std::string& pod_uid) const {
    auto it = last_failure_.find(pod_uid);
    return it == last_failure_.end() ? nullptr : &it->second.message;
  }
  void forget(const std::string& pod_uid);  // the pod is gone: drop its coalescing state

  boost::asio::awaitable<void> run();  // the `events` task
  void stop();
  // Writes queued or in flight.
  std::size_t pending() const noexcept { return queue_.size() + static_cast<std::size_t>(in_flight_); }
  // FailedScheduling writes dropped because their pod was no longer pending.
  std::uint64_t dropped_stale() const noexcept { return dropped_stale_; }

 private:
  struct Item {
    kube::Api::Event event;
    std::string pod_ns, pod_name;
    std::string condition_patch;  // empty: no status patch
    std::chrono::steady_clock::time_point queued;
  };
  void push(Item item);
  bool stale(const Item& item) const;
  void drop_stale(const Item& item, const char* why);
  boost::asio::awaitable<void> post(Item item);

  kube::Api& api_;
  const std::string& controller_for(const kube::Pod& pod) const;

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
  StillPending still_pending_;
  int in_flight_ = 0;
  OrderingGate& order_;
  std::uint64_t dropped_stale_ = 0;
};

// {"metadata":{"uid":UID},"status":{"conditions":[{"type":"PodScheduled","status":"False",...}]}}
// The UID makes it apply to that pod only: the API server refuses to change
// a pod's UID, so the patch fails for any other pod of the same name.
// With `nominate`: also "nominatedNodeName": the node, or null for "".
std::string pod_scheduled_false_patch(const std::string& uid, const std::string& reason, const std::string& message,
                                      const std::optional<std::string>& nominate = std::nullopt);
// {"metadata":{"uid":UID},"status":{"nominatedNodeName":null}}: a nomination
// that no longer holds, cleared on that pod only.
std::string clear_nomination_patch(const std::string& uid);
// {"metadata":{"uid":UID},"status":{"conditions":[{"type":"DisruptionTarget","status":"True",
// "reason":"PreemptionByScheduler","message":"SCHEDULER: preempting to accommodate a higher priority pod",...}]}}
std::string disruption_target_patch(const std::string& uid, const std::string& scheduler_name);

}  // namespace toysched::sched
