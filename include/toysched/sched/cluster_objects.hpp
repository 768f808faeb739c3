// What the plugins look up beyond nodes and pods (framework.hpp's
// ClusterObjects), kept by an informer per kind of ClusterKinds, as
// kube-scheduler's listers are:
//
//   watch/namespaces ──────────────┐
//   watch/services ────────────────┤
//   watch/replicationcontrollers ──┤
//   watch/replicasets ─────────────┤     (namespace labels; per namespace,
//   watch/statefulsets ────────────┼─► ClusterObjectIndex ──► Cluster::objects
//   watch/persistentvolumeclaims ──┤      the selectors by name; the claims,
//   watch/persistentvolumes ───────┤      volumes and classes themselves;
//   watch/storageclasses ──────────┤      the PDBs, sorted, for preemption;
//   watch/csinodes ────────────────┤      CSINodes by node, VolumeAttachments
//   watch/volumeattachments ───────┤      by the node they name; CSIDrivers,
//   watch/csidrivers ──────────────┤      CSIStorageCapacities by class)
//   watch/csistoragecapacities ────┤
//   watch/poddisruptionbudgets ────┘
//
// The index keeps its own copy of what it needs, keyed so that a lookup by
// a pod's namespace and owner or claim name builds no string: the Store's
// map is keyed "ns/name" and is replaced wholesale on a relist, so neither
// its keys nor its element addresses serve a per-pod lookup.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "toysched/kube/reflector.hpp"
#include "toysched/sched/framework.hpp"
#include "toysched/sched/volume_assumptions.hpp"

namespace toysched::sched {

// The kinds the plugins read beyond pods and nodes. Each has an informer
// (ClusterInformers) and its own put, erase and count in
// ClusterObjectIndex (cluster_objects.cpp). A new one is its line in
// kube/kinds.hpp, its type here, and those three.
template <class... T>
struct KindList {};
using ClusterKinds =
    KindList<kube::Namespace, kube::Service, kube::ReplicationController, kube::ReplicaSet, kube::StatefulSet,
             kube::PersistentVolumeClaim, kube::PersistentVolume, kube::StorageClass, kube::CSINode,
             kube::VolumeAttachment, kube::CSIDriver, kube::CSIStorageCapacity, kube::PodDisruptionBudget>;

// A std::string-keyed map looked up by string_view (C++20 heterogeneous lookup).
struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringViewHash, std::equal_to<>>;

class ClusterObjectIndex final : public ClusterObjects {
 public:
  // `changed` hears, with the queue's event name, of a change that may make
  // an unschedulable pod fit: a namespace's labels (InterPodAffinity's
  // namespaceSelector). Services and controllers feed only the default
  // spread constraints, which are ScheduleAnyway: they never make a pod
  // unschedulable, so their changes move no pod. A claim, volume or class
  // added or updated may let in a pod VolumeBinding rejected (a claim bound
  // at last, a volume's node affinity changed); a delete never does. A
  // PodDisruptionBudget moves no pod either: it only orders preemption's
  // candidates and victims (a node whose victims break fewer budgets
  // first), it never makes a pod unschedulable or preemption impossible,
  // and upstream registers no event for it. A CSINode added, or updated
  // with a higher limit for a driver, and a VolumeAttachment deleted may
  // let in a pod NodeVolumeLimits rejected (upstream's hints for it); a
  // CSIDriver or a CSIStorageCapacity added or updated, one VolumeBinding
  // rejected for want of storage.
  // `listed`: each informer's list applied (the scheduler checks whether
  // all have synced).
  explicit ClusterObjectIndex(std::function<void(const char* event)> changed = {}, std::function<void()> listed = {});
  ClusterObjectIndex(const ClusterObjectIndex&) = delete;
  ClusterObjectIndex& operator=(const ClusterObjectIndex&) = delete;
  ~ClusterObjectIndex() = default;

  const kube::StringPairs* namespace_labels(std::string_view ns) const override;
  // upstream's helper.DefaultSelector. The Services' and ReplicationController's
  // label sets merged form `match_labels` (sorted by key, as a labels.Set
  // selector is); a ReplicaSet's or StatefulSet's selector is then ANDed
  // in: its pairs appended, its expressions after.
  kube::LabelSelector default_selector(const kube::Pod& pod) const override;
  const kube::PersistentVolumeClaim* claim(std::string_view ns, std::string_view name) const override;
  const kube::PersistentVolume* volume(std::string_view name) const override;
  const kube::StorageClass* storage_class(std::string_view name) const override;
  std::vector<const kube::PersistentVolume*> volumes_of_class(std::string_view name) const override;
  VolumeAssumptions* volume_assumptions() const override { return &assumed_; }
  const kube::CSINode* csi_node(std::string_view node) const override;
  std::span<const kube::VolumeAttachment> attachments(std::string_view node) const override;
  const kube::CSIDriver* csi_driver(std::string_view name) const override;
  std::vector<const kube::CSIStorageCapacity*> storage_capacities(std::string_view class_name) const override;
  std::span<const kube::PodDisruptionBudget* const> pdbs() const override { return pdb_list_; }

  // The handler the informer of kind T feeds (a unit test may feed it by hand).
  template <class T>
  kube::Handler<T>& handler() noexcept {
    return std::get<Events<T>>(events_);
  }
  // How many objects of kind T the index holds.
  template <class T>
  std::size_t count() const;

