// toy-scheduler's entry point: flags, client configuration, then every task
// on one io_context, one thread. main() reads as the list of start-up steps;
// each step is a small function below.
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/result.hpp>

#include <csignal>
#include <iostream>
#include <variant>

#include "toysched/async/cpu_slice.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/config/profiles.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/lease/elector.hpp"
#include "toysched/log/log.hpp"
#include "toysched/options.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/serve/auth.hpp"
#include "toysched/serve/endpoints.hpp"
#include "toysched/serve/tls.hpp"
#include "toysched/trace/tasks.hpp"
#include "toysched/ui/feed.hpp"
#include "toysched_version.h"

namespace asio = boost::asio;
using namespace toysched;
using namespace std::chrono_literals;
using async::Criticality;

namespace {

// How long SIGTERM waits for binds already in flight before leaving anyway.
constexpr auto kShutdownGrace = 10s;
// If the tasks have not all ended this long after a shutdown began, leave
// anyway (SIGALRM): a stuck connection must not keep a dying process alive.
constexpr unsigned kShutdownWatchdogSeconds = 20;

extern "C" void on_shutdown_watchdog(int) {
  static const char msg[] = "toy-scheduler: tasks did not stop in time after shutdown began; exiting\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Every start-up step answers alike: its value, or how the process ends
// instead, as parse_options answers (ExitNow: the status, and what to
// print). main() prints it and leaves.
template <class T = void>
using Step = boost::system::result<T, ExitNow>;

// A start-up step failed: one line on stderr, exit 1.
ExitNow failed(std::string why) { return ExitNow{1, "", "toy-scheduler: " + std::move(why)}; }

int exit_now(const ExitNow& e) {
  if (!e.out.empty()) std::cout << e.out;
  if (!e.err.empty()) std::cerr << e.err << "\n";
  return e.status;
}

// Everything that lives for the whole run, in start-up order.
struct App {
  const Options& opts;
  asio::io_context io{1};
  async::Supervisor supervisor;
  std::unique_ptr<kube::Transport> transport, events_transport, lease_transport;
  std::unique_ptr<kube::Api> api, events_api, lease_api;
  std::unique_ptr<sched::Scheduler> scheduler;
  std::unique_ptr<lease::Elector> elector;
  serve::Registry registry;
  std::unique_ptr<serve::Sources> sources;
  std::unique_ptr<ui::Feed> ui_feed;       // /ui and /debug/events-stream
  serve::Routes routes;                    // the servers keep a reference: lives as long as they
  std::optional<serve::HttpServer> http;   // --metrics-bind-address: plain, loopback
  std::optional<serve::HttpServer> https;  // --secure-port
  // The reviews' own clients: they never take the binds' rate-limit tokens.
  std::unique_ptr<kube::Transport> authn_transport, authz_transport;
  std::unique_ptr<serve::DelegatingAuth> auth;
  asio::signal_set signals{io, SIGINT, SIGTERM};
  int exit_code = 0;
  bool shutting_down = false;

  explicit App(const Options& o) : opts(o) {}

  Step<> make_clients(const kube::ClientConfig& config);
  void make_scheduler(std::vector<sched::NamedProfile> profiles);
  void start_tasks();
  asio::awaitable<void> lead();
  Step<> serve(const std::optional<serve::BindAddress>& plain, const kube::ClientConfig& config);
  Step<> serve_securely(const kube::ClientConfig& config);
  void wait_for_signals();
  asio::awaitable<void> wait_for_signal();
  void die(int code);
  asio::awaitable<void> shutdown(bool wait_for_binds, bool release_lease);
};

// The binds' client, and one of its own for events and status patches, so a
// burst of FailedScheduling never eats the binds' rate limit; with leader
// election a third, whose requests time out at half the renew deadline (as
// client-go's): a hung renew must not outlive it.
Step<> App::make_clients(const kube::ClientConfig& config) {
  kube::TransportOptions topts;
  topts.qps = opts.kube_api_qps;
  topts.burst = opts.kube_api_burst;
  topts.user_agent = std::string("toy-scheduler/") + TOYSCHED_VERSION;
  auto make = [&](const kube::TransportOptions& o, std::unique_ptr<kube::Transport>& t,
                  std::unique_ptr<kube::Api>& a) -> Step<> {
    auto created = kube::HttpTransport::create(io.get_executor(), config, o);
    if (!created) return failed(created.error().message);
    t = std::move(*created);
    a = std::make_unique<kube::Api>(*t);
    return {};
  };
  if (auto made = make(topts, transport, api); !made) return made;
  if (auto made = make(topts, events_transport, events_api); !made) return made;
  if (!opts.leader_election.enabled) return {};
  kube::TransportOptions lopts = topts;
  lopts.request_timeout = opts.leader_election.renew_deadline / 2;
  lopts.connect_timeout = opts.leader_election.renew_deadline / 2;
  return make(lopts, lease_transport, lease_api);
}

void App::make_scheduler(std::vector<sched::NamedProfile> profiles) {
  sched::SchedulerOptions sopts;
  sopts.scheduler_name = opts.scheduler_name;
  sopts.profiles = std::move(profiles);
  sopts.pod_initial_backoff = opts.pod_initial_backoff;
  sopts.pod_max_backoff = opts.pod_max_backoff;
  sopts.pod_max_in_unschedulable = opts.pod_max_in_unschedulable;
  sopts.bind_parallelism = opts.bind_parallelism;
  sopts.percentage_of_nodes_to_score = opts.percentage_of_nodes_to_score;
  sopts.ignore_unsupported_constraints = opts.ignore_unsupported_constraints;
  sopts.dry_run = opts.dry_run;
  sopts.explain_rows = static_cast<std::size_t>(opts.explain_rows);
  sopts.instance = opts.scheduler_name + "-" + hostname();
  sopts.bind_delay = opts.drill.bind_delay;
  scheduler = std::make_unique<sched::Scheduler>(*api, *events_api, std::move(sopts), supervisor);
  // A dead critical task is a dead scheduler (a Go panic): leave non-zero so
  // that a standby, or the Deployment's restart, takes over.
  supervisor.set_on_fatal([this](const std::string& task, const std::string&) {
    die(2);
    asio::co_spawn(io, shutdown(false, task != "lease/renew"), supervisor.handler("shutdown", Criticality::expendable));
  });
  if (!opts.leader_election.enabled) return;
  elector = std::make_unique<lease::Elector>(*lease_api, opts.leader_election, supervisor);
  // No bind leaves after the lease's renew deadline has passed, not even
  // one that was waiting for a rate-limit token.
  scheduler->set_bind_gate([e = elector.get()] { return e->may_act(std::chrono::steady_clock::now()); });
}

// Informers and events run from the start, also on a standby (a warm
// standby: a new leader starts from a synced cache). The scheduling loop
// starts at once, or when we lead.
void App::start_tasks() {
  asio::co_spawn(io, scheduler->run_informers(), supervisor.handler("informers", Criticality::critical));
  asio::co_spawn(io, scheduler->run_events(), supervisor.handler("events", Criticality::critical));
  if (!elector) {
    asio::co_spawn(io, scheduler->run_scheduling_loop(), supervisor.handler("schedule", Criticality::critical));
    return;
  }
  asio::co_spawn(io, lead(), supervisor.handler("lease/renew", Criticality::critical));
}

// A member, not a capturing lambda: a lambda coroutine's frame points at the
// closure, which is gone by the time co_spawn runs the frame.
asio::awaitable<void> App::lead() {
  bool released = co_await elector->run([this] {
    asio::co_spawn(io, scheduler->run_scheduling_loop(), supervisor.handler("schedule", Criticality::critical));
  });
  if (released) co_return;
  // As kube-scheduler: stop deciding at once, exit 1 and let the
  // Deployment restart us.
  scheduler->stop_scheduling();
  die(1);
  co_await shutdown(false, false);
}

Step<> App::serve(const std::optional<serve::BindAddress>& plain, const kube::ClientConfig& config) {
  sources = std::make_unique<serve::Sources>(
      serve::Sources{*scheduler,
                     opts.scheduler_name,
                     {transport.get(), events_transport.get()},
                     elector.get(),
                     opts.leader_election.resource_namespace + "/" + opts.leader_election.resource_name,
                     &supervisor,
                     {}});
  if (lease_transport) sources->transports.push_back(lease_transport.get());
  serve::register_metrics(registry, *sources);
  serve::add_routes(routes, registry, *sources);
  ui_feed = std::make_unique<ui::Feed>(ui::FeedSources{*scheduler, elector.get(), sources->lease_name});
  ui::add_routes(routes, *ui_feed);
  if (opts.secure_port != 0)
    if (auto served = serve_securely(config); !served) return served;
  if (!plain) return {};
  auto server = serve::HttpServer::listen(io.get_executor(), *plain, routes);
  if (!server) return failed("--metrics-bind-address=" + opts.metrics_bind_address + ": " + server.error().message());
  http.emplace(std::move(*server));
  TS_LOG(1, "Serving health, metrics and debug endpoints", {"address", opts.metrics_bind_address},
         {"port", http->port()});
  asio::co_spawn(io, http->run(), supervisor.handler("serve/http", Criticality::critical));
  return {};
}

// The client of a review: from its own kubeconfig flag, else the
// scheduler's configuration (a transport of its own either way).
Step<std::unique_ptr<kube::Transport>> make_review_client(asio::io_context& io, const std::string& flag,
                                                          const std::string& path, const kube::ClientConfig& own) {
  kube::ClientConfig config = own;
  if (!path.empty()) {
    auto loaded = kube::load_client_config(path, "", kube::Environment::process());
    if (!loaded) return failed(flag + "=" + path + ": " + loaded.error().message);
    config = std::move(*loaded);
  }
  kube::TransportOptions topts;
  topts.user_agent = std::string("toy-scheduler/") + TOYSCHED_VERSION;
  auto created = kube::HttpTransport::create(io.get_executor(), std::move(config), topts);
  if (!created) return failed(created.error().message);
  return std::move(*created);
}

Step<> App::serve_securely(const kube::ClientConfig& config) {
  auto tls = serve::make_server_tls({opts.tls_cert_file, opts.tls_private_key_file}, hostname());
  if (auto* err = std::get_if<std::string>(&tls)) return failed(*err);
  auto authn = make_review_client(io, "--authentication-kubeconfig", opts.authentication_kubeconfig, config);
  if (!authn) return authn.error();
  authn_transport = std::move(*authn);
  kube::Transport* authz = authn_transport.get();
  if (opts.authorization_kubeconfig != opts.authentication_kubeconfig) {
    auto own = make_review_client(io, "--authorization-kubeconfig", opts.authorization_kubeconfig, config);
    if (!own) return own.error();
    authz_transport = std::move(*own);
    authz = authz_transport.get();
  }
  serve::AuthOptions aopts;
  aopts.token_ttl = opts.authentication_token_cache_ttl;
  aopts.allow_ttl = opts.authorization_allowed_cache_ttl;
  aopts.deny_ttl = opts.authorization_denied_cache_ttl;
  aopts.always_allow_paths = opts.authorization_always_allow_paths;
  auth = std::make_unique<serve::DelegatingAuth>(*authn_transport, *authz, aopts);
  std::string where = opts.bind_address + ":" + std::to_string(opts.secure_port);
  serve::BindAddress address{opts.bind_address, static_cast<std::uint16_t>(opts.secure_port)};
  auto server = serve::HttpServer::listen(io.get_executor(), address, routes,
                                          {std::get<std::shared_ptr<asio::ssl::context>>(tls), auth.get()});
  if (!server)
    return failed("--bind-address=" + opts.bind_address + " --secure-port=" + std::to_string(opts.secure_port) + ": " +
                  server.error().message());
  https.emplace(std::move(*server));
  TS_LOG(0, "Serving securely", {"address", where},
         {"certificate", opts.tls_cert_file.empty() ? std::string("self-signed") : opts.tls_cert_file});
  asio::co_spawn(io, https->run(), supervisor.handler("serve/https", Criticality::critical));
  return {};
}

void App::wait_for_signals() {
  asio::co_spawn(io, wait_for_signal(), supervisor.handler("main", Criticality::expendable));
}

asio::awaitable<void> App::wait_for_signal() {
  trace::TaskScope task("main");
  auto [ec, sig] =
      co_await trace::traced(task, trace::points::main_signal, signals.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (ec) co_return;  // cancelled: a shutdown is already under way
  TS_LOG(0, "Received signal; shutting down", {"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"});
  if (elector && !opts.drill.release_on_cancel)
    TS_LOG(0, "Leaving the lease held until it expires (--leader-elect-release-on-cancel=false)",
           {"lease", opts.leader_election.resource_namespace + "/" + opts.leader_election.resource_name});
  co_await shutdown(true, opts.drill.release_on_cancel);
}

// Leave with `code` once the loop runs dry; no more signals are waited for.
void App::die(int code) {
  if (exit_code == 0) exit_code = code;
  signals.cancel();
}

// Two-phase shutdown: ask every task to stop and let the loop run dry, so
// that no coroutine frame is left parked on the loop when main's objects
// are destroyed. A watchdog ends the process if that takes too long.
asio::awaitable<void> App::shutdown(bool wait_for_binds, bool release_lease) {
  if (shutting_down) co_return;
  shutting_down = true;
  trace::TaskScope task("shutdown");
  std::signal(SIGALRM, on_shutdown_watchdog);
  alarm(kShutdownWatchdogSeconds);
  scheduler->stop_scheduling();
  asio::steady_timer t(io);
  auto deadline = std::chrono::steady_clock::now() + kShutdownGrace;
  while (wait_for_binds && scheduler->binds_to_drain() > 0 && std::chrono::steady_clock::now() < deadline) {
    t.expires_after(20ms);
    co_await trace::traced(task, trace::points::shutdown_drain, t.async_wait(asio::use_awaitable));
  }
  if (wait_for_binds && scheduler->binds_to_drain() > 0)
    TS_WARN("Leaving with binds in flight", {"binds", scheduler->binds_to_drain()});
  // Hand the lease back so that a standby takes over in about a second
  // instead of a whole lease duration.
  if (elector && release_lease) co_await elector->release();
  if (elector && !release_lease) elector->stop();
  if (http) http->stop();
  if (https) https->stop();
  scheduler->stop();
  // Last: the lease's release above went out on its HTTP/2 connection.
  for (auto* t :
       {transport.get(), events_transport.get(), lease_transport.get(), authn_transport.get(), authz_transport.get()})
    if (t != nullptr) t->close_when_idle();
}

// --dump-dir: the dump's file, absolute, named by pid (a restarted
// scheduler does not overwrite the last one's), logged so that a person
// whose terminal lost stderr knows where to look.
std::string g_dump_file, g_dump_dir;

Step<> set_dump_file(const DrillOptions& drill) {
  std::string dir = drill.dump_dir.empty() ? "." : drill.dump_dir;
  if (dir.front() != '/') {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return failed("--dump-dir: cannot read the working directory");
    dir = dir == "." ? std::string(cwd) : std::string(cwd) + "/" + dir;
  }
  std::string path = dir + "/toy-scheduler-dump-" + std::to_string(getpid()) + ".txt";
  if (!trace::set_dump_file(path)) return failed("--dump-dir: path too long: " + path);
  g_dump_file = path;
  g_dump_dir = dir;
  return {};
}

// Said once the start-up checks have passed (a bad flag or kubeconfig stays
// one line of output).
void log_dump_file() {
  TS_LOG(0, "SIGQUIT and --crash-at dumps are also written to a file", {"path", g_dump_file});
  if (access(g_dump_dir.c_str(), W_OK) != 0)
    TS_WARN("The dump directory is not writable: a dump will only go to stderr (see --dump-dir)", {"dir", g_dump_dir});
}

// -v, --crash-at, the SIGQUIT dump: what must be in place before anything
// else runs. --crash-at=list ends here, with the list.
Step<> configure_process(const Options& opts) {
  log::set_verbosity(opts.verbosity);
  log::set_vmodule(opts.vmodule);  // checked by parse_options
  if (opts.logging_format == "json") log::set_format(log::format::json);
  if (opts.crash_at == "list") return ExitNow{0, trace::known_points_text(), ""};
  try {
    if (!opts.crash_at.empty()) trace::set_crash_at(trace::parse_crash_at(opts.crash_at));
    if (!opts.throw_at.empty()) trace::set_throw_at(trace::parse_crash_at(opts.throw_at));
  } catch (const std::invalid_argument& e) {
    return failed(opts.throw_at.empty() ? e.what() : std::string(e.what()) + " (--crash-at or --throw-at)");
  }
  // Before any thread is started, so that every one inherits it.
  if (opts.cpu_slice_microseconds > 0) {
    auto why = async::request_cpu_slice(std::chrono::microseconds(opts.cpu_slice_microseconds));
    if (why.empty())
      TS_LOG(2, "CPU slice requested", {"microseconds", opts.cpu_slice_microseconds});
    else
      TS_LOG(1, "CPU slice not changed: the kernel's default stays", {"reason", why});
  }
  // Like a Go program's goroutine dump: every task and where it is parked.
  trace::install_sigquit_handler();
  return set_dump_file(opts.drill);
}

// The profiles of --config, or the default profile under --scheduler-name;
// logged one line each.
Step<std::vector<sched::NamedProfile>> make_profiles(const Options& opts) {
  std::vector<sched::NamedProfile> out;
  if (!opts.config) {
    out.push_back({opts.scheduler_name, sched::Profile::make_default(), {}});
  } else {
    for (std::size_t i = 0; i < opts.config->profiles.size(); ++i) {
      const config::ProfileConfig& pc = opts.config->profiles[i];
      auto made = config::build_profile(pc, i);
      if (auto* err = std::get_if<std::string>(&made)) return failed("--config " + opts.config_file + ": " + *err);
      out.push_back({pc.scheduler_name, std::move(std::get<sched::Profile>(made)), pc.percentage_of_nodes_to_score});
    }
  }
  for (const sched::NamedProfile& p : out) {
    std::string filters, scores;
    for (const sched::Plugin* f : p.profile.filters()) filters += (filters.empty() ? "" : ",") + std::string(f->name());
    for (const auto& sc : p.profile.scorers())
      scores += (scores.empty() ? "" : ",") + std::string(sc.plugin->name()) + ":" + std::to_string(sc.weight);
    TS_LOG(1, "Scheduler profile", {"schedulerName", p.name}, {"filters", filters}, {"scores", scores});
  }
  return out;
}

// --metrics-bind-address: nothing, or a loopback address. Plain HTTP has
// no authentication, so it never listens where other machines can reach it.
Step<std::optional<serve::BindAddress>> plain_address(const std::string& flag) {
  if (flag.empty()) return std::optional<serve::BindAddress>{};
  auto parsed = serve::parse_bind_address(flag);
  if (!parsed) return failed("--metrics-bind-address=" + flag + ": " + parsed.error().message());
  boost::system::error_code ec;
  if (!asio::ip::make_address(parsed->host, ec).is_loopback() || ec)
    return failed(
        "--metrics-bind-address=" + flag +
        ": plain HTTP has no authentication and listens on loopback only (127.0.0.1, ::1); use --secure-port");
  return std::optional<serve::BindAddress>{*parsed};
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = parse_options(std::vector<std::string>(argv + 1, argv + argc), personality_of(argc > 0 ? argv[0] : ""));
  if (auto* stop = std::get_if<ExitNow>(&parsed)) return exit_now(*stop);
  const Options& opts = std::get<Options>(parsed);
  if (auto configured = configure_process(opts); !configured) return exit_now(configured.error());
  for (const std::string& w : opts.warnings) TS_WARN(w);
  auto profiles = make_profiles(opts);
  if (!profiles) return exit_now(profiles.error());
  auto plain = plain_address(opts.metrics_bind_address);
  if (!plain) return exit_now(plain.error());
  auto config = kube::load_client_config(opts.kubeconfig, opts.context, kube::Environment::process());
  if (!config) return exit_now(failed(config.error().message));
  if (config->insecure_skip_tls_verify)
    TS_WARN("TLS verification is off because the kubeconfig says insecure-skip-tls-verify",
            {"server", config->server.to_string()});
  if (config->exec) TS_LOG(1, "Credentials come from an exec plugin", {"command", config->exec->command});

  App app(opts);
  if (auto made = app.make_clients(*config); !made) return exit_now(made.error());
  app.make_scheduler(std::move(*profiles));
  TS_LOG(0, "Starting Kubernetes Scheduler", {"version", TOYSCHED_VERSION}, {"schedulerName", opts.scheduler_name},
         {"server", config->server.to_string()}, {"config", config->origin.describe()});
  log_dump_file();
  app.start_tasks();
  if (auto served = app.serve(*plain, *config); !served) return exit_now(served.error());
  app.wait_for_signals();
  app.io.run();
  return app.exit_code;
}
