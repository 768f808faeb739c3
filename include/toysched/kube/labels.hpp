// Label selectors as the scheduler evaluates them against pod and namespace
// labels: metav1.LabelSelector (pod affinity terms, topology spread
// constraints, ReplicaSet and StatefulSet selectors) and the plain maps of
// Services and ReplicationControllers. Pure functions, no allocation.
#pragma once

#include "toysched/kube/objects.hpp"

#include <optional>

namespace toysched::kube {

// metav1.LabelSelectorAsSelector followed by Matches: every matchLabels pair
// present with that value, and every expression true (In: the label's value
// is listed; NotIn: the label is absent or its value not listed; Exists;
// DoesNotExist). An empty selector (no pairs, no expressions) matches every
// label set.
//
// A selector upstream cannot convert (an operator other than the four above,
// In/NotIn without values, Exists/DoesNotExist with values) matches NOTHING:
// upstream returns an error there, and its callers (InterPodAffinity,
// PodTopologySpread, the default spread selector) then count the term as
// matching no pod. Label keys and values are not re-validated: the API server
// validated them when the object was written.
bool selector_matches(const LabelSelector& s, const StringPairs& labels) noexcept;

// An absent (or JSON null) selector matches no pod: upstream's nil
// *LabelSelector converts to labels.Nothing().
bool selector_matches(const std::optional<LabelSelector>& s, const StringPairs& labels) noexcept;

// Whether LabelSelectorAsSelector accepts `s` (every expression valid, as
// above): callers that merge a selector into another, rather than match it,
// must leave out one upstream could not convert.
bool selector_valid(const LabelSelector& s) noexcept;

// A Service or ReplicationController spec.selector (labels.SelectorFromSet):
// every pair present with that value. An EMPTY map matches every label set,
// as upstream's does. Callers looking for the Services of a pod must skip a
// Service whose selector is empty: upstream's GetPodServices skips a nil
// selector ("services with nil selectors match nothing"), and the API server
// omits an empty map (omitempty), so an empty selector here is that nil.
bool map_selector_matches(const StringPairs& selector, const StringPairs& labels) noexcept;

}  // namespace toysched::kube