 private:
  // namespace → name → what the lookups read.
  template <class V>
  using ByNamespace = StringMap<StringMap<V>>;
  template <class T>
  struct Events final : kube::Handler<T> {
    ClusterObjectIndex& ix;
    explicit Events(ClusterObjectIndex& i) : ix(i) {}
    void on_add(const T& obj) override { ix.put(obj, nullptr); }
    void on_update(const T& old, const T& now) override { ix.put(now, &old); }
    void on_delete(const T& last) override { ix.erase(last); }
    void on_listed() override {
      if (ix.listed_) ix.listed_();
    }
  };

  void put(const kube::Namespace& n, const kube::Namespace* old);
  void put(const kube::Service& s, const kube::Service*);
  void put(const kube::ReplicationController& rc, const kube::ReplicationController*);
  void put(const kube::ReplicaSet& rs, const kube::ReplicaSet*);
  void put(const kube::StatefulSet& ss, const kube::StatefulSet*);
  void put(const kube::PersistentVolumeClaim& c, const kube::PersistentVolumeClaim* old);
  void put(const kube::PersistentVolume& pv, const kube::PersistentVolume* old);
  void put(const kube::StorageClass& sc, const kube::StorageClass* old);
  void put(const kube::CSINode& n, const kube::CSINode* old);
  void put(const kube::VolumeAttachment& va, const kube::VolumeAttachment* old);
  void put(const kube::CSIDriver& d, const kube::CSIDriver* old);
  void put(const kube::CSIStorageCapacity& c, const kube::CSIStorageCapacity* old);
  void put(const kube::PodDisruptionBudget& pdb, const kube::PodDisruptionBudget*);
  void erase(const kube::Namespace& n);
  void erase(const kube::Service& s);
  void erase(const kube::ReplicationController& rc);
  void erase(const kube::ReplicaSet& rs);
  void erase(const kube::StatefulSet& ss);
  void erase(const kube::PersistentVolumeClaim& c);
  void erase(const kube::PersistentVolume& pv);
  void erase(const kube::StorageClass& sc);
  void erase(const kube::CSINode& n);
  void erase(const kube::VolumeAttachment& va);
  void erase(const kube::CSIDriver& d);
  void erase(const kube::CSIStorageCapacity& c);
  void erase(const kube::PodDisruptionBudget& pdb);

  std::function<void(const char*)> changed_;
  std::function<void()> listed_;
  StringMap<kube::StringPairs> namespaces_;
  ByNamespace<kube::StringPairs> services_, rcs_;
  ByNamespace<std::optional<kube::LabelSelector>> rss_, sss_;
  ByNamespace<kube::PersistentVolumeClaim> claims_;
  StringMap<kube::PersistentVolume> volumes_;
  // VolumeBinding's overlay on claims_ and volumes_ (mutable: Reserve
  // writes it while decisions see the index as const).
  mutable VolumeAssumptions assumed_;
  StringMap<kube::StorageClass> classes_;
  StringMap<kube::CSINode> csi_nodes_;
  // node name → the attachments naming it: a few per node, found by name.
  StringMap<std::vector<kube::VolumeAttachment>> attachments_;
  StringMap<kube::CSIDriver> csi_drivers_;
  ByNamespace<kube::CSIStorageCapacity> capacities_;
  // The budgets, and pointers to them sorted by (namespace, name) for
  // pdbs(). A map node never moves and an update assigns in place, so
  // only an add or a delete touches the list.
  ByNamespace<kube::PodDisruptionBudget> pdbs_;
  std::vector<const kube::PodDisruptionBudget*> pdb_list_;
  // One handler per kind of ClusterKinds.
  template <class... T>
  static std::tuple<Events<T>...> make_events(ClusterObjectIndex& ix, KindList<T...>) {
    return {Events<T>(ix)...};
  }
  decltype(make_events(std::declval<ClusterObjectIndex&>(), ClusterKinds{})) events_ =
      make_events(*this, ClusterKinds{});
};

// labels.Selector's String() form of a selector, for logs and /debug:
// "app=web,tier in (a,b),!legacy"; "" for the empty selector.
std::string selector_text(const kube::LabelSelector& s);

// An informer per kind of ClusterKinds and the index they keep. Like the
// pod and node informers they run on a standby replica too, and the
// scheduler decides nothing until all have synced (upstream's
// WaitForCacheSync).
class ClusterInformers {
 public:
  ClusterInformers(kube::Api& api, std::function<void(const char* event)> changed, std::function<void()> listed);

  boost::asio::awaitable<void> run();  // until stop()
  void stop();
  bool synced() const noexcept;
  const ClusterObjectIndex& objects() const noexcept { return index_; }

  // Each informer, in ClusterKinds' order: its resource, its watch's
  // counters, how many objects its store holds.
  struct Informer {
    const char* resource;  // "namespaces", ...
    const kube::ReflectorStats* stats;
    std::size_t objects;
  };
  std::vector<Informer> informers() const;

 private:
  template <class... T>
  static std::tuple<std::unique_ptr<kube::Reflector<T>>...> reflectors_of(KindList<T...>);
  // Calls f(reflector) for each, in order.
  template <class F>
  void for_each(F&& f) const {
    std::apply([&](const auto&... r) { (f(*r), ...); }, reflectors_);
  }

  ClusterObjectIndex index_;
  decltype(reflectors_of(ClusterKinds{})) reflectors_;
};

}  // namespace toysched::sched
