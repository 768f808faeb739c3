#include "toysched/sched/plugins/volume_binding.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>

#include "toysched/kube/labels.hpp"
#include "toysched/sched/plugins/node_affinity.hpp"
#include "toysched/sched/volume_assumptions.hpp"

namespace toysched::sched {
namespace {

constexpr std::string_view kUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims";
// volume.NotSupportedProvisioner: the class of statically made volumes only.
constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

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

// v1helper.MatchTopologySelectorTerms: no terms match every node.
bool topology_allows(const kube::StorageClass& sc, const kube::Node& node) {
  if (sc.allowed_topologies.empty()) return true;
  return std::any_of(sc.allowed_topologies.begin(), sc.allowed_topologies.end(), [&](const kube::TopologyTerm& t) {
    return std::all_of(t.expressions.begin(), t.expressions.end(), [&](const auto& e) {
      const std::string* v = kube::find_value(node.labels, e.first);
      return v != nullptr && std::find(e.second.begin(), e.second.end(), *v) != e.second.end();
    });
  });
}

const std::optional<std::string>& selected_node(const VolumeAssumptions* a, const kube::PersistentVolumeClaim& c) {
  return a != nullptr ? a->selected_node(c) : c.selected_node;
}
const std::optional<kube::ClaimRef>& claim_ref(const VolumeAssumptions* a, const kube::PersistentVolume& pv) {
  return a != nullptr ? a->claim_ref(pv) : pv.claim_ref;
}

}  // namespace

bool volume_bound_to(const std::optional<kube::ClaimRef>& ref, const kube::PersistentVolumeClaim& c) {
  return ref && ref->name == c.name && ref->ns == c.ns && (ref->uid.empty() || ref->uid == c.uid);
}

bool volume_fits(const kube::PersistentVolume& pv, const kube::Node& node) {
  return !pv.has_node_affinity || std::any_of(pv.node_affinity.begin(), pv.node_affinity.end(),
                                              [&](const kube::NodeSelectorTerm& t) { return term_matches(t, node); });
}

PreFilterResult VolumeBinding::pre_filter(const kube::Pod& pod, const Cluster& cluster) {
  bound_.clear();
  delayed_.clear();
  candidates_.clear();
  capacities_.clear();
  objects_ = cluster.objects;
  assumed_ = objects_ != nullptr ? objects_->volume_assumptions() : nullptr;
  if (pod.claims.empty() && pod.ephemeral_volumes.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  auto reject = [&](std::string text) {
    message_ = std::move(text);
    return PreFilterResult{PreFilterResult::Kind::reject, message_, nullptr};
  };
  auto lookup = [&](std::string_view name) { return objects_ != nullptr ? objects_->claim(pod.ns, name) : nullptr; };
  std::vector<const kube::PersistentVolumeClaim*> claims;
  for (const std::string& name : pod.claims) {
    const kube::PersistentVolumeClaim* c = lookup(name);
    if (c == nullptr) return reject(not_found_text("persistentvolumeclaim", name));
    claims.push_back(c);
  }
  // ephemeral.VolumeClaimName: the pod's name, "-", the volume's.
  for (const std::string& vol : pod.ephemeral_volumes) {
    const std::string name = pod.name + "-" + vol;
    const kube::PersistentVolumeClaim* c = lookup(name);
    if (c == nullptr)
      return reject("waiting for ephemeral volume controller to create the persistentvolumeclaim \"" + name + "\"");
    if (c->controller_uid != pod.uid)
      return reject("PVC " + c->ns + "/" + c->name + " was not created for pod " + pod.ns + "/" + pod.name +
                    " (pod is not owner)");
    claims.push_back(c);
  }
  for (const kube::PersistentVolumeClaim* c : claims)
    if (c->deleting) return reject("persistentvolumeclaim \"" + c->name + "\" is being deleted");
  bool unbound_immediate = false;
  for (const kube::PersistentVolumeClaim* c : claims) {
    if (fully_bound(*c)) {
      bound_.push_back(objects_->volume(c->volume_name));
    } else if (c->volume_name.empty() && waits_for_first_consumer(*c, *objects_)) {
      delayed_.push_back(c);
    } else {  // an immediate claim, or one pre-bound to a volume: the volume controller's
      unbound_immediate = true;
    }
  }
  if (unbound_immediate) return reject(std::string(kUnboundImmediate));
  std::vector<std::string_view> classes;  // whose volumes are in candidates_
  for (const kube::PersistentVolumeClaim* c : delayed_) {
    if (std::find(classes.begin(), classes.end(), *c->storage_class_name) != classes.end()) continue;
    classes.push_back(*c->storage_class_name);
    auto pvs = objects_->volumes_of_class(*c->storage_class_name);
    candidates_.insert(candidates_.end(), pvs.begin(), pvs.end());
    auto caps = objects_->storage_capacities(*c->storage_class_name);
    capacities_.insert(capacities_.end(), caps.begin(), caps.end());
  }
  const bool nothing_to_check = std::all_of(bound_.begin(), bound_.end(), [](const kube::PersistentVolume* pv) {
    return pv != nullptr && !pv->has_node_affinity;
  });
  if (delayed_.empty() && nothing_to_check) return {PreFilterResult::Kind::skip, {}, nullptr};
  // Upstream matches the smallest requests first (sort.Sort, which is
  // stable for so few claims).
  std::stable_sort(delayed_.begin(), delayed_.end(),
                   [](const auto* a, const auto* b) { return a->storage_request < b->storage_request; });
  return {};
}

// volume.FindMatchingVolume on the scheduler's path (a node given, delayed
// binding): the volume pre-bound to the claim if it fits the node (none
// if it does not), else the smallest available one that fits.
const kube::PersistentVolume* VolumeBinding::match(const kube::PersistentVolumeClaim& c, const kube::Node& node,
                                                   const std::vector<const kube::PersistentVolume*>& chosen) const {
  const kube::PersistentVolume* best = nullptr;
  for (const kube::PersistentVolume* pv : candidates_) {
    if (pv->storage_class_name != *c.storage_class_name) continue;
    if (std::find(chosen.begin(), chosen.end(), pv) != chosen.end()) continue;
    const std::optional<kube::ClaimRef>& ref = claim_ref(assumed_, *pv);
    const bool prebound = volume_bound_to(ref, c);
    if (ref && !prebound) continue;
    if (pv->capacity < c.storage_request || pv->block != c.block) continue;
    if (pv->attributes_class != c.attributes_class || pv->deleting) continue;
    const bool fits = volume_fits(*pv, node);
    if (prebound) return fits ? pv : nullptr;
    if (!pv->available || (c.selector && !kube::selector_matches(*c.selector, pv->labels)) || !fits) continue;
    if ((c.access_modes & pv->access_modes) != c.access_modes) continue;
    if (best == nullptr || pv->capacity < best->capacity) best = pv;
  }
  return best;
}

FilterStatus VolumeBinding::provisioning(const kube::PersistentVolumeClaim& c, const kube::Node& node) const {
  const kube::StorageClass* sc = objects_->storage_class(*c.storage_class_name);
  if (sc == nullptr || sc->provisioner.empty() || sc->provisioner == kNoProvisioner || !topology_allows(*sc, node))
    return reject(PluginId::volume_binding, Code::unresolvable, Reason::volume_bind_conflict);
  if (!enough_capacity(c, *sc, node))
    return reject(PluginId::volume_binding, Code::unresolvable, Reason::volume_no_space);
  return {};
}

// hasEnoughCapacity: only for a CSI driver that opted in
// (spec.storageCapacity); then some CSIStorageCapacity of the class,
// reachable from the node, must take a volume of the claim's size.
bool VolumeBinding::enough_capacity(const kube::PersistentVolumeClaim& c, const kube::StorageClass& sc,
                                    const kube::Node& node) const {
  if (c.storage_request == 0) return true;  // nothing to check
  const kube::CSIDriver* driver = objects_->csi_driver(sc.provisioner);
  if (driver == nullptr || !driver->storage_capacity) return true;
  return std::any_of(capacities_.begin(), capacities_.end(), [&](const kube::CSIStorageCapacity* cap) {
    return cap->storage_class_name == sc.name && cap->limit && *cap->limit >= c.storage_request && cap->node_topology &&
           kube::selector_matches(*cap->node_topology, node.labels);
  });
}

FilterStatus VolumeBinding::find(const kube::Node& node, PodVolumes* out) const {
  FilterStatus st;
  auto fail = [&](Reason r) {
    st.code = Code::unresolvable;
    st.plugin = PluginId::volume_binding;
    st.add(r);
  };
  for (const kube::PersistentVolume* pv : bound_) {  // checkBoundClaims: the first failure ends it
    if (pv == nullptr) {
      fail(Reason::volume_missing);
      break;
    }
    if (!volume_fits(*pv, node)) {
      fail(Reason::volume_node_affinity);
      break;
    }
  }
  if (delayed_.empty()) return st;
  std::vector<const kube::PersistentVolumeClaim*> provision, to_match;
  for (const kube::PersistentVolumeClaim* c : delayed_) {
    const std::optional<std::string>& selected = selected_node(assumed_, *c);
    if (selected && *selected != node.name) {  // promised to another node's provisioning
      fail(Reason::volume_bind_conflict);
      return st;
    }
    (selected ? provision : to_match).push_back(c);
  }
  std::vector<const kube::PersistentVolume*> chosen;
  for (const kube::PersistentVolumeClaim* c : to_match) {
    const kube::PersistentVolume* pv = match(*c, node, chosen);
    if (pv == nullptr) {
      provision.push_back(c);
      continue;
    }
    chosen.push_back(pv);
    if (out != nullptr) out->bind.emplace_back(pv, c);
  }
  // A claim no volume matched may still be provisioned: if every such
  // claim can be, the node passes (upstream lets the provisioning check's
  // answer replace the matching's); the first that cannot says why.
  for (const kube::PersistentVolumeClaim* c : provision) {
    const FilterStatus why = provisioning(*c, node);
    if (why.ok()) continue;
    fail(why.has(Reason::volume_no_space) ? Reason::volume_no_space : Reason::volume_bind_conflict);
    return st;
  }
  if (out != nullptr) out->provision = std::move(provision);
  return st;
}

std::size_t VolumeBinding::filter(const kube::Pod& /*pod*/, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) { return find(ni.node, nullptr); });
}

std::unique_ptr<Plugin> make_volume_binding(const PluginArgs& args) {
  return std::make_unique<VolumeBinding>(std::chrono::seconds(args.bind_timeout_seconds));
}

}  // namespace toysched::sched
