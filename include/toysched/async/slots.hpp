// A counting semaphore for coroutines on one io_context: at most `limit`
// holders at once, the rest wait in arrival order. The scheduler decides a
// pod as soon as it is popped and hands its bind to a coroutine; that
// coroutine takes a slot before its POST, so --bind-parallelism bounds the
// requests (and connections) in flight, never the decisions.
//
//   acquire() ──► a slot free? take it ──► returns a Held that holds it
//       │ no: wait in line; a Held let go hands its slot to the first in line
//       └──────► close(): every waiter gets an empty Held (shutting down)
//
// The slot goes back when its Held is destroyed, however the holder's
// coroutine ends (an exception, its frame destroyed at shutdown), so a slot
// is never lost. Single-threaded: acquire, release and close run on the
// same loop.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <deque>
#include <utility>

#include "toysched/trace/tasks.hpp"

namespace toysched::async {

class Slots {
 public:
  explicit Slots(std::size_t limit) : limit_(limit == 0 ? 1 : limit) {}
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  // A slot held, until destroyed or reset(); empty when none was granted.
  class Held {
   public:
    Held() = default;
    Held(Held&& o) noexcept : slots_(std::exchange(o.slots_, nullptr)) {}
    Held& operator=(Held&& o) noexcept {
      if (this != &o) {
        reset();
        slots_ = std::exchange(o.slots_, nullptr);
      }
      return *this;
    }
    ~Held() { reset(); }
    explicit operator bool() const noexcept { return slots_ != nullptr; }
    void reset() noexcept {
      if (auto* s = std::exchange(slots_, nullptr)) s->release();
    }

   private:
    friend class Slots;
    explicit Held(Slots* s) noexcept : slots_(s) {}
    Slots* slots_ = nullptr;
  };

  // A slot, once one is free; an empty Held once closed. The Slots must
  // outlive every Held it gave.
  boost::asio::awaitable<Held> acquire(trace::TaskScope& task, trace::Point point);
  void close() noexcept;

  std::size_t held() const noexcept { return held_; }
  std::size_t waiting() const noexcept { return waiters_.size(); }

 private:
  void release() noexcept;
  struct Waiter {
    boost::asio::steady_timer* timer;
    bool granted = false;
    bool taken = false;  // the grant left the frame as a Held
  };
  std::size_t limit_;
  std::size_t held_ = 0;
  bool closed_ = false;
  std::deque<Waiter*> waiters_;  // each lives in its waiting coroutine's frame
};

}  // namespace toysched::async
