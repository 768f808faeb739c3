// toy-scheduler's entry point: flags, client configuration, then every task
// on one io_context, one thread.
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
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
#include "toysched/lease/elector.hpp"
#include "toysched/log/log.hpp"
#include "toysched/options.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/serve/endpoints.hpp"
#include "toysched/trace/tasks.hpp"
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

// If the tasks have not all ended this long after a shutdown began, leave
// anyway (SIGALRM): a stuck connection must not keep a dying process alive.
constexpr unsigned kShutdownWatchdogSeconds = 20;

extern "C" void on_shutdown_watchdog(int) {
  static const char msg[] = "toy-scheduler: tasks did not stop in time after shutdown began; exiting\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

// Two-phase shutdown: ask every task to stop and let the loop run dry, so
// that no coroutine frame is left parked on the loop when main's objects
// are destroyed. A watchdog ends the process if that takes too long.
asio::awaitable<void> shutdown(sched::Scheduler& s, lease::Elector* elector, serve::HttpServer* http,
                               asio::io_context& io, bool wait_for_binds) {
  trace::TaskScope task("shutdown");
  std::signal(SIGALRM, on_shutdown_watchdog);
  alarm(kShutdownWatchdogSeconds);
  s.stop_scheduling();
  asio::steady_timer t(io);
  auto deadline = std::chrono::steady_clock::now() + kShutdownGrace;
  while (wait_for_binds && s.binds_in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    t.expires_after(20ms);
    co_await trace::traced(task, trace::points::shutdown_drain, t.async_wait(asio::use_awaitable));
  }
  if (wait_for_binds && s.binds_in_flight() > 0)
    TS_WARN("Leaving with binds in flight", {"binds", s.binds_in_flight()});
  // Hand the lease back so that a standby takes over in about a second
  // instead of a whole lease duration.
  if (elector) co_await elector->release();
  if (http) http->stop();
  s.stop();
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
  if (opts.crash_at == "list") {
    std::cout << trace::known_points_text();
    return 0;
  }
  if (!opts.crash_at.empty()) {
    try {
      trace::set_crash_at(trace::parse_crash_at(opts.crash_at));
    } catch (const std::invalid_argument& e) {
      std::cerr << "toy-scheduler: " << e.what() << "\n";
      return 1;
    }
  }
  auto bind_address = serve::parse_bind_address(opts.metrics_bind_address);
  if (!bind_address) {
    std::cerr << "toy-scheduler: --metrics-bind-address=" << opts.metrics_bind_address << ": "
              << bind_address.error().message() << "\n";
    return 1;
  }
  // Like a Go program's goroutine dump: every task and where it is parked.
  trace::install_sigquit_handler();

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
  sopts.percentage_of_nodes_to_score = opts.percentage_of_nodes_to_score;
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

  int exit_code = 0;
  serve::HttpServer* http = nullptr;  // set once listening; shutdown stops it
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::unique_ptr<kube::Transport> lease_transport;
  std::unique_ptr<kube::Api> lease_api;
  std::unique_ptr<lease::Elector> elector;
  if (opts.leader_election.enabled) {
    // The lease has a client of its own, with a request timeout of half the
    // renew deadline (as client-go): a hung renew must not outlive it.
    kube::TransportOptions lopts = topts;
    lopts.request_timeout = opts.leader_election.renew_deadline / 2;
    lopts.connect_timeout = opts.leader_election.renew_deadline / 2;
    auto t = kube::Transport::create(io.get_executor(), *config, lopts);
    if (!t) {
      std::cerr << "toy-scheduler: " << t.error().message << "\n";
      return 1;
    }
    lease_transport = std::move(*t);
    lease_api = std::make_unique<kube::Api>(*lease_transport);
    elector = std::make_unique<lease::Elector>(*lease_api, opts.leader_election);
    // Informers run in standby too (warm standby): a new leader starts from a
    // synced cache at once. The scheduling loop starts only when we lead.
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          bool released = co_await elector->run(
              [&] { asio::co_spawn(io, scheduler.run_scheduling_loop(), log_crash("schedule")); });
          if (!released) {
            // As kube-scheduler: exit and let the Deployment restart us, rather
            // than keep deciding without the lease.
            exit_code = 1;
            signals.cancel();
            co_await shutdown(scheduler, nullptr, http, io, false);
          }
        },
        log_crash("lease/renew"));
  } else {
    asio::co_spawn(io, scheduler.run_scheduling_loop(), log_crash("schedule"));
  }

  serve::Registry registry;
  serve::Sources sources{scheduler,
                         opts.scheduler_name,
                         {transport->get(), events_transport->get()},
                         elector.get(),
                         opts.leader_election.resource_namespace + "/" + opts.leader_election.resource_name};
  if (lease_transport) sources.transports.push_back(lease_transport.get());
  serve::register_metrics(registry, sources);
  serve::Routes routes;
  serve::add_routes(routes, registry, sources);
  auto server = serve::HttpServer::listen(io.get_executor(), *bind_address, routes);
  if (!server) {
    std::cerr << "toy-scheduler: --metrics-bind-address=" << opts.metrics_bind_address << ": "
              << server.error().message() << "\n";
    return 1;
  }
  http = &*server;
  TS_LOG(1, "Serving health, metrics and debug endpoints", {"address", opts.metrics_bind_address},
         {"port", server->port()});
  asio::co_spawn(io, server->run(), log_crash("serve/http"));

  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        trace::TaskScope task("main");
        auto [ec, sig] = co_await trace::traced(task, trace::points::main_signal,
                                                signals.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (ec) co_return;  // cancelled: the lease was lost and shutdown is under way
        TS_LOG(0, "Received signal; shutting down", {"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"});
        co_await shutdown(scheduler, elector.get(), http, io, true);
      },
      log_crash("main"));
  io.run();
  return exit_code;
}
