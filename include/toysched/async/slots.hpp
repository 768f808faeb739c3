// A counting semaphore for coroutines on one io_context: at most `limit`
// holders at once, the rest wait in arrival order. The scheduler decides a
// pod as soon as it is popped and hands its bind to a coroutine; that
// coroutine takes a slot before its POST, so --bind-parallelism bounds the
// requests (and connections) in flight, never the decisions.
//
//   acquire() ──► a slot free? take it ──► returns true
//       │ no: wait in line; release() hands the slot to the first in line
//       └──────► close(): every waiter returns false (shutting down)
//
// Single-threaded: acquire, release and close run on the same loop.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <deque>

#include "toysched/trace/tasks.hpp"

namespace toysched::async {

class Slots {
 public:
  explicit Slots(std::size_t limit) : limit_(limit == 0 ? 1 : limit) {}
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  // True with a slot held (give it back with release()); false once closed.
  boost::asio::awaitable<bool> acquire(trace::TaskScope& task, trace::Point point);
  void release() noexcept;
  void close() noexcept;

  std::size_t held() const noexcept { return held_; }
  std::size_t waiting() const noexcept { return waiters_.size(); }

 private:
  struct Waiter {
    boost::asio::steady_timer* timer;
    bool granted = false;
  };
  std::size_t limit_;
  std::size_t held_ = 0;
  bool closed_ = false;
  std::deque<Waiter*> waiters_;  // each lives in its waiting coroutine's frame
};

}  // namespace toysched::async
