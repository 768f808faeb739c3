// The informers' handlers (kube-scheduler's eventhandlers.go): they only
// route. Bound pods go to the cache, our pending pods to the queue, and a
// change that could make room wakes the pods waiting for one.
#include <utility>

#include "toysched/log/log.hpp"
#include "toysched/sched/scheduler.hpp"

namespace toysched::sched {

using clock = std::chrono::steady_clock;

namespace {

// Whether an update to a pending pod could change where it fits. Status-only
// updates (our own PodScheduled patch among them) must not send an
// unschedulable pod round again, or every failure would retry itself.
bool scheduling_spec_changed(const kube::Pod& a, const kube::Pod& b) {
  return a.requests != b.requests || a.node_selector != b.node_selector || a.required_affinity != b.required_affinity ||
         a.preferred_affinity != b.preferred_affinity || a.tolerations != b.tolerations ||
         a.host_ports != b.host_ports || a.priority != b.priority || a.scheduling_gated != b.scheduling_gated ||
         a.unsupported != b.unsupported || a.labels != b.labels;
}

}  // namespace

// A pod deleted and created again under its name reaches these handlers as
// a delete of the old UID and an add of the new (the informer's Store splits
// such a change), so an update is always one object: queue and cache key by
// UID and never carry one pod's state over to another.
struct Scheduler::PodEvents final : kube::Handler<kube::Pod> {
  Scheduler& s;
  explicit PodEvents(Scheduler& sch) : s(sch) {}

  // A pod of ours was queued during this watch read: the scheduling loop
  // gets its turn before the read's next event is decoded, so the pod is
  // decided and its bind sent now, not after the whole read is handled.
  bool queued = false;
  bool take_turn() override { return std::exchange(queued, false) && s.synced(); }
  void on_listed() override { s.wake(); }

  void on_add(const kube::Pod& p) override {
    if (!p.node_name.empty()) {
      TS_LOG(3, "Add event for scheduled pod", {"pod", key(p)}, {"node", p.node_name});
      s.queue_.remove(p.uid);
      s.nominator_.remove(p.uid);
      // Bound after the first list: while we watched (the live page's colour).
      if (s.pods_->synced()) s.cache_.mark_listed();
      s.cache_.add_pod(p);
      s.move_unschedulable_if("AssignedPodAdd", assigned_pod_add_can_help);
    } else if (s.responsible_for(p)) {
      TS_LOG(3, "Add event for unscheduled pod", {"pod", key(p)});
      // Nominated by an earlier run of ours: its victims may be going now.
      if (!p.nominated_node_name.empty()) s.nominator_.nominate(p, p.nominated_node_name);
      s.queue_.add_or_update(p, clock::now(), s.pods_->last_read());
      TS_LOG(5, "Pod moved to an internal scheduling queue", {"pod", key(p)}, {"event", "PodAdd"}, {"queue", "Active"});
      queued = true;
      s.wake();
    }
  }

  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    if (!now.node_name.empty()) {
      if (old.node_name.empty()) {
        TS_LOG(3, "Update event for scheduled pod", {"pod", key(now)}, {"node", now.node_name});
        s.queue_.remove(now.uid);
        s.nominator_.remove(now.uid);
        s.cache_.mark_listed();  // we saw it pending: bound while we watched
        s.cache_.add_pod(now);
        s.move_unschedulable_if("AssignedPodAdd", assigned_pod_add_can_help);
      } else {
        s.cache_.update_pod(old, now);
        if (pod_scaled_down(old, now)) {
          s.move_unschedulable("AssignedPodUpdate");  // resized down: room freed
        } else if (old.labels != now.labels) {
          s.move_unschedulable_if("AssignedPodUpdate", assigned_pod_relabel_can_help);
        }
      }
    } else if (s.responsible_for(now)) {
      update_nomination(old, now);
      if (!s.responsible_for(old) || scheduling_spec_changed(old, now)) {
        s.queue_.add_or_update(now, clock::now(), s.pods_->last_read());
        queued = true;
        s.wake();
      }
    } else {
      s.queue_.remove(now.uid);  // being deleted, or handed to another scheduler
      s.nominator_.remove(now.uid);
    }
  }

  // status.nominatedNodeName set or cleared (by us, usually: our own patch
  // coming back) moves the nomination; any other change refreshes the
  // nominated copy, which later decisions count on its node.
  void update_nomination(const kube::Pod& old, const kube::Pod& now) {
    if (old.nominated_node_name != now.nominated_node_name) {
      s.nominator_.nominate(now, now.nominated_node_name);
    } else if (const std::string node(s.nominator_.node_of(now.uid)); !node.empty()) {
      s.nominator_.nominate(now, node);
    }
  }

  // A pod we cannot read. One with a readable copy goes on as that copy
  // (the store keeps it). One never read, pending and ours, would otherwise
  // wait in silence: say why, as kube-scheduler says why a pod does not fit.
  void on_undecodable(const kube::Undecodable& u, const kube::Pod* last, bool deleted) override {
    if (deleted) {
      s.events_.forget(u.uid);
      return;
    }
    if (last || !u.node_name.empty() || u.deleting || u.scheduling_gated || u.uid.empty() ||
        s.profile_for(u.scheduler_name) == nullptr) {
      return;
    }
    kube::Pod p;
    p.ns = u.ns;
    p.name = u.name;
    p.uid = u.uid;
    p.scheduler_name = u.scheduler_name;
    s.events_.failed_scheduling(
        p, "the scheduler cannot decode this pod (" + u.error + "); it is skipped until the pod changes", true);
  }

