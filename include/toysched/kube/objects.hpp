// Compact views of the API objects the scheduler reads: only what filtering,
// scoring, binding and leader election need, nothing of the rest. The
// decoder (decode.hpp) fills them from the server's JSON; quantities are
// already integers here (CPU in millicores, everything else in units).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toysched::kube {

// Labels, node selectors: a handful of entries, in the server's order.
// A flat vector beats a map at this size and copies in one allocation.
using StringPairs = std::vector<std::pair<std::string, std::string>>;

// Value of `key`, or nullptr when absent.
inline const std::string* find_value(const StringPairs& pairs, std::string_view key) noexcept {
  for (const auto& [k, v] : pairs) {
    if (k == key) return &v;
  }
  return nullptr;
}

// A resource list (requests, allocatable, overhead) in the units the
// scheduler counts in (pkg/scheduler/util/pod_resources.go): CPU in
// millicores, memory and ephemeral storage in bytes, pods as a count.
// `extended` holds every other name (example.com/gpu, hugepages-2Mi, ...),
// sorted by name; most pods have none, and an empty vector allocates nothing.
struct Resources {
  std::int64_t milli_cpu = 0;
  std::int64_t memory = 0;
  std::int64_t ephemeral_storage = 0;
  std::int64_t pods = 0;
  std::vector<std::pair<std::string, std::int64_t>> extended;

  // 0 when absent.
  std::int64_t extended_value(std::string_view name) const noexcept {
    for (const auto& [k, v] : extended) {
      if (k == name) return v;
    }
    return 0;
  }
  // A pod asking for nothing gets only the "Too many pods" check.
  bool empty() const noexcept {
    return milli_cpu == 0 && memory == 0 && ephemeral_storage == 0 && pods == 0 && extended.empty();
  }

  friend bool operator==(const Resources&, const Resources&) = default;
};

enum class TaintEffect : std::uint8_t {
  all,  // only in tolerations: an empty effect tolerates every effect
  no_schedule,
  prefer_no_schedule,
  no_execute,
  unknown,  // a value this build does not know: never matches a toleration
};

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::unknown;
  friend bool operator==(const Taint&, const Taint&) = default;
};

enum class TolerationOp : std::uint8_t {
  equal,  // also the API default when `operator` is empty
  exists,
  unknown,  // a newer operator: tolerates nothing, never something wrong
};

