// What the plugins look up beyond nodes and pods (framework.hpp's
// ClusterObjects), kept by nine informers as kube-scheduler's listers are:
//
//   watch/namespaces ──────────────┐
//   watch/services ────────────────┤
//   watch/replicationcontrollers ──┤
//   watch/replicasets ─────────────┤     (namespace labels; per namespace,
//   watch/statefulsets ────────────┼─► ClusterObjectIndex ──► Cluster::objects
//   watch/persistentvolumeclaims ──┤      the selectors by name; the claims,
//   watch/persistentvolumes ───────┤      volumes and classes themselves;
//   watch/storageclasses ──────────┤      the PDBs, sorted, for preemption)
//   watch/poddisruptionbudgets ────┘
//
// The index keeps its own copy of what it needs, keyed so that a lookup by
// a pod's namespace and owner or claim name builds no string: the Store's
// map is keyed "ns/name" and is replaced wholesale on a relist, so neither
// its keys nor its element addresses serve a per-pod lookup.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toysched/kube/reflector.hpp"
#include "toysched/sched/framework.hpp"

namespace toysched::sched {

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
  // and upstream registers no event for it.
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
  std::span<const kube::PodDisruptionBudget* const> pdbs() const override { return pdb_list_; }

  // The handlers the informers feed (a unit test may feed them by hand).
  kube::Handler<kube::Namespace>& namespaces() noexcept { return namespace_events_; }
  kube::Handler<kube::Service>& services() noexcept { return service_events_; }
  kube::Handler<kube::ReplicationController>& replication_controllers() noexcept { return rc_events_; }
  kube::Handler<kube::ReplicaSet>& replica_sets() noexcept { return rs_events_; }
  kube::Handler<kube::StatefulSet>& stateful_sets() noexcept { return ss_events_; }
  kube::Handler<kube::PersistentVolumeClaim>& claims() noexcept { return pvc_events_; }
  kube::Handler<kube::PersistentVolume>& volumes() noexcept { return pv_events_; }
  kube::Handler<kube::StorageClass>& storage_classes() noexcept { return sc_events_; }
  kube::Handler<kube::PodDisruptionBudget>& disruption_budgets() noexcept { return pdb_events_; }

  struct Counts {
    std::size_t namespaces = 0, services = 0, replication_controllers = 0, replica_sets = 0, stateful_sets = 0;
    std::size_t pvcs = 0, pvs = 0, storage_classes = 0, pdbs = 0;
  };
  Counts counts() const;

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
  void put(const kube::PodDisruptionBudget& pdb, const kube::PodDisruptionBudget*);
  void erase(const kube::Namespace& n);
  void erase(const kube::Service& s);
  void erase(const kube::ReplicationController& rc);
  void erase(const kube::ReplicaSet& rs);
  void erase(const kube::StatefulSet& ss);
  void erase(const kube::PersistentVolumeClaim& c);
  void erase(const kube::PersistentVolume& pv);
  void erase(const kube::StorageClass& sc);
  void erase(const kube::PodDisruptionBudget& pdb);

  std::function<void(const char*)> changed_;
  std::function<void()> listed_;
  StringMap<kube::StringPairs> namespaces_;
  ByNamespace<kube::StringPairs> services_, rcs_;
  ByNamespace<std::optional<kube::LabelSelector>> rss_, sss_;
  ByNamespace<kube::PersistentVolumeClaim> claims_;
  StringMap<kube::PersistentVolume> volumes_;
  StringMap<kube::StorageClass> classes_;
  // The budgets, and pointers to them sorted by (namespace, name) for
  // pdbs(). A map node never moves and an update assigns in place, so
  // only an add or a delete touches the list.
  ByNamespace<kube::PodDisruptionBudget> pdbs_;
  std::vector<const kube::PodDisruptionBudget*> pdb_list_;
  Events<kube::Namespace> namespace_events_{*this};
  Events<kube::Service> service_events_{*this};
  Events<kube::ReplicationController> rc_events_{*this};
  Events<kube::ReplicaSet> rs_events_{*this};
  Events<kube::StatefulSet> ss_events_{*this};
  Events<kube::PersistentVolumeClaim> pvc_events_{*this};
  Events<kube::PersistentVolume> pv_events_{*this};
  Events<kube::StorageClass> sc_events_{*this};
  Events<kube::PodDisruptionBudget> pdb_events_{*this};
};

// labels.Selector's String() form of a selector, for logs and /debug:
// "app=web,tier in (a,b),!legacy"; "" for the empty selector.
std::string selector_text(const kube::LabelSelector& s);

// The nine informers and the index they keep. Like the pod and node
// informers they run on a standby replica too, and the scheduler decides
// nothing until all have synced (upstream's WaitForCacheSync).
class ClusterInformers {
 public:
  ClusterInformers(kube::Api& api, std::function<void(const char* event)> changed, std::function<void()> listed);

  boost::asio::awaitable<void> run();  // until stop()
  void stop();
  bool synced() const noexcept;
  const ClusterObjectIndex& objects() const noexcept { return index_; }

  struct Watch {
    const char* resource;  // "namespaces", ...
    const kube::ReflectorStats* stats;
  };
  std::array<Watch, 9> watch_stats() const noexcept;

 private:
  ClusterObjectIndex index_;
  kube::Reflector<kube::Namespace> namespaces_;
  kube::Reflector<kube::Service> services_;
  kube::Reflector<kube::ReplicationController> rcs_;
  kube::Reflector<kube::ReplicaSet> rss_;
  kube::Reflector<kube::StatefulSet> sss_;
  kube::Reflector<kube::PersistentVolumeClaim> pvcs_;
  kube::Reflector<kube::PersistentVolume> pvs_;
  kube::Reflector<kube::StorageClass> scs_;
  kube::Reflector<kube::PodDisruptionBudget> pdbs_;
};

}  // namespace toysched::sched
