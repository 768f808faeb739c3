// Internals of the JSON decoders (decode.cpp, decode_pod.cpp): simdjson
// on-demand walking helpers and the pieces shared by several kinds.
// Private to src/kube; not installed, not included by anything else.
//
// On-demand reads the document once, front to back: every decoder walks an
// object's fields in the order the server wrote them and picks what it
// knows, leaving the rest to be skipped. Fields may come in any order, so
// nothing is computed until an object's walk ends (see the pod request).
#pragma once

#include "toysched/kube/decode.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toysched::kube::detail {

namespace od = simdjson::ondemand;
static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING);

inline errc from_simdjson(simdjson::error_code e) {
  if (e == simdjson::SUCCESS) return errc::ok;
  if (e == simdjson::CAPACITY) return errc::object_too_large;
  return errc::json_malformed;
}

inline errc from_result(const boost::system::error_code& ec) {
  return ec.category() == error_category() ? static_cast<errc>(ec.value()) : errc::json_malformed;
}

// Early returns on failure: `errc` from our helpers, or a simdjson code.
#define TS_TRY(expr)                                                \
  do {                                                              \
    if (const errc ts_e_ = (expr); ts_e_ != errc::ok) return ts_e_; \
  } while (0)
#define TS_SJ(expr)                                                    \
  do {                                                                 \
    if (const auto ts_e_ = (expr); ts_e_) return from_simdjson(ts_e_); \
  } while (0)

inline bool is_null(od::value& v) {
  od::json_type t{};
  return v.type().get(t) == simdjson::SUCCESS && t == od::json_type::null;
}

template <class F>
errc walk_object(od::object& obj, F&& f) {
  for (auto field_result : obj) {
    od::field field;
    TS_SJ(std::move(field_result).get(field));
    std::string_view key;
    TS_SJ(field.unescaped_key().get(key));
    TS_TRY(f(key, field.value()));
  }
  return errc::ok;
}

// Calls f(key, value) for every field; null reads as an empty object.
template <class F>
errc fields(od::value& v, F&& f) {
  if (is_null(v)) return errc::ok;
  od::object obj;
  TS_SJ(v.get_object().get(obj));
  return walk_object(obj, f);
}

// Calls f(value) for every element; null reads as an empty array.
template <class F>
errc elements(od::value& v, F&& f) {
  if (is_null(v)) return errc::ok;
  od::array arr;
  TS_SJ(v.get_array().get(arr));
  for (auto el : arr) {
    od::value item;
    TS_SJ(std::move(el).get(item));
    TS_TRY(f(item));
  }
  return errc::ok;
}

inline errc get(od::value& v, std::string& out) {
  if (is_null(v)) {
    out.clear();
    return errc::ok;
  }
  std::string_view s;
  TS_SJ(v.get_string().get(s));
  out.assign(s);
  return errc::ok;
}

inline errc get(od::value& v, std::int64_t& out) {
  if (is_null(v)) return errc::ok;
  TS_SJ(v.get_int64().get(out));
  return errc::ok;
}

inline errc get(od::value& v, std::int32_t& out) {
  std::int64_t wide = out;
  TS_TRY(get(v, wide));
  if (wide < std::numeric_limits<std::int32_t>::min() || wide > std::numeric_limits<std::int32_t>::max()) {
    return errc::json_malformed;
  }
  out = static_cast<std::int32_t>(wide);
  return errc::ok;
}

inline errc get(od::value& v, bool& out) {
  if (is_null(v)) return errc::ok;
  TS_SJ(v.get_bool().get(out));
  return errc::ok;
}

template <class T>
errc get(od::value& v, std::optional<T>& out) {
  if (is_null(v)) {
    out.reset();
    return errc::ok;
  }
  T tmp{};
  TS_TRY(get(v, tmp));
  out = std::move(tmp);
  return errc::ok;
}

inline errc get_time(od::value& v, std::optional<TimePoint>& out) {
  std::string s;
  TS_TRY(get(v, s));
  if (s.empty()) {
    out.reset();
    return errc::ok;
  }
  out = parse_micro_time(s);
  return out ? errc::ok : errc::json_malformed;
}

inline errc get_map(od::value& v, StringPairs& out) {
  return fields(v, [&](std::string_view k, od::value& val) {
    std::string s;
    TS_TRY(get(val, s));
    out.emplace_back(std::string(k), std::move(s));
    return errc::ok;
  });
}

inline errc get_strings(od::value& v, std::vector<std::string>& out) {
  return elements(v, [&](od::value& item) {
    TS_TRY(get(item, out.emplace_back()));
    return errc::ok;
  });
}

// --- resources ---------------------------------------------------------

