// The live page's deltas (ui/feed.hpp): what a client is sent in a round,
// given the digests it was sent before. Parsed back with simdjson, as the
// page's JSON.parse would.
#include <doctest/doctest.h>

#include "toysched/ui/feed.hpp"

#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

using namespace toysched;

namespace {

struct Parsed {
  bool reset = false;
  std::map<std::string, std::string> set;  // key -> the value's JSON
  std::vector<std::string> del;
  std::vector<std::string> ticks;  // their pods
};

Parsed parse(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(body);
  Parsed out;
  bool reset = false;
  if (doc["reset"].get(reset) == simdjson::SUCCESS) out.reset = reset;
  for (auto [k, v] : doc["set"].get_object()) out.set.emplace(std::string(k), simdjson::minify(v));
  for (auto v : doc["del"].get_array()) out.del.emplace_back(std::string_view(v.get_string()));
  for (auto v : doc["ticker"].get_array()) out.ticks.emplace_back(std::string_view(v["pod"].get_string()));
  return out;
}

// One round offering `state` (key -> a number, its own digest and value).
std::string round(ui::ClientView& view, const std::map<std::string, std::int64_t>& state, bool reset,
                  std::vector<ui::Tick> ticks = {}) {
  ui::Delta d(view, reset);
  for (const auto& [k, v] : state) {
    ui::Digest dg;
    dg.add(v);
    d.offer(k, dg.value(), [&](json::Writer& w) { w.object().field("v", v).end(); });
  }
  return std::move(d).finish(ticks);
}

}  // namespace

TEST_CASE("a reset sends every key; then only what changed, what went, and new ticks") {
  ui::ClientView view;
  std::map<std::string, std::int64_t> a = {{"node/n1", 1000}, {"pod/d/a", 1}, {"queue", 0}};
  Parsed first = parse(round(view, a, true));
  CHECK(first.reset);
  CHECK(first.set == std::map<std::string, std::string>{
                         {"node/n1", R"({"v":1000})"}, {"pod/d/a", R"({"v":1})"}, {"queue", R"({"v":0})"}});
  CHECK(first.del.empty());

  SUBCASE("nothing changed, no tick: nothing to send") { CHECK(round(view, a, false).empty()); }
  SUBCASE("a reset is sent whole even when nothing changed, and deletes nothing") {
    Parsed again = parse(round(view, a, true));
    CHECK(again.set.size() == 3);
    CHECK(again.del.empty());
  }
  SUBCASE("a changed value, a new key, a gone key") {
    std::map<std::string, std::int64_t> b = {{"node/n1", 1000}, {"node/n2", 2000}, {"pod/d/b", 2}, {"queue", 1}};
    Parsed d = parse(round(view, b, false));
    CHECK_FALSE(d.reset);
    CHECK(d.set == std::map<std::string, std::string>{
                       {"node/n2", R"({"v":2000})"}, {"pod/d/b", R"({"v":2})"}, {"queue", R"({"v":1})"}});
    CHECK(d.del == std::vector<std::string>{"pod/d/a"});
    SUBCASE("a gone key is deleted once") { CHECK(round(view, b, false).empty()); }
    SUBCASE("and may come back") {
      b["pod/d/a"] = 1;
      CHECK(parse(round(view, b, false)).set == std::map<std::string, std::string>{{"pod/d/a", R"({"v":1})"}});
    }
  }
  SUBCASE("ticks alone make a message") {
    std::vector<ui::Tick> ticks = {{7, 1700000000000, "lost", "d/a", "n2", "Operation cannot be fulfilled"},
                                   {8, 1700000000001, "bound", "d/b", "n1", ""}};
    Parsed d = parse(round(view, a, false, ticks));
    CHECK(d.set.empty());
    CHECK(d.ticks == std::vector<std::string>{"d/a", "d/b"});
  }
  SUBCASE("two clients keep their own record") {
    ui::ClientView other;
    CHECK(parse(round(other, a, true)).set.size() == 3);
    a["queue"] = 5;
    CHECK(parse(round(view, a, false)).set.size() == 1);
    CHECK(parse(round(other, a, false)).set.size() == 1);
  }
}

TEST_CASE("keys are escaped: a name with a quote stays one key") {
  ui::ClientView view;
  CHECK(parse(round(view, {{"pod/d/\"x", 1}}, true)).set.count("pod/d/\"x") == 1);
}

TEST_CASE("digests tell apart what a plain concatenation would not") {
  auto of = [](std::string_view a, std::string_view b) { return ui::Digest().add(a).add(b).value(); };
  CHECK(of("ab", "c") != of("a", "bc"));
  CHECK(of("a", "") != of("", "a"));
  CHECK(ui::Digest().add(std::int64_t{1}).value() != ui::Digest().add(std::int64_t{256}).value());
  CHECK(of("x", "y") == of("x", "y"));
}
