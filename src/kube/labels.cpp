// Label selector matching; see labels.hpp for the rules and upstream's
// staging/src/k8s.io/apimachinery/pkg/labels/selector.go (Requirement.Matches)
// and pkg/apis/meta/v1/helpers.go (LabelSelectorAsSelector) for the source.
#include "toysched/kube/labels.hpp"

#include <algorithm>

namespace toysched::kube {
namespace {

bool listed(const std::vector<std::string>& values, const std::string& v) noexcept {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Whether LabelSelectorAsSelector would accept the expression
// (labels.NewRequirement's value-count rules for the four operators).
bool valid(const NodeSelectorRequirement& r) noexcept {
  switch (r.op) {
    case SelectorOp::in:
    case SelectorOp::not_in:
      return !r.values.empty();
    case SelectorOp::exists:
    case SelectorOp::does_not_exist:
      return r.values.empty();
    default:
      return false;  // Gt, Lt (node selectors only) and anything unknown
  }
}

bool matches(const NodeSelectorRequirement& r, const StringPairs& labels) noexcept {
  const std::string* v = find_value(labels, r.key);
  switch (r.op) {
    case SelectorOp::in:
      return v && listed(r.values, *v);
    case SelectorOp::not_in:
      return !v || !listed(r.values, *v);
    case SelectorOp::exists:
      return v != nullptr;
    case SelectorOp::does_not_exist:
      return v == nullptr;
    default:
      return false;
  }
}

}  // namespace

bool selector_matches(const LabelSelector& s, const StringPairs& labels) noexcept {
  // Validity first: an invalid expression anywhere voids the whole selector,
  // even when an earlier requirement already fails to match.
  if (!selector_valid(s)) return false;
  if (!map_selector_matches(s.match_labels, labels)) return false;
  return std::all_of(s.match_expressions.begin(), s.match_expressions.end(),
                     [&](const NodeSelectorRequirement& r) { return matches(r, labels); });
}

bool selector_valid(const LabelSelector& s) noexcept {
  return std::all_of(s.match_expressions.begin(), s.match_expressions.end(), valid);
}

bool selector_matches(const std::optional<LabelSelector>& s, const StringPairs& labels) noexcept {
  return s && selector_matches(*s, labels);
}

bool map_selector_matches(const StringPairs& selector, const StringPairs& labels) noexcept {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    const std::string* v = find_value(labels, kv.first);
    return v && *v == kv.second;
  });
}

}  // namespace toysched::kube
