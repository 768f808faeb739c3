#include <doctest/doctest.h>

#include "toysched/trace/tasks.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>

namespace asio = boost::asio;
namespace trace = toysched::trace;
using namespace std::chrono_literals;

namespace {

std::optional<trace::TaskInfo> find(std::string_view name) {
  for (auto& t : trace::snapshot())
    if (t.name == name) return t;
  return std::nullopt;
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

// A task parked at `point` on a timer that outlives the test's look at it.
asio::awaitable<void> parked(std::string name, trace::Point point, std::chrono::milliseconds d) {
  auto task = trace::TaskScope(name);
  co_await trace::traced(task, point, sleep_for(d));
}

struct Child {
  int status = 0;
  std::string err;
};

// Runs `body` in a forked child whose stderr is a pipe; returns its exit
// status and everything it wrote there. `on_ready`, if given, runs in the
// parent after the child writes a byte to ready_fd (its "I am parked" signal).
constexpr int ready_fd = 100;
template <class Body>
Child run_child(Body body, std::function<void(pid_t)> on_ready = {}) {
  int err[2], ready[2];
  REQUIRE(pipe(err) == 0);
  REQUIRE(pipe(ready) == 0);
  std::fflush(nullptr);  // else the child's crash path flushes our buffered stdout again
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(err[0]), close(ready[0]);
    dup2(err[1], STDERR_FILENO);
    dup2(ready[1], ready_fd);
    body();
    _exit(99);  // the body was meant to die with status 2
  }
  close(err[1]), close(ready[1]);
  if (on_ready) {
    char c;
    REQUIRE(read(ready[0], &c, 1) == 1);
    on_ready(pid);
  }
  Child c;
  char buf[4096];
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) c.err.append(buf, std::size_t(n));
  close(err[0]), close(ready[0]);
  REQUIRE(waitpid(pid, &c.status, 0) == pid);
  return c;
}

}  // namespace

TEST_CASE("a TaskScope holds a slot for its lifetime") {
  auto before = trace::snapshot().size();
  std::uint64_t id1, id2;
  {
    auto a = trace::TaskScope("watch/nodes");
    auto b = trace::TaskScope{"bind/", "sched-lab", "/", "burst-abc"};
    id1 = a.id(), id2 = b.id();
    CHECK(id1 > 0);
    CHECK(id2 > id1);
    CHECK(trace::snapshot().size() == before + 2);
    auto t = find("bind/sched-lab/burst-abc");
    REQUIRE(t);
    CHECK(t->id == id2);
    CHECK(t->state == trace::State::running);
    CHECK(t->point == nullptr);
    CHECK(t->file == "test/unit/trace_test.cpp");  // where it was created
  }
  CHECK(trace::snapshot().size() == before);
  CHECK_FALSE(find("watch/nodes"));
  // A released slot is reused, under a new id.
  auto c = trace::TaskScope("schedule");
  CHECK(c.id() > id2);
}

TEST_CASE("long names are truncated, not overflowed") {
  std::string longname(200, 'x');
  auto t = trace::TaskScope{"bind/", longname};
  auto info = find("bind/" + std::string(trace::max_name - 1 - 5, 'x'));
  REQUIRE(info);
  CHECK(info->name.size() == trace::max_name - 1);
}

TEST_CASE("traced() marks the task waiting at the point, then running again") {
  asio::io_context ioc;
  std::optional<trace::TaskInfo> after;
  int wait_line = 0;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        auto task = trace::TaskScope("watch/pods");
        wait_line = __LINE__ + 1;
        co_await trace::traced(task, trace::points::watch_read, sleep_for(200ms));
        after = find("watch/pods");
      },
      asio::detached);
  ioc.poll();  // runs until it parks on the timer
  auto during = find("watch/pods");
  REQUIRE(during);
  CHECK(during->state == trace::State::waiting);
  REQUIRE(during->point);
  CHECK(std::string_view(during->point->name) == "watch.read");
  CHECK(during->file == "test/unit/trace_test.cpp");
  CHECK(during->line == std::uint32_t(wait_line));
  ioc.run();
  REQUIRE(after);
  CHECK(after->state == trace::State::running);
  CHECK(std::string_view(after->point->name) == "watch.read");  // kept as "last at"
  CHECK_FALSE(find("watch/pods"));                              // the task ended
}

