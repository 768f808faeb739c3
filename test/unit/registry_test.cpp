// The plugin registry (registry.hpp): every line's factory makes its plugin,
// names find their lines, the default profile runs upstream's filters and
// scores in upstream's order, and — given kube-scheduler's own default
// profile as `kube-lab upstream-profile` prints it — ours matches it plugin
// for plugin, point for point, weight for weight, naming what we lack.
#include "toysched/sched/registry.hpp"
#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace toysched;
using sched::kRegistry;
using sched::PluginKind;
using sched::Point;
using sched::RegistryEntry;

TEST_CASE("every PLUGIN line's factory makes that plugin, under that name") {
  int ours = 0;
  for (const RegistryEntry& e : kRegistry) {
    CAPTURE(e.name);
    if (e.kind != PluginKind::ours) {
      CHECK(!e.make);
      CHECK(e.id == sched::PluginId::none);
      continue;
    }
    ++ours;
    const bool has_factory = e.make != nullptr;
    REQUIRE(has_factory);
    const auto plugin = e.make(sched::PluginArgs{});
    REQUIRE(plugin != nullptr);
    CHECK(plugin->id() == e.id);
    CHECK(plugin->name() == e.name);
    CHECK(sched::plugin_name(e.id) == e.name);
    CHECK(&sched::registry_entry(e.id) == &e);
  }
  CHECK(ours > 0);
}

TEST_CASE("names find their lines; an unknown name finds none") {
  for (const RegistryEntry& e : kRegistry) CHECK(sched::find_plugin(e.name) == &e);
  CHECK(sched::find_plugin("NodeResourceFit") == nullptr);
  CHECK(sched::find_plugin("") == nullptr);
  CHECK(sched::plugin_name(sched::PluginId::none).empty());
}

TEST_CASE("the default profile: upstream's filters and scores, in upstream's order, with its weights") {
  // v1.36.3's default multiPoint (getDefaultPlugins with the default
  // feature gates), in order: whether each filters, and its score weight
  // (0: no Score). The profile must run those of them this build has.
  struct Upstream {
    std::string name;
    bool filter;
    std::int64_t score_weight;
  };
  const std::vector<Upstream> upstream = {{"SchedulingGates", false, 0},
                                          {"PrioritySort", false, 0},
                                          {"NodeUnschedulable", true, 0},
                                          {"NodeName", true, 0},
                                          {"TaintToleration", true, 3},
                                          {"NodeAffinity", true, 2},
                                          {"NodePorts", true, 0},
                                          {"NodeResourcesFit", true, 1},
                                          {"VolumeRestrictions", true, 0},
                                          {"NodeVolumeLimits", true, 0},
                                          {"VolumeBinding", true, 1},
                                          {"VolumeZone", true, 0},
                                          {"PodTopologySpread", true, 2},
                                          {"InterPodAffinity", true, 2},
                                          {"DynamicResources", true, 2},
                                          {"DefaultPreemption", false, 0},
                                          {"NodeResourcesBalancedAllocation", false, 1},
                                          {"ImageLocality", false, 1},
                                          {"DefaultBinder", false, 0},
                                          {"NodeDeclaredFeatures", true, 0}};
  std::vector<std::string> filters;
  std::vector<std::pair<std::string, std::int64_t>> scores;
  for (const Upstream& u : upstream) {
    const RegistryEntry* e = sched::find_plugin(u.name);
    REQUIRE(e != nullptr);
    CHECK(e->in_default);
    if (e->kind != PluginKind::ours) continue;
    if (u.filter) filters.push_back(u.name);
    if (u.score_weight != 0) scores.emplace_back(u.name, u.score_weight);
  }
  const sched::Profile p = sched::Profile::make_default();
  std::vector<std::string> got_filters;
  for (const sched::Plugin* f : p.filters()) got_filters.emplace_back(f->name());
  std::vector<std::pair<std::string, std::int64_t>> got_scores;
  for (const auto& s : p.scorers()) got_scores.emplace_back(std::string(s.plugin->name()), s.weight);
  CHECK(got_filters == filters);
  CHECK(got_scores == scores);
  CHECK(p.preemption().has_value());
  // One instance per plugin, shared by its filter and its score.
  for (const auto& s : p.scorers())
    for (const sched::Plugin* f : p.filters())
      if (f->id() == s.plugin->id()) CHECK(f == s.plugin);
}

