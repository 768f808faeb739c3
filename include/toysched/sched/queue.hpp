// The scheduling queue: which pending pod to try next, and when to try again.
//
//   informer ──add──► activeQ (priority, then age) ──pop──► in flight
//                        ▲   ▲                                 │
//          backoff done  │   │ cluster event / 5 min           │ unschedulable
//                     backoffQ  unschedulable ◄────────────────┤
//                        ▲                                     │ error, failed bind
//                        └─────────────────────────────────────┘
//
// - backoff per pod: 1 s doubling to 10 s with each failed attempt;
// - an unschedulable pod waits until an event could help it (a node added
//   or changed, a pod deleted or gone from a node) and at most 5 minutes;
//   if such an event happened while it was being scheduled, it goes to
//   backoff instead, so the event is not missed;
// - a pod in flight (being decided or bound) is never handed out again:
//   updates from the watch only refresh its copy;
// - deleted pods and pods bound by someone else leave the queue.
// Time is passed in, so the queue is pure and unit-tested.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "toysched/kube/objects.hpp"

namespace toysched::sched {

class Queue {
 public:
  using clock = std::chrono::steady_clock;
  struct Options {
    std::chrono::milliseconds initial_backoff{1000};
    std::chrono::milliseconds max_backoff{10'000};
    std::chrono::milliseconds max_unschedulable{300'000};
  };
  Queue() : Queue(Options{}) {}
  explicit Queue(Options o) : opts_(o) {}

  // A pending pod of ours appeared or changed.
  void add_or_update(const kube::Pod& pod, clock::time_point now);
  // Deleted, or bound (by us or anyone): gone from the queue for good.
  void remove(const std::string& uid);

  struct Item {
    kube::Pod pod;
    int attempts = 0;                // scheduling attempts so far (incl. this one)
    clock::time_point first_queued;  // for the SLI: creation → bound
  };
  // The next pod to schedule, now in flight; nothing if activeQ is empty.
  std::optional<Item> pop(clock::time_point now);

  // Outcomes for a pod in flight.
  void done(const std::string& uid);  // bound: stays out until the watch removes it
  void unschedulable(const std::string& uid, clock::time_point now);
  void backoff(const std::string& uid, clock::time_point now);  // error or failed bind

  // A cluster change that could make unschedulable pods fit.
  void move_all_to_active_or_backoff(clock::time_point now);
  // Backoff expired → active; unschedulable too long → active/backoff.
  void flush(clock::time_point now);

  bool in_flight(const std::string& uid) const;
  std::size_t active_size() const noexcept { return active_.size(); }
  std::size_t backoff_size() const noexcept { return backoff_.size(); }
  std::size_t unschedulable_size() const noexcept { return unschedulable_.size(); }
  // When the next backoff ends, for the loop's timer.
  std::optional<clock::time_point> next_backoff_expiry() const;

 private:
  enum class Where { active, backoff, unschedulable, in_flight, done };
  struct Entry {
    kube::Pod pod;
    Where where = Where::active;
    int attempts = 0;
    std::uint64_t seq = 0;     // FIFO among equal priority and time
    clock::time_point queued;  // added, or back from its last attempt (age order)
    clock::time_point first_queued;
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
  void to_active(Entry& e, const std::string& uid);
  void to_backoff(Entry& e, const std::string& uid, clock::time_point now);
  void detach(Entry& e, const std::string& uid);
  clock::duration backoff_for(int attempts) const;

  Options opts_;
  std::unordered_map<std::string, Entry> entries_;  // by UID
  std::set<ActiveKey> active_;
  std::set<std::pair<clock::time_point, std::string>> backoff_;
  // By when each became unschedulable: flush() (every loop turn) finds the
  // ones waiting 5 minutes at the front instead of scanning them all.
  std::set<std::pair<clock::time_point, std::string>> unschedulable_;
  std::uint64_t seq_ = 0;
  std::uint64_t move_cycle_ = 0;  // bumped by every cluster event
};

}  // namespace toysched::sched
