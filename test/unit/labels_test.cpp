// Label selector matching (labels.hpp). The tables follow upstream's tests
// in k8s.io/apimachinery v0.36.3: pkg/apis/meta/v1/helpers_test.go
// (TestLabelSelectorAsSelector) and pkg/labels/selector_test.go
// (TestSelectorMatches, TestRequirementSelectorMatching, TestSetMatches,
// TestEverything), restated with our types.
#include "toysched/kube/labels.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace toysched::kube;

namespace {

NodeSelectorRequirement req(std::string key, SelectorOp op, std::vector<std::string> values = {}) {
  return {std::move(key), op, std::move(values)};
}

LabelSelector exprs(std::vector<NodeSelectorRequirement> e) { return LabelSelector{{}, std::move(e)}; }

}  // namespace

TEST_CASE("labels: LabelSelectorAsSelector's cases (helpers_test.go TestLabelSelectorAsSelector)") {
  const StringPairs foo_bar_baz_qux = {{"foo", "bar"}, {"baz", "qux"}};
  const StringPairs foo_bar_only = {{"foo", "bar"}};
  const StringPairs baz_norf_only = {{"baz", "norf"}};
  const LabelSelector match_labels{{{"foo", "bar"}}, {}};
  const LabelSelector match_exprs = exprs({req("baz", SelectorOp::in, {"qux", "norf"})});
  const LabelSelector both{{{"foo", "bar"}}, {req("baz", SelectorOp::in, {"qux", "norf"})}};

  // nil → labels.Nothing(): matches no label set, not even an empty one.
  CHECK_FALSE(selector_matches(std::optional<LabelSelector>{}, foo_bar_baz_qux));
  CHECK_FALSE(selector_matches(std::optional<LabelSelector>{}, StringPairs{}));
  // {} → labels.Everything().
  CHECK(selector_matches(LabelSelector{}, foo_bar_baz_qux));
  CHECK(selector_matches(LabelSelector{}, StringPairs{}));
  CHECK(selector_matches(std::optional<LabelSelector>{LabelSelector{}}, StringPairs{}));
  // "foo=bar"
  CHECK(selector_matches(match_labels, foo_bar_only));
  CHECK_FALSE(selector_matches(match_labels, baz_norf_only));
  // "baz in (norf,qux)"
  CHECK(selector_matches(match_exprs, baz_norf_only));
  CHECK(selector_matches(match_exprs, foo_bar_baz_qux));
  CHECK_FALSE(selector_matches(match_exprs, foo_bar_only));
  // "baz in (norf,qux),foo=bar"
  CHECK(selector_matches(both, foo_bar_baz_qux));
  CHECK_FALSE(selector_matches(both, foo_bar_only));
  CHECK_FALSE(selector_matches(both, baz_norf_only));
  // Exists with values is an error upstream: the selector matches nothing.
  const StringPairs baz_present = {{"baz", "qux"}};
  CHECK_FALSE(selector_matches(exprs({req("baz", SelectorOp::exists, {"qux", "norf"})}), baz_present));
  CHECK(selector_matches(exprs({req("baz", SelectorOp::exists)}), baz_present));
}

TEST_CASE("labels: invalid selectors match nothing (LabelSelectorAsSelector and NewRequirement errors)") {
  const StringPairs labels = {{"x", "1"}, {"y", "2"}};
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::in)}), labels));      // In without values
  CHECK_FALSE(selector_matches(exprs({req("z", SelectorOp::not_in)}), labels));  // NotIn without values
  CHECK_FALSE(selector_matches(exprs({req("z", SelectorOp::does_not_exist, {"a"})}), labels));
  // Gt/Lt are node-selector operators only; "not a valid label selector operator".
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::gt, {"0"})}), labels));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::lt, {"5"})}), labels));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::unknown, {"1"})}), labels));
  // One invalid expression voids the selector, whatever the others say,
  // and matchLabels that hold do not rescue it.
  const LabelSelector mixed{{{"x", "1"}}, {req("y", SelectorOp::exists), req("q", SelectorOp::unknown)}};
  CHECK_FALSE(selector_matches(mixed, labels));
  CHECK(selector_matches(LabelSelector{{{"x", "1"}}, {req("y", SelectorOp::exists)}}, labels));
}

