// The scheduling queue: which pending pod to try next, and when to try again.
//
//   informer ──add──► activeQ (priority, then age) ──pop──► in flight
//                        ▲                                          │
//                        │ backoff ended                     no fit │
//                        ├──── backoffQ ◄── cluster event ── unschedulable
//                        │    (popped at once when activeQ          │
//                        │     is empty)                            │
//                        └──── errorBackoffQ ◄───── error, failed bind
//
// - backoff per pod, as upstream counts it: 1 s doubling to 10 s with each
//   unschedulable attempt, or, after errors (a failed bind, a cycle that
//   could not finish), with each consecutive error; a pod that never failed
//   has none. Computed once from the failure, a later move does not start it
//   again (upstream's cached BackoffExpiration), and truncated to a whole
//   second: backoffQ is served in 1 s windows (KEP-5142), a pod leaving it
//   only once the window its backoff ends in is over, and pods of one
//   window leave in activeQ's order;
// - an unschedulable pod waits until an event could help it (see the
//   predicates below), and after more than 5 minutes goes back as an event
//   would send it (to backoffQ while its backoff lasts); if such an event
//   happened while it was being scheduled, it goes back at once, the same
//   way, so the event is not missed;
// - when activeQ is empty, pop takes the head of backoffQ early (upstream's
//   SchedulerPopFromBackoffQ, KEP-5142): an idle scheduler need not wait out
//   a backoff whose only purpose is to let others go first. Pods backing off
//   after an error (errorBackoffQ) always wait: the error may be the API
//   server's, and retrying at once would hammer it;
// - a pod in flight (being decided or bound) is never handed out again:
//   updates from the watch only refresh its copy;
// - deleted pods and pods bound by someone else leave the queue.
// Time is passed in, so the queue is pure and unit-tested.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toysched/kube/objects.hpp"

