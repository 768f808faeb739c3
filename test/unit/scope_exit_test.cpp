// util::scope_exit: its cleanup runs once when the scope ends, however it
// ends: a return, an exception, or a coroutine frame destroyed while the
// coroutine is suspended (what the waits that hand out pointers into their
// frame rely on at shutdown).
#include "toysched/util/scope_exit.hpp"

#include <doctest/doctest.h>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <stdexcept>

using toysched::util::scope_exit;
namespace asio = boost::asio;

namespace {

int leave_early(int& runs, bool early) {
  scope_exit count([&] { ++runs; });
  if (early) return 1;
  return 2;
}

asio::awaitable<void> park(int& runs, bool& resumed) {
  scope_exit count([&] { ++runs; });
  asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  co_await forever.async_wait(asio::use_awaitable);
  resumed = true;
}

}  // namespace

TEST_CASE("scope_exit: the cleanup runs once, at the end of the scope, on every way out") {
  int runs = 0;
  {
    scope_exit count([&] { ++runs; });
    CHECK(runs == 0);
  }
  CHECK(runs == 1);

  CHECK(leave_early(runs, true) == 1);
  CHECK(leave_early(runs, false) == 2);
  CHECK(runs == 3);

  CHECK_THROWS_AS(
      [&] {
        scope_exit count([&] { ++runs; });
        throw std::runtime_error("out");
      }(),
      std::runtime_error);
  CHECK(runs == 4);
}

TEST_CASE("scope_exit: a suspended coroutine's frame destroyed at shutdown runs it") {
  int runs = 0;
  bool resumed = false;
  {
    asio::io_context io;
    asio::co_spawn(io, park(runs, resumed), asio::detached);
    io.run_for(std::chrono::milliseconds(10));  // parked on the timer
    CHECK(runs == 0);
  }  // the io_context goes, and with it the parked frame
  CHECK(runs == 1);
  CHECK_FALSE(resumed);
}
