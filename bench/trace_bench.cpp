// What a traced await costs, against the same await untraced. Prints
// figures; never decides pass/fail (timings vary by machine and load).
//
//   ninja -C build test/trace-bench && build/test/trace-bench
#include "toysched/trace/tasks.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>

namespace asio = boost::asio;
namespace trace = toysched::trace;
using clk = std::chrono::steady_clock;

namespace {

constexpr int rounds = 2'000'000;
volatile int sink = 0;

// The cheapest real await: a child coroutine that completes at once. Real
// waits (a bind, a watch read) cost microseconds to milliseconds more.
asio::awaitable<int> ready() { co_return sink; }

double ns_per(clk::duration d) { return std::chrono::duration<double, std::nano>(d).count() / rounds; }

asio::awaitable<void> bench(double out[3]) {
  auto task = trace::TaskScope("bench");
  for (int pass = 0; pass < 2; ++pass) {  // the first pass warms caches and frame recycling
    auto t0 = clk::now();
    for (int i = 0; i < rounds; ++i) sink = sink + co_await ready();
    auto t1 = clk::now();
    for (int i = 0; i < rounds; ++i) sink = sink + co_await trace::traced(task, trace::points::bind_post, ready());
    auto t2 = clk::now();
    for (int i = 0; i < rounds; ++i) {
      trace::WaitGuard w(task, trace::points::bind_post);
      sink = sink + co_await ready();
    }
    auto t3 = clk::now();
    out[0] = ns_per(t1 - t0), out[1] = ns_per(t2 - t1), out[2] = ns_per(t3 - t2);
  }
}

}  // namespace

int main() {
  asio::io_context ioc;
  double r[3] = {};
  asio::co_spawn(ioc, bench(r), asio::detached);
  ioc.run();
  std::printf("plain co_await of a ready awaitable<int>:   %6.1f ns\n", r[0]);
  std::printf("traced(task, point, op):                    %6.1f ns  (+%.1f ns)\n", r[1], r[1] - r[0]);
  std::printf("WaitGuard around the co_await:              %6.1f ns  (+%.1f ns)\n", r[2], r[2] - r[0]);
  return 0;
}
