#include "toysched/config/profiles.hpp"

#include "toysched/sched/plugins.hpp"

#include <algorithm>
#include <memory>

namespace toysched::config {
namespace {

constexpr std::uint32_t bit(Point p) { return 1U << static_cast<unsigned>(p); }

constexpr std::uint32_t kPreEnqueue = bit(Point::pre_enqueue), kQueueSort = bit(Point::queue_sort),
                        kPreFilter = bit(Point::pre_filter), kFilter = bit(Point::filter),
                        kPostFilter = bit(Point::post_filter), kPreScore = bit(Point::pre_score),
                        kScore = bit(Point::score), kReserve = bit(Point::reserve), kPreBind = bit(Point::pre_bind),
                        kBind = bit(Point::bind);

// What a name stands for here.
enum class Kind : std::uint8_t {
  ours,      // a sched::Plugin of this build
  built_in,  // behaviour toy-scheduler always has (queue order, gates, bind)
  refused,   // its pods are refused as unsupported constraints, so it has nothing to do
  absent,    // an upstream plugin toy-scheduler does not have: an error if enabled
};

struct Known {
  std::string_view name;
  std::uint32_t points;  // the extension points upstream's plugin implements
  Kind kind;
  sched::PluginId id = sched::PluginId::none;
};

using sched::PluginId;
constexpr std::uint32_t kFilterPair = kPreFilter | kFilter, kScorePair = kPreScore | kScore;
constexpr Known kKnown[] = {
    {"SchedulingGates", kPreEnqueue, Kind::built_in},
    {"PrioritySort", kQueueSort, Kind::built_in},
    {"NodeUnschedulable", kFilter, Kind::ours, PluginId::node_unschedulable},
    {"NodeName", kFilter, Kind::ours, PluginId::node_name},
    {"TaintToleration", kFilter | kScorePair, Kind::ours, PluginId::taint_toleration},
    {"NodeAffinity", kFilterPair | kScorePair, Kind::ours, PluginId::node_affinity},
    {"NodePorts", kFilterPair, Kind::ours, PluginId::node_ports},
    {"NodeResourcesFit", kFilterPair | kScorePair, Kind::ours, PluginId::node_resources_fit},
    {"VolumeRestrictions", kFilterPair, Kind::refused},
    {"NodeVolumeLimits", kFilterPair, Kind::refused},
    {"VolumeBinding", kFilterPair | kReserve | kPreBind | kScorePair, Kind::ours, PluginId::volume_binding},
    {"VolumeZone", kFilterPair, Kind::refused},
    {"PodTopologySpread", kFilterPair | kScorePair, Kind::ours, PluginId::pod_topology_spread},
    {"InterPodAffinity", kFilterPair | kScorePair, Kind::ours, PluginId::inter_pod_affinity},
    {"DynamicResources", kPreEnqueue | kFilterPair | kPostFilter | kReserve | kPreBind | kScorePair, Kind::refused},
    {"DefaultPreemption", kPostFilter, Kind::built_in},  // the profile's preemption() (preemption.hpp)
    {"NodeResourcesBalancedAllocation", kScorePair, Kind::ours, PluginId::balanced_allocation},
    {"ImageLocality", kScore, Kind::ours, PluginId::image_locality},
    {"DefaultBinder", kBind, Kind::built_in},
    {"NodeDeclaredFeatures", kPreEnqueue | kFilterPair, Kind::absent},
    {"GangScheduling", kPreEnqueue, Kind::absent},
    {"TopologyPlacementGenerator", 0, Kind::absent},
    {"PodGroupPodsCount", 0, Kind::absent},
};

const Known* known(std::string_view name) {
  for (const Known& k : kKnown)
    if (k.name == name) return &k;
  return nullptr;
}

// kube-scheduler v1.36's default profile with its default feature gates
// (DynamicResourceAllocation on), all under multiPoint.
PluginSet default_multi_point() {
  PluginSet s;
  for (auto [name, weight] :
       std::initializer_list<std::pair<std::string_view, int>>{{"SchedulingGates", 0},
                                                               {"PrioritySort", 0},
                                                               {"NodeUnschedulable", 0},
                                                               {"NodeName", 0},
                                                               {"TaintToleration", 3},
                                                               {"NodeAffinity", 2},
                                                               {"NodePorts", 0},
                                                               {"NodeResourcesFit", 1},
                                                               {"VolumeRestrictions", 0},
                                                               {"NodeVolumeLimits", 0},
                                                               {"VolumeBinding", 0},
                                                               {"VolumeZone", 0},
                                                               {"PodTopologySpread", 2},
                                                               {"InterPodAffinity", 2},
                                                               {"DynamicResources", 2},
                                                               {"DefaultPreemption", 0},
                                                               {"NodeResourcesBalancedAllocation", 1},
                                                               {"ImageLocality", 1},
                                                               {"DefaultBinder", 0}}) {
    PluginRef r{std::string(name), {}};
    if (weight != 0) r.weight = weight;
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
      const Known* k = known(m.name);
      if (k == nullptr) return "plugin \"" + m.name + "\" does not exist";
      if ((k->points & bit(point)) == 0 || own.disables(m.name)) continue;
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
      const Known* k = known(r.name);
      const std::string where = path + "." + std::string(point_name(point)) + ": plugin \"" + r.name + "\"";
      if (k == nullptr) return where + " does not exist";
      if (k->kind == Kind::absent) return where + ": toy-scheduler does not implement this plugin";
      if ((k->points & bit(point)) == 0)
        return where + " does not extend " + std::string(point_name(point)) + " plugin";
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
  for (const Known& k : kKnown) {
    if (k.kind != Kind::ours) continue;
    for (auto [pre, main] : {std::pair{Point::pre_filter, Point::filter}, std::pair{Point::pre_score, Point::score}}) {
      if ((k.points & bit(pre)) != 0 && has(r[main], k.name) && !has(r[pre], k.name))
        return path + ": toy-scheduler runs " + std::string(k.name) + "'s " + std::string(point_name(main)) +
               " only with its " + std::string(point_name(pre)) + ": enable both or disable both";
    }
  }
  return {};
}

std::unique_ptr<sched::Plugin> make_plugin(PluginId id, const PluginArgs& args) {
  switch (id) {
    case PluginId::node_unschedulable:
      return std::make_unique<sched::NodeUnschedulable>();
    case PluginId::node_name:
      return std::make_unique<sched::NodeName>();
    case PluginId::taint_toleration:
      return std::make_unique<sched::TaintToleration>();
    case PluginId::node_affinity:
      return std::make_unique<sched::NodeAffinity>();
    case PluginId::node_ports:
      return std::make_unique<sched::NodePorts>();
    case PluginId::node_resources_fit:
      return std::make_unique<sched::NodeResourcesFit>(args.fit);
    case PluginId::balanced_allocation:
      return std::make_unique<sched::BalancedAllocation>();
    case PluginId::image_locality:
      return std::make_unique<sched::ImageLocality>();
    case PluginId::pod_topology_spread:
      return std::make_unique<sched::PodTopologySpread>(args.spread_system_defaulting);
    case PluginId::inter_pod_affinity:
      return std::make_unique<sched::InterPodAffinity>(args.hard_pod_affinity_weight);
    case PluginId::volume_binding:
      return std::make_unique<sched::VolumeBinding>();
    case PluginId::none:
      break;
  }
  return nullptr;
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
    const Known* k = known(ref.name);
    if (k == nullptr || k->kind != Kind::ours) return nullptr;
    if (sched::Plugin* existing = profile.find(k->id)) return existing;
    return &profile.add(make_plugin(k->id, p.args));
  };
  for (const PluginRef& f : r[Point::filter])
    if (sched::Plugin* plugin = instance(f)) profile.enable_filter(*plugin);
  for (const PluginRef& s : r[Point::score])
    if (sched::Plugin* plugin = instance(s)) profile.enable_score(*plugin, *s.weight);
  profile.set_preemption(has(r[Point::post_filter], "DefaultPreemption") ? std::optional(p.args.preemption)
                                                                         : std::nullopt);
  return profile;
}

}  // namespace toysched::config
