// VolumeBinding (framework/plugins/volumebinding), as v1.36.3 with its
// default feature gates:
//
//   PreFilter: every claim the pod uses (spec.volumes[].persistentVolumeClaim,
//     and the claim the ephemeral-volume controller makes for each
//     spec.volumes[].ephemeral, which must be owned by the pod) must exist
//     and not be being deleted; a claim not yet bound whose class binds at
//     once (no class, an unknown class, or volumeBindingMode Immediate) makes
//     the pod wait for the volume controller ("pod has unbound immediate
//     PersistentVolumeClaims"). Bound claims' volumes, the unbound claims
//     of WaitForFirstConsumer classes and their classes' volumes are
//     looked up once here.
//   Filter, per node: every bound claim's volume must exist and its
//     nodeAffinity.required match the node; each unbound claim either
//     finds the smallest free volume of its class that fits it on this node
//     (capacity, access modes, volume mode, selector, node affinity; a
//     volume pre-bound to it wins), or its class must be able to provision
//     there (a provisioner, allowedTopologies, and, when the class's CSI
//     driver publishes CSIStorageCapacity, a capacity reachable from the
//     node that holds the claim's request); a claim whose selected-node
//     annotation names another node fails at once.
//   Reserve: the chosen volumes and claims are assumed (VolumeAssumptions),
//     so the decisions that follow do not choose them again.
//   PreBind (volume_binding_prebind.cpp): PATCH each chosen volume's
//     claimRef and each claim's selected-node annotation, then wait until
//     the volume controller has bound them all (bindTimeoutSeconds).
//   Unreserve: the assumptions are dropped.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

// volume.CheckNodeAffinity: a volume without required node affinity fits
// every node; one with it, a node matching any of its terms.
bool volume_fits(const kube::PersistentVolume& pv, const kube::Node& node);

// IsVolumeBoundToClaim: `ref` (a volume's claimRef) names the claim, and
// its uid if it has one.
bool volume_bound_to(const std::optional<kube::ClaimRef>& ref, const kube::PersistentVolumeClaim& c);

// What one node needs for the pod's unbound claims (upstream's PodVolumes).
struct PodVolumes {
  std::vector<std::pair<const kube::PersistentVolume*, const kube::PersistentVolumeClaim*>> bind;  // static
  std::vector<const kube::PersistentVolumeClaim*> provision;                                       // dynamic
};

class VolumeBinding final : public Plugin {
 public:
  // bindTimeoutSeconds; finer than seconds for tests.
  explicit VolumeBinding(std::chrono::milliseconds bind_timeout = std::chrono::seconds(600)) : timeout_(bind_timeout) {}
  PluginId id() const noexcept override { return PluginId::volume_binding; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  // Upstream scores only with storage capacity scoring (off by default).
  bool pre_score(const kube::Pod&, std::span<const NodeInfo* const>, const Cluster&) override { return false; }
  std::unique_ptr<PreBind> reserve(const kube::Pod& pod, const NodeInfo& ni, const Cluster& cluster) override;

  // FindPodVolumes for one node, after PreFilter: success, or the reasons.
  FilterStatus find(const kube::Node& node, PodVolumes* out) const;

 private:
  const kube::PersistentVolume* match(const kube::PersistentVolumeClaim& c, const kube::Node& node,
                                      const std::vector<const kube::PersistentVolume*>& chosen) const;
  // checkVolumeProvisions for one claim: success, or why not.
  FilterStatus provisioning(const kube::PersistentVolumeClaim& c, const kube::Node& node) const;
  bool enough_capacity(const kube::PersistentVolumeClaim& c, const kube::StorageClass& sc,
                       const kube::Node& node) const;

  std::chrono::milliseconds timeout_;
  // This cycle's state (PreFilter writes it; Filter and Reserve read it).
  const ClusterObjects* objects_ = nullptr;
  const VolumeAssumptions* assumed_ = nullptr;
  // The bound claims' volumes, in the pod's order; nullptr: the volume a
  // claim is bound to does not exist.
  std::vector<const kube::PersistentVolume*> bound_;
  // Unbound claims of WaitForFirstConsumer classes, in the pod's order,
  // and the volumes of their classes.
  std::vector<const kube::PersistentVolumeClaim*> delayed_;
  std::vector<const kube::PersistentVolume*> candidates_;
  std::vector<const kube::CSIStorageCapacity*> capacities_;  // of the same classes
  std::string message_;                                      // a rejection's text, until the next PreFilter
};

}  // namespace toysched::sched
