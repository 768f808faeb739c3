// Keeps two writes about one pod in the order they were decided, when they
// go out on different clients: a PodScheduled=False status patch (the event
// recorder's client) sent while the pod was pending, and a bind decided
// after it (the binds' client). Nothing orders two connections, so the
// patch could reach the API server after the bind and mark the bound pod
// unschedulable for good. So the bind waits for the patch's answer, as
// upstream's API dispatcher holds a call while an earlier one for the same
// object is in flight:
//
//   EventRecorder: may_send() ──► sent(uid) ──► PATCH ──► answered(uid)
//                                                               │ wakes
//   Binder:   in_flight(uid)? ──► settled(uid) waits ◄──────────┘ ──► POST binding
//
// A patch not yet let go when the bind is decided sees the pod assumed
// and is dropped (EventRecorder's still-pending check), so only patches
// already on the wire are waited for. Keyed by pod UID; single-threaded.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <string>
#include <unordered_map>
#include <vector>

#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

class OrderingGate {
 public:
  // A write about the pod was let go (it may reach the server from now on).
  void sent(const std::string& pod_uid);
  // Its answer came, or it failed: with no other write of the pod in
  // flight, the binds waiting for it go on.
  void answered(const std::string& pod_uid);
  bool in_flight(const std::string& pod_uid) const { return sent_.contains(pod_uid); }
  // Completes once no write of the pod is in flight: at once when none is
  // (the usual case). Waits at `point` of `task`.
  boost::asio::awaitable<void> settled(std::string pod_uid, trace::TaskScope& task, trace::Point point);
  // Writes in flight, and binds waiting, over every pod (tests).
  std::size_t in_flight_count() const noexcept { return sent_.size(); }
  std::size_t waiting() const noexcept;

 private:
  std::unordered_map<std::string, int> sent_;  // pod UID → writes in flight
  // The binds waiting, by pod UID (each timer in its waiting coroutine's frame).
  std::unordered_map<std::string, std::vector<boost::asio::steady_timer*>> waiters_;
};

}  // namespace toysched::sched
