// The scheduler's informers (kube-scheduler's informer factory and its
// eventhandlers.go): the pod and node reflectors with their handlers, and
// ClusterInformers for every other kind the plugins read. The handlers only
// route: bound pods to the cache, our pending pods to the queue, and a
// change that could make room wakes the unschedulable pods it may help.
// They never decide, and they write to the API only through the event
// recorder (a pod we cannot decode is told so).
//
// They run from start to stop, also on a standby replica, so a new leader
// starts from a synced cache.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string_view>

#include "toysched/kube/api.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/cluster_objects.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/explain.hpp"
#include "toysched/sched/nominator.hpp"
#include "toysched/sched/queue.hpp"

namespace toysched::sched {

// What the handlers route into: the scheduler's state, which outlives them.
struct InformersContext {
  Cache& cache;
  Queue& queue;
  Nominator& nominator;
  EventRecorder& events;     // FailedScheduling for a pod we cannot decode
  ExplainRecorder& explain;  // forgets a deleted pod's last attempt
  // Whether a profile decides pods of this spec.schedulerName.
  std::function<bool(std::string_view scheduler_name)> has_profile;
  std::function<void()> wake;  // the scheduling loop: something to do
};

class Informers {
 public:
  Informers(kube::Api& api, InformersContext ctx);
  ~Informers();
  Informers(const Informers&) = delete;
  Informers& operator=(const Informers&) = delete;

  boost::asio::awaitable<void> run();  // until stop()
  void stop();
  bool synced() const noexcept;

  // A pending pod the scheduler decides: one of its profiles', not being
  // deleted, not gated.
  bool responsible_for(const kube::Pod& p) const;
  // A cluster event that can help: every unschedulable pod is tried again
  // (after its backoff).
  void move_unschedulable(const char* event);
  // Only the unschedulable pods `helps` picks (a coarse queueing hint).
  void move_unschedulable_if(const char* event, bool (*helps)(const kube::Pod&));

  // The pod (ns/name) as the pod informer last saw it, or nullptr.
  const kube::Pod* pod(const kube::Pod& p) const;
  // The pod informer's store (/debug/cluster-objects looks pods up in it).
  const kube::Store<kube::Pod>& pods() const noexcept;
  const kube::ReflectorStats& pod_watch_stats() const noexcept;
  const kube::ReflectorStats& node_watch_stats() const noexcept;
  // Namespaces, Services, … (cluster_objects.hpp: every other kind).
  const ClusterInformers& cluster() const noexcept { return objects_; }

 private:
  struct PodEvents;   // informers.cpp
  struct NodeEvents;  // informers.cpp

  InformersContext ctx_;
  std::unique_ptr<PodEvents> pod_events_;
  std::unique_ptr<NodeEvents> node_events_;
  std::unique_ptr<kube::Reflector<kube::Pod>> pods_;
  std::unique_ptr<kube::Reflector<kube::Node>> nodes_;
  ClusterInformers objects_;
};

}  // namespace toysched::sched
