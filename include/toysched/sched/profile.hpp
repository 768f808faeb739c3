// A scheduling profile: which plugins run at which extension point, in
// which order, with which score weights (upstream's KubeSchedulerProfile
// after defaulting). make_default is kube-scheduler's default profile, made
// from the registry (registry.hpp: its order is upstream's filter and score
// order, its weights the default ones); config/profiles.hpp makes the
// profiles of a `--config` file.
#pragma once

#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace toysched::sched {

struct WeightedPlugin {
  Plugin* plugin = nullptr;
  std::int64_t weight = 1;
};

class Profile {
 public:
  // kube-scheduler's default profile, with the plugins this build has and
  // `args` (NodeResourcesFit's scoring strategy must pass validate_fit_args
  // first: invalid args throw std::invalid_argument).
  static Profile make_default(const PluginArgs& args = {});

  Profile() = default;
  Profile(Profile&&) noexcept = default;
  Profile& operator=(Profile&&) noexcept = default;

  // Takes ownership; the plugin then runs at the points it is enabled for.
  Plugin& add(std::unique_ptr<Plugin> p);
  // The profile's instance of plugin `id`, made by its registry factory
  // with `args` the first time: a plugin's filter and score share one.
  Plugin& instance(PluginId id, const PluginArgs& args);
  void enable_filter(Plugin& p) { filters_.push_back(&p); }
  void enable_score(Plugin& p, std::int64_t weight) { scorers_.push_back({&p, weight}); }

  std::span<Plugin* const> filters() const noexcept { return filters_; }
  std::span<const WeightedPlugin> scorers() const noexcept { return scorers_; }
  Plugin* find(PluginId id) const noexcept;

  // DefaultPreemption (PostFilter), on in the default profile; unset: a
  // pod that fits nowhere preempts nothing (preemption.hpp).
  const std::optional<PreemptionArgs>& preemption() const noexcept { return preemption_; }
  void set_preemption(std::optional<PreemptionArgs> args) { preemption_ = args; }
  // Whether any PostFilter plugin is enabled: DefaultPreemption, or
  // DynamicResources' alone (which toy-scheduler does not run: for the pods
  // it decides, those without claims, it nominates nothing). A profile with
  // none ends a failed pod's nomination, as upstream's (schedule_one.go).
  bool post_filter() const noexcept { return post_filter_; }
  void set_post_filter(bool any) { post_filter_ = any; }

  // Reserve, for a pod decided onto `ni`: each filter plugin, in order,
  // assumes what it needs and says what its PreBind must do (pre_bind.hpp).
  std::vector<std::unique_ptr<PreBind>> reserve(const kube::Pod& pod, const NodeInfo& ni, const Cluster& cluster) const;

  // Every filter of this profile on one node, PreFilter included, as a
  // decision would run them (tests and reports; the cycle never calls it).
  // PreFilter sees a cluster of that one node: PodTopologySpread then
  // counts the pods of that node only.
  FilterStatus filter_one(const kube::Pod& pod, const NodeInfo& ni) const;

 private:
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<Plugin*> filters_;
  std::vector<WeightedPlugin> scorers_;
  std::optional<PreemptionArgs> preemption_ = PreemptionArgs{};
  bool post_filter_ = true;
};

}  // namespace toysched::sched