namespace toysched::sched {

// Which cluster events can help an unschedulable pod, so that only those
// move it (upstream's NodeSchedulingPropertiesChange and the pod events its
// plugins register; queue_events.cpp). Anything else (a node heartbeat, an
// annotation, our own status patch) would only cost a pointless attempt
// and a FailedScheduling event per waiting pod.

// A node update changed what our filters read: allocatable, labels, taints,
// spec.unschedulable, the status of a condition, or its declared features.
bool node_update_can_help(const kube::Node& old, const kube::Node& now);
// A pod placed elsewhere may let `pending` in: it needs a partner (required
// pod affinity) or an even spread (DoNotSchedule). Upstream asks each
// plugin's queueing hint; this coarser one spares the other unschedulable
// pods a pointless retry at every bind.
bool assigned_pod_add_can_help(const kube::Pod& pending);
// A placed pod's labels changed: as an add, and also a pod kept out by
// required anti-affinity, which the old labels may have matched and the new
// ones no longer do (upstream's InterPodAffinity hint on UpdatePodLabel).
bool assigned_pod_relabel_can_help(const kube::Pod& pending);
// A bound pod's request went down or away (an in-place resize): room freed.
bool pod_scaled_down(const kube::Pod& old, const kube::Pod& now);

class Queue {
 public:
  using clock = std::chrono::steady_clock;
  struct Options {
    std::chrono::milliseconds initial_backoff{1000};
    std::chrono::milliseconds max_backoff{10'000};
    std::chrono::milliseconds max_unschedulable{300'000};
  };
  // backoffQOrderingWindowDuration: backoffQ's unit of time.
  static constexpr std::chrono::seconds kBackoffWindow{1};
  Queue() : Queue(Options{}) {}
  explicit Queue(Options o) : opts_(o) {}

  // A pending pod of ours appeared or changed; `arrived`: when the watch read
  // (or list) that carried it returned, for the latency by stage (default: now).
  void add_or_update(const kube::Pod& pod, clock::time_point now, clock::time_point arrived = {});
  // Deleted, or bound (by us or anyone): gone from the queue for good.
  void remove(const std::string& uid);

  struct Item {
    kube::Pod pod;
    int attempts = 0;                // scheduling attempts so far (incl. this one)
    clock::time_point first_queued;  // for the SLI: creation → bound
    clock::time_point arrived;       // the watch read that first brought the pod (latency by stage)
    clock::time_point queued;        // added, or back from its last attempt
  };
  // The next pod to schedule, now in flight: the head of activeQ, else the
  // head of backoffQ; nothing if both are empty.
  std::optional<Item> pop(clock::time_point now);

  // Outcomes for a pod in flight.
  void done(const std::string& uid);                                  // bound: stays out until the watch removes it
  void unschedulable(const std::string& uid, clock::time_point now);  // no fit: counts toward its backoff
  void backoff(const std::string& uid, clock::time_point now);        // error or failed bind: counts as an error

  // A cluster change that could make unschedulable pods fit: each goes to
  // activeQ if its backoff has ended, else to backoffQ until it ends.
  // Returns how many moved.
  std::size_t move_all_to_active_or_backoff(clock::time_point now);
  // The same for the unschedulable pods `helps(pod)` says the event may
  // help (a coarse queueing hint); the others stay where they are.
  std::size_t move_to_active_or_backoff_if(clock::time_point now, const std::function<bool(const kube::Pod&)>& helps);
  // Backoff over → active; unschedulable for more than 5 minutes →
  // active, or backoff while it lasts.
  void flush(clock::time_point now);

  bool in_flight(const std::string& uid) const;  // popped, or done (bound: out until the watch removes it)
  // Where the pod is: "active", "backoff", "unschedulable", "in flight"
  // (popped, no outcome yet), "done", or "" (not queued).
  std::string_view where(const std::string& uid) const;
  std::size_t active_size() const noexcept { return active_.size(); }
  std::size_t backoff_size() const noexcept { return backoff_.size() + error_backoff_.size(); }
  std::size_t unschedulable_size() const noexcept { return unschedulable_.size(); }
  // f(pod, queue name, attempts) for the first `per_queue` pods waiting in
  // each queue, in the order it is served: "active", "backoff" (both
  // backoff queues), "unschedulable". Pods in flight or bound are not waiting.
  template <class F>
  void for_each_waiting(F&& f, std::size_t per_queue = SIZE_MAX) const {
    std::size_t n = 0;
    // False once `per_queue` pods of this queue were visited: stop walking it.
    auto visit = [&](const std::string& uid, const char* q) {
      if (auto it = entries_.find(uid); it != entries_.end()) {
        f(it->second.pod, q, it->second.attempts);
        ++n;
      }
      return n < per_queue;
    };
    for (const auto& k : active_)
      if (!visit(k.uid, "active")) break;
    n = 0;
    bool more = true;
    for (auto it = backoff_.begin(); more && it != backoff_.end(); ++it) more = visit(it->uid, "backoff");
    for (auto it = error_backoff_.begin(); more && it != error_backoff_.end(); ++it) more = visit(it->uid, "backoff");
    n = 0;
    for (const auto& [at, uid] : unschedulable_)
      if (!visit(uid, "unschedulable")) break;
  }

  // When the next pod's backoff is over (either queue): the start of the
  // window after the one its backoff ends in. For the loop's timer.
  std::optional<clock::time_point> next_backoff_expiry() const;

 private:
  enum class Where { active, backoff, error_backoff, unschedulable, in_flight, done };
  struct Entry {
    kube::Pod pod;
    Where where = Where::active;
    int attempts = 0;
    // Upstream's UnschedulableCount and ConsecutiveErrorsCount: the first
    // counts attempts that found no fit; the second errors since the last
    // such attempt. The backoff follows the second while it is not 0.
    int unschedulable_count = 0;
    int consecutive_errors = 0;
    std::uint64_t seq = 0;     // FIFO among equal priority and time
    clock::time_point queued;  // added, or back from its last attempt (age order)
    clock::time_point first_queued;
    clock::time_point arrived;
    // Set once per failure, from its time, truncated to kBackoffWindow;
    // the epoch (before any now) while the pod has never failed.
    clock::time_point backoff_until;
    clock::time_point unschedulable_since;
    std::uint64_t popped_at_cycle = 0;
  };
  struct ActiveKey {
    std::int32_t priority;
    clock::time_point queued;
    std::uint64_t seq;
    std::string uid;
    bool operator<(const ActiveKey& o) const {
      if (priority != o.priority) return priority > o.priority;  // higher first
      if (queued != o.queued) return queued < o.queued;          // older first
      return seq < o.seq;
    }
  };
  // backoffQ's order: the window the backoff ends in, then activeQ's order
  // (lessBackoffCompletedWithPriority); errorBackoffQ's: the end alone.
  struct BackoffKey {
    clock::time_point until;
    std::int32_t priority;
    clock::time_point queued;
    std::uint64_t seq;
    std::string uid;
    bool operator<(const BackoffKey& o) const {
      if (until != o.until) return until < o.until;
      if (priority != o.priority) return priority > o.priority;
      if (queued != o.queued) return queued < o.queued;
      return seq < o.seq;
    }
  };
  static BackoffKey backoff_key(const Entry& e, const std::string& uid) {
    return {e.backoff_until, e.pod.priority, e.queued, e.seq, uid};
  }
  void to_active(Entry& e, const std::string& uid);
  void to_backoff(Entry& e, const std::string& uid, Where which);
  // Where upstream's queueAfterBackoff sends a pod: the backoff queue
  // `which` while its backoff lasts, else activeQ.
  void to_active_or_backoff(Entry& e, const std::string& uid, clock::time_point now, Where which = Where::backoff);
  void detach(Entry& e, const std::string& uid);
  // getBackoffTime for a failure at `now`, `count` failures in: the end of
  // the backoff truncated to its window; the epoch (no backoff) for 0.
  clock::time_point backoff_end(int count, clock::time_point now) const;
  static clock::time_point window_of(clock::time_point t);
  // isPodBackingoff: its backoff ends in the window of `now` or later.
  static bool backing_off(const Entry& e, clock::time_point now) { return e.backoff_until >= window_of(now); }

  Options opts_;
  std::unordered_map<std::string, Entry> entries_;  // by UID
  std::set<ActiveKey> active_;
  // By backoff expiry. backoffQ: unschedulable pods a cluster event moved;
  // errorBackoffQ: pods whose attempt or bind failed with an error.
  std::set<BackoffKey> backoff_;
  std::set<BackoffKey> error_backoff_;
  // By when each became unschedulable: flush() (every loop turn) finds the
  // ones waiting 5 minutes at the front instead of scanning them all.
  std::set<std::pair<clock::time_point, std::string>> unschedulable_;
  std::uint64_t seq_ = 0;
  std::uint64_t move_cycle_ = 0;  // bumped by every cluster event
};

}  // namespace toysched::sched
