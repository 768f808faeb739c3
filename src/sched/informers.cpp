// The informers' handlers (kube-scheduler's eventhandlers.go): they only
// route. Bound pods go to the cache, our pending pods to the queue, and a
// change that could make room wakes the pods waiting for one.
#include "toysched/sched/informers.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <utility>

#include "toysched/log/log.hpp"

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
struct Informers::PodEvents final : kube::Handler<kube::Pod> {
  Informers& s;
  const InformersContext& c;
  explicit PodEvents(Informers& i) : s(i), c(i.ctx_) {}

  // A pod of ours was queued during this watch read: the scheduling loop
  // gets its turn before the read's next event is decoded, so the pod is
  // decided and its bind sent now, not after the whole read is handled.
  bool queued = false;
  bool take_turn() override { return std::exchange(queued, false) && s.synced(); }
  void on_listed() override { c.wake(); }

  void on_add(const kube::Pod& p) override {
    if (!p.node_name.empty()) {
      TS_LOG(3, "Add event for scheduled pod", {"pod", key(p)}, {"node", p.node_name});
      c.queue.remove(p.uid);
      c.nominator.remove(p.uid);
      // Bound after the first list: while we watched (the live page's colour).
      if (s.pods_->synced()) c.cache.mark_listed();
      c.cache.add_pod(p);
      s.move_unschedulable_if("AssignedPodAdd", assigned_pod_add_can_help);
    } else if (s.responsible_for(p)) {
      TS_LOG(3, "Add event for unscheduled pod", {"pod", key(p)});
      // Nominated by an earlier run of ours: its victims may be going now.
      if (!p.nominated_node_name.empty()) c.nominator.nominate(p, p.nominated_node_name);
      c.queue.add_or_update(p, clock::now(), s.pods_->last_read());
      TS_LOG(5, "Pod moved to an internal scheduling queue", {"pod", key(p)}, {"event", "PodAdd"}, {"queue", "Active"});
      queued = true;
      c.wake();
    }
  }

  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    if (!now.node_name.empty()) {
      if (old.node_name.empty()) {
        TS_LOG(3, "Update event for scheduled pod", {"pod", key(now)}, {"node", now.node_name});
        c.queue.remove(now.uid);
        c.nominator.remove(now.uid);
        c.cache.mark_listed();  // we saw it pending: bound while we watched
        c.cache.add_pod(now);
        s.move_unschedulable_if("AssignedPodAdd", assigned_pod_add_can_help);
      } else {
        c.cache.update_pod(old, now);
        if (pod_scaled_down(old, now)) {
          s.move_unschedulable("AssignedPodUpdate");  // resized down: room freed
        } else if (old.labels != now.labels) {
          s.move_unschedulable_if("AssignedPodUpdate", assigned_pod_relabel_can_help);
        }
      }
    } else if (s.responsible_for(now)) {
      update_nomination(old, now);
      if (!s.responsible_for(old) || scheduling_spec_changed(old, now)) {
        c.queue.add_or_update(now, clock::now(), s.pods_->last_read());
        queued = true;
        c.wake();
      }
    } else {
      c.queue.remove(now.uid);  // being deleted, or handed to another scheduler
      c.nominator.remove(now.uid);
    }
  }

  // status.nominatedNodeName set or cleared (by us, usually: our own patch
  // coming back) moves the nomination; any other change refreshes the
  // nominated copy, which later decisions count on its node.
  void update_nomination(const kube::Pod& old, const kube::Pod& now) {
    if (old.nominated_node_name != now.nominated_node_name) {
      c.nominator.nominate(now, now.nominated_node_name);
    } else if (const std::string node(c.nominator.node_of(now.uid)); !node.empty()) {
      c.nominator.nominate(now, node);
    }
  }

  // A pod we cannot read. One with a readable copy goes on as that copy
  // (the store keeps it). One never read, pending and ours, would otherwise
  // wait in silence: say why, as kube-scheduler says why a pod does not fit.
  void on_undecodable(const kube::Undecodable& u, const kube::Pod* last, bool deleted) override {
    if (deleted) {
      c.events.forget(u.uid);
      return;
    }
    if (last || !u.node_name.empty() || u.deleting || u.scheduling_gated || u.uid.empty() ||
        !c.has_profile(u.scheduler_name)) {
      return;
    }
    kube::Pod p;
    p.ns = u.ns;
    p.name = u.name;
    p.uid = u.uid;
    p.scheduler_name = u.scheduler_name;
    c.events.failed_scheduling(
        p, "the scheduler cannot decode this pod (" + u.error + "); it is skipped until the pod changes", true);
  }

  void on_delete(const kube::Pod& last) override {
    bool counted = !last.node_name.empty() || c.cache.contains(last.uid);
    c.queue.remove(last.uid);
    c.nominator.remove(last.uid);
    c.events.forget(last.uid);
    c.explain.forget(key(last));
    if (counted) {
      TS_LOG(3, "Delete event for scheduled pod", {"pod", key(last)});
      c.cache.remove_pod(last);
      s.move_unschedulable("AssignedPodDelete");  // its room is free now
    }
  }
};