namespace {

// "PreFilter" (a Go field of upstream's Plugins) → our Point.
std::optional<Point> point_of(std::string_view go_field) {
  std::string key(go_field);
  if (key.empty()) return std::nullopt;
  key[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(key[0])));
  for (std::size_t i = 0; i < sched::kPointCount; ++i)
    if (sched::point_name(static_cast<Point>(i)) == key) return static_cast<Point>(i);
  return std::nullopt;
}

}  // namespace

// Needs TOYSCHED_UPSTREAM_PROFILE: the JSON `kube-lab upstream-profile`
// printed (test/meson.build runs it as the test `registry-upstream`).
TEST_CASE("upstream: our default profile is kube-scheduler v1.36.3's, and names what we lack") {
  const char* path = std::getenv("TOYSCHED_UPSTREAM_PROFILE");
  REQUIRE_MESSAGE(path != nullptr, "run as the meson test registry-upstream, which sets TOYSCHED_UPSTREAM_PROFILE");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.load(path).get(doc) == simdjson::SUCCESS);
  simdjson::dom::array profiles = doc.get_array();
  REQUIRE(profiles.size() == 1);
  simdjson::dom::element up = profiles.at(0);
  CHECK(std::string_view(up["schedulerName"]) == "default-scheduler");

  // multiPoint: the same names, in the same order, with the same weights.
  std::vector<std::pair<std::string, std::int64_t>> upstream_multi, ours_multi;
  for (simdjson::dom::element pl : up["multiPoint"].get_array()) {
    std::int64_t w = 0;
    if (pl["weight"].get(w) != simdjson::SUCCESS) w = 0;
    upstream_multi.emplace_back(std::string(std::string_view(pl["name"])), w);
  }
  std::vector<std::string> lacking;
  for (const RegistryEntry& e : kRegistry) {
    if (!e.in_default) continue;
    ours_multi.emplace_back(std::string(e.name), e.default_weight);
    if (e.kind == PluginKind::refused || e.kind == PluginKind::absent) lacking.emplace_back(e.name);
  }
  CHECK(ours_multi == upstream_multi);

  // Per extension point: the plugins upstream's framework runs there are
  // exactly the default ones whose registry line claims the point.
  std::set<std::pair<std::string, Point>> upstream_points, ours_points;
  for (auto [field, list] : up["points"].get_object()) {
    const auto point = point_of(field);
    CAPTURE(field);
    REQUIRE(point.has_value());
    for (simdjson::dom::element pl : list.get_array()) {
      const std::string name{std::string_view(pl["name"])};
      upstream_points.emplace(name, *point);
      if (*point == Point::score) {
        const RegistryEntry* e = sched::find_plugin(name);
        REQUIRE(e != nullptr);
        CAPTURE(name);
        CHECK(std::int64_t(pl["weight"]) == (e->default_weight == 0 ? 1 : e->default_weight));
      }
    }
  }
  for (const RegistryEntry& e : kRegistry) {
    if (!e.in_default) continue;
    for (std::size_t i = 0; i < sched::kPointCount; ++i)
      if (e.implements(static_cast<Point>(i))) ours_points.emplace(std::string(e.name), static_cast<Point>(i));
  }
  // Named one by one, so a failure says which plugin claims which point.
  for (const auto& [name, point] : upstream_points) {
    CAPTURE(name);
    CAPTURE(sched::point_name(point));
    CHECK_MESSAGE(ours_points.count({name, point}) == 1, "upstream runs it there; its registry line does not say so");
  }
  for (const auto& [name, point] : ours_points) {
    CAPTURE(name);
    CAPTURE(sched::point_name(point));
    CHECK_MESSAGE(upstream_points.count({name, point}) == 1, "its registry line claims a point upstream does not run");
  }

  std::string names;
  for (const auto& n : lacking) names += (names.empty() ? "" : ", ") + n;
  MESSAGE("upstream default plugins toy-scheduler lacks: " << names);
}
