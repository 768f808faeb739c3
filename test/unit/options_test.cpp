#include <doctest/doctest.h>

#include "toysched/options.hpp"
#include "toysched/sched/scheduler.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

using namespace toysched;
using namespace std::chrono_literals;

namespace {
Options parse_ok(std::vector<std::string> args) {
  auto r = parse_options(std::move(args));
  auto* o = std::get_if<Options>(&r);
  REQUIRE_MESSAGE(o != nullptr, (std::get_if<ExitNow>(&r) ? std::get<ExitNow>(r).err : ""));
  return *o;
}
ExitNow parse_exit(std::vector<std::string> args) {
  auto r = parse_options(std::move(args));
  auto* e = std::get_if<ExitNow>(&r);
  REQUIRE(e != nullptr);
  return *e;
}
}  // namespace

TEST_CASE("defaults are kube-scheduler's") {
  auto o = parse_ok({});
  CHECK(o.scheduler_name == "toy-scheduler");
  CHECK(o.verbosity == 0);
  CHECK(o.kube_api_qps == 50);
  CHECK(o.kube_api_burst == 100);
  // Ours, not kube-scheduler's (it has no such flag): enough binds in flight
  // for a ReplicaSet's batch of 29 pods (the race drill), and a short slice.
  CHECK(o.bind_parallelism == 32);
  // One default: a scheduler made without the flags binds as many at once.
  CHECK(sched::SchedulerOptions{}.bind_parallelism == o.bind_parallelism);
  CHECK(o.cpu_slice_microseconds == 100);
  CHECK_FALSE(o.leader_election.enabled);
  CHECK(o.leader_election.lease_duration == 15s);
  CHECK(o.leader_election.renew_deadline == 10s);
  CHECK(o.leader_election.retry_period == 2s);
  CHECK(o.leader_election.resource_namespace == "kube-system");
  CHECK(o.leader_election.resource_name == "toy-scheduler");
}

TEST_CASE("the drill's command line parses") {
  auto o = parse_ok({"--kubeconfig=/root/.kube/config", "--scheduler-name=default-scheduler", "-v=4"});
  CHECK(o.kubeconfig == "/root/.kube/config");
  CHECK(o.scheduler_name == "default-scheduler");
  CHECK(o.verbosity == 4);
  CHECK(o.leader_election.resource_name == "default-scheduler");
}

TEST_CASE("every klog spelling of -v") {
  CHECK(parse_ok({"-v=3"}).verbosity == 3);
  CHECK(parse_ok({"--v=5"}).verbosity == 5);
  CHECK(parse_ok({"-v", "2"}).verbosity == 2);
  CHECK(parse_ok({"--v", "10"}).verbosity == 10);
  CHECK(parse_exit({"-v=11"}).status == 1);
}

TEST_CASE("--version and --help exit 0 with text on stdout") {
  auto v = parse_exit({"--version"});
  CHECK(v.status == 0);
  CHECK(v.out.find("toy-scheduler") != std::string::npos);
  auto h = parse_exit({"--help"});
  CHECK(h.status == 0);
  CHECK(h.out.find("--leader-elect-lease-duration") != std::string::npos);
  CHECK(h.out.find("--kube-api-qps") != std::string::npos);
}

TEST_CASE("bad flags are one error line and status 1") {
  auto e = parse_exit({"--no-such-flag"});
  CHECK(e.status == 1);
  CHECK(e.err.find("--no-such-flag") != std::string::npos);
  CHECK(e.err.find('\n') == std::string::npos);
  CHECK(parse_exit({"--bind-parallelism=0"}).status == 1);
  CHECK(parse_exit({"--cpu-slice-microseconds=-1"}).status == 1);
  CHECK(parse_ok({"--cpu-slice-microseconds=0"}).cpu_slice_microseconds == 0);
  CHECK(parse_exit({"--kube-api-burst=-1"}).status == 1);
  CHECK(parse_exit({"--scheduler-name="}).status == 1);
  CHECK(parse_exit({"stray"}).status == 1);
  auto d = parse_exit({"--leader-elect-retry-period=soon"});
  CHECK(d.status == 1);
  CHECK(d.err.find("invalid duration \"soon\"") != std::string::npos);
}

