// The live page's deltas (ui/feed.hpp): what a client is sent given what it
// was sent last. Parsed back with simdjson, as the page's JSON.parse would.
#include <doctest/doctest.h>

#include "toysched/ui/feed.hpp"

#include <simdjson.h>

#include <string>
#include <vector>

using namespace toysched;

namespace {

// The delta's keys under "set" (with their raw JSON), "del", and tick pods.
struct Parsed {
  bool reset = false;
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> del;
  std::vector<std::string> ticks;
};

Parsed parse(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(body);
  Parsed out;
  bool reset = false;
  if (doc["reset"].get(reset) == simdjson::SUCCESS) out.reset = reset;
  for (auto [k, v] : doc["set"].get_object()) out.set.emplace_back(std::string(k), simdjson::minify(v));
  for (auto v : doc["del"].get_array()) out.del.emplace_back(std::string_view(v.get_string()));
  for (auto v : doc["ticker"].get_array()) out.ticks.emplace_back(std::string_view(v["pod"].get_string()));
  return out;
}

}  // namespace

TEST_CASE("a reset sends every key; then only what changed, what went, and new ticks") {
  ui::Snapshot a = {{"node/n1", R"({"cpu":1000})"}, {"pod/d/a", R"({"node":"n1"})"}, {"queue", R"({"active":1})"}};
  std::string first = ui::delta_json({}, a, {}, true);
  Parsed p = parse(first);
  CHECK(p.reset);
  CHECK(p.set == a);
  CHECK(p.del.empty());

  SUBCASE("nothing changed, no tick: nothing to send") { CHECK(ui::delta_json(a, a, {}, false).empty()); }
  SUBCASE("a reset is sent even when nothing changed") { CHECK(parse(ui::delta_json(a, a, {}, true)).set == a); }
  SUBCASE("a changed value, a new key, a gone key") {
    ui::Snapshot b = {{"node/n1", R"({"cpu":1000})"},
                      {"node/n2", R"({"cpu":2000})"},
                      {"pod/d/b", R"({"node":"n2"})"},
                      {"queue", R"({"active":0})"}};
    Parsed d = parse(ui::delta_json(a, b, {}, false));
    CHECK_FALSE(d.reset);
    CHECK(d.set ==
          ui::Snapshot{{"node/n2", R"({"cpu":2000})"}, {"pod/d/b", R"({"node":"n2"})"}, {"queue", R"({"active":0})"}});
    CHECK(d.del == std::vector<std::string>{"pod/d/a"});
  }
  SUBCASE("ticks alone make a message") {
    std::vector<ui::Tick> ticks = {{7, 1700000000000, "lost", "d/a", "n2", "Operation cannot be fulfilled"},
                                   {8, 1700000000001, "bound", "d/b", "n1", ""}};
    Parsed d = parse(ui::delta_json(a, a, ticks, false));
    CHECK(d.set.empty());
    CHECK(d.ticks == std::vector<std::string>{"d/a", "d/b"});
  }
  SUBCASE("keys are escaped: a name with a quote stays one key") {
    ui::Snapshot q = {{"pod/d/\"x", "1"}};
    CHECK(parse(ui::delta_json({}, q, {}, true)).set == q);
  }
}
