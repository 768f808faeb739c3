// The plugin registry: every plugin kube-scheduler v1.36.3 knows, one line
// each, in the order of its default profile (apis/config/v1's
// getDefaultPlugins with the default feature gates, then the plugins only a
// config can enable). Everything else about plugins comes from this list:
// PluginId and plugin_name (framework.hpp), the default profile
// (Profile::make_default), the names a --config may use and the points
// each extends, multiPoint's defaults, and the factory a profile calls.
//
// A line is one of
//
//   PLUGIN(id, Name, points, weight, default)   a plugin this build runs: a
//       sched::Plugin made by `make_<id>(const PluginArgs&)`, which its own
//       source file defines (src/sched/plugins/<id>.cpp)
//   BUILT_IN(Name, points, weight, default)     behaviour toy-scheduler has
//       built in, not a Plugin object (queue order, gates, preemption, bind)
//   REFUSED(Name, points, weight, default)      not implemented; its pods are
//       refused as unsupported constraints (FailedScheduling names the field)
//   ABSENT(Name, points, weight, default)       not implemented; a config that
//       enables it is refused
//
// `points`: the extension points upstream's plugin implements (bits of
// Point, `|`-joined with the kX constants below). `weight`: its weight in
// the default profile's multiPoint, 0 when upstream sets none (a Score
// plugin then weighs 1). `default`: in_default when the default profile has
// it, config_only when a config must enable it (a feature gate that is off
// by default in v1.36.3, or not in upstream's default list).
//
// Filters and scores run in this order (the multiPoint order), so the line
// order is behaviour: a node's rejection reasons come from the first filter
// that rejects it. test/unit/registry_test.cpp compares the default profile
// with upstream's, name by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace toysched::sched {

// The extension points of a profile's `plugins`, in upstream's order
// (KubeSchedulerProfile.Plugins; the last three are config keys, not points
// a plugin implements).
enum class Point : std::uint8_t {
  pre_enqueue,
  queue_sort,
  pre_filter,
  filter,
  post_filter,
  pre_score,
  score,
  reserve,
  permit,
  pre_bind,
  bind,
  post_bind,
  multi_point,
  placement_generate,
  placement_score,
};
inline constexpr std::size_t kPointCount = 15;
// The config's key for the point: "preFilter", "multiPoint"…
std::string_view point_name(Point p) noexcept;

constexpr std::uint32_t point_bit(Point p) noexcept { return 1U << static_cast<unsigned>(p); }

namespace points {
inline constexpr std::uint32_t kPreEnqueue = point_bit(Point::pre_enqueue), kQueueSort = point_bit(Point::queue_sort),
                               kPreFilter = point_bit(Point::pre_filter), kFilter = point_bit(Point::filter),
                               kPostFilter = point_bit(Point::post_filter), kPreScore = point_bit(Point::pre_score),
                               kScore = point_bit(Point::score), kReserve = point_bit(Point::reserve),
                               kPreBind = point_bit(Point::pre_bind), kBind = point_bit(Point::bind),
                               kPlacementGenerate = point_bit(Point::placement_generate),
                               kPlacementScore = point_bit(Point::placement_score);
inline constexpr std::uint32_t kFilterPair = kPreFilter | kFilter, kScorePair = kPreScore | kScore;
}  // namespace points

// clang-format off
#define TOYSCHED_PLUGINS(PLUGIN, BUILT_IN, REFUSED, ABSENT)                                                     \
  BUILT_IN(SchedulingGates, kPreEnqueue, 0, in_default)                                                        \
  BUILT_IN(PrioritySort, kQueueSort, 0, in_default)                                                            \
  PLUGIN(node_unschedulable, NodeUnschedulable, kFilter, 0, in_default)                                        \
  PLUGIN(node_name, NodeName, kFilter, 0, in_default)                                                          \
  PLUGIN(taint_toleration, TaintToleration, kFilter | kScorePair, 3, in_default)                               \
  PLUGIN(node_affinity, NodeAffinity, kFilterPair | kScorePair, 2, in_default)                                 \
  PLUGIN(node_ports, NodePorts, kFilterPair, 0, in_default)                                                    \
  PLUGIN(node_resources_fit, NodeResourcesFit, kFilterPair | kScorePair | kPlacementScore, 1, in_default)      \
  PLUGIN(volume_restrictions, VolumeRestrictions, kFilterPair, 0, in_default)                                  \
  PLUGIN(node_volume_limits, NodeVolumeLimits, kFilterPair, 0, in_default)                                     \
  PLUGIN(volume_binding, VolumeBinding, kFilterPair | kReserve | kPreBind | kScorePair, 0, in_default)         \
  PLUGIN(volume_zone, VolumeZone, kFilterPair, 0, in_default)                                                  \
  PLUGIN(pod_topology_spread, PodTopologySpread, kFilterPair | kScorePair, 2, in_default)                      \
  PLUGIN(inter_pod_affinity, InterPodAffinity, kFilterPair | kScorePair, 2, in_default)                        \
  REFUSED(DynamicResources, kPreEnqueue | kFilterPair | kPostFilter | kReserve | kPreBind | kScore, 2, in_default) \
  BUILT_IN(DefaultPreemption, kPreEnqueue | kPostFilter, 0, in_default)                                        \
  PLUGIN(balanced_allocation, NodeResourcesBalancedAllocation, kScorePair, 1, in_default)                      \
  PLUGIN(image_locality, ImageLocality, kScore, 1, in_default)                                                 \
  BUILT_IN(DefaultBinder, kBind, 0, in_default)                                                                \
  PLUGIN(node_declared_features, NodeDeclaredFeatures, kFilterPair, 0, in_default)                            \
  ABSENT(GangScheduling, kPreEnqueue, 0, config_only)                                                          \
  ABSENT(TopologyPlacementGenerator, kPlacementGenerate, 0, config_only)                                       \
  ABSENT(PodGroupPodsCount, kPlacementScore, 1, config_only)
