#include "toysched/options.hpp"

#include <CLI/CLI.hpp>

#include "options_detail.hpp"
#include "toysched/config/scheduler_config.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "toysched_version.h"

namespace toysched {

std::string version_string() {
  return std::string("toy-scheduler ") + TOYSCHED_VERSION + " (Kubernetes API " + TOYSCHED_KUBERNETES_VERSION + ")";
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view s) {
  // A sequence of <decimal number><unit>; units as Go's time.ParseDuration.
  // "0" alone is allowed. Resolution is the millisecond (anything finer rounds up).
  if (s == "0") return std::chrono::milliseconds{0};
  if (s.empty()) return std::nullopt;
  long double total_ns = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    std::string number(s.substr(start, i - start));
    if (number == "." || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
    long double value = std::strtold(number.c_str(), nullptr);
    std::size_t ustart = i;
    while (i < s.size() && !((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    std::string_view unit = s.substr(ustart, i - ustart);
    long double scale;
    if (unit == "ns")
      scale = 1;
    else if (unit == "us" || unit == "µs")
      scale = 1e3;
    else if (unit == "ms")
      scale = 1e6;
    else if (unit == "s")
      scale = 1e9;
    else if (unit == "m")
      scale = 60e9;
    else if (unit == "h")
      scale = 3600e9;
    else
      return std::nullopt;
    total_ns += value * scale;
    if (total_ns > 9.2e18L) return std::nullopt;  // beyond int64 nanoseconds, as Go refuses
  }
  return std::chrono::milliseconds{static_cast<std::int64_t>(std::ceil(total_ns / 1e6L))};
}

std::string validate_leader_election(const LeaderElectionOptions& le) {
  using std::chrono::milliseconds;
  if (le.lease_duration <= milliseconds{0} || le.renew_deadline <= milliseconds{0} ||
      le.retry_period <= milliseconds{0})
    return "leader election durations must be positive";
  if (le.lease_duration <= le.renew_deadline)
    return "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline";
  if (le.renew_deadline.count() * 10 <= le.retry_period.count() * 12)
    return "--leader-elect-renew-deadline must be greater than 1.2 x --leader-elect-retry-period";
  return {};
}

namespace {

// klog spells verbosity -v=4, --v=4, -v 4 or --v 4. CLI11 reads all but the
// first, so rewrite it. Single-dash long flags (-kubeconfig=x) are Go's flag
// package, not pflag: kube-scheduler refuses them and so do we.
std::vector<std::string> normalize(std::vector<std::string> args) {
  for (auto& a : args)
    if (a.rfind("-v=", 0) == 0) a = "--v=" + a.substr(3);
  return args;
}

}  // namespace

namespace detail {

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& into,
                          const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&into, name](const std::string& text) {
            auto d = parse_duration(text);
            if (!d) throw CLI::ValidationError(name, "invalid duration \"" + text + "\"");
            into = *d;
          },
          help)
      ->type_name("DURATION");
}

}  // namespace detail

namespace {

using detail::add_duration;

// Where /healthz, /metrics and /debug are served, and to whom: kube-scheduler's
// secure-serving, delegated-auth flags, and our plain loopback port.
void add_serving_flags(CLI::App& app, Options& o) {
  app.add_option("--secure-port", o.secure_port,
                 "The port of /healthz, /livez, /readyz, /metrics and /debug over HTTPS, with authentication and "
                 "authorization (0: no HTTPS).")
      ->check(CLI::Range(0, 65535));
  app.add_option("--bind-address", o.bind_address, "The IP address the secure port listens on.");
  app.add_option("--tls-cert-file", o.tls_cert_file,
                 "PEM certificate (chain) for HTTPS. Without it and --tls-private-key-file, a self-signed "
                 "certificate is made at start and kept in memory.");
  app.add_option("--tls-private-key-file", o.tls_private_key_file, "PEM private key matching --tls-cert-file.");
  app.add_option("--authentication-kubeconfig", o.authentication_kubeconfig,
                 "kubeconfig of the API server that reviews bearer tokens (TokenReview). Empty: the scheduler's "
                 "own.");
  app.add_option("--authorization-kubeconfig", o.authorization_kubeconfig,
                 "kubeconfig of the API server that authorizes requests (SubjectAccessReview). Empty: the "
                 "scheduler's own.");
  add_duration(app, "--authentication-token-webhook-cache-ttl", o.authentication_token_cache_ttl,
               "How long a TokenReview's answer is kept. [10s]");
  add_duration(app, "--authorization-webhook-cache-authorized-ttl", o.authorization_allowed_cache_ttl,
               "How long an 'allowed' SubjectAccessReview answer is kept. [10s]");
  add_duration(app, "--authorization-webhook-cache-unauthorized-ttl", o.authorization_denied_cache_ttl,
               "How long a 'denied' SubjectAccessReview answer is kept. [10s]");
  app.add_option("--metrics-bind-address", o.metrics_bind_address,
                 "Loopback host:port to serve the same endpoints on over plain HTTP, without authentication, "
                 "for local use (port 0: any free port). Empty: not served.");
}

// The drills' flags (DrillOptions), all in one place.
void add_drill_flags(CLI::App& app, DrillOptions& d) {
  app.add_option("--dump-dir", d.dump_dir,
                 "Directory the SIGQUIT dump is also written to, as toy-scheduler-dump-<pid>.txt (its path is "
                 "logged at start). Empty: the working directory.");
  add_duration(app, "--bind-delay", d.bind_delay,
               "Debug: each bind waits this long (await point bind.delay) before its POST, so that a SIGQUIT "
               "mid-burst finds binds in flight. [0]");
  app.add_flag("--leader-elect-release-on-cancel", d.release_on_cancel,
               "On SIGTERM the leader releases the Lease, so a standby takes over at once (kube-scheduler's "
               "ReleaseOnCancel). false keeps it until it expires. [true]");
}

// kube-scheduler's leader election flags (and our --leader-elect-identity).
void add_leader_election_flags(CLI::App& app, LeaderElectionOptions& le) {
  app.add_flag("--leader-elect", le.enabled, "Take a Lease before scheduling, so only one replica decides.");
  add_duration(app, "--leader-elect-lease-duration", le.lease_duration,
               "How long a standby waits after the leader's last renew before taking over. [15s]");
  add_duration(app, "--leader-elect-renew-deadline", le.renew_deadline,
               "The leader gives up if it cannot renew within this. [10s]");
  add_duration(app, "--leader-elect-retry-period", le.retry_period,
               "Interval between acquire and renew attempts. [2s]");
  app.add_option("--leader-elect-resource-namespace", le.resource_namespace, "Namespace of the Lease.");
  app.add_option("--leader-elect-resource-name", le.resource_name,
                 "Name of the Lease (default: the scheduler name; kube-scheduler when run as kube-scheduler).");
  app.add_option("--leader-elect-identity", le.identity,
                 "Holder identity (default: $POD_NAME, else hostname_<random>).");
}

// --config: the file's values replace the flags' (see Options), except
// the --leader-elect* flags given on the command line. Returns "" or the
// one error line.
std::string apply_config(CLI::App& app, Options& o) {
  auto loaded = config::load_scheduler_config(o.config_file);
  if (auto* err = std::get_if<std::string>(&loaded)) return "--config " + o.config_file + ": " + *err;
  auto c = std::make_shared<const config::SchedulerConfig>(std::move(std::get<config::SchedulerConfig>(loaded)));
  std::string ignored;
  for (const char* flag : {"--kubeconfig", "--kube-api-qps", "--kube-api-burst", "--scheduler-name",
                           "--percentage-of-nodes-to-score", "--bind-parallelism"}) {
    if (app.count(flag) > 0) ignored += std::string(ignored.empty() ? "" : ", ") + flag;
  }
  if (!ignored.empty()) o.warnings.push_back("--config is set: these flags are ignored, the file decides: " + ignored);
  o.kubeconfig = c->client_connection.kubeconfig;
  o.kube_api_qps = c->client_connection.qps;
  o.kube_api_burst = c->client_connection.burst;
  o.bind_parallelism = c->parallelism;
  o.percentage_of_nodes_to_score = c->percentage_of_nodes_to_score;
  o.pod_initial_backoff = std::chrono::seconds(c->pod_initial_backoff_seconds);
  o.pod_max_backoff = std::chrono::seconds(c->pod_max_backoff_seconds);
  o.scheduler_name = c->profiles.front().scheduler_name;
  const config::LeaderElectionConfig& fle = c->leader_election;
  LeaderElectionOptions& le = o.leader_election;
  auto from_file = [&](const char* flag, auto& field, const auto& value) {
    if (app.count(flag) == 0) field = value;
  };
  from_file("--leader-elect", le.enabled, fle.leader_elect);
  from_file("--leader-elect-lease-duration", le.lease_duration, fle.lease_duration);
  from_file("--leader-elect-renew-deadline", le.renew_deadline, fle.renew_deadline);
  from_file("--leader-elect-retry-period", le.retry_period, fle.retry_period);
  from_file("--leader-elect-resource-name", le.resource_name, fle.resource_name);
  from_file("--leader-elect-resource-namespace", le.resource_namespace, fle.resource_namespace);
  o.config = std::move(c);
  return {};
}

}  // namespace

namespace {

// How the scheduler decides and binds: the client's rate, the binds in
// flight, the search, what it refuses, and what it records.
void add_scheduling_flags(CLI::App& app, Options& o) {
  app.add_option("--kube-api-qps", o.kube_api_qps,
                 "Requests per second to the API server; negative turns the limit off.");
  app.add_option("--kube-api-burst", o.kube_api_burst, "Burst above --kube-api-qps.")->check(CLI::PositiveNumber);
  app.add_option("--bind-parallelism", o.bind_parallelism,
                 "Binding requests (POSTs) in flight at once; decisions do not wait for them.")
      ->check(CLI::Range(1, 10000));
  app.add_option("--cpu-slice-microseconds", o.cpu_slice_microseconds,
                 "The CPU time slice the scheduler's one thread asks of the kernel (Linux 6.12+ EEVDF): a short "
                 "slice makes a woken loop run sooner on a busy node, without more CPU than its share. 0: the "
                 "kernel's default.")
      ->check(CLI::Range(0, 100000));
  app.add_option("--percentage-of-nodes-to-score", o.percentage_of_nodes_to_score,
                 "Stop filtering once this % of the nodes are found feasible (0: kube-scheduler's adaptive "
                 "rule; 100: every node).")
      ->check(CLI::Range(0, 100));
  app.add_flag("--ignore-unsupported-constraints", o.ignore_unsupported_constraints,
               "Bind pods whose hard constraints toy-scheduler cannot evaluate (resource claims) as if those "
               "were absent. Default: leave them pending with a FailedScheduling event.");
  app.add_flag("--dry-run", o.dry_run,
               "Decide and explain (/debug/explain, -v=10 scores) but never bind and never write events or "
               "pod status: try a profile on a live cluster safely. A decided pod counts on its node in the "
               "cache as if bound.");
  app.add_option("--explain-rows", o.explain_rows,
                 "How much /debug/explain keeps: each recent pod's last attempt, until the records hold this "
                 "many node rows (~100 bytes each; a pod counts one plus one per node it lists), oldest out "
                 "first. 0: record nothing (the decision then copies no names and scores). [100000]")
      ->check(CLI::Range(0, 100'000'000));
}

}  // namespace

Personality personality_of(std::string_view argv0) {
  const std::size_t slash = argv0.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  return name == "kube-scheduler" ? Personality::kube_scheduler : Personality::toy_scheduler;
}

ParseResult parse_options(std::vector<std::string> args, Personality as) {
  Options o;
  if (as == Personality::kube_scheduler) {
    o.scheduler_name = "default-scheduler";
    o.leader_election.enabled = true;
    o.leader_election.resource_name = "kube-scheduler";
  }
  CLI::App app{"toy-scheduler: a Kubernetes scheduler on one event loop.", "toy-scheduler"};
  app.set_version_flag("--version", version_string());
  app.option_defaults()->always_capture_default();
  app.get_formatter()->column_width(44);

  app.add_option("--config", o.config_file,
                 "A KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1): profiles, plugins, "
                 "their args and weights. It replaces --kubeconfig, --kube-api-qps/burst, --scheduler-name, "
                 "--percentage-of-nodes-to-score and --bind-parallelism; --leader-elect* flags still win.");
  app.add_option("--kubeconfig", o.kubeconfig,
                 "Path to a kubeconfig file. Empty: $KUBECONFIG, then the in-cluster config.");
  app.add_option("--context", o.context, "The kubeconfig context to use (default: current-context).");
  app.add_option("--scheduler-name", o.scheduler_name, "Schedule pods whose spec.schedulerName is this.");
  app.add_option("-v,--v", o.verbosity, "Log level verbosity (klog levels; 2 is production).")
      ->check(CLI::Range(0, 10));

  auto& le = o.leader_election;
  add_leader_election_flags(app, le);

  add_scheduling_flags(app, o);
  add_serving_flags(app, o);
  detail::add_kube_scheduler_flags(app, o);
  add_drill_flags(app, o.drill);
  app.add_option("--crash-at", o.crash_at,
                 "POINT[:N]: dump tasks and die on the Nth arrival at await point POINT; "
                 "'list' prints the points.");
  app.add_option("--throw-at", o.throw_at,
                 "POINT[:N]: for tests: the task that makes the Nth arrival at await point POINT throws there "
                 "(a bind is retried; the scheduling loop, an informer or the lease ends the process).");

  auto argv = normalize(std::move(args));
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForVersion&) {  // before Success: it derives from it
    return ExitNow{0, version_string() + "\n", {}};
  } catch (const CLI::Success&) {
    std::ostringstream out;
    out << app.help();
    return ExitNow{0, out.str(), {}};
  } catch (const CLI::ParseError& e) {
    return ExitNow{1, {}, std::string("toy-scheduler: ") + e.what()};
  }
  if (!app.remaining().empty())
    return ExitNow{1, {}, "toy-scheduler: unexpected argument \"" + app.remaining().front() + "\""};
  if (auto err = detail::finish_kube_scheduler_flags(app, o); !err.empty())
    return ExitNow{1, {}, "toy-scheduler: " + err};
  if (!o.config_file.empty()) {
    if (auto err = apply_config(app, o); !err.empty()) return ExitNow{1, {}, "toy-scheduler: " + err};
  }
  if (le.resource_name.empty()) le.resource_name = o.scheduler_name;
  if (o.scheduler_name.empty()) return ExitNow{1, {}, "toy-scheduler: --scheduler-name must not be empty"};
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    return ExitNow{1, {}, "toy-scheduler: --tls-cert-file and --tls-private-key-file must be given together"};
  if (le.enabled) {
    if (auto why = validate_leader_election(le); !why.empty())
      return ExitNow{1, {}, "toy-scheduler: invalid leader election configuration: " + why};
  }
  return o;
}

}  // namespace toysched
