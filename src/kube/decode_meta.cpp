// metadata, as every kind's decoder reads it (decode_detail.hpp's Meta).
// Pods read it too: what only some kinds keep is read only when asked for.
#include "decode_detail.hpp"

namespace toysched::kube::detail {
namespace {

errc get_owner_references(od::value& v, std::vector<OwnerReference>& out) {
  return elements(v, [&](od::value& item) {
    auto& o = out.emplace_back();
    return fields(item, [&](std::string_view k, od::value& val) {
      if (k == "apiVersion") return get(val, o.api_version);
      if (k == "kind") return get(val, o.kind);
      if (k == "name") return get(val, o.name);
      if (k == "uid") return get(val, o.uid);
      if (k == "controller") return get(val, o.controller);
      return errc::ok;
    });
  });
}

// Only the few annotations we act on; the rest are skipped unread. The claim
// keys cost a pod's walk one flag test per annotation, no string compare.
errc get_annotations(od::value& v, Meta& m, bool want_claim) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "k8s.io/initial-events-end") {
      std::string s;
      TS_TRY(get(val, s));
      m.initial_events_end = s == "true";
    } else if (want_claim && k == "volume.beta.kubernetes.io/storage-class") {
      return get(val, m.beta_storage_class.emplace());
    } else if (want_claim && k == "pv.kubernetes.io/bind-completed") {
      m.bind_completed = true;  // metav1.HasAnnotation: the value is not read
    } else if (want_claim && k == "volume.kubernetes.io/selected-node") {
      return get(val, m.selected_node.emplace());
    }
    return errc::ok;
  });
}

}  // namespace

errc get_meta(od::value& v, Meta& m, bool want_labels, bool want_owners, bool want_claim) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "name") return get(val, m.name);
    if (k == "namespace") return get(val, m.ns);
    if (k == "uid") return get(val, m.uid);
    if (k == "resourceVersion") return get(val, m.resource_version);
    if (k == "deletionTimestamp") {
      m.deleting = !is_null(val);
      return errc::ok;
    }
    if (k == "creationTimestamp") return get_time(val, m.created);
    if (k == "labels" && want_labels) return get_map(val, m.labels);
    if (k == "ownerReferences" && want_owners) return get_owner_references(val, m.owners);
    if (k == "annotations") return get_annotations(val, m, want_claim);
    return errc::ok;
  });
}

}  // namespace toysched::kube::detail
