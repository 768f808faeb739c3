// VolumeZone (upstream's volumezone plugin): a pod whose claim is bound to a
// PersistentVolume labelled with a zone or region goes only to nodes of
// that zone or region.
//
//   PreFilter: every claim the pod names is looked up. A claim bound to a
//     volume (spec.volumeName, whether or not the binding is complete)
//     contributes the volume's topology labels: topology.kubernetes.io/zone
//     and /region, and their beta failure-domain.beta.kubernetes.io forms.
//     A label's value may list several zones joined by "__"; a value with an
//     empty element is ignored, as upstream ignores a label it cannot parse.
//     An unbound claim of a WaitForFirstConsumer class is skipped (its
//     volume does not exist yet); any other unbound claim, a missing claim,
//     class or volume rejects the pod, UnschedulableAndUnresolvable, with
//     upstream's text. No topology label on any volume: Skip.
//   Filter: a node with none of the four labels passes (a single-zone
//     cluster need not label its nodes). Otherwise, for every volume label,
//     the node's label of the same key (or, for a beta key the node lacks,
//     its GA twin) must be one of the volume's values; if not, the node is
//     UnschedulableAndUnresolvable: no eviction moves a volume.
//
// A volume's spec.nodeAffinity is VolumeBinding's business, not this one's.
//
// This plugin has no header: nothing names its type, the registry makes it.
#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::sched {
namespace {

constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";
// upstream's topologyLabels, in its order.
constexpr std::array<std::string_view, 4> kTopologyLabels = {kBetaZone, kBetaRegion, kZone, kRegion};
// cloudvolume.LabelMultiZoneDelimiter
constexpr std::string_view kZoneDelimiter = "__";

// upstream's translateToGALabel.
std::string_view ga_label(std::string_view key) {
  if (key == kBetaRegion) return kRegion;
  if (key == kBetaZone) return kZone;
  return key;
}

// Calls f(zone) for each element of a "__"-joined label value; false when
// an element is empty (upstream's LabelZonesToSet fails on it). Label
// values hold no white space, so upstream's trimming changes nothing.
template <class F>
bool for_each_zone(std::string_view value, F&& f) {
  while (true) {
    const std::size_t at = value.find(kZoneDelimiter);
    const std::string_view zone = value.substr(0, at);
    if (zone.empty()) return false;
    if (f(zone)) return true;
    if (at == std::string_view::npos) return true;
    value.remove_prefix(at + kZoneDelimiter.size());
  }
}

bool valid_zones(std::string_view value) {
  return for_each_zone(value, [](std::string_view) { return false; });
}

bool has_zone(std::string_view value, std::string_view zone) {
  bool found = false;
  for_each_zone(value, [&](std::string_view z) {
    found = z == zone;
    return found;  // stops at the first match
  });
  return found;
}

bool has_topology_label(const kube::Node& node) {
  return std::any_of(kTopologyLabels.begin(), kTopologyLabels.end(),
                     [&](std::string_view key) { return kube::find_value(node.labels, key) != nullptr; });
}

class VolumeZone final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::volume_zone; }

  PreFilterResult pre_filter(const kube::Pod& pod, const Cluster& cluster) override {
    topologies_.clear();
    if (pod.claims.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
    for (const std::string& name : pod.claims) {
      if (!add_volume_of(pod.ns, name, cluster.objects)) return {PreFilterResult::Kind::reject, message_, nullptr};
    }
    if (topologies_.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
    return {};
  }

  std::size_t filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& sink) override {
    return filter_each(
        nodes, sink, [&](const NodeInfo& ni) { return !has_topology_label(ni.node) || matches(ni.node); },
        [](const NodeInfo&) {
          return reject(PluginId::volume_zone, Code::unresolvable, Reason::volume_zone_conflict);
        });
  }

 private:
  // One topology label of one of the pod's volumes (upstream's pvTopology).
  struct Topology {
    std::string_view key;    // one of kTopologyLabels
    std::string_view zones;  // the label's value, "__"-joined; a view into the volume
  };

  // upstream's getPVbyPod for one claim: adds its volume's topology labels
  // (or none); false, with the text in message_, when the claim rejects
  // the pod.
  bool add_volume_of(const std::string& ns, const std::string& name, const ClusterObjects* objects) {
    if (name.empty()) return fail("PersistentVolumeClaim had no name");
    const kube::PersistentVolumeClaim* c = objects != nullptr ? objects->claim(ns, name) : nullptr;
    if (c == nullptr) return fail(not_found_text("persistentvolumeclaim", name));
    if (c->volume_name.empty()) {
      const std::string class_name = c->storage_class_name.value_or("");
      if (class_name.empty()) return fail("PersistentVolumeClaim had no pv name and storageClass name");
      const kube::StorageClass* sc = objects->storage_class(class_name);
      if (sc == nullptr) return fail(not_found_text("storageclass.storage.k8s.io", class_name));
      if (sc->wait_for_first_consumer) return true;  // its volume does not exist yet
      return fail("PersistentVolume had no name");
    }
    const kube::PersistentVolume* pv = objects->volume(c->volume_name);
    if (pv == nullptr) return fail(not_found_text("persistentvolume", c->volume_name));
    for (std::string_view key : kTopologyLabels) {
      const std::string* value = kube::find_value(pv->labels, key);
      if (value != nullptr && valid_zones(*value)) topologies_.push_back({key, *value});
    }
    return true;
  }

  bool fail(std::string text) {
    message_ = std::move(text);
    return false;
  }

  bool matches(const kube::Node& node) const {
    return std::all_of(topologies_.begin(), topologies_.end(), [&](const Topology& t) {
      const std::string* v = kube::find_value(node.labels, t.key);
      if (v == nullptr) v = kube::find_value(node.labels, ga_label(t.key));
      return v != nullptr && has_zone(t.zones, *v);
    });
  }

  // This cycle's state (PreFilter writes it, Filter reads it).
  std::vector<Topology> topologies_;
  std::string message_;  // a rejection's text, until the next PreFilter
};

}  // namespace

std::unique_ptr<Plugin> make_volume_zone(const PluginArgs& /*args*/) { return std::make_unique<VolumeZone>(); }

}  // namespace toysched::sched