TEST_CASE("labels: requirement semantics (selector_test.go TestSelectorMatches, TestRequirementSelectorMatching)") {
  // TestSelectorMatches, the forms a LabelSelector can express.
  CHECK(selector_matches(LabelSelector{{{"x", "y"}}, {}}, StringPairs{{"x", "y"}}));
  CHECK(selector_matches(LabelSelector{{{"x", "y"}, {"z", "w"}}, {}}, StringPairs{{"x", "y"}, {"z", "w"}}));
  // x!=y,z!=w as NotIn with one value.
  const LabelSelector not_equal = exprs({req("x", SelectorOp::not_in, {"y"}), req("z", SelectorOp::not_in, {"w"})});
  CHECK(selector_matches(not_equal, StringPairs{{"x", "z"}, {"z", "a"}}));
  CHECK_FALSE(selector_matches(not_equal, StringPairs{{"x", "z"}, {"z", "w"}}));
  CHECK(selector_matches(LabelSelector{{{"notin", "in"}}, {}}, StringPairs{{"notin", "in"}}));
  CHECK(selector_matches(exprs({req("x", SelectorOp::exists)}), StringPairs{{"x", "z"}}));
  CHECK(selector_matches(exprs({req("x", SelectorOp::does_not_exist)}), StringPairs{{"y", "z"}}));
  CHECK_FALSE(selector_matches(LabelSelector{{{"x", "z"}}, {}}, StringPairs{}));
  CHECK_FALSE(selector_matches(LabelSelector{{{"x", "y"}}, {}}, StringPairs{{"x", "z"}}));
  CHECK_FALSE(selector_matches(LabelSelector{{{"x", "y"}, {"z", "w"}}, {}}, StringPairs{{"x", "w"}, {"z", "w"}}));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::exists)}), StringPairs{{"y", "z"}}));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::does_not_exist)}), StringPairs{{"x", "z"}}));
  const StringPairs labelset = {{"foo", "bar"}, {"baz", "blah"}};
  CHECK(selector_matches(LabelSelector{{{"foo", "bar"}}, {}}, labelset));
  CHECK(selector_matches(LabelSelector{{{"baz", "blah"}}, {}}, labelset));
  CHECK(selector_matches(LabelSelector{{{"foo", "bar"}, {"baz", "blah"}}, {}}, labelset));
  CHECK_FALSE(selector_matches(LabelSelector{{{"foo", "blah"}}, {}}, labelset));
  CHECK_FALSE(selector_matches(LabelSelector{{{"baz", "bar"}}, {}}, labelset));
  CHECK_FALSE(selector_matches(LabelSelector{{{"foo", "bar"}, {"foobar", "bar"}, {"baz", "blah"}}, {}}, labelset));

  // TestRequirementSelectorMatching.
  const StringPairs xy = {{"x", "foo"}, {"y", "baz"}};
  CHECK(selector_matches(exprs({req("x", SelectorOp::in, {"foo"}), req("y", SelectorOp::not_in, {"alpha"})}), xy));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::in, {"foo"}), req("y", SelectorOp::in, {"alpha"})}), xy));
  const StringPairs y_empty = {{"y", ""}};
  CHECK(selector_matches(exprs({req("x", SelectorOp::not_in, {""}), req("y", SelectorOp::exists)}), y_empty));
  CHECK(selector_matches(exprs({req("x", SelectorOp::does_not_exist), req("y", SelectorOp::exists)}), y_empty));
  CHECK_FALSE(
      selector_matches(exprs({req("x", SelectorOp::not_in, {""}), req("y", SelectorOp::does_not_exist)}), y_empty));
  CHECK_FALSE(selector_matches(exprs({req("x", SelectorOp::in, {""})}), StringPairs{{"y", "baz"}}));
  // An empty value is a value: In ("") matches a label set to "".
  CHECK(selector_matches(exprs({req("y", SelectorOp::in, {""})}), y_empty));
}

TEST_CASE("labels: Service and ReplicationController map selectors (selector_test.go TestSetMatches)") {
  const StringPairs labelset = {{"foo", "bar"}, {"baz", "blah"}};
  CHECK(map_selector_matches({}, labelset));  // an empty Set is Everything()
  CHECK(map_selector_matches({}, {}));
  CHECK(map_selector_matches({{"foo", "bar"}}, labelset));
  CHECK(map_selector_matches({{"baz", "blah"}}, labelset));
  CHECK(map_selector_matches({{"foo", "bar"}, {"baz", "blah"}}, labelset));
  CHECK_FALSE(map_selector_matches({{"foo", "blah"}}, labelset));
  CHECK_FALSE(map_selector_matches({{"foo", "bar"}, {"foobar", "bar"}}, labelset));
  CHECK_FALSE(map_selector_matches({{"foo", "bar"}}, {}));
}
