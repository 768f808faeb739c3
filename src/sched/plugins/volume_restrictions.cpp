// VolumeRestrictions (upstream's volumerestrictions plugin): what two pods
// may not share.
//
//  - A claim of access mode ReadWriteOncePod already in use. PreFilter
//    counts the pod's ReadWriteOncePod claims that some pod on some node
//    (bound or assumed) already names, as upstream's snapshot does
//    (IsPVCUsedByPods: terminating pods count until they are gone); Filter
//    then rejects every node, Unschedulable: preemption may free the claim,
//    and pre_filter_update (upstream's AddPod/RemovePod) moves the count as
//    victims are taken away. PreFilter looks every claim up, so a claim
//    that does not exist is reported here, before VolumeBinding's PreFilter.
//  - An in-tree disk (GCE PD, AWS EBS, iSCSI, RBD; kube::InlineDisk) that a
//    pod on the node already mounts: that node is Unschedulable, unless
//    both mount it read-only (never for EBS).
//
// This plugin has no header: nothing names its type, the registry makes it.
#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {
namespace {

bool overlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// upstream's isVolumeConflict, for one volume of each pod.
bool disks_conflict(const kube::InlineDisk& a, const kube::InlineDisk& b) {
  if (a.kind != b.kind || a.id != b.id) return false;
  const bool both_read_only = a.read_only && b.read_only;
  switch (a.kind) {
    case kube::InlineDisk::Kind::aws_ebs:
      return true;
    case kube::InlineDisk::Kind::rbd:
      return !both_read_only && a.pool == b.pool && overlap(a.monitors, b.monitors);
    case kube::InlineDisk::Kind::gce_pd:
    case kube::InlineDisk::Kind::iscsi:
      return !both_read_only;
  }
  return false;
}

// upstream's satisfyVolumeConflicts, negated.
bool disk_conflict_on(const kube::Pod& pod, const NodeInfo& ni) {
  for (const kube::InlineDisk& d : pod.disks) {
    for (const kube::Pod* other : ni.pods) {
      for (const kube::InlineDisk& e : other->disks) {
        if (disks_conflict(d, e)) return true;
      }
    }
  }
  return false;
}

class VolumeRestrictions final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::volume_restrictions; }

  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override {
    rwop_claims_.clear();
    in_use_ = 0;
    for (const std::string& name : pod.claims) {
      const kube::PersistentVolumeClaim* c =
          cluster.objects != nullptr ? cluster.objects->claim(pod.ns, name) : nullptr;
      if (c == nullptr) {
        message_ = not_found_text("persistentvolumeclaim", name);
        return {PreFilterResult::Kind::reject, message_, nullptr};
      }
      if (c->read_write_once_pod && std::find(rwop_claims_.begin(), rwop_claims_.end(), name) == rwop_claims_.end()) {
        rwop_claims_.push_back(name);
      }
    }
    if (!rwop_claims_.empty()) in_use_ = claims_in_use(pod.ns, cluster.nodes);
    if (pod.disks.empty() && in_use_ == 0) return {PreFilterResult::Kind::skip, {}, nullptr};
    return {};
  }

  // upstream's preFilterState.updateWithPod: every volume of `other` that
  // names one of the pod's ReadWriteOncePod claims, by name alone (upstream
  // does not compare namespaces here).
  void pre_filter_update(const kube::Pod& /*pod*/, const kube::Pod& other, const NodeInfo& /*ni*/, int sign) override {
    for (const std::string& name : other.claims) {
      if (std::find(rwop_claims_.begin(), rwop_claims_.end(), name) != rwop_claims_.end()) in_use_ += sign;
    }
  }

  std::size_t filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) override {
    return filter_each(
        nodes, sink, [&](const NodeInfo&) { return pod.disks.empty() && in_use_ <= 0; },
        [&](const NodeInfo& ni) {
          if (!pod.disks.empty() && disk_conflict_on(pod, ni)) {
            return reject(PluginId::volume_restrictions, Code::unschedulable, Reason::disk_conflict);
          }
          if (in_use_ > 0) {
            return reject(PluginId::volume_restrictions, Code::unschedulable, Reason::read_write_once_pod_conflict);
          }
          return FilterStatus{};
        });
  }

 private:
  // How many of rwop_claims_ (of namespace `ns`) a pod counted on a node
  // names: upstream's usedPVCSet, asked once per claim.
  int claims_in_use(std::string_view ns, std::span<const NodeInfo* const> nodes) {
    used_.assign(rwop_claims_.size(), false);
    for (const NodeInfo* ni : nodes) {
      if (ni == nullptr) continue;
      for (const kube::Pod* p : ni->pods) {
        if (p->claims.empty() || p->ns != ns) continue;
        for (const std::string& name : p->claims) {
          auto it = std::find(rwop_claims_.begin(), rwop_claims_.end(), name);
          if (it != rwop_claims_.end()) used_[static_cast<std::size_t>(it - rwop_claims_.begin())] = true;
        }
      }
    }
    return static_cast<int>(std::count(used_.begin(), used_.end(), true));
  }

  // This cycle's state (PreFilter writes it; Filter and the what-ifs read it).
  std::vector<std::string_view> rwop_claims_;  // the pod's ReadWriteOncePod claims, views into the pod
  std::vector<bool> used_;                     // claims_in_use's scratch, one per rwop_claims_
  int in_use_ = 0;                             // upstream's conflictingPVCRefCount
  std::string message_;                        // a rejection's text, until the next PreFilter
};

}  // namespace

std::unique_ptr<Plugin> make_volume_restrictions(const PluginArgs& /*args*/) {
  return std::make_unique<VolumeRestrictions>();
}

}  // namespace toysched::sched
