// From a profile of the config to the sched::Profile the scheduler runs:
// kube-scheduler's defaulting (the default plugins merged with the
// profile's, as apis/config/v1/default_plugins.go mergePlugins) and its
// framework's expansion of `multiPoint` into the extension points each
// plugin implements (framework/runtime/framework.go), then the plugins
// made with the profile's args.
//
// Plugin names are upstream's. The default profile also names plugins
// whose behaviour toy-scheduler has built in (PrioritySort: the queue's
// order; SchedulingGates: gated pods wait; DefaultBinder: the bind) or
// whose pods it refuses (the volume plugins, DynamicResources: pods with
// PVCs or resource claims stay pending with a FailedScheduling event
// unless --ignore-unsupported-constraints); DefaultPreemption, the
// PostFilter, is the profile's preemption() and its args. Enabling any
// other plugin is an error naming it.
#pragma once

#include "toysched/config/scheduler_config.hpp"
#include "toysched/sched/profile.hpp"

#include <string>
#include <variant>
#include <vector>

namespace toysched::config {

// The enabled plugins of each extension point, in order, after merging
// and multiPoint expansion; score weights resolved (unset or 0 → 1).
struct ResolvedPlugins {
  std::array<std::vector<PluginRef>, kPointCount> at{};
  const std::vector<PluginRef>& operator[](Point p) const noexcept { return at[static_cast<std::size_t>(p)]; }
  std::vector<PluginRef>& operator[](Point p) noexcept { return at[static_cast<std::size_t>(p)]; }
};

// The plugins of profile `index` (for error paths), or why not.
std::variant<ResolvedPlugins, std::string> resolve_plugins(const ProfileConfig& p, std::size_t index);

// The scheduler's profile for `p`, or the one line why it cannot run.
std::variant<sched::Profile, std::string> build_profile(const ProfileConfig& p, std::size_t index);

}  // namespace toysched::config
