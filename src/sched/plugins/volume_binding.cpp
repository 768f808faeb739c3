#include "toysched/sched/plugins/volume_binding.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>

#include "toysched/sched/plugins/node_affinity.hpp"

namespace toysched::sched {
namespace {

constexpr std::string_view kUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims";

// A claim counts as bound once the volume controller has finished binding
// it (upstream's isPVCFullyBound): a claim that names its volume but lacks
// the bind-completed annotation is still being bound.
bool fully_bound(const kube::PersistentVolumeClaim& c) { return !c.volume_name.empty() && c.bind_completed; }

// storagehelpers.GetPersistentVolumeClaimClass, then IsDelayBindingMode: a
// claim with no class, or whose class is not known, binds at once.
bool waits_for_first_consumer(const kube::PersistentVolumeClaim& c, const ClusterObjects& objects) {
  if (!c.storage_class_name || c.storage_class_name->empty()) return false;
  const kube::StorageClass* sc = objects.storage_class(*c.storage_class_name);
  return sc != nullptr && sc->wait_for_first_consumer;
}

bool node_matches(const kube::PersistentVolume& pv, const kube::Node& node) {
  return std::any_of(pv.node_affinity.begin(), pv.node_affinity.end(),
                     [&](const kube::NodeSelectorTerm& t) { return term_matches(t, node); });
}

}  // namespace

PreFilterResult VolumeBinding::pre_filter(const kube::Pod& pod, const Cluster& cluster) {
  volumes_.clear();
  volume_missing_ = false;
  if (pod.claims.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  auto reject = [&](std::string text) {
    message_ = std::move(text);
    return PreFilterResult{PreFilterResult::Kind::reject, message_, nullptr};
  };
  bool unbound_immediate = false;
  for (const std::string& name : pod.claims) {
    const kube::PersistentVolumeClaim* c = cluster.objects != nullptr ? cluster.objects->claim(pod.ns, name) : nullptr;
    if (c == nullptr) return reject(not_found_text("persistentvolumeclaim", name));
    if (c->deleting) return reject("persistentvolumeclaim \"" + name + "\" is being deleted");
    if (fully_bound(*c)) {
      const kube::PersistentVolume* pv = cluster.objects->volume(c->volume_name);
      if (pv == nullptr) {
        volume_missing_ = true;
      } else if (pv->has_node_affinity) {
        volumes_.push_back(pv);
      }
    } else if (waits_for_first_consumer(*c, *cluster.objects)) {
      return reject("toy-scheduler does not bind persistentvolumeclaim \"" + name + "\" of storage class \"" +
                    *c->storage_class_name + "\" (volumeBindingMode WaitForFirstConsumer)");
    } else {
      unbound_immediate = true;
    }
  }
  if (unbound_immediate) return reject(std::string(kUnboundImmediate));
  if (volumes_.empty() && !volume_missing_) return {PreFilterResult::Kind::skip, {}, nullptr};
  return {};
}

std::size_t VolumeBinding::filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) {
    if (volume_missing_) return reject(PluginId::volume_binding, Code::unresolvable, Reason::volume_missing);
    for (const kube::PersistentVolume* pv : volumes_) {
      if (!node_matches(*pv, ni.node)) {
        return reject(PluginId::volume_binding, Code::unresolvable, Reason::volume_node_affinity);
      }
    }
    return FilterStatus{};
  });
}

std::unique_ptr<Plugin> make_volume_binding(const PluginArgs& /*args*/) { return std::make_unique<VolumeBinding>(); }

}  // namespace toysched::sched
