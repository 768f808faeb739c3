// toy-scheduler's entry point: flags, client configuration, then every task
// on one io_context, one thread.
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <iostream>
#include <variant>

#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/transport.hpp"
#include "toysched/log/log.hpp"
#include "toysched/options.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched_version.h"

namespace asio = boost::asio;
using namespace toysched;
using namespace std::chrono_literals;

namespace {

// How long SIGTERM waits for binds already in flight before leaving anyway.
constexpr auto kShutdownGrace = 10s;

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

asio::awaitable<void> shutdown(sched::Scheduler& s, asio::io_context& io) {
  s.stop_scheduling();
  asio::steady_timer t(io);
  auto deadline = std::chrono::steady_clock::now() + kShutdownGrace;
  while (s.binds_in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    t.expires_after(20ms);
    co_await t.async_wait(asio::use_awaitable);
  }
  if (s.binds_in_flight() > 0)
    TS_WARN("Leaving with binds in flight", {"binds", s.binds_in_flight()});
  s.stop();
  io.stop();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = parse_options(std::move(args));
  if (auto* exit_now = std::get_if<ExitNow>(&parsed)) {
    if (!exit_now->out.empty()) std::cout << exit_now->out;
    if (!exit_now->err.empty()) std::cerr << exit_now->err << "\n";
    return exit_now->status;
  }
  const Options& opts = std::get<Options>(parsed);
  log::set_verbosity(opts.verbosity);

  auto config = kube::load_client_config(opts.kubeconfig, opts.context, kube::Environment::process());
  if (!config) {
    std::cerr << "toy-scheduler: " << config.error().message << "\n";
    return 1;
  }
  if (config->insecure_skip_tls_verify)
    TS_WARN("TLS verification is off because the kubeconfig says insecure-skip-tls-verify",
            {"server", config->server.to_string()});

  asio::io_context io(1);
  kube::TransportOptions topts;
  topts.qps = opts.kube_api_qps;
  topts.burst = opts.kube_api_burst;
  topts.user_agent = std::string("toy-scheduler/") + TOYSCHED_VERSION;
  auto transport = kube::Transport::create(io.get_executor(), *config, topts);
  // Events and status patches go through a client of their own, so a burst
  // of FailedScheduling never eats the binds' rate limit.
  auto events_transport = kube::Transport::create(io.get_executor(), *config, topts);
  if (!transport || !events_transport) {
    std::cerr << "toy-scheduler: " << (transport ? events_transport.error() : transport.error()).message << "\n";
    return 1;
  }
  kube::Api api(**transport);
  kube::Api events_api(**events_transport);

  sched::SchedulerOptions sopts;
  sopts.scheduler_name = opts.scheduler_name;
  sopts.bind_parallelism = opts.bind_parallelism;
  sopts.instance = opts.scheduler_name + "-" + hostname();
  sched::Scheduler scheduler(api, events_api, sopts);

  TS_LOG(0, "Starting Kubernetes Scheduler", {"version", TOYSCHED_VERSION}, {"schedulerName", opts.scheduler_name},
         {"server", config->server.to_string()}, {"config", config->origin.describe()});

  auto log_crash = [](const char* task) {
    return [task](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        TS_ERROR("Task failed", {"task", task}, {"err", ex.what()});
      }
    };
  };
  asio::co_spawn(io, scheduler.run_informers(), log_crash("informers"));
  asio::co_spawn(io, scheduler.run_events(), log_crash("events"));
  asio::co_spawn(io, scheduler.run_scheduling_loop(), log_crash("schedule"));

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    TS_LOG(0, "Received signal; shutting down", {"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"});
    asio::co_spawn(io, shutdown(scheduler, io), asio::detached);
  });
  io.run();
  return 0;
}