  void on_delete(const kube::Pod& last) override {
    bool counted = !last.node_name.empty() || s.cache_.contains(last.uid);
    s.queue_.remove(last.uid);
    s.nominator_.remove(last.uid);
    s.events_.forget(last.uid);
    s.explain_.forget(key(last));
    if (counted) {
      TS_LOG(3, "Delete event for scheduled pod", {"pod", key(last)});
      s.cache_.remove_pod(last);
      s.move_unschedulable("AssignedPodDelete");  // its room is free now
    }
  }
};

struct Scheduler::NodeEvents final : kube::Handler<kube::Node> {
  Scheduler& s;
  explicit NodeEvents(Scheduler& sch) : s(sch) {}
  void on_listed() override { s.wake(); }

  void on_add(const kube::Node& n) override {
    TS_LOG(3, "Add event for node", {"node", n.name});
    s.cache_.add_node(n);
    s.move_unschedulable("NodeAdd");
  }
  void on_update(const kube::Node& old, const kube::Node& n) override {
    TS_LOG(3, "Update event for node", {"node", n.name});
    s.cache_.update_node(n);
    if (node_update_can_help(old, n)) s.move_unschedulable("NodeUpdate");
  }
  void on_delete(const kube::Node& n) override {
    TS_LOG(3, "Delete event for node", {"node", n.name});
    s.cache_.remove_node(n.name);
  }
};

void Scheduler::move_unschedulable_if(const char* event, bool (*helps)(const kube::Pod&)) {
  if (queue_.unschedulable_size() == 0) return;
  const std::size_t moved = queue_.move_to_active_or_backoff_if(clock::now(), helps);
  TS_LOG(5, "Unschedulable pods moved by a cluster event", {"event", event}, {"pods", moved});
  if (moved > 0) wake();
}

void Scheduler::move_unschedulable(const char* event) {
  const std::size_t moved = queue_.move_all_to_active_or_backoff(clock::now());
  TS_LOG(5, "Unschedulable pods moved by a cluster event", {"event", event}, {"pods", moved});
  wake();
}

// Defined here, where the handlers are complete types.
Scheduler::Scheduler(kube::Api& api, kube::Api& events_api, SchedulerOptions opts, async::Supervisor& supervisor)
    : api_(api),
      opts_(std::move(opts)),
      queue_(Queue::Options{opts_.pod_initial_backoff, opts_.pod_max_backoff, opts_.pod_max_in_unschedulable}),
      events_(events_api, opts_.scheduler_name, opts_.instance.empty() ? opts_.scheduler_name : opts_.instance,
              supervisor, order_),
      rng_(opts_.seed),
      explain_(opts_.explain_rows),
      pod_events_(std::make_unique<PodEvents>(*this)),
      node_events_(std::make_unique<NodeEvents>(*this)),
      binder_(api_,
              BinderContext{cache_, queue_, events_, order_, stats_, observer_, outcome_,
                            [this](const kube::Pod& p) { return informer_pod(p); },
                            [this](const char* event) { move_unschedulable(event); }, [this] { wake(); }},
              BinderOptions{opts_.bind_parallelism, opts_.bind_delay}, supervisor) {
  if (opts_.profiles.empty()) opts_.profiles.push_back({opts_.scheduler_name, Profile::make_default(), {}});
  for (NamedProfile& p : opts_.profiles) {
    const int percentage = p.percentage_of_nodes_to_score.value_or(opts_.percentage_of_nodes_to_score);
    profiles_.push_back({std::move(p.name), std::move(p.profile), Search{percentage, 0}});
  }
  opts_.profiles.clear();  // moved into profiles_
  events_.set_busy([this] { return stats_.binds_in_flight > 0 || queue_.active_size() > 0; });
  // A FailedScheduling still applies only to the very pod it was about,
  // still unbound and undecided: the informer holds it under its name with
  // the same UID, and the cache has no assumption or binding for it.
  events_.set_still_pending([this](const std::string& ns, const std::string& name, const std::string& uid) {
    const kube::Pod* p = pods_->store().find(ns + "/" + name);
    return p && p->uid == uid && p->node_name.empty() && !p->deleting && !cache_.contains(uid);
  });
  // All non-terminal pods: bound ones count against their nodes; a pod that
  // finishes leaves the selector and arrives as a delete, freeing its room.
  kube::ListOptions pod_opts;
  pod_opts.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  pods_ = std::make_unique<kube::Reflector<kube::Pod>>(api_, *pod_events_, pod_opts);
  nodes_ = std::make_unique<kube::Reflector<kube::Node>>(api_, *node_events_, kube::ListOptions{});
  objects_ = std::make_unique<ClusterInformers>(
      api_, [this](const char* event) { move_unschedulable(event); }, [this] { wake(); });
}

Scheduler::~Scheduler() = default;

}  // namespace toysched::sched
