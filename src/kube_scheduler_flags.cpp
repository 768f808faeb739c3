// kube-scheduler v1.36's command line, beyond the flags options.cpp reads:
// a kube-scheduler command line from kubeadm, a Helm chart or a manifest
// must start toy-scheduler, not stop it at the first flag it does not know.
// Flags whose behaviour we have are honoured; the others are accepted, and
// named in one warning line when given, so nothing is silently dropped.
// The names are upstream's (cmd/kube-scheduler, `kube-scheduler --help`);
// the sched-kube-scheduler-flags test compares them with the pinned
// release's own list.
#include "options_detail.hpp"

#include <array>

#include "toysched/log/log.hpp"

namespace toysched::detail {
namespace {

// Flags taking a value that toy-scheduler has no use for.
constexpr std::array kIgnoredValueFlags{
    "--allow-metric-labels",
    "--allow-metric-labels-manifest",
    "--cert-dir",
    "--client-ca-file",
    "--disabled-metrics",
    "--emulated-version",
    "--feature-gates",
    "--http2-max-streams-per-connection",
    "--kube-api-content-type",
    "--log-json-info-buffer-size",
    "--log-text-info-buffer-size",
    "--master",
    "--min-compatibility-version",
    "--requestheader-allowed-names",
    "--requestheader-client-ca-file",
    "--requestheader-extra-headers-prefix",
    "--requestheader-group-headers",
    "--requestheader-uid-headers",
    "--requestheader-username-headers",
    "--show-hidden-metrics-for-version",
    "--tls-cipher-suites",
    "--tls-curve-preferences",
    "--tls-min-version",
    "--tls-sni-cert-key",
    "--write-config-to",
};

// Boolean flags toy-scheduler has no use for.
constexpr std::array kIgnoredBoolFlags{
    "--authentication-skip-lookup", "--authentication-tolerate-lookup-failure",
    "--contention-profiling",       "--log-json-split-stream",
    "--log-text-split-stream",      "--permit-address-sharing",
    "--permit-port-sharing",        "--profiling",
};

}  // namespace

void add_kube_scheduler_flags(CLI::App& app, Options& o) {
  auto* group = "kube-scheduler flags";
  app.add_option("--logging-format", o.logging_format, "Log format: text (klog's) or json (klog's JSON lines).")
      ->check(CLI::IsMember({"text", "json"}))
      ->group(group);
  app.add_option("--vmodule", o.vmodule,
                 "pattern=N,... : the level for source files matching pattern (a glob on the file's name without "
                 "extension, or its path when it has a '/').")
      ->group(group);
  app.add_option("--leader-elect-resource-lock", o.leader_election_resource_lock,
                 "The lock object type; only leases, as kube-scheduler v1.36.")
      ->check(CLI::IsMember({"leases"}))
      ->group(group);
  app.add_option("--authorization-always-allow-paths", o.authorization_always_allow_paths,
                 "Paths served without authorization (a token sent must still be good).")
      ->delimiter(',')
      ->group(group);
  add_duration(app, "--pod-max-in-unschedulable-pods-duration", o.pod_max_in_unschedulable,
               "How long an unschedulable pod waits before it is tried again without a cluster event. [5m]")
      ->group(group);
  // Each line is written as it is logged: there is nothing to flush.
  app.add_option("--log-flush-frequency", o.unused_flag_values, "Accepted; every log line is written at once.")
      ->group(group);
  // We serve HTTP/1.1 only: HTTP/2 is off whatever this says.
  app.add_flag("--disable-http2-serving", o.unused_flag, "Accepted; toy-scheduler serves HTTP/1.1 only.")->group(group);
  for (const char* name : kIgnoredValueFlags)
    app.add_option(name, o.unused_flag_values, "Accepted and ignored (named in a warning).")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->group(group);
  for (const char* name : kIgnoredBoolFlags)
    app.add_flag(name, o.unused_flag, "Accepted and ignored (named in a warning).")->group(group);
}

std::string finish_kube_scheduler_flags(const CLI::App& app, Options& o) {
  if (auto why = log::set_vmodule(o.vmodule, /*apply=*/false); !why.empty()) return "--vmodule: " + why;
  std::string given;
  auto note = [&](const char* name) {
    if (app.count(name) > 0) given += std::string(given.empty() ? "" : ", ") + name;
  };
  for (const char* name : kIgnoredValueFlags) note(name);
  for (const char* name : kIgnoredBoolFlags) note(name);
  if (!given.empty())
    o.warnings.push_back(
        "these kube-scheduler flags are accepted and ignored: toy-scheduler does not implement them: " + given);
  return {};
}

}  // namespace toysched::detail
