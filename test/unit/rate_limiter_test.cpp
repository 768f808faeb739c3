#include <doctest/doctest.h>

#include "toysched/kube/rate_limiter.hpp"

using toysched::kube::TokenBucket;
using namespace std::chrono_literals;

TEST_CASE("a burst passes at once, then requests are spaced at 1/qps") {
  auto t0 = TokenBucket::clock::time_point{} + 1h;
  TokenBucket b(50, 100, t0);
  for (int i = 0; i < 100; ++i) REQUIRE(b.reserve(t0) == 0ns);
  // The 101st waits one interval (20 ms at 50 qps), the 102nd two.
  CHECK(b.reserve(t0) == 20ms);
  CHECK(b.reserve(t0) == 40ms);
}

TEST_CASE("tokens refill with time, up to the burst") {
  auto t0 = TokenBucket::clock::time_point{} + 1h;
  TokenBucket b(10, 5, t0);
  for (int i = 0; i < 5; ++i) b.reserve(t0);
  CHECK(b.reserve(t0 + 100ms) == 0ns);  // one token back after 100 ms at 10 qps
  CHECK(b.reserve(t0 + 100ms) > 0ns);
  // A long idle time gives back the burst, not more.
  auto later = t0 + 1h;
  for (int i = 0; i < 5; ++i) CHECK(b.reserve(later) == 0ns);
  CHECK(b.reserve(later) > 0ns);
}

TEST_CASE("a negative qps turns the limit off") {
  auto t0 = TokenBucket::clock::time_point{} + 1h;
  TokenBucket b(-1, 1, t0);
  CHECK(b.unlimited());
  for (int i = 0; i < 100000; ++i) REQUIRE(b.reserve(t0) == 0ns);
}
