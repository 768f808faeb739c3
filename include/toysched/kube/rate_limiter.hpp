// Client-side rate limit towards the API server, as client-go's token
// bucket (--kube-api-qps, --kube-api-burst): `burst` tokens, refilled at
// `qps` per second; each request takes one. A negative qps turns it off (as
// kube-scheduler's benchmarks do with very large values).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>

namespace toysched::kube {

// The arithmetic alone, with time passed in: unit-testable.
class TokenBucket {
 public:
  using clock = std::chrono::steady_clock;
  TokenBucket(double qps, int burst, clock::time_point now);

  bool unlimited() const noexcept { return qps_ < 0; }
  // Takes a token (possibly going into debt) and says how long the caller
  // must wait before using it: zero when one was available.
  clock::duration reserve(clock::time_point now);
  // Hands back a reserved token that will not be used.
  void unreserve() noexcept;

 private:
  double qps_;
  double burst_;
  double tokens_;
  clock::time_point last_;
};

class RateLimiter {
 public:
  RateLimiter(boost::asio::any_io_executor ex, double qps, int burst);
  // Completes when the request may be sent: true. False at once (and the
  // token handed back) when that would be after `deadline`.
  boost::asio::awaitable<bool> acquire(std::optional<std::chrono::steady_clock::time_point> deadline = {});

 private:
  boost::asio::any_io_executor ex_;
  TokenBucket bucket_;
};

}  // namespace toysched::kube