using Extended = std::vector<std::pair<std::string, std::int64_t>>;

inline std::int64_t& extended_slot(Extended& ext, std::string_view name) {
  auto it =
      std::lower_bound(ext.begin(), ext.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
  if (it == ext.end() || it->first != name) it = ext.emplace(it, std::string(name), 0);
  return it->second;
}

// A resource list as written, remembering which standard names were
// present: a limit fills in a request only where the request is absent.
struct ResourceList {
  enum : unsigned { cpu = 1, memory = 2, ephemeral = 4, pods = 8 };
  Resources r;
  unsigned present = 0;
};

// One quantity, to the milli (CPU) or to the unit, rounding up, beyond
// kQuantityMax read as kQuantityMax.
errc get_quantity(od::value& v, bool milli, std::int64_t& out);
// Parses every quantity of a resource list (requests, limits, allocatable,
// overhead): CPU to the milli, the rest to the unit, rounding up.
errc get_resources(od::value& v, ResourceList& out);

// --- metadata ----------------------------------------------------------

struct Meta {
  std::string name, ns, uid, resource_version;
  bool deleting = false;
  bool initial_events_end = false;
  std::optional<TimePoint> created;
  StringPairs labels;
  std::vector<OwnerReference> owners;
  // A claim's or volume's annotations (want_claim):
  // volume.beta.kubernetes.io/storage-class as written, whether
  // pv.kubernetes.io/bind-completed is there, volume.kubernetes.io/selected-node.
  std::optional<std::string> beta_storage_class;
  bool bind_completed = false;
  std::optional<std::string> selected_node;
};

// decode_meta.cpp. Labels and owner references cost allocations, the claim
// annotations a test per annotation: read only for kinds that keep them.
errc get_meta(od::value& v, Meta& m, bool want_labels, bool want_owners = false, bool want_claim = false);

inline errc require(const Meta& m, bool ns, bool uid) {
  if (m.name.empty() || (ns && m.ns.empty()) || (uid && m.uid.empty())) return errc::json_missing_field;
  return errc::ok;
}

// Moves the metadata into an object: every kind keeps name, uid and
// resourceVersion; the rest where the kind has the field.
template <class T>
void take_meta(Meta&& m, T& obj) {
  obj.name = std::move(m.name);
  obj.uid = std::move(m.uid);
  obj.resource_version = std::move(m.resource_version);
  if constexpr (requires { obj.ns; }) obj.ns = std::move(m.ns);
  if constexpr (requires { obj.labels; }) obj.labels = std::move(m.labels);
  if constexpr (requires { obj.owners; }) obj.owners = std::move(m.owners);
  if constexpr (requires { obj.deleting; }) obj.deleting = m.deleting;
  if constexpr (requires { obj.creation_timestamp; }) obj.creation_timestamp = m.created;
}

// Taint and toleration effects share their spelling; empty means "all".
TaintEffect to_effect(std::string_view s);

// --- selectors and constraints (decode_affinity.cpp) --------------------

// A metav1.LabelSelector; null reads as nullopt (which matches no object).
errc get_label_selector(od::value& v, std::optional<LabelSelector>& out);
// spec.affinity: node affinity, pod affinity and anti-affinity.
errc get_affinity(od::value& v, Pod& p);
// One spec.topologySpreadConstraints entry, appended to p.topology_spread.
errc get_spread_constraint(od::value& v, Pod& p);
// A core/v1 NodeSelector: its nodeSelectorTerms appended to `out`.
errc get_node_selector(od::value& v, std::vector<NodeSelectorTerm>& out);

// --- kinds -------------------------------------------------------------

errc get_pod(od::value& v, Pod& p);  // decode_pod.cpp
// decode_kinds.cpp: what the plugins read of other kinds.
errc get_namespace(od::value& v, Namespace& n);
errc get_service(od::value& v, Service& s);
errc get_replication_controller(od::value& v, ReplicationController& rc);
errc get_replica_set(od::value& v, ReplicaSet& rs);
errc get_stateful_set(od::value& v, StatefulSet& ss);
errc get_persistent_volume_claim(od::value& v, PersistentVolumeClaim& c);
errc get_persistent_volume(od::value& v, PersistentVolume& pv);
errc get_storage_class(od::value& v, StorageClass& sc);
errc get_csi_node(od::value& v, CSINode& n);
errc get_volume_attachment(od::value& v, VolumeAttachment& va);
errc get_csi_driver(od::value& v, CSIDriver& d);
errc get_csi_storage_capacity(od::value& v, CSIStorageCapacity& c);
errc get_pod_disruption_budget(od::value& v, PodDisruptionBudget& pdb);

}  // namespace toysched::kube::detail
