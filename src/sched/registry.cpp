// The registry's table, expanded from the one list in registry.hpp.
#include "toysched/sched/registry.hpp"

#include "toysched/sched/framework.hpp"

#include <array>

namespace toysched::sched {
namespace {

using namespace points;  // the kX point bits the list names
constexpr bool in_default = true, config_only = false;

constexpr RegistryEntry kEntries[] = {
#define TOYSCHED_OURS(id, Name, pts, weight, def) {#Name, pts, PluginKind::ours, weight, def, PluginId::id, &make_##id},
#define TOYSCHED_BUILT_IN(Name, pts, weight, def) \
  {#Name, pts, PluginKind::built_in, weight, def, PluginId::none, nullptr},
#define TOYSCHED_REFUSED(Name, pts, weight, def) \
  {#Name, pts, PluginKind::refused, weight, def, PluginId::none, nullptr},
#define TOYSCHED_ABSENT(Name, pts, weight, def) {#Name, pts, PluginKind::absent, weight, def, PluginId::none, nullptr},
    TOYSCHED_PLUGINS(TOYSCHED_OURS, TOYSCHED_BUILT_IN, TOYSCHED_REFUSED, TOYSCHED_ABSENT)
#undef TOYSCHED_OURS
#undef TOYSCHED_BUILT_IN
#undef TOYSCHED_REFUSED
#undef TOYSCHED_ABSENT
};

// PluginId → its line, built once from the table (ids count from 1).
constexpr auto kById = [] {
  std::array<const RegistryEntry*, std::size(kEntries) + 1> by_id{};
  for (const RegistryEntry& e : kEntries)
    if (e.kind == PluginKind::ours) by_id[static_cast<std::size_t>(e.id)] = &e;
  return by_id;
}();

}  // namespace

std::string_view point_name(Point p) noexcept {
  static constexpr std::array<std::string_view, kPointCount> names{
      "preEnqueue", "queueSort", "preFilter", "filter",   "postFilter", "preScore",          "score",         "reserve",
      "permit",     "preBind",   "bind",      "postBind", "multiPoint", "placementGenerate", "placementScore"};
  return names[static_cast<std::size_t>(p)];
}

const RegistryEntry* Registry::begin() const noexcept { return std::begin(kEntries); }
const RegistryEntry* Registry::end() const noexcept { return std::end(kEntries); }

const RegistryEntry* find_plugin(std::string_view name) noexcept {
  for (const RegistryEntry& e : kEntries)
    if (e.name == name) return &e;
  return nullptr;
}

const RegistryEntry& registry_entry(PluginId id) noexcept { return *kById[static_cast<std::size_t>(id)]; }

std::string_view plugin_name(PluginId p) noexcept { return p == PluginId::none ? "" : registry_entry(p).name; }

}  // namespace toysched::sched
