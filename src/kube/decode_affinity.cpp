// What places a pod relative to nodes and to other pods: node affinity, pod
// affinity and anti-affinity, topology spread constraints, and the label
// selectors they (and ReplicaSets, StatefulSets) carry; the node selector of
// a PersistentVolume's node affinity too. See decode.hpp for
// the rules every decoder follows, decode_detail.hpp for the helpers.
#include "decode_detail.hpp"

namespace toysched::kube::detail {
namespace {

// Node selector operators: all six of core/v1 NodeSelectorOperator.
SelectorOp to_node_selector_op(std::string_view s) {
  if (s == "In") return SelectorOp::in;
  if (s == "NotIn") return SelectorOp::not_in;
  if (s == "Exists") return SelectorOp::exists;
  if (s == "DoesNotExist") return SelectorOp::does_not_exist;
  if (s == "Gt") return SelectorOp::gt;
  if (s == "Lt") return SelectorOp::lt;
  return SelectorOp::unknown;
}

// metav1.LabelSelectorOperator has no Gt/Lt: here they are unknown, and an
// unknown operator makes the whole selector match nothing (labels.hpp).
SelectorOp to_label_selector_op(std::string_view s) {
  const SelectorOp op = to_node_selector_op(s);
  return op == SelectorOp::gt || op == SelectorOp::lt ? SelectorOp::unknown : op;
}

errc get_requirement_list(od::value& v, std::vector<NodeSelectorRequirement>& out,
                          SelectorOp (*to_op)(std::string_view)) {
  return elements(v, [&](od::value& item) {
    auto& r = out.emplace_back();
    return fields(item, [&](std::string_view k, od::value& val) {
      if (k == "key") return get(val, r.key);
      if (k == "values") return get_strings(val, r.values);
      if (k == "operator") {
        std::string op;
        TS_TRY(get(val, op));
        r.op = to_op(op);
      }
      return errc::ok;
    });
  });
}

errc get_term(od::value& v, NodeSelectorTerm& t) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "matchExpressions") return get_requirement_list(val, t.match_expressions, to_node_selector_op);
    if (k == "matchFields") return get_requirement_list(val, t.match_fields, to_node_selector_op);
    return errc::ok;
  });
}

errc get_node_affinity(od::value& v, Pod& p) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") return get_node_selector(val, p.required_affinity);
    if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      return elements(val, [&](od::value& item) {
        auto& pt = p.preferred_affinity.emplace_back();
        return fields(item, [&](std::string_view k2, od::value& v2) {
          if (k2 == "weight") return get(v2, pt.weight);
          if (k2 == "preference") return get_term(v2, pt.term);
          return errc::ok;
        });
      });
    }
    return errc::ok;
  });
}

errc get_pod_affinity_term(od::value& v, PodAffinityTerm& t) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "labelSelector") return get_label_selector(val, t.label_selector);
    if (k == "namespaces") return get_strings(val, t.namespaces);
    if (k == "namespaceSelector") return get_label_selector(val, t.namespace_selector);
    if (k == "topologyKey") return get(val, t.topology_key);
    if (k == "matchLabelKeys") return get_strings(val, t.match_label_keys);
    if (k == "mismatchLabelKeys") return get_strings(val, t.mismatch_label_keys);
    return errc::ok;
  });
}

errc get_pod_affinity(od::value& v, PodAffinityRules& rules) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      return elements(val, [&](od::value& t) { return get_pod_affinity_term(t, rules.required.emplace_back()); });
    }
    if (k != "preferredDuringSchedulingIgnoredDuringExecution") return errc::ok;
    return elements(val, [&](od::value& item) {
      auto& wt = rules.preferred.emplace_back();
      return fields(item, [&](std::string_view k2, od::value& v2) {
        if (k2 == "weight") return get(v2, wt.weight);
        if (k2 == "podAffinityTerm") return get_pod_affinity_term(v2, wt.term);
        return errc::ok;
      });
    });
  });
}

errc get_policy(od::value& v, InclusionPolicy& out) {
  std::string s;
  TS_TRY(get(v, s));
  // Anything else (absent, null, a value the API server would refuse)
  // leaves the API's default in place.
  if (s == "Honor") out = InclusionPolicy::honor;
  if (s == "Ignore") out = InclusionPolicy::ignore;
  return errc::ok;
}

}  // namespace

errc get_node_selector(od::value& v, std::vector<NodeSelectorTerm>& out) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k != "nodeSelectorTerms") return errc::ok;
    return elements(val, [&](od::value& t) { return get_term(t, out.emplace_back()); });
  });
}

errc get_label_selector(od::value& v, std::optional<LabelSelector>& out) {
  if (is_null(v)) {
    out.reset();
    return errc::ok;
  }
  auto& s = out.emplace();
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "matchLabels") return get_map(val, s.match_labels);
    if (k == "matchExpressions") return get_requirement_list(val, s.match_expressions, to_label_selector_op);
    return errc::ok;
  });
}

errc get_affinity(od::value& v, Pod& p) {
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "nodeAffinity") return get_node_affinity(val, p);
    if (k == "podAffinity") return get_pod_affinity(val, p.pod_affinity);
    if (k == "podAntiAffinity") return get_pod_affinity(val, p.pod_anti_affinity);
    return errc::ok;
  }));
  return errc::ok;
}

errc get_spread_constraint(od::value& v, Pod& p) {
  auto& c = p.topology_spread.emplace_back();
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "maxSkew") return get(val, c.max_skew);
    if (k == "topologyKey") return get(val, c.topology_key);
    if (k == "labelSelector") return get_label_selector(val, c.label_selector);
    if (k == "minDomains") return get(val, c.min_domains);
    if (k == "nodeAffinityPolicy") return get_policy(val, c.node_affinity_policy);
    if (k == "nodeTaintsPolicy") return get_policy(val, c.node_taints_policy);
    if (k == "matchLabelKeys") return get_strings(val, c.match_label_keys);
    if (k != "whenUnsatisfiable") return errc::ok;
    std::string s;
    TS_TRY(get(val, s));
    c.when_unsatisfiable = s == "DoNotSchedule"    ? WhenUnsatisfiable::do_not_schedule
                           : s == "ScheduleAnyway" ? WhenUnsatisfiable::schedule_anyway
                                                   : WhenUnsatisfiable::unknown;
    return errc::ok;
  });
}

}  // namespace toysched::kube::detail
