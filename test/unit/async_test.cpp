// The loop helpers tasks use: Wakeup (sleep until a time, a wake or a
// stop), Supervisor (what a task's exception does), Slots (at most N
// holders, the rest in line) and the loop's CPU slice.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "toysched/async/cpu_slice.hpp"
#include "toysched/async/slots.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"

namespace asio = boost::asio;
using namespace std::chrono_literals;
using toysched::async::Criticality;
using toysched::async::Slots;
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

namespace {
// A holder that takes a slot, records when, and gives it back when told.
struct Holder {
  int id;
  bool got = false, refused = false;
  bool release_now = false;
};
asio::awaitable<void> hold(Slots& slots, Holder& h, std::vector<int>& order, asio::steady_timer& tick) {
  trace::TaskScope task("test/slot");
  auto slot = co_await slots.acquire(task, trace::points::bind_slot);
  if (!slot) {
    h.refused = true;
    co_return;
  }
  h.got = true;
  order.push_back(h.id);
  while (!h.release_now) {
    tick.expires_after(1ms);
    co_await tick.async_wait(asio::use_awaitable);
  }
}  // the slot goes back with `slot`
}  // namespace

// n holders (ids 1..n) started in order on one loop, all asking for a slot.
struct Line {
  asio::io_context io;
  Slots slots;
  std::vector<Holder> hs;
  std::vector<int> order;  // ids in the order they got a slot
  std::vector<std::unique_ptr<asio::steady_timer>> ticks;
  Line(std::size_t limit, int n) : slots(limit) {
    for (int i = 1; i <= n; ++i) hs.push_back(Holder{i});
    for (auto& h : hs) start(h);
  }
  void start(Holder& h) {
    ticks.push_back(std::make_unique<asio::steady_timer>(io));
    asio::co_spawn(io, hold(slots, h, order, *ticks.back()), asio::detached);
  }
};

TEST_CASE("Slots: at most the limit hold at once; the rest get theirs in arrival order") {
  Line l(2, 4);
  l.io.run_for(20ms);
  CHECK(l.order == std::vector<int>{1, 2});
  CHECK(l.slots.held() == 2);
  CHECK(l.slots.waiting() == 2);
  l.hs[1].release_now = true;  // 2 leaves: 3, the first in line, gets its slot
  l.io.run_for(20ms);
  CHECK(l.order == std::vector<int>{1, 2, 3});
  CHECK(l.slots.held() == 2);
  CHECK(l.slots.waiting() == 1);
  for (auto& h : l.hs) h.release_now = true;
  l.io.run_for(50ms);
  CHECK(l.order == std::vector<int>{1, 2, 3, 4});
  CHECK(l.slots.held() == 0);
  CHECK(l.slots.waiting() == 0);
}

TEST_CASE("Slots: close() refuses every waiter and every later acquire") {
  Line l(1, 3);
  l.io.run_for(20ms);
  CHECK(l.order == std::vector<int>{1});
  l.slots.close();
  l.io.run_for(20ms);
  CHECK(l.hs[1].refused);
  CHECK(l.hs[2].refused);
  CHECK(l.slots.waiting() == 0);
  Holder late{4};
  l.start(late);
  l.hs[0].release_now = true;
  l.io.run_for(20ms);
  CHECK(late.refused);
  CHECK(l.order == std::vector<int>{1});
}

TEST_CASE("Slots: a slot granted to a waiter whose frame is destroyed before it wakes passes on") {
  Slots slots(1);
  {
    asio::io_context io;
    std::vector<int> order;
    Holder first{1}, second{2};
    asio::steady_timer t1(io), t2(io);
    asio::co_spawn(io, hold(slots, first, order, t1), asio::detached);
    asio::co_spawn(io, hold(slots, second, order, t2), asio::detached);
    io.run_for(20ms);
    REQUIRE(order == std::vector<int>{1});
    REQUIRE(slots.waiting() == 1);
    first.release_now = true;
    // Run until the first holder has let go (its slot is granted to the
    // second), but not long enough for the second to wake and take it.
    while (slots.waiting() > 0) io.run_one();
    CHECK(order == std::vector<int>{1});
    // io goes out of scope here: the second's frame is destroyed unwoken.
  }
  CHECK(slots.held() == 0);
}

TEST_CASE("the CPU slice: asked of the kernel, read back, inherited by threads started after") {
  // On a thread of its own, so the test process keeps the kernel's default.
  std::string why;
  std::chrono::nanoseconds before{}, after{}, child{};
  std::thread([&] {
    before = toysched::async::cpu_slice();
    why = toysched::async::request_cpu_slice(200us);
    after = toysched::async::cpu_slice();
    std::thread([&] { child = toysched::async::cpu_slice(); }).join();
  }).join();
  if (before == 0ns) {
    // A kernel that reports no slice (before EEVDF): it must say why, not pretend.
    CHECK_FALSE(why.empty());
    return;
  }
  INFO("kernel's default slice: " << before.count() << " ns; request: " << why);
  CHECK(why.empty());
  CHECK(after == 200us);
  CHECK(child == 200us);
}
