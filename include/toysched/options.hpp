// Command-line options of toy-scheduler.
//
// The flags are kube-scheduler's where it has one with the same meaning
// (names and defaults), so the drills' command lines work unchanged:
//   toy-scheduler --kubeconfig ~/.kube/config --scheduler-name default-scheduler -v=4
// Options is a plain struct passed down from main(); nothing reads flags
// from anywhere else.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "toysched/sched/bind_parallelism.hpp"

namespace toysched {

namespace config {
struct SchedulerConfig;
}

struct LeaderElectionOptions {
  bool enabled = false;  // --leader-elect (kube-scheduler defaults to true in cluster; we are opt-in)
  std::chrono::milliseconds lease_duration{15'000};  // how long a silent holder keeps the lease
  std::chrono::milliseconds renew_deadline{10'000};  // the leader steps down if it cannot renew within this
  std::chrono::milliseconds retry_period{2'000};     // renew / acquire attempt interval
  std::string resource_namespace = "kube-system";
  std::string resource_name;  // empty: the scheduler name
  std::string identity;       // empty: $POD_NAME, else hostname_<random>
};

// Flags for running the drills by hand (docs/seeds.md): where the
// SIGQUIT dump goes, a slowed bind, and whether SIGTERM hands the Lease back.
// None of them is kube-scheduler's; all are off (upstream behaviour) by default.
struct DrillOptions {
  // --dump-dir: the SIGQUIT (and --crash-at) dump is also written to a file
  // here, as Ctrl-\ in a terminal kills the `tee` the drill pipes into.
  // Empty: the working directory.
  std::string dump_dir;
  // --bind-delay: each bind waits this long (await point bind.delay) before
  // its POST, so a person can press Ctrl-\ mid-burst. 0: no wait.
  std::chrono::milliseconds bind_delay{0};
  // --leader-elect-release-on-cancel: on SIGTERM the leader empties the
  // Lease (client-go's ReleaseOnCancel, which kube-scheduler sets). false
  // keeps it held, so a standby waits out the lease duration (the forced
  // handover, shown with a graceful stop).
  bool release_on_cancel = true;
};

struct Options {
  // --config: a KubeSchedulerConfiguration file. As kube-scheduler, the
  // file then decides everything it covers: its profiles, client
  // connection, parallelism, percentage of nodes, backoffs and leader
  // election, where only --leader-elect* flags given on the command line
  // win; the flags it replaces are ignored with a warning. The file's
  // values are copied into the fields below; `config` keeps the profiles.
  std::string config_file;
  std::shared_ptr<const config::SchedulerConfig> config;
  std::vector<std::string> warnings;  // for the log, once it is set up

  std::string kubeconfig;  // empty: $KUBECONFIG, then in-cluster
  std::string context;     // empty: the kubeconfig's current-context
  std::string scheduler_name = "toy-scheduler";
  int verbosity = 0;  // klog -v

  LeaderElectionOptions leader_election;

  // Client-side rate limit towards the API server (kube-scheduler's 50/100);
  // a negative qps turns the limiter off.
  double kube_api_qps = 50;
  int kube_api_burst = 100;

  // Binds in flight at once (sched/bind_parallelism.hpp says why 32).
  int bind_parallelism = sched::kDefaultBindParallelism;

  // The loop's CPU slice (async/cpu_slice.hpp), microseconds; 0: the kernel's.
  int cpu_slice_microseconds = 100;

  // kube-scheduler's percentageOfNodesToScore: 0 is its adaptive rule (all
  // nodes below 100, 50 % at 100 nodes down to 10 % at 5 000), 100 searches
  // every node (the cycle bench shows what that costs).
  int percentage_of_nodes_to_score = 0;

  // The queue's backoff for a pod that failed: initial, doubling up to max
  // (podInitialBackoffSeconds / podMaxBackoffSeconds of --config).
  std::chrono::milliseconds pod_initial_backoff{1000};
  std::chrono::milliseconds pod_max_backoff{10'000};

  // A pod with a hard constraint we do not evaluate (required pod
  // (anti-)affinity, DoNotSchedule spread, a PVC, a resource claim) stays
  // pending with a FailedScheduling event, rather than be bound where the
  // constraint may not hold. true binds it as if the constraint were absent
  // (the behaviour before the check; some drills want it).
  bool ignore_unsupported_constraints = false;
  // --dry-run: decide and explain (/debug/explain, -v=10) but bind nothing
  // and write nothing (no events, no status): a profile tried on a live
  // cluster beside the scheduler that really places its pods.
  bool dry_run = false;
  // --explain-rows: node rows /debug/explain keeps (0: record nothing).
  int explain_rows = 100'000;

  // The secure port, as kube-scheduler's: HTTPS with delegated
  // authentication and authorization; 0 serves no HTTPS at all.
  int secure_port = 10259;
  std::string bind_address = "0.0.0.0";
  std::string tls_cert_file, tls_private_key_file;  // empty: self-signed, in memory
  std::string authentication_kubeconfig;            // empty: the scheduler's own client
  std::string authorization_kubeconfig;             // empty: the scheduler's own client
  // How long review answers are kept (upstream's flags and defaults).
  std::chrono::milliseconds authentication_token_cache_ttl{10'000};
  std::chrono::milliseconds authorization_allowed_cache_ttl{10'000};
  std::chrono::milliseconds authorization_denied_cache_ttl{10'000};
  // Plain HTTP, no authentication, loopback only: for local use and tests.
  // Empty: not served.
  std::string metrics_bind_address;
  // --authorization-always-allow-paths: served without authorization.
  std::vector<std::string> authorization_always_allow_paths{"/healthz", "/readyz", "/livez"};
  // --pod-max-in-unschedulable-pods-duration: an unschedulable pod is tried
  // again after this even without a cluster event.
  std::chrono::milliseconds pod_max_in_unschedulable{300'000};
  std::string logging_format = "text";                   // --logging-format: text or json
  std::string vmodule;                                   // --vmodule: pattern=N,...
  std::string leader_election_resource_lock = "leases";  // the only lock kube-scheduler v1.36 takes
  // Where the kube-scheduler flags we accept and ignore put their values.
  std::vector<std::string> unused_flag_values;
  bool unused_flag = false;

  std::string crash_at;  // POINT[:N], or "list"
  std::string throw_at;  // POINT[:N]: fault injection for tests

  DrillOptions drill;
};

// What parse_options decided: run with these options, or exit now (help,
// version, a bad flag) with this text and status.
struct ExitNow {
  int status = 0;
  std::string out;  // for stdout (help, version)
  std::string err;  // one error line for stderr
};
using ParseResult = std::variant<Options, ExitNow>;

// Whose defaults the flags start from. Installed as `kube-scheduler` (the
// image's link, or a copy), toy-scheduler takes kube-scheduler's, so that
// kubeadm's static pod manifest runs it unchanged but for the image:
// --scheduler-name default-scheduler, --leader-elect true, the Lease
// kube-system/kube-scheduler (the only one system:kube-scheduler may
// update). As `toy-scheduler` it keeps its own, which the drills rely on:
// toy-scheduler, no election unless asked, the Lease named after the
// scheduler.
enum class Personality { toy_scheduler, kube_scheduler };
// From argv[0]: kube_scheduler when its last path element is "kube-scheduler".
Personality personality_of(std::string_view argv0);

ParseResult parse_options(std::vector<std::string> args, Personality as = Personality::toy_scheduler);

// Go-style durations as kube flags take them: "15s", "1m30s", "250ms", "2h".
// Returns nothing for garbage, negative values or overflow.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// The checks client-go makes on a leader-election config:
// lease > renew deadline > 1.2 x retry period, all positive. Empty = valid.
std::string validate_leader_election(const LeaderElectionOptions& le);

std::string version_string();

}  // namespace toysched
