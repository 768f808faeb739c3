#include "toysched/sched/ordering_gate.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "toysched/util/scope_exit.hpp"

namespace toysched::sched {

namespace asio = boost::asio;

void OrderingGate::sent(const std::string& pod_uid) { ++sent_[pod_uid]; }

void OrderingGate::answered(const std::string& pod_uid) {
  auto sent = sent_.find(pod_uid);
  if (sent == sent_.end() || --sent->second > 0) return;
  sent_.erase(sent);
  auto waiting = waiters_.find(pod_uid);
  if (waiting == waiters_.end()) return;
  auto timers = std::move(waiting->second);
  waiters_.erase(waiting);
  for (auto* t : timers) t->cancel();
}

asio::awaitable<void> OrderingGate::settled(std::string pod_uid, trace::TaskScope& task, trace::Point point) {
  while (sent_.contains(pod_uid)) {
    asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    waiters_[pod_uid].push_back(&timer);
    // However the wait ends (answered, or the frame destroyed at
    // shutdown), no pointer into this frame may stay behind.
    util::scope_exit leave([this, &pod_uid, &timer] {
      auto it = waiters_.find(pod_uid);
      if (it == waiters_.end()) return;
      std::erase(it->second, &timer);
      if (it->second.empty()) waiters_.erase(it);
    });
    co_await trace::traced(task, point, timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  }
}

std::size_t OrderingGate::waiting() const noexcept {
  std::size_t n = 0;
  for (const auto& [uid, timers] : waiters_) n += timers.size();
  return n;
}

}  // namespace toysched::sched
