// Every kind toy-scheduler lists and watches, one line each:
//
//   KIND(Type, resource, prefix, scope)
//
// Type is its struct in objects.hpp (the little the scheduler keeps of it);
// resource is the API's plural, which also names its informer (the task
// watch/<resource>, its metrics and log lines); prefix is its group and
// version's path; scope says whether it lives in namespaces.
//
// From this list come the collection's path (kind_path<T>), the Decoder's
// list<T> and event<T>, Api::list<T> and Reflector<T>, and the check that
// manifests/ lets the scheduler list and watch each one
// (test/unit/rbac_test.py). A new kind is its struct in objects.hpp, its
// get_obj() in src/kube/decode_kinds.cpp, one line here, and its handler
// (for a kind the plugins read, sched/cluster_objects.hpp).
#pragma once

#include "toysched/kube/objects.hpp"

#include <string>
#include <string_view>

namespace toysched::kube {

// clang-format off
#define TOYSCHED_KINDS(KIND)                                                                  \
  KIND(Pod, pods, "/api/v1", namespaced)                                                      \
  KIND(Node, nodes, "/api/v1", cluster)                                                       \
  KIND(Lease, leases, "/apis/coordination.k8s.io/v1", namespaced)                             \
  KIND(Namespace, namespaces, "/api/v1", cluster)                                             \
  KIND(Service, services, "/api/v1", namespaced)                                              \
  KIND(ReplicationController, replicationcontrollers, "/api/v1", namespaced)                  \
  KIND(ReplicaSet, replicasets, "/apis/apps/v1", namespaced)                                  \
  KIND(StatefulSet, statefulsets, "/apis/apps/v1", namespaced)                                \
  KIND(PersistentVolumeClaim, persistentvolumeclaims, "/api/v1", namespaced)                  \
  KIND(PersistentVolume, persistentvolumes, "/api/v1", cluster)                               \
  KIND(StorageClass, storageclasses, "/apis/storage.k8s.io/v1", cluster)                      \
  KIND(CSINode, csinodes, "/apis/storage.k8s.io/v1", cluster)                                 \
  KIND(VolumeAttachment, volumeattachments, "/apis/storage.k8s.io/v1", cluster)               \
  KIND(CSIDriver, csidrivers, "/apis/storage.k8s.io/v1", cluster)                             \
  KIND(CSIStorageCapacity, csistoragecapacities, "/apis/storage.k8s.io/v1", namespaced)       \
  KIND(PodDisruptionBudget, poddisruptionbudgets, "/apis/policy/v1", namespaced)
// clang-format on

enum class Scope : bool { cluster, namespaced };

// Where a kind lives, from its line above.
template <class T>
struct KindTraits;
#define TOYSCHED_KIND_TRAITS(Type, resource, prefix_, scope_) \
  template <>                                                 \
  struct KindTraits<Type> {                                   \
    static constexpr const char* name = #resource;            \
    static constexpr std::string_view prefix = prefix_;       \
    static constexpr Scope scope = Scope::scope_;             \
  };
TOYSCHED_KINDS(TOYSCHED_KIND_TRAITS)
#undef TOYSCHED_KIND_TRAITS

// A collection's path: `prefix`/`resource` for a cluster-scoped kind (`ns`
// is ignored); in namespace `ns`, or across all of them when `ns` is
// empty, for a namespaced one.
std::string collection_path(std::string_view prefix, std::string_view resource, Scope scope, std::string_view ns);

template <class T>
std::string kind_path(std::string_view ns) {
  using K = KindTraits<T>;
  return collection_path(K::prefix, K::name, K::scope, ns);
}

}  // namespace toysched::kube
