#include "toysched/kube/rate_limiter.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace toysched::kube {

TokenBucket::TokenBucket(double qps, int burst, clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

TokenBucket::clock::duration TokenBucket::reserve(clock::time_point now) {
  if (unlimited()) return clock::duration::zero();
  if (qps_ == 0) return std::chrono::hours(24 * 365);  // qps 0: nothing is ever allowed
  double elapsed = std::chrono::duration<double>(now - last_).count();
  if (elapsed > 0) {
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;  // reserve: callers queue up behind each other through the debt
  if (tokens_ >= 0) return clock::duration::zero();
  return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::unreserve() noexcept {
  if (!unlimited()) tokens_ = std::min(burst_, tokens_ + 1);
}

RateLimiter::RateLimiter(boost::asio::any_io_executor ex, double qps, int burst)
    : ex_(std::move(ex)), bucket_(qps, burst, TokenBucket::clock::now()) {}

boost::asio::awaitable<bool> RateLimiter::acquire(std::optional<TokenBucket::clock::time_point> deadline) {
  auto now = TokenBucket::clock::now();
  auto wait = bucket_.reserve(now);
  if (wait <= TokenBucket::clock::duration::zero()) co_return true;
  if (deadline && now + wait > *deadline) {
    bucket_.unreserve();
    co_return false;
  }
  boost::asio::steady_timer t(ex_, wait);
  co_await t.async_wait(boost::asio::use_awaitable);
  co_return true;
}

}  // namespace toysched::kube