TEST_CASE("leader election timing: lease > renew > 1.2 x retry") {
  auto o = parse_ok({"--leader-elect", "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                     "--leader-elect-retry-period=500ms"});
  CHECK(o.leader_election.enabled);
  CHECK(o.leader_election.lease_duration == 4s);
  CHECK(o.leader_election.retry_period == 500ms);
  auto e = parse_exit({"--leader-elect", "--leader-elect-lease-duration=10s"});
  CHECK(e.status == 1);
  CHECK(e.err.find("lease-duration must be greater") != std::string::npos);
  CHECK(parse_exit({"--leader-elect", "--leader-elect-retry-period=9s"}).status == 1);
  // 10s renew vs 1.2 x 8.4s = 10.08s: refused; 8s: 9.6s, accepted.
  CHECK(parse_exit({"--leader-elect", "--leader-elect-retry-period=8400ms"}).status == 1);
  CHECK(parse_ok({"--leader-elect", "--leader-elect-retry-period=8s"}).leader_election.enabled);
  // Without --leader-elect the timings are not checked (they are not used).
  CHECK(parse_ok({"--leader-elect-lease-duration=1s"}).leader_election.lease_duration == 1s);
}

TEST_CASE("Go durations") {
  CHECK(parse_duration("15s") == 15s);
  CHECK(parse_duration("1m30s") == 90s);
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("1.5h") == 5400s);
  CHECK(parse_duration("0") == 0ms);
  CHECK(parse_duration("1500us") == 2ms);  // rounds up to our resolution
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("15"));
  CHECK_FALSE(parse_duration("s"));
  CHECK_FALSE(parse_duration("-1s"));
  CHECK_FALSE(parse_duration("1.2.3s"));
  CHECK_FALSE(parse_duration("10d"));
  CHECK_FALSE(parse_duration("99999999999h"));
}

TEST_CASE("--ignore-unsupported-constraints: off unless given, and in --help") {
  CHECK_FALSE(parse_ok({}).ignore_unsupported_constraints);
  CHECK(parse_ok({"--ignore-unsupported-constraints"}).ignore_unsupported_constraints);
  CHECK(parse_exit({"--help"}).out.find("--ignore-unsupported-constraints") != std::string::npos);
}

TEST_CASE("serving: HTTPS on 10259 on all addresses by default, plain HTTP only when asked") {
  auto o = parse_ok({});
  CHECK(o.secure_port == 10259);
  CHECK(o.bind_address == "0.0.0.0");
  CHECK(o.metrics_bind_address.empty());
  CHECK(o.tls_cert_file.empty());
  CHECK(o.authentication_kubeconfig.empty());
  CHECK(o.authentication_token_cache_ttl == 10s);
  CHECK(o.authorization_allowed_cache_ttl == 10s);
  CHECK(o.authorization_denied_cache_ttl == 10s);
  CHECK(parse_ok({"--authorization-webhook-cache-unauthorized-ttl=1s"}).authorization_denied_cache_ttl == 1s);
  auto s = parse_ok({"--secure-port=0", "--bind-address=127.0.0.1", "--tls-cert-file=c.pem",
                     "--tls-private-key-file=k.pem", "--authentication-kubeconfig=a", "--authorization-kubeconfig=b"});
  CHECK(s.secure_port == 0);
  CHECK(s.bind_address == "127.0.0.1");
  CHECK(s.tls_private_key_file == "k.pem");
  CHECK(s.authorization_kubeconfig == "b");
  CHECK(parse_exit({"--secure-port=70000"}).status == 1);
  auto half = parse_exit({"--tls-cert-file=c.pem"});
  CHECK(half.status == 1);
  CHECK(half.err.find("--tls-private-key-file") != std::string::npos);
}

namespace {
// A config file for one test, removed after it.
struct ConfigFile {
  std::string path;
  explicit ConfigFile(const std::string& text) : path("/tmp/toysched-options-test-" + std::to_string(::getpid())) {
    std::ofstream(path) << text;
  }
  ~ConfigFile() { std::remove(path.c_str()); }
};
}  // namespace

