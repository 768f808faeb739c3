// `--config FILE`: kube-scheduler's KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1), decoded strictly and validated as
// kube-scheduler does (pkg/scheduler/apis/config/validation), with v1's
// defaults (apis/config/v1/defaults.go) applied. Fields we have no use for
// but that are harmless (enableProfiling, contentType…) are read and
// ignored; fields that would change behaviour we do not have (extenders,
// args of plugins we do not implement) are refused with a line naming them,
// so a config never means less than its author thinks.
//
// The result is plain data: profiles.hpp turns each profile into the
// sched::Profile the scheduler runs.
#pragma once

#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/profile.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace toysched::config {

// The extension points of a profile's `plugins` (the registry's).
using sched::kPointCount;
using sched::Point;
using sched::point_name;

struct PluginRef {
  std::string name;
  std::optional<std::int32_t> weight;
  friend bool operator==(const PluginRef&, const PluginRef&) = default;
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;
  bool disables(std::string_view name) const noexcept;  // by name or "*"
};

struct Plugins {
  std::array<PluginSet, kPointCount> at{};
  PluginSet& operator[](Point p) noexcept { return at[static_cast<std::size_t>(p)]; }
  const PluginSet& operator[](Point p) const noexcept { return at[static_cast<std::size_t>(p)]; }
};

// The pluginConfig args toy-scheduler acts on, v1-defaulted
// (config/plugin_args.cpp decodes them).
using sched::PluginArgs;

struct ProfileConfig {
  std::string scheduler_name;  // empty until v1 defaulting names a lone profile default-scheduler
  std::optional<std::int32_t> percentage_of_nodes_to_score;
  std::optional<Plugins> plugins;  // absent: the default plugins as they are
  PluginArgs args;
};

// componentbase's LeaderElectionConfiguration, with kube-scheduler's v1
// defaults: a config file elects a leader unless it says otherwise.
struct LeaderElectionConfig {
  bool leader_elect = true;
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
};

struct ClientConnectionConfig {
  std::string kubeconfig;  // empty: $KUBECONFIG, then in-cluster
  double qps = 50;
  std::int32_t burst = 100;
};

struct SchedulerConfig {
  std::int32_t parallelism = 16;
  LeaderElectionConfig leader_election;
  ClientConnectionConfig client_connection;
  std::int32_t percentage_of_nodes_to_score = 0;
  std::int64_t pod_initial_backoff_seconds = 1;
  std::int64_t pod_max_backoff_seconds = 10;
  std::vector<ProfileConfig> profiles;  // never empty once loaded: default-scheduler
};

// A config, or the one line that says what is wrong with it (upstream's
// field path and words where it has them).
using LoadResult = std::variant<SchedulerConfig, std::string>;

LoadResult parse_scheduler_config(std::string_view yaml);
// Reads at most 1 MiB: a config is a few kilobytes, and a wrong path
// (a device, a log file) must not be read whole.
LoadResult load_scheduler_config(const std::string& path);

// The checks of validation.go on a decoded config (parse_ calls it): "" when
// valid, else the first error.
std::string validate(const SchedulerConfig& c);

}  // namespace toysched::config
