// The two loop helpers every task uses: Wakeup (sleep until a time, a wake
// or a stop) and Supervisor (what a task's exception does).
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <stdexcept>

#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using toysched::async::Criticality;
using toysched::async::Supervisor;
using toysched::async::Wakeup;
namespace trace = toysched::trace;

namespace {
// Runs one sleep on a fresh loop; `during` is called once it is parked.
template <class During>
std::pair<bool, std::chrono::steady_clock::duration> sleep_once(Wakeup& w, std::chrono::seconds d, During during) {
  asio::io_context io;
  bool result = false;
  auto start = std::chrono::steady_clock::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        trace::TaskScope task("test/sleep");
        result = co_await w.sleep_for(task, trace::points::lease_retry_wait, d);
      },
      asio::detached);
  io.poll();  // parks on the timer
  during();
  io.run();
  return {result, std::chrono::steady_clock::now() - start};
}
}  // namespace

TEST_CASE("Wakeup: wake() ends a sleep early and it returns true") {
  Wakeup w;
  auto [ok, took] = sleep_once(w, 30s, [&] { w.wake(); });
  CHECK(ok);
  CHECK(took < 5s);
}

TEST_CASE("Wakeup: a wake() while nobody sleeps is kept for the next sleep") {
  Wakeup w;
  w.wake();
  auto [ok, took] = sleep_once(w, 30s, [] {});
  CHECK(ok);
  CHECK(took < 5s);
  // ...and only for that one: the next sleep runs its course (a timer
  // never fires early, so this lower bound cannot flake).
  auto [ok2, took2] = sleep_once(w, 1s, [] {});
  CHECK(ok2);
  CHECK(took2 >= 1s);
}

TEST_CASE("Wakeup: stop() ends the sleep with false, and every later one at once") {
  Wakeup w;
  auto [ok, took] = sleep_once(w, 30s, [&] { w.stop(); });
  CHECK_FALSE(ok);
  CHECK(took < 5s);
  CHECK(w.stopped());
  auto [ok2, took2] = sleep_once(w, 30s, [] {});
  CHECK_FALSE(ok2);
  CHECK(took2 < 5s);
}

TEST_CASE("Supervisor: an expendable task's exception is counted, the process goes on") {
  Supervisor s;
  int fatal = 0;
  s.set_on_fatal([&](const std::string&, const std::string&) { ++fatal; });
  asio::io_context io;
  for (int i = 0; i < 2; ++i)
    asio::co_spawn(
        io, []() -> asio::awaitable<void> { throw std::runtime_error("bind blew up"); },
        s.handler("bind", "bind/ns/pod", Criticality::expendable));
  io.run();
  CHECK(s.failures().at("bind") == 2);
  CHECK_FALSE(s.dead());
  CHECK(fatal == 0);
}

TEST_CASE("Supervisor: a critical task's exception is a dead scheduler, reported once") {
  Supervisor s;
  std::string fatal_task, fatal_what;
  int fatal = 0;
  s.set_on_fatal([&](const std::string& task, const std::string& what) {
    ++fatal;
    fatal_task = task;
    fatal_what = what;
  });
  asio::io_context io;
  asio::co_spawn(
      io, []() -> asio::awaitable<void> { throw std::runtime_error("queue corrupted"); },
      s.handler("schedule", Criticality::critical));
  asio::co_spawn(
      io, []() -> asio::awaitable<void> { throw std::logic_error("second"); },
      s.handler("informers", Criticality::critical));
  // A task that ends normally is not a failure.
  asio::co_spawn(
      io, []() -> asio::awaitable<void> { co_return; }, s.handler("events", Criticality::critical));
  io.run();
  REQUIRE(s.dead());
  CHECK(s.dead()->find("schedule") != std::string::npos);
  CHECK(s.dead()->find("queue corrupted") != std::string::npos);
  CHECK(fatal == 1);
  CHECK(fatal_task == "schedule");
  CHECK(fatal_what.find("queue corrupted") != std::string::npos);
  CHECK(s.failures().at("informers") == 1);
  CHECK(s.failures().count("events") == 0);
}

TEST_CASE("describe() names a non-standard exception rather than failing") {
  CHECK(toysched::async::describe(std::make_exception_ptr(42)).find("not a std::exception") != std::string::npos);
  CHECK(toysched::async::describe(std::make_exception_ptr(std::runtime_error("x"))) == "x");
}
