#include "toysched/config/profiles.hpp"

#include "toysched/sched/registry.hpp"

#include <algorithm>
#include <memory>

namespace toysched::config {
namespace {

using sched::PluginKind;
using sched::RegistryEntry;

// kube-scheduler v1.36's default profile with its default feature gates,
// all under multiPoint: the registry's lines that are in it, in order.
PluginSet default_multi_point() {
  PluginSet s;
  for (const RegistryEntry& e : sched::kRegistry) {
    if (!e.in_default) continue;
    PluginRef r{std::string(e.name), {}};
    if (e.default_weight != 0) r.weight = e.default_weight;
    s.enabled.push_back(std::move(r));
  }
  return s;
}

bool has(const std::vector<PluginRef>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const PluginRef& r) { return r.name == name; });
}

// mergePluginSet: the defaults minus the disabled ones ("*": all), a
// default the custom set enables again replaced in place by its entry,
// then the custom set's other plugins.
PluginSet merge(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  out.disabled = custom.disabled;
  out.disabled.insert(out.disabled.end(), defaults.disabled.begin(), defaults.disabled.end());
  std::vector<bool> used(custom.enabled.size(), false);
  if (!custom.disables("*")) {
    for (const PluginRef& d : defaults.enabled) {
      if (custom.disables(d.name)) continue;
      auto it = std::find_if(custom.enabled.begin(), custom.enabled.end(),
                             [&](const PluginRef& c) { return c.name == d.name; });
      if (it == custom.enabled.end()) {
        out.enabled.push_back(d);
      } else {
        used[static_cast<std::size_t>(it - custom.enabled.begin())] = true;
        out.enabled.push_back(*it);
      }
    }
  }
  for (std::size_t i = 0; i < custom.enabled.size(); ++i)
    if (!used[i]) out.enabled.push_back(custom.enabled[i]);
  return out;
}

// The framework's multiPoint expansion for one point: plugins enabled at
// the point itself that multiPoint also names come first (an explicit
// override), then multiPoint's others that implement the point and are
// not disabled there, then the rest of the point's own.
std::variant<std::vector<PluginRef>, std::string> expand(Point point, const PluginSet& own, const PluginSet& multi) {
  std::vector<PluginRef> overrides, from_multi, rest;
  if (!own.disables("*")) {
    for (const PluginRef& m : multi.enabled) {
      const RegistryEntry* k = sched::find_plugin(m.name);
      if (k == nullptr) return "plugin \"" + m.name + "\" does not exist";
      if (!k->implements(point) || own.disables(m.name)) continue;
      if (has(own.enabled, m.name)) {
        if (!has(overrides, m.name))
          overrides.push_back(*std::find_if(own.enabled.begin(), own.enabled.end(),
                                            [&](const PluginRef& r) { return r.name == m.name; }));
        continue;
      }
      if (has(from_multi, m.name))
        return "plugin \"" + m.name + "\" already registered as \"" + std::string(point_name(point)) + "\"";
      from_multi.push_back(m);
    }
  }
  for (const PluginRef& r : own.enabled)
    if (!has(overrides, r.name)) rest.push_back(r);
  overrides.insert(overrides.end(), from_multi.begin(), from_multi.end());
  overrides.insert(overrides.end(), rest.begin(), rest.end());
  return overrides;
}

}  // namespace

std::variant<ResolvedPlugins, std::string> resolve_plugins(const ProfileConfig& p, std::size_t index) {
  const std::string path = "profiles[" + std::to_string(index) + "].plugins";
  Plugins merged;
  merged[Point::multi_point] = default_multi_point();
  if (p.plugins) {
    for (std::size_t i = 0; i < kPointCount; ++i) merged.at[i] = merge(merged.at[i], p.plugins->at[i]);
  }
  ResolvedPlugins out;
  for (std::size_t i = 0; i < kPointCount; ++i) {
    const auto point = static_cast<Point>(i);
    if (point == Point::multi_point) continue;
    auto list = expand(point, merged[point], merged[Point::multi_point]);
    if (auto* err = std::get_if<std::string>(&list)) return path + ": " + *err;
    for (PluginRef& r : std::get<std::vector<PluginRef>>(list)) {
      const RegistryEntry* k = sched::find_plugin(r.name);
      const std::string where = path + "." + std::string(point_name(point)) + ": plugin \"" + r.name + "\"";
      if (k == nullptr) return where + " does not exist";
      if (k->kind == PluginKind::absent) return where + ": toy-scheduler does not implement this plugin";
      if (!k->implements(point)) return where + " does not extend " + std::string(point_name(point)) + " plugin";
      // The point's own entry gives the weight, else multiPoint's
      // (expand kept whichever applies); unset or 0 is 1, as upstream.
      if (point == Point::score && (!r.weight || *r.weight == 0)) r.weight = 1;
    }
    out[point] = std::move(std::get<std::vector<PluginRef>>(list));
  }
  return out;
}

namespace {

std::string check_points(const ResolvedPlugins& r, const std::string& path) {
  const auto& sort = r[Point::queue_sort];
  if (sort.size() != 1)
    return path + ".queueSort: Invalid value: " + std::to_string(sort.size()) +
           ": only one queue sort plugin can be enabled";
  if (r[Point::bind].empty()) return path + ".bind: at least one bind plugin is needed";
  if (!has(r[Point::pre_enqueue], "SchedulingGates"))
    return path +
           ".preEnqueue: toy-scheduler always keeps scheduling-gated pods waiting; SchedulingGates cannot be "
           "disabled";
  // Our plugins' Filter reads what their PreFilter computed, and Score
  // what PreScore did (framework.hpp), so the later point cannot run
  // without the earlier. The earlier alone only prepares what no one
  // reads: harmless, and skipped.
  for (const RegistryEntry& k : sched::kRegistry) {
    if (k.kind != PluginKind::ours) continue;
    for (auto [pre, main] : {std::pair{Point::pre_filter, Point::filter}, std::pair{Point::pre_score, Point::score}}) {
      if (k.implements(pre) && has(r[main], k.name) && !has(r[pre], k.name))
        return path + ": toy-scheduler runs " + std::string(k.name) + "'s " + std::string(point_name(main)) +
               " only with its " + std::string(point_name(pre)) + ": enable both or disable both";
    }
  }
  return {};
}

}  // namespace

std::variant<sched::Profile, std::string> build_profile(const ProfileConfig& p, std::size_t index) {
  auto resolved = resolve_plugins(p, index);
  if (auto* err = std::get_if<std::string>(&resolved)) return *err;
  const auto& r = std::get<ResolvedPlugins>(resolved);
  if (auto why = check_points(r, "profiles[" + std::to_string(index) + "].plugins"); !why.empty()) return why;
  sched::Profile profile;
  // One instance per plugin, shared by its filter and its score.
  auto instance = [&](const PluginRef& ref) -> sched::Plugin* {
    const RegistryEntry* k = sched::find_plugin(ref.name);
    if (k == nullptr || k->kind != PluginKind::ours) return nullptr;
    return &profile.instance(k->id, p.args);
  };
  for (const PluginRef& f : r[Point::filter])
    if (sched::Plugin* plugin = instance(f)) profile.enable_filter(*plugin);
  for (const PluginRef& s : r[Point::score])
    if (sched::Plugin* plugin = instance(s)) profile.enable_score(*plugin, *s.weight);
  profile.set_preemption(has(r[Point::post_filter], "DefaultPreemption") ? std::optional(p.args.preemption)
                                                                         : std::nullopt);
  profile.set_post_filter(!r[Point::post_filter].empty());
  return profile;
}

}  // namespace toysched::config