struct Informers::NodeEvents final : kube::Handler<kube::Node> {
  Informers& s;
  const InformersContext& c;
  explicit NodeEvents(Informers& i) : s(i), c(i.ctx_) {}
  void on_listed() override { c.wake(); }

  void on_add(const kube::Node& n) override {
    TS_LOG(3, "Add event for node", {"node", n.name});
    c.cache.add_node(n);
    s.move_unschedulable("NodeAdd");
  }
  void on_update(const kube::Node& old, const kube::Node& n) override {
    TS_LOG(3, "Update event for node", {"node", n.name});
    c.cache.update_node(n);
    if (node_update_can_help(old, n)) s.move_unschedulable("NodeUpdate");
  }
  void on_delete(const kube::Node& n) override {
    TS_LOG(3, "Delete event for node", {"node", n.name});
    c.cache.remove_node(n.name);
  }
};

void Informers::move_unschedulable_if(const char* event, bool (*helps)(const kube::Pod&)) {
  if (ctx_.queue.unschedulable_size() == 0) return;
  const std::size_t moved = ctx_.queue.move_to_active_or_backoff_if(clock::now(), helps);
  TS_LOG(5, "Unschedulable pods moved by a cluster event", {"event", event}, {"pods", moved});
  if (moved > 0) ctx_.wake();
}

void Informers::move_unschedulable(const char* event) {
  const std::size_t moved = ctx_.queue.move_all_to_active_or_backoff(clock::now());
  TS_LOG(5, "Unschedulable pods moved by a cluster event", {"event", event}, {"pods", moved});
  ctx_.wake();
}

namespace {
// All non-terminal pods: bound ones count against their nodes; a pod that
// finishes leaves the selector and arrives as a delete, freeing its room.
kube::ListOptions non_terminal_pods() {
  kube::ListOptions o;
  o.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  return o;
}
}  // namespace

Informers::Informers(kube::Api& api, InformersContext ctx)
    : ctx_(std::move(ctx)),
      pod_events_(std::make_unique<PodEvents>(*this)),
      node_events_(std::make_unique<NodeEvents>(*this)),
      pods_(std::make_unique<kube::Reflector<kube::Pod>>(api, *pod_events_, non_terminal_pods())),
      nodes_(std::make_unique<kube::Reflector<kube::Node>>(api, *node_events_, kube::ListOptions{})),
      objects_(
          api, [this](const char* event) { move_unschedulable(event); }, [this] { ctx_.wake(); }) {}

Informers::~Informers() = default;

boost::asio::awaitable<void> Informers::run() {
  using namespace boost::asio::experimental::awaitable_operators;
  // Nodes first in effect: all start now; the loop waits for all to sync.
  co_await (nodes_->run() && pods_->run() && objects_.run());
}

void Informers::stop() {
  pods_->stop();
  nodes_->stop();
  objects_.stop();
}

bool Informers::synced() const noexcept { return pods_->synced() && nodes_->synced() && objects_.synced(); }

bool Informers::responsible_for(const kube::Pod& p) const {
  return ctx_.has_profile(p.scheduler_name) && !p.deleting && !p.scheduling_gated;
}

const kube::Pod* Informers::pod(const kube::Pod& p) const { return pods_->store().find(key(p)); }
const kube::Store<kube::Pod>& Informers::pods() const noexcept { return pods_->store(); }
const kube::ReflectorStats& Informers::pod_watch_stats() const noexcept { return pods_->stats(); }
const kube::ReflectorStats& Informers::node_watch_stats() const noexcept { return nodes_->stats(); }

}  // namespace toysched::sched