TEST_CASE("--config: the file decides, --leader-elect* flags given on the command line win, replaced flags warned") {
  ConfigFile f(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "parallelism: 4\n"
      "percentageOfNodesToScore: 30\n"
      "podInitialBackoffSeconds: 3\n"
      "podMaxBackoffSeconds: 60\n"
      "clientConnection: {kubeconfig: /from/file, qps: 7, burst: 9}\n"
      "leaderElection: {leaseDuration: 30s, renewDeadline: 20s, resourceName: mine}\n"
      "profiles: [{schedulerName: first}, {schedulerName: second}]\n");
  auto o = parse_ok({"--config", f.path, "--kubeconfig=/from/flag", "--leader-elect-retry-period=5s"});
  CHECK(o.kubeconfig == "/from/file");
  CHECK(o.kube_api_qps == 7);
  CHECK(o.kube_api_burst == 9);
  CHECK(o.bind_parallelism == 4);
  CHECK(o.percentage_of_nodes_to_score == 30);
  CHECK(o.pod_initial_backoff == 3s);
  CHECK(o.pod_max_backoff == 60s);
  CHECK(o.scheduler_name == "first");
  CHECK(o.leader_election.enabled);  // v1's default in a file
  CHECK(o.leader_election.lease_duration == 30s);
  CHECK(o.leader_election.renew_deadline == 20s);
  CHECK(o.leader_election.retry_period == 5s);  // the flag wins
  CHECK(o.leader_election.resource_name == "mine");
  CHECK(o.leader_election.resource_namespace == "kube-system");
  REQUIRE(o.warnings.size() == 1);
  CHECK(o.warnings[0] == "--config is set: these flags are ignored, the file decides: --kubeconfig");

  auto off = parse_ok({"--config=" + f.path, "--leader-elect=false"});
  CHECK_FALSE(off.leader_election.enabled);
  CHECK(off.warnings.empty());
}

TEST_CASE("--config: a bad file is one error line and status 1") {
  ConfigFile f("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: -1\n");
  auto e = parse_exit({"--config", f.path});
  CHECK(e.status == 1);
  CHECK(e.err == "toy-scheduler: --config " + f.path +
                     ": parallelism: Invalid value: -1: should be an integer value greater than zero");
  auto missing = parse_exit({"--config", "/nonexistent.yaml"});
  CHECK(missing.err == "toy-scheduler: --config /nonexistent.yaml: cannot read /nonexistent.yaml");
}

TEST_CASE("kubeadm's kube-scheduler command line (v1.36) runs, with no warning") {
  auto o = parse_ok({"--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                     "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
                     "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"});
  CHECK(o.leader_election.enabled);
  CHECK(o.bind_address == "127.0.0.1");
  CHECK(o.kubeconfig == "/etc/kubernetes/scheduler.conf");
  CHECK(o.authentication_kubeconfig == "/etc/kubernetes/scheduler.conf");
  CHECK(o.warnings.empty());
}

TEST_CASE("every other kube-scheduler v1.36 flag is accepted; the ignored ones are named in one warning") {
  auto o = parse_ok({"--allow-metric-labels=a,b=c",
                     "--allow-metric-labels-manifest=/m",
                     "--cert-dir=/c",
                     "--client-ca-file=/ca",
                     "--contention-profiling=false",
                     "--disable-http2-serving",
                     "--disabled-metrics=x",
                     "--emulated-version=1.36",
                     "--feature-gates=A=true,B=false",
                     "--http2-max-streams-per-connection=5",
                     "--kube-api-content-type=application/json",
                     "--log-flush-frequency=5s",
                     "--log-json-info-buffer-size=0",
                     "--log-json-split-stream",
                     "--log-text-info-buffer-size=0",
                     "--log-text-split-stream=false",
                     "--master=https://x",
                     "--min-compatibility-version=1.35",
                     "--permit-address-sharing",
                     "--permit-port-sharing=true",
                     "--profiling=false",
                     "--requestheader-allowed-names=a",
                     "--requestheader-client-ca-file=/r",
                     "--requestheader-extra-headers-prefix=x-",
                     "--requestheader-group-headers=g",
                     "--requestheader-uid-headers=u",
                     "--requestheader-username-headers=n",
                     "--show-hidden-metrics-for-version=1.35",
                     "--tls-cipher-suites=A,B",
                     "--tls-curve-preferences=1,2",
                     "--tls-min-version=VersionTLS12",
                     "--tls-sni-cert-key=a,b",
                     "--write-config-to=/w",
                     "--authentication-skip-lookup",
                     "--authentication-tolerate-lookup-failure",
                     "--leader-elect-resource-lock=leases",
                     "--logging-format=json",
                     "--vmodule=sched*=4",
                     "--authorization-always-allow-paths=/healthz,/metrics",
                     "--pod-max-in-unschedulable-pods-duration=1m"});
  CHECK(o.logging_format == "json");
  CHECK(o.vmodule == "sched*=4");
  CHECK(o.authorization_always_allow_paths == std::vector<std::string>{"/healthz", "/metrics"});
  CHECK(o.pod_max_in_unschedulable == 60s);
  REQUIRE(o.warnings.size() == 1);
  const std::string& w = o.warnings[0];
  CHECK(w.find("accepted and ignored") != std::string::npos);
  for (const char* name : {"--feature-gates", "--profiling", "--master", "--write-config-to", "--tls-sni-cert-key",
                           "--authentication-skip-lookup"})
    CHECK(w.find(name) != std::string::npos);
  // Honoured, or without effect here anyway: not in the warning.
  for (const char* name : {"--logging-format", "--vmodule", "--log-flush-frequency", "--disable-http2-serving"})
    CHECK(w.find(name) == std::string::npos);
}