struct Toleration {
  std::string key;  // empty with `exists`: tolerates every taint
  TolerationOp op = TolerationOp::equal;
  std::string value;
  TaintEffect effect = TaintEffect::all;
  std::optional<std::int64_t> toleration_seconds;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

enum class SelectorOp : std::uint8_t { in, not_in, exists, does_not_exist, gt, lt, unknown };

struct NodeSelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::unknown;
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

// Expressions within a term are ANDed; terms are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name upstream
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct PreferredSchedulingTerm {
  std::int32_t weight = 0;  // 1..100
  NodeSelectorTerm term;
  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

// metav1.LabelSelector. Its expressions share NodeSelectorRequirement's
// {key, op, values} shape; only In, NotIn, Exists and DoesNotExist are valid
// here (Gt, Lt and anything else decode as SelectorOp::unknown, which makes
// the whole selector match nothing: labels.hpp).
struct LabelSelector {
  StringPairs match_labels;
  std::vector<NodeSelectorRequirement> match_expressions;
  // Selects everything (a nil selector, nullopt where it is optional, selects nothing).
  bool empty() const noexcept { return match_labels.empty() && match_expressions.empty(); }
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// One term of spec.affinity.podAffinity / podAntiAffinity: the pods it
// selects (by labels, in some namespaces) and the node label that defines
// "the same place" as them.
struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  // nullopt (absent/null) matches no pod
  std::vector<std::string> namespaces;
  // nullopt: only `namespaces` (or the pod's own namespace when both are
  // empty); an empty selector: every namespace.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

struct WeightedPodAffinityTerm {
  std::int32_t weight = 0;  // 1..100
  PodAffinityTerm term;
  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

// requiredDuringSchedulingIgnoredDuringExecution and
// preferredDuringSchedulingIgnoredDuringExecution of a podAffinity or
// podAntiAffinity. Most pods have none: two empty vectors, no allocation.
struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool empty() const noexcept { return required.empty() && preferred.empty(); }
  friend bool operator==(const PodAffinityRules&, const PodAffinityRules&) = default;
};

enum class WhenUnsatisfiable : std::uint8_t {
  do_not_schedule,
  schedule_anyway,
  unknown,  // absent or a value this build does not know
};

// nodeAffinityPolicy / nodeTaintsPolicy of a topology spread constraint.
enum class InclusionPolicy : std::uint8_t { honor, ignore };

struct TopologySpreadConstraint {
  std::int32_t max_skew = 0;
  std::string topology_key;
  WhenUnsatisfiable when_unsatisfiable = WhenUnsatisfiable::unknown;
  std::optional<LabelSelector> label_selector;
  std::optional<std::int32_t> min_domains;
  // The API's defaults when absent (or a value other than Honor/Ignore,
  // which the API server refuses to store).
  InclusionPolicy node_affinity_policy = InclusionPolicy::honor;
  InclusionPolicy node_taints_policy = InclusionPolicy::ignore;
  std::vector<std::string> match_label_keys;
  friend bool operator==(const TopologySpreadConstraint&, const TopologySpreadConstraint&) = default;
};

// metadata.ownerReferences[]: the controller's kind and name give the
// default spread selector (PodTopologySpread's system defaults).
struct OwnerReference {
  std::string api_version, kind, name, uid;
  bool controller = false;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// A node's status.images[] entry, for ImageLocality.
struct ContainerImage {
  std::vector<std::string> names;
  std::int64_t size_bytes = 0;
  friend bool operator==(const ContainerImage&, const ContainerImage&) = default;
};

struct HostPort {
  std::int32_t port = 0;
  std::string protocol;  // "TCP" when the pod left it empty (API default)
  std::string host_ip;   // "0.0.0.0" when empty: all addresses, as NodePorts reads it
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

using TimePoint = std::chrono::system_clock::time_point;

struct Node {
  // What every filter and score reads first, together (NodeInfo's layout).
  Resources allocatable;
  std::vector<Taint> taints;
  bool unschedulable = false;
  std::string name;
  std::string uid;
  std::string resource_version;
  StringPairs labels;
  bool ready = false;  // condition Ready == "True"
  // status.conditions as type → status: a change of status (not a heartbeat)
  // may make pods fit, so the queue compares them.
  StringPairs conditions;
  std::string internal_ip;
  std::vector<ContainerImage> images;  // status.images, as reported
  // status.declaredFeatures: what this node's kubelet says it supports
  // (NodeDeclaredFeatures matches pods' needs against them).
  std::vector<std::string> declared_features;
};

// Hard constraints of a pod that this scheduler does not evaluate (yet):
// only their presence is decoded, so that the scheduler can refuse the pod
// instead of binding it where the constraint may not hold.
struct UnsupportedConstraints {
  bool resource_claims = false;  // spec.resourceClaims (dynamic resource allocation)

  bool any() const noexcept { return resource_claims; }
  friend bool operator==(const UnsupportedConstraints&, const UnsupportedConstraints&) = default;
};

// An in-tree volume that two pods on one node may not both mount
// (VolumeRestrictions): spec.volumes[].gcePersistentDisk,
// awsElasticBlockStore, iscsi or rbd. Other volume kinds are not kept.
struct InlineDisk {
  enum class Kind : std::uint8_t { gce_pd, aws_ebs, iscsi, rbd };
  Kind kind = Kind::gce_pd;
  std::string id;                     // pdName, volumeID, iqn, or the RBD image
  std::string pool;                   // rbd: pool ("rbd" when unset, as the API defaults it)
  std::vector<std::string> monitors;  // rbd: monitors
  bool read_only = false;
  friend bool operator==(const InlineDisk&, const InlineDisk&) = default;
};

// kube-scheduler scores a pod that leaves out a cpu or memory request as if
// it asked for 100m / 200MB (pkg/scheduler/util/pod_resources.go
// DefaultMilliCPURequest, DefaultMemoryRequest), so that LeastAllocated does
// not see it as free. Filtering never uses these.
inline constexpr std::int64_t kDefaultMilliCpuRequest = 100;
inline constexpr std::int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

// A pod's cpu and memory with those defaults applied: per container that
// names no request for the resource (an explicit 0 stays 0), before
// pod-level requests and overhead, as component-helpers' PodRequests does
// with NonMissingContainerRequests.
struct NonZeroRequests {
  std::int64_t milli_cpu = 0;
  std::int64_t memory = 0;
  friend bool operator==(const NonZeroRequests&, const NonZeroRequests&) = default;
};

struct Pod {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string scheduler_name;
  std::string node_name;
  std::string phase;
  bool deleting = false;          // metadata.deletionTimestamp set
  bool scheduling_gated = false;  // spec.schedulingGates non-empty: not ours to place yet
  std::int32_t priority = 0;
  // Preemption (DefaultPreemption): spec.preemptionPolicy is "Never";
  // status.nominatedNodeName; status.startTime (unset until a kubelet
  // starts the pod); and whether the pod is terminating because a
  // scheduler preempted it (deletionTimestamp set and a DisruptionTarget
  // condition True with reason PreemptionByScheduler).
  bool preempt_never = false;
  bool terminating_by_preemption = false;
  std::string nominated_node_name;
  std::optional<TimePoint> start_time;
  StringPairs node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // empty = no requirement
  std::vector<PreferredSchedulingTerm> preferred_affinity;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;  // only ports with hostPort > 0
  Resources requests;                // effective pod request, resizes included (decode_pod.cpp); `pods` stays 0
  // Upstream counts the defaults two ways, which differ only when the pod
  // sets pod-level requests: what the pod adds to its node's non-zero sums
  // (PodInfo.CalculateResource: with pod-level requests, a default only for
  // a resource no container, pod-level request or overhead names), and
  // what NodeResourcesFit's score adds for the pod being scheduled
  // (calculatePodResourceRequest: the defaults per container always, and
  // pod-level requests ignored, v1.36.3's scorer lacking their feature
  // gate). Set by the decoder; nullopt in pods made by hand (tests), which
  // count as one container with `requests`, 0 meaning absent
  // (sched/node_info.hpp).
  std::optional<NonZeroRequests> nonzero;
  std::optional<NonZeroRequests> nonzero_incoming;
  UnsupportedConstraints unsupported;
  // spec.volumes[].persistentVolumeClaim.claimName, in volume order
  // (VolumeBinding looks each up in the pod's namespace).
  std::vector<std::string> claims;
  // The in-tree disks among spec.volumes, in volume order; empty (no
  // allocation) on almost every pod.
  std::vector<InlineDisk> disks;
  // The names of spec.volumes[].ephemeral: the ephemeral-volume controller
  // makes claim "<pod name>-<volume name>" for each (NodeVolumeLimits
  // counts a placed pod's).
  std::vector<std::string> ephemeral_volumes;
  std::optional<TimePoint> creation_timestamp;
  // What InterPodAffinity, PodTopologySpread and ImageLocality read. Each is
  // an empty vector (no allocation) on a pod without it.
  StringPairs labels;
  std::vector<OwnerReference> owners;  // metadata.ownerReferences
  PodAffinityRules pod_affinity, pod_anti_affinity;
  std::vector<TopologySpreadConstraint> topology_spread;
  // spec.containers[].image then spec.initContainers[].image, in order, as
  // written (normalising a name is ImageLocality's business); a container
  // without an image adds none.
  std::vector<std::string> images;
  // What NodeDeclaredFeatures infers a pod's node-feature needs from:
  // spec.hostNetwork, spec.hostUsers (nullopt: unset), and whether a
  // container's or init container's restartPolicyRules has the action
  // RestartAllContainers.
  bool host_network = false;
  std::optional<bool> host_users;
  bool restarts_all_containers = false;
};

// A pod as the informer's store keys it and the logs name it: "ns/name"
// (klog's KObj). Found by argument-dependent lookup: key(pod).
inline std::string key(const Pod& p) { return p.ns + "/" + p.name; }

// Kinds read only for what the pod plugins need: namespace labels (pod
// affinity's namespaceSelector) and the selectors of a pod's Services and
// controller (PodTopologySpread's default constraints).
struct Namespace {
  std::string name, uid, resource_version;
  StringPairs labels;
};
struct Service {
  std::string ns, name, uid, resource_version;
  StringPairs selector;  // spec.selector; empty: the Service selects no pod (labels.hpp)
};
struct ReplicationController {
  std::string ns, name, uid, resource_version;
  StringPairs selector;  // spec.selector
};
struct ReplicaSet {
  std::string ns, name, uid, resource_version;
  std::optional<LabelSelector> selector;  // spec.selector
};
struct StatefulSet {
  std::string ns, name, uid, resource_version;
  std::optional<LabelSelector> selector;  // spec.selector
};

// The storage kinds, for VolumeBinding, VolumeRestrictions, VolumeZone and
// NodeVolumeLimits.
//
// spec.accessModes as bits (a claim asks for all it lists; a volume offers
// all it lists).
enum AccessMode : std::uint8_t {
  kReadWriteOnce = 1,
  kReadOnlyMany = 2,
  kReadWriteMany = 4,
  kReadWriteOncePod = 8,
};
// spec.claimRef of a volume: the claim it is bound, or promised, to.
struct ClaimRef {
  std::string ns, name, uid;
  friend bool operator==(const ClaimRef&, const ClaimRef&) = default;
};
struct PersistentVolumeClaim {
  std::string ns, name, uid, resource_version;
  std::string volume_name;  // spec.volumeName; "" while unbound
  // spec.accessModes has ReadWriteOncePod: one pod in the cluster at a time.
  bool read_write_once_pod = false;
  std::uint8_t access_modes = 0;          // AccessMode bits
  bool block = false;                     // spec.volumeMode == Block (absent: Filesystem)
  std::string attributes_class;           // spec.volumeAttributesClassName; "": none
  std::int64_t storage_request = 0;       // spec.resources.requests.storage in bytes; 0: none
  std::optional<LabelSelector> selector;  // spec.selector; nullopt: any volume
  // The claim's class: the annotation volume.beta.kubernetes.io/storage-class
  // if present, else spec.storageClassName; nullopt when neither.
  std::optional<std::string> storage_class_name;
  bool bind_completed = false;  // metadata.annotations has pv.kubernetes.io/bind-completed (any value)
  // metadata.annotations volume.kubernetes.io/selected-node: the node a
  // scheduler chose for the claim's volume to be provisioned on; nullopt: none.
  std::optional<std::string> selected_node;
  std::string controller_uid;  // the uid of the ownerReference with controller: true; "" if none
  bool deleting = false;       // metadata.deletionTimestamp is set
};
struct PersistentVolume {
  std::string name, uid, resource_version;
  StringPairs labels;                           // VolumeZone reads the zone and region labels
  std::vector<NodeSelectorTerm> node_affinity;  // spec.nodeAffinity.required.nodeSelectorTerms (ORed); empty: none
  bool has_node_affinity = false;               // spec.nodeAffinity.required present (even with zero terms)
  // spec.csi.driver and spec.csi.volumeHandle; empty for other sources.
  std::string csi_driver, csi_volume_handle;
  std::int64_t capacity = 0;      // spec.capacity.storage in bytes
  std::uint8_t access_modes = 0;  // AccessMode bits
  bool block = false;             // spec.volumeMode == Block
  std::string attributes_class;   // spec.volumeAttributesClassName; "": none
  // The annotation volume.beta.kubernetes.io/storage-class if present, else
  // spec.storageClassName; "" for neither (GetPersistentVolumeClass).
  std::string storage_class_name;
  std::optional<ClaimRef> claim_ref;  // spec.claimRef
  bool available = false;             // status.phase == Available
  bool deleting = false;              // metadata.deletionTimestamp is set
};
// A StorageClass's allowedTopologies entry: every key must have one of its
// values among the node's labels.
struct TopologyTerm {
  std::vector<std::pair<std::string, std::vector<std::string>>> expressions;  // key, values
};
struct StorageClass {
  std::string name, uid, resource_version;
  bool wait_for_first_consumer = false;  // volumeBindingMode == "WaitForFirstConsumer"
  std::string provisioner;
  std::vector<TopologyTerm> allowed_topologies;  // ORed; empty: any node
};
// storage.k8s.io/v1 CSINode, for NodeVolumeLimits: the CSI drivers a node's
// kubelet registered, each with how many of its volumes the node can have
// attached (spec.drivers[].allocatable.count; nullopt: no limit).
struct CSINode {
  std::string name, uid, resource_version;  // name: the node's
  struct Driver {
    std::string name;
    std::optional<std::int64_t> count;
    friend bool operator==(const Driver&, const Driver&) = default;
  };
  std::vector<Driver> drivers;
};
// storage.k8s.io/v1 CSIDriver, for VolumeBinding: whether the driver
// publishes CSIStorageCapacity objects that provisioning must respect.
struct CSIDriver {
  std::string name, uid, resource_version;
  bool storage_capacity = false;  // spec.storageCapacity
};
// storage.k8s.io/v1 CSIStorageCapacity: how much a class's driver can still
// provision for the nodes its topology selects.
struct CSIStorageCapacity {
  std::string ns, name, uid, resource_version;
  std::string storage_class_name;
  std::optional<LabelSelector> node_topology;  // nullopt: reachable from no node
  // maximumVolumeSize if set, else capacity, in bytes; nullopt: neither.
  std::optional<std::int64_t> limit;
};
// storage.k8s.io/v1 VolumeAttachment: a volume attached, or being attached
// or detached, to a node. It counts against the node's limit even when no
// pod there uses it any more.
struct VolumeAttachment {
  std::string name, uid, resource_version;
  std::string attacher;                // spec.attacher: the CSI driver
  std::string node_name;               // spec.nodeName
  std::string persistent_volume_name;  // spec.source.persistentVolumeName; "" when absent
};

// policy/v1 PodDisruptionBudget, for preemption: which victims' evictions
// would break a budget (upstream's filterPodsWithPDBViolation).
struct PodDisruptionBudget {
  std::string ns, name, uid, resource_version;
  // spec.selector as written. The API (policy/v1 types.go) says a null
  // selector selects no pod and an empty {} one every pod of the
  // namespace; nullopt and an empty() selector keep that difference. But
  // upstream's preemption counts a victim against neither: its
  // LabelSelectorAsSelector gives Nothing() for nil, Everything() for {},
  // and it skips `selector.Empty()` ("a PDB with a nil or empty selector
  // matches nothing"), as it skips one it could not convert
  // (selector_valid, labels.hpp).
  std::optional<LabelSelector> selector;
  std::int32_t disruptions_allowed = 0;  // status.disruptionsAllowed; 0 when absent
  // The keys of status.disruptedPods (pod name → eviction time; the time is
  // not kept), in the server's order: pods whose eviction the API server
  // has already counted against the budget. Usually empty.
  std::vector<std::string> disrupted_pods;

  bool disrupted(std::string_view pod_name) const noexcept {
    for (const auto& p : disrupted_pods) {
      if (p == pod_name) return true;
    }
    return false;
  }
};

struct Lease {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;  // sent back on PUT; empty on create
  std::string holder_identity;   // empty: free to take at once
  std::optional<std::int32_t> lease_duration_seconds;
  std::optional<TimePoint> acquire_time;  // MicroTime: microsecond precision
  std::optional<TimePoint> renew_time;
  std::optional<std::int32_t> lease_transitions;
  std::optional<std::string> strategy;
  std::optional<std::string> preferred_holder;
};

struct StatusCause {
  std::string reason;
  std::string message;
  std::string field;
  friend bool operator==(const StatusCause&, const StatusCause&) = default;
};

// A `kind: Status` body: what the server said, kept beside our error code.
struct Status {
  int code = 0;
  std::string status;  // "Success" or "Failure"
  std::string reason;  // "Expired", "Conflict", ... (empty is allowed)
  std::string message;
  std::string details_name;
  std::string details_kind;
  std::vector<StatusCause> causes;
  std::optional<std::int32_t> retry_after_seconds;
};

// An object in a list or a watch event that the decoder could not read
// (decode.hpp): what a second, tolerant read still found of it. Enough to
// key it, log it and, for a pending pod, tell its owner why it is not
// scheduled, while the list or the watch goes on without it: one object
// must never wedge an informer.
struct Undecodable {
  std::string ns;
  std::string name;  // empty when even that could not be read
  std::string uid;
  std::string resource_version;
  std::string scheduler_name;  // pods
  std::string node_name;       // pods: set when bound
  bool deleting = false;
  bool scheduling_gated = false;  // pods
  std::string error;              // why the full read failed, for people
};

template <class T>
struct List {
  std::vector<T> items;
  std::vector<Undecodable> undecodable;  // items skipped, in list order
  std::string resource_version;          // watch from here after the last page
  std::string continue_token;            // empty on the last page
};
using PodList = List<Pod>;
using NodeList = List<Node>;
using LeaseList = List<Lease>;
using NamespaceList = List<Namespace>;
using ServiceList = List<Service>;
using ReplicationControllerList = List<ReplicationController>;
using ReplicaSetList = List<ReplicaSet>;
using StatefulSetList = List<StatefulSet>;
using PersistentVolumeClaimList = List<PersistentVolumeClaim>;
using PersistentVolumeList = List<PersistentVolume>;
using StorageClassList = List<StorageClass>;
using CSINodeList = List<CSINode>;
using VolumeAttachmentList = List<VolumeAttachment>;
using PodDisruptionBudgetList = List<PodDisruptionBudget>;

enum class EventType : std::uint8_t { added, modified, deleted, bookmark, error };

constexpr std::string_view to_string(EventType t) noexcept {
  switch (t) {
    case EventType::added:
      return "ADDED";
    case EventType::modified:
      return "MODIFIED";
    case EventType::deleted:
      return "DELETED";
    case EventType::bookmark:
      return "BOOKMARK";
    case EventType::error:
      return "ERROR";
  }
  return "UNKNOWN";
}

// One watch event. ADDED/MODIFIED/DELETED carry the whole object, or, when
// it could not be read, `undecodable` (and an empty `object`). BOOKMARK
// carries only object.resource_version (+ initial_events_end). ERROR carries
// only `status` (410 Expired means: relist).
template <class T>
struct WatchEvent {
  EventType type = EventType::added;
  T object;
  std::optional<Undecodable> undecodable;
  bool initial_events_end = false;  // annotation k8s.io/initial-events-end: "true"
  Status status;
};

// MicroTime (apimachinery pkg/apis/meta/v1/micro_time.go): RFC 3339 in UTC
// with exactly six fractional digits, "2026-01-01T10:05:02.123456Z".
std::string format_micro_time(TimePoint t);
// Accepts RFC 3339 with 0..9+ fractional digits (extra digits truncated to
// the microsecond) and a `Z` or ±hh:mm offset. nullopt when malformed.
std::optional<TimePoint> parse_micro_time(std::string_view s);

// JSON body for POST/PUT of a Lease; includes resourceVersion when set.
std::string encode_lease(const Lease& lease);

}  // namespace toysched::kube
