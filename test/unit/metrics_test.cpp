#include <doctest/doctest.h>

#include "toysched/serve/metrics.hpp"
#include "toysched/trace/tasks.hpp"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

using namespace toysched::serve;

namespace {

// The exposition for a small registry, written out by hand from the format
// spec (and checked by promtool where installed).
constexpr const char* expected =
    R"(# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="toy-scheduler",result="error"} 0
scheduler_schedule_attempts_total{profile="toy-scheduler",result="scheduled"} 3
# HELP scheduler_pending_pods Number of pending pods, by the queue type.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 2
scheduler_pending_pods{queue="backoff"} 0.5
# HELP toysched_binds_in_flight Binds posted and not yet answered.
# TYPE toysched_binds_in_flight gauge
toysched_binds_in_flight 0
# HELP toysched_watch_restarts_total Watch restarts.\nBy resource and reason; a backslash \\ too.
# TYPE toysched_watch_restarts_total counter
toysched_watch_restarts_total{reason="say \"410\"\\n\nnext",resource="pods"} 1
# HELP demo_seconds A tiny histogram.
# TYPE demo_seconds histogram
demo_seconds_bucket{result="scheduled",le="0.001"} 1
demo_seconds_bucket{result="scheduled",le="0.002"} 2
demo_seconds_bucket{result="scheduled",le="0.004"} 2
demo_seconds_bucket{result="scheduled",le="+Inf"} 3
demo_seconds_sum{result="scheduled"} 8.002953125
demo_seconds_count{result="scheduled"} 3
)";

}  // namespace

TEST_CASE("a small registry renders exactly") {
  Registry reg;
  // Registered with labels in this order; rendered as declared, series sorted.
  auto& attempts = reg.counter("scheduler_schedule_attempts_total",
                               "Number of attempts to schedule pods, by the result.", {"profile", "result"});
  auto& scheduled = attempts.with({"toy-scheduler", "scheduled"});
  attempts.with({"toy-scheduler", "error"});
  scheduled.inc();
  scheduled.inc(2);
  scheduled.inc(-5);  // ignored: counters never go down
  auto& pending = reg.gauge("scheduler_pending_pods", "Number of pending pods, by the queue type.", {"queue"});
  pending.with({"active"}).set(2);
  pending.with({"backoff"}).set(0.5);
  reg.gauge("toysched_binds_in_flight", "Binds posted and not yet answered.");
  reg.counter("toysched_watch_restarts_total", "Watch restarts.\nBy resource and reason; a backslash \\ too.",
              {"reason", "resource"})
      .with({"say \"410\"\\n\nnext", "pods"})
      .inc();
  auto& h = reg.histogram("demo_seconds", "A tiny histogram.", exponential_buckets(0.001, 2, 3), {"result"})
                .with({"scheduled"});
  h.observe(0.001);  // on the bound: counts in le="0.001"
  h.observe(0.001953125);
  h.observe(8);
  CHECK(reg.render() == expected);
  // The same child comes back for the same label values.
  CHECK(&attempts.with({"toy-scheduler", "scheduled"}) == &scheduled);
}

TEST_CASE("kube-scheduler's buckets") {
  auto a = attempt_duration_buckets();
  REQUIRE(a.size() == 15);
  CHECK(format_value(a.front()) == "0.001");
  CHECK(format_value(a.back()) == "16.384");
  auto s = sli_duration_buckets();
  REQUIRE(s.size() == 20);
  CHECK(format_value(s.front()) == "0.01");
  CHECK(format_value(s.back()) == "5242.88");
  CHECK(format_value(1.0 / 0.0) == "+Inf");
  CHECK(format_value(3) == "3");
}

TEST_CASE("mistakes in registration are refused") {
  Registry reg;
  CHECK_THROWS_AS(reg.counter("bad-name", "x"), std::invalid_argument);
  CHECK_THROWS_AS(reg.counter("ok_total", "x", {"le"}), std::invalid_argument);
  CHECK_THROWS_AS(reg.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  auto& c = reg.counter("ok_total", "x", {"a"});
  CHECK_THROWS_AS(reg.gauge("ok_total", "x"), std::invalid_argument);
  CHECK_THROWS_AS(c.with({"1", "2"}), std::invalid_argument);
  CHECK_THROWS_AS(reg.histogram("h", "x", {0.2, 0.1}), std::invalid_argument);
}

TEST_CASE("collect hooks and the task metrics refresh at render") {
  Registry reg;
  add_task_metrics(reg);
  int runs = 0;
  reg.on_collect([&] { ++runs; });
  std::string before = reg.render();
  CHECK(runs == 1);
  CHECK(before.find("toysched_tasks_waiting{point=\"bind.post\"} 0\n") != std::string::npos);
  CHECK(before.find("# TYPE toysched_await_arrivals_total counter\n") != std::string::npos);
  {
    auto task = toysched::trace::TaskScope("bind/a/b");
    toysched::trace::WaitGuard w(task, toysched::trace::points::bind_post);
    std::string during = reg.render();
    CHECK(during.find("toysched_tasks_waiting{point=\"bind.post\"} 1\n") != std::string::npos);
  }
  CHECK(reg.render().find("toysched_tasks_waiting{point=\"bind.post\"} 0\n") != std::string::npos);
}

TEST_CASE("promtool accepts the exposition (when installed)") {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    MESSAGE("promtool not installed: skipped (the integration test requires it)");
    return;
  }
  Registry reg;
  reg.counter("scheduler_schedule_attempts_total", "Number of attempts.", {"result", "profile"})
      .with({"scheduled", "toy-scheduler"})
      .inc();
  reg.histogram("scheduler_scheduling_attempt_duration_seconds", "Attempt latency.", attempt_duration_buckets(),
                {"result", "profile"})
      .with({"scheduled", "toy-scheduler"})
      .observe(0.02);
  reg.gauge("scheduler_pending_pods", "Pending pods.", {"queue"}).with({"active"}).set(1);
  add_task_metrics(reg);
  std::string path = "/tmp/toysched-metrics-" + std::to_string(::getpid()) + ".prom";
  std::ofstream(path) << reg.render();
  // promtool also lints names (e.g. counters end in _total); exit 0 means
  // it parsed and found nothing to complain about.
  std::string cmd = "promtool check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[512];
  while (auto n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  std::remove(path.c_str());
  INFO(out);
  CHECK(rc == 0);
}