TEST_CASE("kube-scheduler flags with values we cannot take are one error line") {
  CHECK(parse_exit({"--logging-format=xml"}).err == "toy-scheduler: --logging-format: xml not in {text,json}");
  CHECK(parse_exit({"--vmodule=abc"}).err == "toy-scheduler: --vmodule: \"abc\" is not pattern=N");
  CHECK(parse_exit({"--leader-elect-resource-lock=endpoints"}).status == 1);
}

TEST_CASE("the drills' flags: off by default, as upstream") {
  auto o = parse_ok({});
  CHECK(o.drill.dump_dir.empty());
  CHECK(o.drill.bind_delay == 0ms);
  CHECK(o.drill.release_on_cancel);
  auto d = parse_ok({"--dump-dir=/tmp/dumps", "--bind-delay=1.5s", "--leader-elect-release-on-cancel=false"});
  CHECK(d.drill.dump_dir == "/tmp/dumps");
  CHECK(d.drill.bind_delay == 1500ms);
  CHECK_FALSE(d.drill.release_on_cancel);
  CHECK(parse_ok({"--leader-elect-release-on-cancel"}).drill.release_on_cancel);
  CHECK(parse_ok({"--leader-elect-release-on-cancel=true"}).drill.release_on_cancel);
  CHECK(parse_exit({"--bind-delay=soon"}).status == 1);
  auto h = parse_exit({"--help"});
  for (const char* flag : {"--dump-dir", "--bind-delay", "--leader-elect-release-on-cancel"})
    CHECK(h.out.find(flag) != std::string::npos);
}

TEST_CASE("--dry-run and --explain-rows: off and 100 000 by default") {
  auto o = parse_ok({});
  CHECK_FALSE(o.dry_run);
  CHECK(o.explain_rows == 100'000);
  auto d = parse_ok({"--dry-run", "--explain-rows=0"});
  CHECK(d.dry_run);
  CHECK(d.explain_rows == 0);
  CHECK(parse_exit({"--explain-rows=-1"}).status == 1);
  CHECK(parse_exit({"--explain-rows=lots"}).status == 1);
  auto h = parse_exit({"--help"});
  CHECK(h.out.find("--dry-run") != std::string::npos);
  CHECK(h.out.find("--explain-rows") != std::string::npos);
}

TEST_CASE("run as kube-scheduler: kube-scheduler's defaults, for kubeadm's manifest; flags still win") {
  CHECK(personality_of("kube-scheduler") == Personality::kube_scheduler);
  CHECK(personality_of("/usr/local/bin/kube-scheduler") == Personality::kube_scheduler);
  CHECK(personality_of("toy-scheduler") == Personality::toy_scheduler);
  CHECK(personality_of("/usr/bin/kube-scheduler-v2") == Personality::toy_scheduler);
  CHECK(personality_of("kube-scheduler/toy-scheduler") == Personality::toy_scheduler);
  CHECK(personality_of("") == Personality::toy_scheduler);

  auto kube = [](std::vector<std::string> args) {
    auto r = parse_options(std::move(args), Personality::kube_scheduler);
    auto* o = std::get_if<Options>(&r);
    REQUIRE(o != nullptr);
    return *o;
  };
  const Options o = kube({"--kubeconfig=/etc/kubernetes/scheduler.conf"});
  CHECK(o.scheduler_name == "default-scheduler");
  CHECK(o.leader_election.enabled);
  CHECK(o.leader_election.resource_name == "kube-scheduler");
  CHECK(o.leader_election.resource_namespace == "kube-system");
  // kubeadm's manifest says --leader-elect=true; a user may still say otherwise.
  const Options off = kube({"--leader-elect=false", "--scheduler-name=mine", "--leader-elect-resource-name=l"});
  CHECK_FALSE(off.leader_election.enabled);
  CHECK(off.scheduler_name == "mine");
  CHECK(off.leader_election.resource_name == "l");
  // As toy-scheduler: its own defaults, the Lease named after the scheduler.
  const Options toy = parse_ok({"--scheduler-name=mine"});
  CHECK_FALSE(toy.leader_election.enabled);
  CHECK(toy.leader_election.resource_name == "mine");
}
