// Kinds the scheduler reads only for the pod plugins: Namespaces (their
// labels, for pod affinity's namespaceSelector) and the selectors of
// Services, ReplicationControllers, ReplicaSets and StatefulSets (for
// PodTopologySpread's default constraints). Nothing else of them is kept.
// See decode.hpp for the rules, decode_detail.hpp for the helpers.
#include "decode_detail.hpp"

namespace toysched::kube::detail {
namespace {

// The common walk: metadata, and spec handed to `spec(key, value)`.
template <class T, class Spec>
errc get_kind(od::value& v, T& obj, bool want_labels, Spec&& spec) {
  Meta m;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, want_labels);
    if (k == "spec") return fields(val, spec);
    return errc::ok;
  }));
  TS_TRY(require(m, false, false));
  take_meta(std::move(m), obj);
  return errc::ok;
}

// spec.selector as a plain map (Services, ReplicationControllers).
template <class T>
errc get_map_selector_kind(od::value& v, T& obj) {
  return get_kind(v, obj, false, [&](std::string_view k, od::value& val) {
    return k == "selector" ? get_map(val, obj.selector) : errc::ok;
  });
}

// spec.selector as a metav1.LabelSelector (ReplicaSets, StatefulSets).
template <class T>
errc get_label_selector_kind(od::value& v, T& obj) {
  return get_kind(v, obj, false, [&](std::string_view k, od::value& val) {
    return k == "selector" ? get_label_selector(val, obj.selector) : errc::ok;
  });
}

}  // namespace

errc get_namespace(od::value& v, Namespace& n) {
  return get_kind(v, n, true, [](std::string_view, od::value&) { return errc::ok; });
}
errc get_service(od::value& v, Service& s) { return get_map_selector_kind(v, s); }
errc get_replication_controller(od::value& v, ReplicationController& rc) { return get_map_selector_kind(v, rc); }
errc get_replica_set(od::value& v, ReplicaSet& rs) { return get_label_selector_kind(v, rs); }
errc get_stateful_set(od::value& v, StatefulSet& ss) { return get_label_selector_kind(v, ss); }

}  // namespace toysched::kube::detail
