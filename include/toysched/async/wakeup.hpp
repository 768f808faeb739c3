// The one way a loop on the io_context sleeps "until a time, until something
// changed, or until told to stop": the scheduling loop (a pod arrived, a bind
// finished), the event recorder (an event was queued), and the reflectors'
// and the elector's backoffs (stop, or the lease was released).
//
//   sleep_until(t) ──► returns true at t, or at once on wake() ──► loop re-checks
//          │                                      (also a wake() that came
//          │                                       while it was not sleeping)
//          └──────────► returns false on stop(): the loop ends
//
// One sleeper at a time (each loop owns its Wakeup). Single-threaded: wake()
// and stop() are called from other tasks on the same loop, or from the
// sleeper itself.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>

#include "toysched/trace/tasks.hpp"

namespace toysched::async {

class Wakeup {
 public:
  using clock = std::chrono::steady_clock;

  // False when stopped (before or during the sleep); true otherwise.
  boost::asio::awaitable<bool> sleep_until(trace::TaskScope& task, trace::Point point, clock::time_point until);
  boost::asio::awaitable<bool> sleep_for(trace::TaskScope& task, trace::Point point, clock::duration d) {
    return sleep_until(task, point, clock::now() + d);
  }

  // Ends the current sleep now, or the next one at once if none is under
  // way (a wake is never lost between a check and the sleep that follows).
  void wake() noexcept;
  // Ends the current sleep and every later one: the loop is to stop.
  void stop() noexcept;
  bool stopped() const noexcept { return stopped_; }

 private:
  boost::asio::steady_timer* timer_ = nullptr;  // the sleep under way, in its coroutine's frame
  bool pending_ = false;
  bool stopped_ = false;
};

}  // namespace toysched::async
