// The index behind Cluster::objects and the informers that keep it. The
// default selector follows upstream's pkg/scheduler/framework/plugins/helper/
// spread.go (DefaultSelector, GetPodServices).
#include "toysched/sched/cluster_objects.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "toysched/kube/labels.hpp"

namespace toysched::sched {

namespace {

template <class M>
auto* find_in(M& map, std::string_view key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

// The object `ns`/`name` of a ByNamespace map, or nullptr.
template <class V>
const V* lookup(const StringMap<StringMap<V>>& by_ns, std::string_view ns, std::string_view name) {
  const auto* in_ns = find_in(by_ns, ns);
  return in_ns ? find_in(*in_ns, name) : nullptr;
}

template <class V>
void put_in(StringMap<StringMap<V>>& by_ns, const std::string& ns, const std::string& name, V value) {
  by_ns[ns].insert_or_assign(name, std::move(value));
}

template <class V>
void erase_from(StringMap<StringMap<V>>& by_ns, const std::string& ns, const std::string& name) {
  auto it = by_ns.find(ns);
  if (it == by_ns.end()) return;
  it->second.erase(name);
  if (it->second.empty()) by_ns.erase(it);
}

template <class V>
std::size_t count_all(const StringMap<StringMap<V>>& by_ns) {
  std::size_t n = 0;
  for (const auto& [ns, objects] : by_ns) n += objects.size();
  return n;
}

// labels.Merge: `add`'s pairs win over those already in `set`.
void merge(kube::StringPairs& set, const kube::StringPairs& add) {
  for (const auto& [k, v] : add) {
    auto it = std::find_if(set.begin(), set.end(), [&](const auto& kv) { return kv.first == k; });
    if (it == set.end())
      set.emplace_back(k, v);
    else
      it->second = v;
  }
}

// schema.ParseGroupVersion(owner.apiVersion).WithKind(owner.kind) == group/version, kind.
// "" and "/" parse to the empty group version; more than one '/' does not parse.
bool owner_is(const kube::OwnerReference& o, std::string_view group, std::string_view version, std::string_view kind) {
  if (o.kind != kind) return false;
  std::string_view gv = o.api_version;
  if (gv.empty() || gv == "/") return group.empty() && version.empty();
  auto slash = gv.find('/');
  if (slash == std::string_view::npos) return group.empty() && gv == version;
  if (gv.find('/', slash + 1) != std::string_view::npos) return false;
  return gv.substr(0, slash) == group && gv.substr(slash + 1) == version;
}

// metav1.GetControllerOfNoCopy: the first owner reference marked controller.
const kube::OwnerReference* controller_of(const kube::Pod& pod) {
  for (const auto& o : pod.owners)
    if (o.controller) return &o;
  return nullptr;
}

// selector.Add(requirements of `other`): ANDed in. Left out when upstream
// could not convert it, and for an absent selector (labels.Nothing() has no
// requirements to add).
void and_in(kube::LabelSelector& sel, const std::optional<kube::LabelSelector>& other) {
  if (!other || !kube::selector_valid(*other)) return;
  for (const auto& kv : other->match_labels)
    if (std::find(sel.match_labels.begin(), sel.match_labels.end(), kv) == sel.match_labels.end())
      sel.match_labels.push_back(kv);
  sel.match_expressions.insert(sel.match_expressions.end(), other->match_expressions.begin(),
                               other->match_expressions.end());
}

// pdb_list_'s order.
bool by_ns_name(const kube::PodDisruptionBudget* a, const kube::PodDisruptionBudget* b) {
  return std::tie(a->ns, a->name) < std::tie(b->ns, b->name);
}

// upstream's isSchedulableAfterCSINodeUpdated: some driver's limit went up
// (a driver new to the node, or one that had no count, counts from 0).
bool limit_raised(const kube::CSINode& old, const kube::CSINode& now) {
  return std::any_of(now.drivers.begin(), now.drivers.end(), [&](const kube::CSINode::Driver& d) {
    std::int64_t before = 0;
    for (const auto& o : old.drivers)
      if (o.name == d.name) before = o.count.value_or(0);
    return d.count.value_or(0) > before;
  });
}

const char* op_text(kube::SelectorOp op) {
  switch (op) {
    case kube::SelectorOp::in:
      return " in ";
    case kube::SelectorOp::not_in:
      return " notin ";
    case kube::SelectorOp::gt:
      return " gt ";
    case kube::SelectorOp::lt:
      return " lt ";
    default:
      return " ? ";
  }
}

}  // namespace

ClusterObjectIndex::ClusterObjectIndex(std::function<void(const char*)> changed, std::function<void()> listed)
    : changed_(std::move(changed)), listed_(std::move(listed)) {}

const kube::StringPairs* ClusterObjectIndex::namespace_labels(std::string_view ns) const {
  return find_in(namespaces_, ns);
}
const kube::PersistentVolumeClaim* ClusterObjectIndex::claim(std::string_view ns, std::string_view name) const {
  return lookup(claims_, ns, name);
}
const kube::PersistentVolume* ClusterObjectIndex::volume(std::string_view name) const {
  return find_in(volumes_, name);
}
std::vector<const kube::PersistentVolume*> ClusterObjectIndex::volumes_of_class(std::string_view name) const {
  std::vector<const kube::PersistentVolume*> out;
  for (const auto& [_, pv] : volumes_)
    if (pv.storage_class_name == name) out.push_back(&pv);
  return out;
}
const kube::StorageClass* ClusterObjectIndex::storage_class(std::string_view name) const {
  return find_in(classes_, name);
}

const kube::CSINode* ClusterObjectIndex::csi_node(std::string_view node) const { return find_in(csi_nodes_, node); }
std::span<const kube::VolumeAttachment> ClusterObjectIndex::attachments(std::string_view node) const {
  const auto* on_node = find_in(attachments_, node);
  return on_node ? std::span<const kube::VolumeAttachment>(*on_node) : std::span<const kube::VolumeAttachment>();
}

const kube::CSIDriver* ClusterObjectIndex::csi_driver(std::string_view name) const {
  return find_in(csi_drivers_, name);
}
std::vector<const kube::CSIStorageCapacity*> ClusterObjectIndex::storage_capacities(std::string_view class_name) const {
  std::vector<const kube::CSIStorageCapacity*> out;
  for (const auto& [ns, by_name] : capacities_)
    for (const auto& [name, c] : by_name)
      if (c.storage_class_name == class_name) out.push_back(&c);
  return out;
}

kube::LabelSelector ClusterObjectIndex::default_selector(const kube::Pod& pod) const {
  kube::LabelSelector sel;
  if (const auto* services = find_in(services_, pod.ns)) {
    for (const auto& [name, selector] : *services) {
      // An empty selector is the API's nil one (omitempty): it selects no pod.
      if (!selector.empty() && kube::map_selector_matches(selector, pod.labels)) merge(sel.match_labels, selector);
    }
  }
  const kube::OwnerReference* owner = controller_of(pod);
  if (owner && owner_is(*owner, "", "v1", "ReplicationController")) {
    if (const auto* rc = lookup(rcs_, pod.ns, owner->name)) merge(sel.match_labels, *rc);
  }
  std::sort(sel.match_labels.begin(), sel.match_labels.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (owner && owner_is(*owner, "apps", "v1", "ReplicaSet")) {
    if (const auto* rs = lookup(rss_, pod.ns, owner->name)) and_in(sel, *rs);
  } else if (owner && owner_is(*owner, "apps", "v1", "StatefulSet")) {
    if (const auto* ss = lookup(sss_, pod.ns, owner->name)) and_in(sel, *ss);
  }
  return sel;
}

void ClusterObjectIndex::put(const kube::Namespace& n, const kube::Namespace* old) {
  namespaces_.insert_or_assign(n.name, n.labels);
  if (old && old->labels != n.labels && changed_) changed_("NamespaceUpdate");
}
void ClusterObjectIndex::put(const kube::Service& s, const kube::Service*) {
  put_in(services_, s.ns, s.name, s.selector);
}
void ClusterObjectIndex::put(const kube::ReplicationController& rc, const kube::ReplicationController*) {
  put_in(rcs_, rc.ns, rc.name, rc.selector);
}
void ClusterObjectIndex::put(const kube::ReplicaSet& rs, const kube::ReplicaSet*) {
  put_in(rss_, rs.ns, rs.name, rs.selector);
}
void ClusterObjectIndex::put(const kube::StatefulSet& ss, const kube::StatefulSet*) {
  put_in(sss_, ss.ns, ss.name, ss.selector);
}
void ClusterObjectIndex::put(const kube::PersistentVolumeClaim& c, const kube::PersistentVolumeClaim* old) {
  put_in(claims_, c.ns, c.name, c);
  if (changed_) changed_(old ? "PersistentVolumeClaimUpdate" : "PersistentVolumeClaimAdd");
}
void ClusterObjectIndex::put(const kube::PersistentVolume& pv, const kube::PersistentVolume* old) {
  volumes_.insert_or_assign(pv.name, pv);
  if (changed_) changed_(old ? "PersistentVolumeUpdate" : "PersistentVolumeAdd");
}
void ClusterObjectIndex::put(const kube::StorageClass& sc, const kube::StorageClass* old) {
  classes_.insert_or_assign(sc.name, sc);
  if (changed_) changed_(old ? "StorageClassUpdate" : "StorageClassAdd");
}
void ClusterObjectIndex::put(const kube::CSINode& n, const kube::CSINode* old) {
  csi_nodes_.insert_or_assign(n.name, n);
  if (!changed_) return;
  if (!old) {
    changed_("CSINodeAdd");
  } else if (limit_raised(*old, n)) {
    changed_("CSINodeUpdate");
  }
}
void ClusterObjectIndex::put(const kube::VolumeAttachment& va, const kube::VolumeAttachment* old) {
  if (old && old->node_name != va.node_name) erase(*old);  // spec.nodeName is immutable; be safe
  auto& on_node = attachments_[va.node_name];
  auto it = std::find_if(on_node.begin(), on_node.end(), [&](const auto& a) { return a.name == va.name; });
  if (it == on_node.end()) {
    on_node.push_back(va);
  } else {
    *it = va;
  }
}
void ClusterObjectIndex::put(const kube::CSIDriver& d, const kube::CSIDriver* old) {
  csi_drivers_.insert_or_assign(d.name, d);
  if (changed_) changed_(old ? "CSIDriverUpdate" : "CSIDriverAdd");
}
void ClusterObjectIndex::put(const kube::CSIStorageCapacity& c, const kube::CSIStorageCapacity* old) {
  capacities_[c.ns].insert_or_assign(c.name, c);
  if (changed_) changed_(old ? "CSIStorageCapacityUpdate" : "CSIStorageCapacityAdd");
}
void ClusterObjectIndex::put(const kube::PodDisruptionBudget& pdb, const kube::PodDisruptionBudget*) {
  auto [it, added] = pdbs_[pdb.ns].insert_or_assign(pdb.name, pdb);
  if (!added) return;  // assigned in place: the list's pointer still holds
  const kube::PodDisruptionBudget* p = &it->second;
  pdb_list_.insert(std::lower_bound(pdb_list_.begin(), pdb_list_.end(), p, by_ns_name), p);
}
void ClusterObjectIndex::erase(const kube::Namespace& n) { namespaces_.erase(n.name); }
void ClusterObjectIndex::erase(const kube::Service& s) { erase_from(services_, s.ns, s.name); }
void ClusterObjectIndex::erase(const kube::ReplicationController& rc) { erase_from(rcs_, rc.ns, rc.name); }
void ClusterObjectIndex::erase(const kube::ReplicaSet& rs) { erase_from(rss_, rs.ns, rs.name); }
void ClusterObjectIndex::erase(const kube::StatefulSet& ss) { erase_from(sss_, ss.ns, ss.name); }
void ClusterObjectIndex::erase(const kube::PersistentVolumeClaim& c) { erase_from(claims_, c.ns, c.name); }
void ClusterObjectIndex::erase(const kube::PersistentVolume& pv) { volumes_.erase(pv.name); }
void ClusterObjectIndex::erase(const kube::StorageClass& sc) { classes_.erase(sc.name); }
void ClusterObjectIndex::erase(const kube::CSINode& n) { csi_nodes_.erase(n.name); }
void ClusterObjectIndex::erase(const kube::VolumeAttachment& va) {
  auto on_node = attachments_.find(va.node_name);
  if (on_node == attachments_.end()) return;
  std::erase_if(on_node->second, [&](const auto& a) { return a.name == va.name; });
  if (on_node->second.empty()) attachments_.erase(on_node);
  if (changed_) changed_("VolumeAttachmentDelete");
}
void ClusterObjectIndex::erase(const kube::CSIDriver& d) { csi_drivers_.erase(d.name); }
void ClusterObjectIndex::erase(const kube::CSIStorageCapacity& c) { erase_from(capacities_, c.ns, c.name); }
void ClusterObjectIndex::erase(const kube::PodDisruptionBudget& pdb) {
  const auto* known = lookup(pdbs_, pdb.ns, pdb.name);
  if (!known) return;
  auto it = std::lower_bound(pdb_list_.begin(), pdb_list_.end(), known, by_ns_name);
  if (it != pdb_list_.end() && *it == known) pdb_list_.erase(it);
  erase_from(pdbs_, pdb.ns, pdb.name);
}

template <>
std::size_t ClusterObjectIndex::count<kube::Namespace>() const {
  return namespaces_.size();
}
template <>
std::size_t ClusterObjectIndex::count<kube::Service>() const {
  return count_all(services_);
}
template <>
std::size_t ClusterObjectIndex::count<kube::ReplicationController>() const {
  return count_all(rcs_);
}
template <>
std::size_t ClusterObjectIndex::count<kube::ReplicaSet>() const {
  return count_all(rss_);
}
template <>
std::size_t ClusterObjectIndex::count<kube::StatefulSet>() const {
  return count_all(sss_);
}
template <>
std::size_t ClusterObjectIndex::count<kube::PersistentVolumeClaim>() const {
  return count_all(claims_);
}
template <>
std::size_t ClusterObjectIndex::count<kube::PersistentVolume>() const {
  return volumes_.size();
}
template <>
std::size_t ClusterObjectIndex::count<kube::StorageClass>() const {
  return classes_.size();
}
template <>
std::size_t ClusterObjectIndex::count<kube::CSINode>() const {
  return csi_nodes_.size();
}
template <>
std::size_t ClusterObjectIndex::count<kube::VolumeAttachment>() const {
  std::size_t n = 0;
  for (const auto& [node, on_node] : attachments_) n += on_node.size();
  return n;
}
template <>
std::size_t ClusterObjectIndex::count<kube::CSIDriver>() const {
  return csi_drivers_.size();
}
template <>
std::size_t ClusterObjectIndex::count<kube::CSIStorageCapacity>() const {
  std::size_t n = 0;
  for (const auto& [ns, by_name] : capacities_) n += by_name.size();
  return n;
}
template <>
std::size_t ClusterObjectIndex::count<kube::PodDisruptionBudget>() const {
  return pdb_list_.size();
}

std::string selector_text(const kube::LabelSelector& s) {
  // (key, text) of each requirement, then sorted by key as upstream's
  // internalSelector keeps its requirements.
  std::vector<std::pair<std::string_view, std::string>> reqs;
  for (const auto& [k, v] : s.match_labels) reqs.emplace_back(k, k + "=" + v);
  for (const auto& r : s.match_expressions) {
    std::string text;
    if (r.op == kube::SelectorOp::exists) {
      text = r.key;
    } else if (r.op == kube::SelectorOp::does_not_exist) {
      text = "!" + r.key;
    } else {
      text = r.key + op_text(r.op) + "(";
      for (std::size_t i = 0; i < r.values.size(); ++i) text += (i ? "," : "") + r.values[i];
      text += ")";
    }
    reqs.emplace_back(r.key, std::move(text));
  }
  std::stable_sort(reqs.begin(), reqs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [key, text] : reqs) out += (out.empty() ? "" : ",") + text;
  return out;
}

namespace {
// One reflector per kind, each feeding its handler of the index.
template <class... T>
auto make_reflectors(kube::Api& api, ClusterObjectIndex& index, KindList<T...>) {
  return std::make_tuple(std::make_unique<kube::Reflector<T>>(api, index.handler<T>(), kube::ListOptions{})...);
}
}  // namespace

ClusterInformers::ClusterInformers(kube::Api& api, std::function<void(const char*)> changed,
                                   std::function<void()> listed)
    : index_(std::move(changed), std::move(listed)), reflectors_(make_reflectors(api, index_, ClusterKinds{})) {}

boost::asio::awaitable<void> ClusterInformers::run() {
  using namespace boost::asio::experimental::awaitable_operators;
  co_await std::apply([](auto&... r) { return (r->run() && ...); }, reflectors_);
}

void ClusterInformers::stop() {
  for_each([](auto& r) { r.stop(); });
}

bool ClusterInformers::synced() const noexcept {
  bool all = true;
  for_each([&](const auto& r) { all = all && r.synced(); });
  return all;
}

std::vector<ClusterInformers::Informer> ClusterInformers::informers() const {
  std::vector<Informer> out;
  for_each([&](const auto& r) { out.push_back({r.resource(), &r.stats(), r.store().size()}); });
  return out;
}

}  // namespace toysched::sched
