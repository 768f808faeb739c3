// NodeVolumeLimits (upstream's nodevolumelimits CSILimits): a node takes
// no more volumes of a CSI driver than its CSINode says it can attach.
//
//   PreFilter: a pod with no claim and no ephemeral volume needs nothing
//     of it: Skip. Otherwise each claim
//     is resolved once to a CSI volume, "driver/handle": the bound volume's
//     spec.csi; for a claim not bound yet (or bound to a volume not known),
//     its class's provisioner and a handle made up from the claim, unique
//     to it. A volume that is not CSI (or a claim of no known class) is not
//     counted. A claim that does not exist rejects the pod (upstream
//     rejects every node with the same text).
//   Filter, per node: no CSINode, or no limit for any driver of the pod's
//     volumes: pass. Otherwise the volumes already attached are counted per
//     driver, once each: those of the pods on the node (their claims and
//     ephemeral claims, resolved as above; a claim not found is skipped)
//     and those of the VolumeAttachments naming the node (a CSI volume
//     attached there, perhaps for no pod any more). The pod's volumes not
//     among them must fit under the driver's limit, or the node is
//     Unschedulable ("node(s) exceed max volume count"): preemption may
//     free it.
//
// Not counted, as listed in docs/compat.md: in-tree volumes that
// kube-scheduler translates to their CSI driver (CSI migration: AWS EBS,
// GCE PD, Azure Disk, Cinder, Portworx), inline or as a PersistentVolume.
//
// This plugin has no header: nothing names its type, the registry makes it.
#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toysched::sched {
namespace {

// One CSI volume: the driver, and "driver/handle", the same string for the
// same volume whichever pod or attachment names it.
struct CsiVolume {
  std::string driver;
  std::string unique_name;
};

// A prefix for the handles made up for claims not bound yet, as upstream's
// random one: no real volume handle can be mistaken for one.
std::string random_prefix() {
  std::random_device rd;
  std::mt19937_64 gen(rd());
  static constexpr std::string_view kDigits = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s(32, 'x');
  for (char& c : s) c = kDigits[gen() % kDigits.size()];
  return s;
}

class NodeVolumeLimits final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::node_volume_limits; }

  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override {
    volumes_.clear();
    objects_ = cluster.objects;
    if (pod.claims.empty() && pod.ephemeral_volumes.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
    auto lookup = [&](const std::string& name) -> const kube::PersistentVolumeClaim* {
      return objects_ != nullptr ? objects_->claim(pod.ns, name) : nullptr;
    };
    auto missing = [&](const std::string& name) {
      return reject("looking up PVC " + pod.ns + "/" + name + ": " + not_found_text("persistentvolumeclaim", name));
    };
    for (const std::string& name : pod.claims) {
      if (name.empty()) return reject("PersistentVolumeClaim had no name");
      const kube::PersistentVolumeClaim* c = lookup(name);
      if (c == nullptr) return missing(name);
      add(volumes_, *c);
    }
    // A generic ephemeral volume's claim, which must be the pod's own.
    for (const std::string& vol : pod.ephemeral_volumes) {
      const std::string name = pod.name + "-" + vol;
      const kube::PersistentVolumeClaim* c = lookup(name);
      if (c == nullptr) return missing(name);
      if (c->controller_uid != pod.uid)
        return reject("PVC " + c->ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name +
                      " (pod is not owner)");
      add(volumes_, *c);
    }
    return {};
  }

  std::size_t filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& sink) override {
    return filter_each(
        nodes, sink, [&](const NodeInfo& ni) { return volumes_.empty() || !limited(ni.node.name); },
        [&](const NodeInfo& ni) {
          return fits(ni) ? FilterStatus{}
                          : sched::reject(PluginId::node_volume_limits, Code::unschedulable, Reason::max_volume_count);
        });
  }

 private:
  PreFilterResult reject(std::string text) {
    message_ = std::move(text);
    return {PreFilterResult::Kind::reject, message_, nullptr};
  }

  // upstream's getCSIDriverInfo: the claim's CSI volume, or nothing.
  void add(std::vector<CsiVolume>& out, const kube::PersistentVolumeClaim& c) const {
    const kube::PersistentVolume* pv = c.volume_name.empty() ? nullptr : objects_->volume(c.volume_name);
    if (pv != nullptr) {
      if (!pv->csi_driver.empty() && !pv->csi_volume_handle.empty())
        out.push_back({pv->csi_driver, pv->csi_driver + "/" + pv->csi_volume_handle});
      return;
    }
    // getCSIDriverInfoFromSC: not bound yet, or bound to a volume not
    // known; an unbound claim with no class must be Immediate, so bound
    // before it is scheduled, and is not counted.
    if (!c.storage_class_name || c.storage_class_name->empty()) return;
    const kube::StorageClass* sc = objects_->storage_class(*c.storage_class_name);
    if (sc == nullptr || sc->provisioner.empty()) return;
    out.push_back({sc->provisioner, sc->provisioner + "/" + prefix_ + "-" + c.ns + "/" + c.name});
  }

  // The node has a limit for a driver of the pod's volumes (else upstream's
  // Filter returns before counting anything).
  bool limited(const std::string& node) const {
    const kube::CSINode* n = objects_ != nullptr ? objects_->csi_node(node) : nullptr;
    if (n == nullptr) return false;
    return std::any_of(volumes_.begin(), volumes_.end(), [&](const CsiVolume& v) { return limit_of(*n, v.driver); });
  }

  // The driver's count on the node, or nullptr for no limit (upstream's
  // getVolumeLimits: the last entry of that name that has a count).
  static const std::int64_t* limit_of(const kube::CSINode& n, std::string_view driver) {
    const std::int64_t* limit = nullptr;
    for (const auto& d : n.drivers)
      if (d.name == driver && d.count) limit = &*d.count;
    return limit;
  }

  static bool by_name(const CsiVolume& a, const CsiVolume& b) { return a.unique_name < b.unique_name; }
  static void sort_unique(std::vector<CsiVolume>& v) {
    std::sort(v.begin(), v.end(), by_name);
    v.erase(
        std::unique(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.unique_name == b.unique_name; }),
        v.end());
  }
  static bool holds(const std::vector<CsiVolume>& sorted, const CsiVolume& v) {
    return std::binary_search(sorted.begin(), sorted.end(), v, by_name);
  }
  static std::int64_t count_of(const std::vector<CsiVolume>& v, const std::string& driver) {
    return std::count_if(v.begin(), v.end(), [&](const CsiVolume& x) { return x.driver == driver; });
  }

  // upstream's Filter past its early returns: the volumes the pods on the
  // node use, then those attachments add (not already counted), then, per
  // driver, the pod's volumes that no pod there uses yet. A volume only an
  // attachment names is counted there and again as the pod's, as upstream
  // counts it.
  bool fits(const NodeInfo& ni) {
    in_use_.clear();
    for (const kube::Pod* p : ni.pods) {
      for (const std::string& name : p->claims) existing(*p, name);
      for (const std::string& vol : p->ephemeral_volumes) existing(*p, p->name + "-" + vol);
    }
    sort_unique(in_use_);
    attached_only_.clear();
    for (const kube::VolumeAttachment& va : objects_->attachments(ni.node.name)) {
      if (va.attacher.empty() || va.persistent_volume_name.empty()) continue;
      const kube::PersistentVolume* pv = objects_->volume(va.persistent_volume_name);
      if (pv == nullptr || pv->csi_driver.empty()) continue;
      CsiVolume v{va.attacher, va.attacher + "/" + pv->csi_volume_handle};
      if (!holds(in_use_, v)) attached_only_.push_back(std::move(v));
    }
    sort_unique(attached_only_);
    incoming_.clear();
    for (const CsiVolume& v : volumes_)
      if (!holds(in_use_, v)) incoming_.push_back(v);
    sort_unique(incoming_);
    const kube::CSINode& n = *objects_->csi_node(ni.node.name);
    for (const CsiVolume& v : incoming_) {
      const std::int64_t* limit = limit_of(n, v.driver);
      if (limit == nullptr) continue;
      const std::int64_t count = count_of(in_use_, v.driver) + count_of(attached_only_, v.driver);
      if (count + count_of(incoming_, v.driver) > *limit) return false;
    }
    return true;
  }

  // A volume of a pod already on the node; a claim not found is skipped.
  void existing(const kube::Pod& p, const std::string& claim) {
    if (const kube::PersistentVolumeClaim* c = objects_->claim(p.ns, claim)) add(in_use_, *c);
  }

  const std::string prefix_ = random_prefix();
  const ClusterObjects* objects_ = nullptr;
  std::vector<CsiVolume> volumes_;  // the pod's, from PreFilter
  // One node's, each sorted and unique, rebuilt by fits(): the volumes its
  // pods use, those only attachments name, and the pod's not in use there.
  std::vector<CsiVolume> in_use_, attached_only_, incoming_;
  std::string message_;  // PreFilter's rejection
};

}  // namespace

std::unique_ptr<Plugin> make_node_volume_limits(const PluginArgs& /*args*/) {
  return std::make_unique<NodeVolumeLimits>();
}

}  // namespace toysched::sched