// clang-format on

// Why a filter rejected a node, one line each: the Reason (framework.hpp)
// and upstream's text, word for word (users grep for it and `kubectl
// describe pod` shows it). One carries details and has no fixed text: the
// extended resources (FilterStatus::extended).
// clang-format off
#define TOYSCHED_REASONS(REASON)                                                                                \
  REASON(node_unschedulable, "node(s) were unschedulable")                                                      \
  REASON(node_name, "node(s) didn't match the requested node name")                                             \
  REASON(untolerated_taint, "node(s) had untolerated taint(s)")                                                 \
  REASON(node_affinity, "node(s) didn't match Pod's node affinity/selector")                                    \
  REASON(node_ports, "node(s) didn't have free ports for the requested pod ports")                              \
  REASON(too_many_pods, "Too many pods")                                                                        \
  REASON(insufficient_cpu, "Insufficient cpu")                                                                  \
  REASON(insufficient_memory, "Insufficient memory")                                                            \
  REASON(insufficient_ephemeral_storage, "Insufficient ephemeral-storage")                                      \
  REASON(insufficient_extended, "")                                                                             \
  /* a node NodeAffinity's PreFilter left out (matchFields metadata.name); upstream lists the PreFilter      */ \
  /* plugins that narrowed the nodes, and NodeAffinity is the only one we have                               */ \
  REASON(node_affinity_prefilter, "node(s) didn't satisfy plugin(s) [NodeAffinity]")                            \
  REASON(pod_affinity, "node(s) didn't match pod affinity rules")                                               \
  REASON(pod_anti_affinity, "node(s) didn't match pod anti-affinity rules")                                     \
  REASON(existing_anti_affinity, "node(s) didn't satisfy existing pods anti-affinity rules")                    \
  REASON(pod_topology_spread, "node(s) didn't match pod topology spread constraints")                           \
  REASON(pod_topology_spread_missing_label,                                                                     \
         "node(s) didn't match pod topology spread constraints (missing required label)")                       \
  REASON(disk_conflict, "node(s) had no available disk")                                                        \
  REASON(read_write_once_pod_conflict,                                                                          \
         "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "  \
         "another pod")                                                                                         \
  REASON(volume_node_affinity, "node(s) didn't match PersistentVolume's node affinity")                         \
  REASON(volume_bind_conflict, "node(s) didn't find available persistent volumes to bind")                      \
  REASON(volume_no_space, "node(s) did not have enough free storage")                                           \
  REASON(volume_missing, "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")           \
  REASON(volume_zone_conflict, "node(s) had no available volume zone")                                          \
  REASON(max_volume_count, "node(s) exceed max volume count")                                                   \
  REASON(node_declared_features, "node(s) didn't match Pod's required features")
// clang-format on

// The plugins this build runs, for statuses, logs and explain.
enum class PluginId : std::uint8_t {
  none,
#define TOYSCHED_ID(id, ...) id,
#define TOYSCHED_SKIP(...)
  TOYSCHED_PLUGINS(TOYSCHED_ID, TOYSCHED_SKIP, TOYSCHED_SKIP, TOYSCHED_SKIP)
#undef TOYSCHED_ID
#undef TOYSCHED_SKIP
};

// Upstream's plugin name ("NodeResourcesFit"); "" for none.
std::string_view plugin_name(PluginId p) noexcept;

class Plugin;
struct PluginArgs;  // plugin_args.hpp

// What a name stands for in this build (the four kinds of line above).
enum class PluginKind : std::uint8_t { ours, built_in, refused, absent };

// One line of the registry.
struct RegistryEntry {
  std::string_view name;
  std::uint32_t points;  // bits of Point
  PluginKind kind;
  std::int32_t default_weight;                         // upstream's multiPoint weight; 0: none set
  bool in_default;                                     // the default profile has it
  PluginId id;                                         // PluginId::none unless kind is ours
  std::unique_ptr<Plugin> (*make)(const PluginArgs&);  // nullptr unless ours
  bool implements(Point p) const noexcept { return (points & point_bit(p)) != 0; }
};

// Every line, in order.
struct Registry {
  const RegistryEntry* begin() const noexcept;
  const RegistryEntry* end() const noexcept;
};
inline constexpr Registry kRegistry{};

// The line for `name` (upstream's spelling), or nullptr.
const RegistryEntry* find_plugin(std::string_view name) noexcept;
// The line for one of ours.
const RegistryEntry& registry_entry(PluginId id) noexcept;

// The factories, one per PLUGIN line, each defined beside its plugin.
#define TOYSCHED_FACTORY(id, ...) std::unique_ptr<Plugin> make_##id(const PluginArgs& args);
#define TOYSCHED_SKIP(...)
TOYSCHED_PLUGINS(TOYSCHED_FACTORY, TOYSCHED_SKIP, TOYSCHED_SKIP, TOYSCHED_SKIP)
#undef TOYSCHED_FACTORY
#undef TOYSCHED_SKIP

}  // namespace toysched::sched