TEST_CASE("nested waits restore the outer point; a throwing op still ends the wait") {
  asio::io_context ioc;
  std::optional<trace::TaskInfo> inner_done, after_throw;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        auto task = trace::TaskScope("bind/a/b");
        auto inner = [&]() -> asio::awaitable<int> {
          co_await trace::traced(task, trace::points::lease_retry_wait, sleep_for(1ms));
          inner_done = find("bind/a/b");
          co_return 7;
        };
        int v = co_await trace::traced(task, trace::points::bind_post, inner());
        CHECK(v == 7);
        auto thrower = []() -> asio::awaitable<void> {
          throw std::runtime_error("boom");
          co_return;
        };
        CHECK_THROWS(co_await trace::traced(task, trace::points::bind_post, thrower()));
        after_throw = find("bind/a/b");
      },
      asio::detached);
  ioc.run();
  REQUIRE(inner_done);
  CHECK(inner_done->state == trace::State::waiting);
  CHECK(std::string_view(inner_done->point->name) == "bind.post");
  REQUIRE(after_throw);
  CHECK(after_throw->state == trace::State::running);
}

TEST_CASE("the text dump lists every live task once; JSON and per-point counts agree") {
  auto arrivals_before = trace::point_stats()[trace::points::bind_post.id].arrivals;
  std::optional<asio::io_context> ioc(std::in_place);
  for (int i = 0; i < 3; ++i)
    asio::co_spawn(*ioc, parked("bind/ns/p" + std::to_string(i), trace::points::bind_post, 10s), asio::detached);
  asio::co_spawn(*ioc, parked("schedule", trace::points::schedule_pop, 10s), asio::detached);
  auto idle = trace::TaskScope("events");  // never waits
  ioc->poll();                             // all parked
  std::this_thread::sleep_for(60ms);

  auto text = trace::dump_text();
  INFO(text);
  for (auto name : {"bind/ns/p0", "bind/ns/p1", "bind/ns/p2", "schedule", "events"})
    CHECK(count(text, std::string("] ") + name + " ") + count(text, std::string("] ") + name + ",") == 1);
  std::regex waiting(R"(task \d+ \[waiting (\d+)ms\] bind/ns/p1 at bind\.post \(test/unit/trace_test\.cpp:\d+\)\n)");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, waiting));
  CHECK(std::stoi(m[1]) >= 50);
  CHECK(text.find("] events, created at (test/unit/trace_test.cpp:") != std::string::npos);

  auto json = trace::dump_json();
  CHECK(json.find(R"("name":"bind/ns/p2","state":"waiting","point":"bind.post","file":"test/unit/trace_test.cpp")") !=
        std::string::npos);
  CHECK(json.find(R"("name":"events","state":"running","point":null)") != std::string::npos);

  auto stats = trace::point_stats();
  REQUIRE(stats.size() == trace::known_points().size());
  CHECK(stats[trace::points::bind_post.id].waiting == 3);
  CHECK(stats[trace::points::bind_post.id].arrivals == arrivals_before + 3);
  CHECK(stats[trace::points::schedule_pop.id].waiting >= 1);
  // Destroying the loop destroys the parked coroutines: their slots go too.
  ioc.reset();
  CHECK(trace::point_stats()[trace::points::bind_post.id].waiting == 0);
  CHECK_FALSE(find("bind/ns/p0"));
}

