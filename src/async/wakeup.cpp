#include "toysched/async/wakeup.hpp"

#include "toysched/util/scope_exit.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace toysched::async {

namespace asio = boost::asio;

asio::awaitable<bool> Wakeup::sleep_until(trace::TaskScope& task, trace::Point point, clock::time_point until) {
  if (stopped_) co_return false;
  if (pending_) {
    pending_ = false;
    co_return true;
  }
  asio::steady_timer timer(co_await asio::this_coro::executor, until);
  timer_ = &timer;
  util::scope_exit clear([this] { timer_ = nullptr; });
  co_await trace::traced(task, point, timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  pending_ = false;
  co_return !stopped_;
}

void Wakeup::wake() noexcept {
  pending_ = true;
  if (timer_) timer_->cancel();
}

void Wakeup::stop() noexcept {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

}  // namespace toysched::async
