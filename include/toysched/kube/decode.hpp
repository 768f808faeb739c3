// JSON → compact objects (objects.hpp), with simdjson on-demand.
//
// A Decoder owns one reusable simdjson parser and a padded scratch buffer:
// the scheduler decodes tens of thousands of objects, and reusing both keeps
// a decode free of parser allocations. One Decoder per thread; it is cheap
// to keep, expensive to build per call.
//
// Rules (the server's data is never trusted):
//  - unknown fields are ignored; JSON `null` reads as "absent";
//  - the root must be a JSON object, fully consumed (trailing bytes, a
//    truncated event, the wrong type for a known field → json_malformed);
//  - a missing metadata.name (or uid, for pods and nodes) →
//    json_missing_field; a missing label selector (null or absent) is
//    nullopt, never an empty selector (which would match everything);
//  - a quantity that does not parse → quantity_invalid; one beyond
//    kQuantityMax (quantity.hpp) reads as kQuantityMax, never an error;
//  - one object or watch event beyond kMaxObjectBytes → object_too_large
//    (see there); a list page beyond kMaxListBytes → object_too_large;
//  - in a list or a watch event, an object that fails any of these rules
//    is not the list's or the event's failure: it is left out, and what a
//    tolerant second read finds of it (name, uid, ...) is returned as an
//    Undecodable beside the rest. A list or an event whose own JSON is
//    broken (truncated, not JSON) still fails whole.
#pragma once

#include "toysched/kube/errors.hpp"
#include "toysched/kube/objects.hpp"

#include <cstddef>
#include <memory>
#include <string_view>

namespace toysched::kube {

// etcd holds at most 1.5 MiB per object (its default --max-request-bytes),
// but the API server's JSON escapes '<', '>', '&' and control characters
// as six bytes each (encoding/json), so a valid pod of 1.3 MB of such text
// arrives as a 7.8 MB watch event: refusing it wedged the watch for good.
// 16 MiB holds the worst escaped 1.5 MiB object with room to spare, and
// still bounds what a hostile peer can make us allocate.
inline constexpr std::size_t kMaxObjectBytes = std::size_t{16} << 20;
// A page of 500 nodes with long status.images lists runs to tens of MiB.
inline constexpr std::size_t kMaxListBytes = std::size_t{256} << 20;
// Bytes simdjson may read past the end of the JSON (SIMDJSON_PADDING).
inline constexpr std::size_t kJsonPadding = 64;

// 410 Gone/Expired in an ERROR event or a response: the RV is too old, relist.
inline bool is_expired(const Status& s) noexcept {
  return s.code == 410 || s.reason == "Expired" || s.reason == "Gone";
}

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // `readable` is how many bytes from json.data() may be read. When it is
  // at least json.size() + kJsonPadding (a caller that keeps its receive
  // buffer padded), the JSON is parsed in place; otherwise it is first
  // copied into the decoder's padded scratch buffer.
  result<Pod> pod(std::string_view json, std::size_t readable = 0);
  result<Node> node(std::string_view json, std::size_t readable = 0);
  result<Lease> lease(std::string_view json, std::size_t readable = 0);
  result<Status> status(std::string_view json, std::size_t readable = 0);
  result<PodList> pod_list(std::string_view json, std::size_t readable = 0);
  result<NodeList> node_list(std::string_view json, std::size_t readable = 0);
  result<LeaseList> lease_list(std::string_view json, std::size_t readable = 0);
  result<WatchEvent<Pod>> pod_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<Node>> node_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<Lease>> lease_event(std::string_view line, std::size_t readable = 0);
  // What the plugins read of other kinds (objects.hpp): lists and watch
  // events, for their informers.
  result<NamespaceList> namespace_list(std::string_view json, std::size_t readable = 0);
  result<ServiceList> service_list(std::string_view json, std::size_t readable = 0);
  result<ReplicationControllerList> replication_controller_list(std::string_view json, std::size_t readable = 0);
  result<ReplicaSetList> replica_set_list(std::string_view json, std::size_t readable = 0);
  result<StatefulSetList> stateful_set_list(std::string_view json, std::size_t readable = 0);
  result<PersistentVolumeClaimList> persistent_volume_claim_list(std::string_view json, std::size_t readable = 0);
  result<PersistentVolumeList> persistent_volume_list(std::string_view json, std::size_t readable = 0);
  result<StorageClassList> storage_class_list(std::string_view json, std::size_t readable = 0);
  result<PodDisruptionBudgetList> pod_disruption_budget_list(std::string_view json, std::size_t readable = 0);
  result<WatchEvent<Namespace>> namespace_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<Service>> service_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<ReplicationController>> replication_controller_event(std::string_view line,
                                                                         std::size_t readable = 0);
  result<WatchEvent<ReplicaSet>> replica_set_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<StatefulSet>> stateful_set_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<PersistentVolumeClaim>> persistent_volume_claim_event(std::string_view line,
                                                                          std::size_t readable = 0);
  result<WatchEvent<PersistentVolume>> persistent_volume_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<StorageClass>> storage_class_event(std::string_view line, std::size_t readable = 0);
  result<WatchEvent<PodDisruptionBudget>> pod_disruption_budget_event(std::string_view line, std::size_t readable = 0);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Conveniences on a per-thread Decoder, for tests and cold paths; hot
// paths (watches, lists) hold their own Decoder.
result<Pod> decode_pod(std::string_view json);
result<Node> decode_node(std::string_view json);
result<Lease> decode_lease(std::string_view json);
result<Status> decode_status(std::string_view json);
result<PodList> decode_pod_list(std::string_view json);
result<NodeList> decode_node_list(std::string_view json);
result<WatchEvent<Pod>> decode_pod_event(std::string_view line);
result<WatchEvent<Node>> decode_node_event(std::string_view line);
result<WatchEvent<Lease>> decode_lease_event(std::string_view line);

}  // namespace toysched::kube