TEST_CASE("--crash-at parses points and counts; unknown names are refused") {
  auto c = trace::parse_crash_at("bind.post:10");
  CHECK(std::string_view(c.point.name) == "bind.post");
  CHECK(c.nth == 10);
  CHECK(trace::parse_crash_at("watch.read").nth == 1);
  CHECK_THROWS_WITH_AS(trace::parse_crash_at("bind.pst:3"), doctest::Contains("unknown await point \"bind.pst\""),
                       std::invalid_argument);
  CHECK_THROWS_AS(trace::parse_crash_at("bind.post:0"), std::invalid_argument);
  CHECK_THROWS_AS(trace::parse_crash_at("bind.post:x"), std::invalid_argument);
  CHECK_THROWS_AS(trace::parse_crash_at("bind.post:"), std::invalid_argument);
  auto list = trace::known_points_text();
  for (const auto& p : trace::known_points()) CHECK(list.find(std::string(p.name) + "  ") != std::string::npos);
  static_assert(trace::find_point("bind.post")->id == trace::points::bind_post.id);
}

TEST_CASE("crash-at: the Nth arrival dumps every task and exits 2 before the operation") {
  auto child = run_child([] {
    asio::io_context ioc;
    trace::set_crash_at(trace::parse_crash_at("bind.post:3"));
    asio::co_spawn(ioc, parked("schedule", trace::points::schedule_pop, 5s), asio::detached);
    for (int i = 0; i < 5; ++i)
      asio::co_spawn(ioc, parked("bind/lab/pod-" + std::to_string(i), trace::points::bind_post, 5s), asio::detached);
    ioc.run();
  });
  INFO(child.err);
  REQUIRE(WIFEXITED(child.status));
  CHECK(WEXITSTATUS(child.status) == 2);
  CHECK(std::regex_search(child.err, std::regex(R"(^crash-at: bind\.post:3 reached by task \d+\n)")));
  CHECK(child.err.find("toy-scheduler: 4 tasks, pid ") != std::string::npos);  // pods 3, 4 never started
  CHECK(std::regex_search(child.err, std::regex(R"(\] schedule at schedule\.pop \(test/unit/trace_test\.cpp:\d+\))")));
  for (int i = 0; i < 3; ++i) CHECK(count(child.err, "] bind/lab/pod-" + std::to_string(i) + " at bind.post (") == 1);
  CHECK(child.err.find("pod-3") == std::string::npos);
  CHECK(child.err.find("\nnative backtrace:\n") != std::string::npos);
}

TEST_CASE("SIGQUIT from outside: every task once, a backtrace, exit 2") {
  auto child = run_child(
      [] {
        trace::install_sigquit_handler();
        asio::io_context ioc;
        asio::co_spawn(ioc, parked("watch/nodes", trace::points::watch_read, 10s), asio::detached);
        asio::co_spawn(ioc, parked("watch/pods", trace::points::watch_read, 10s), asio::detached);
        asio::co_spawn(ioc, parked("bind/lab/p", trace::points::bind_post, 10s), asio::detached);
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
              co_await sleep_for(20ms);
              (void)!write(ready_fd, "r", 1);  // everyone is parked: tell the parent
            },
            asio::detached);
        ioc.run();
      },
      [](pid_t pid) { kill(pid, SIGQUIT); });
  INFO(child.err);
  REQUIRE(WIFEXITED(child.status));
  CHECK(WEXITSTATUS(child.status) == 2);
  CHECK(child.err.starts_with("SIGQUIT: quit\ntoy-scheduler: 3 tasks, pid "));
  std::regex line(R"(task \d+ \[waiting (\d+)ms\] (\S+) at (\S+) \(test/unit/trace_test\.cpp:\d+\)\n)");
  std::map<std::string, std::string> seen;
  for (std::sregex_iterator it(child.err.begin(), child.err.end(), line), end; it != end; ++it) {
    CHECK_MESSAGE(seen.count((*it)[2]) == 0, "listed twice: ", (*it)[2]);
    seen[(*it)[2]] = (*it)[3];
    CHECK(std::stoi((*it)[1]) >= 15);
  }
  CHECK(seen == std::map<std::string, std::string>{
                    {"watch/nodes", "watch.read"}, {"watch/pods", "watch.read"}, {"bind/lab/p", "bind.post"}});
  auto bt = child.err.find("\nnative backtrace:\n");
  REQUIRE(bt != std::string::npos);
  CHECK(child.err.size() > bt + 20);  // at least one frame
}
