#include "toysched/async/slots.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/util/scope_exit.hpp"

namespace toysched::async {

namespace asio = boost::asio;

asio::awaitable<Slots::Held> Slots::acquire(trace::TaskScope& task, trace::Point point) {
  if (closed_) co_return Held{};
  if (held_ < limit_ && waiters_.empty()) {
    ++held_;
    co_return Held{this};
  }
  asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  Waiter me{&timer};
  waiters_.push_back(&me);
  // Whatever ends the wait (a grant, close, or the frame destroyed at
  // shutdown), the line must not keep a pointer into this frame; and a
  // slot granted to a frame destroyed before it woke passes on.
  util::scope_exit leave_line([this, &me] {
    auto it = std::find(waiters_.begin(), waiters_.end(), &me);
    if (it != waiters_.end()) waiters_.erase(it);
    if (me.granted && !me.taken) release();
  });
  co_await trace::traced(task, point, timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  me.taken = me.granted;
  co_return me.granted ? Held{this} : Held{};  // release() counted the slot as ours already
}

void Slots::release() noexcept {
  if (!waiters_.empty() && !closed_) {
    Waiter* w = waiters_.front();
    waiters_.pop_front();
    w->granted = true;  // the slot passes on: held_ stays the same
    w->timer->cancel();
    return;
  }
  if (held_ > 0) --held_;
}

void Slots::close() noexcept {
  closed_ = true;
  for (Waiter* w : waiters_) w->timer->cancel();
  waiters_.clear();
}

}  // namespace toysched::async
