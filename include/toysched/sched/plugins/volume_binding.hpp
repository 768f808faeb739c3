// VolumeBinding (framework/plugins/volumebinding), for claims that are
// already bound or that bind without the scheduler:
//
//   PreFilter: every claim the pod names must exist and not be being
//     deleted (else no node can help: UnschedulableAndUnresolvable, with
//     upstream's text); a claim not yet bound whose class binds at once
//     (no class, or volumeBindingMode Immediate) makes the pod wait for the
//     volume controller ("pod has unbound immediate PersistentVolumeClaims").
//     A bound claim's volume is looked up once here.
//   Filter: a node passes when it matches every bound volume's
//     nodeAffinity.required; a claim bound to a volume that does not exist
//     fails every node.
//
// Not done here, unlike upstream: binding a claim of a WaitForFirstConsumer
// class (choosing a volume, or asking a provisioner through the
// selected-node annotation, then PreBind). Such a pod is rejected with a
// message saying so: binding it anyway would leave it waiting for a volume
// nobody makes. The claims come from ClusterObjects (the informers of
// cluster_objects.hpp), and their changes move waiting pods.
#pragma once

#include <string>
#include <vector>

#include "toysched/sched/framework.hpp"

namespace toysched::sched {

class VolumeBinding final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::volume_binding; }
  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override;
  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override;
  // Upstream scores only with storage capacity scoring (off by default).
  bool pre_score(const kube::Pod&, std::span<const NodeInfo* const>, const Cluster&) override { return false; }

 private:
  // This cycle's state (PreFilter writes it, Filter reads it).
  std::vector<const kube::PersistentVolume*> volumes_;  // of the bound claims that have node affinity
  bool volume_missing_ = false;                         // a bound claim's volume is unknown
  std::string message_;                                 // a rejection's text, until the next PreFilter
};

}  // namespace toysched::sched
