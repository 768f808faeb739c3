#include "toysched/sched/queue.hpp"

#include <algorithm>
#include <vector>

namespace toysched::sched {

// Truncated to the window, as upstream's Time.Truncate: on our clock
// (steady, since boot), not the wall clock, so the windows' edges are not
// at whole wall-clock seconds; nothing outside the process can tell.
Queue::clock::time_point Queue::window_of(clock::time_point t) {
  return clock::time_point(std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()));
}

Queue::clock::time_point Queue::backoff_end(int count, clock::time_point now) const {
  if (count <= 0 || opts_.max_backoff.count() == 0) return {};
  // calculateBackoffDuration: initial × 2^(count−1), at most max, without
  // overflowing on a large count.
  const auto max = std::chrono::duration_cast<clock::duration>(opts_.max_backoff);
  auto d = std::chrono::duration_cast<clock::duration>(opts_.initial_backoff);
  for (int i = 1; i < count && d < max; ++i) d *= 2;
  return window_of(now + std::min(d, max));
}

void Queue::detach(Entry& e, const std::string& uid) {
  switch (e.where) {
    case Where::active:
      active_.erase(ActiveKey{e.pod.priority, e.queued, e.seq, uid});
      break;
    case Where::backoff:
      backoff_.erase(backoff_key(e, uid));
      break;
    case Where::error_backoff:
      error_backoff_.erase(backoff_key(e, uid));
      break;
    case Where::unschedulable:
      unschedulable_.erase({e.unschedulable_since, uid});
      break;
    case Where::in_flight:
    case Where::done:
      break;
  }
}

// Keeps e.queued: a pod's age counts from when it was added or came back
// from an attempt, not from a move (upstream's Timestamp).
void Queue::to_active(Entry& e, const std::string& uid) {
  detach(e, uid);
  e.where = Where::active;
  e.seq = ++seq_;
  active_.insert(ActiveKey{e.pod.priority, e.queued, e.seq, uid});
}

// Keeps e.backoff_until: it was set when the attempt failed, and a move
// must not push it further out.
void Queue::to_backoff(Entry& e, const std::string& uid, Where which) {
  detach(e, uid);
  e.where = which;
  e.seq = ++seq_;
  (which == Where::error_backoff ? error_backoff_ : backoff_).insert(backoff_key(e, uid));
}

void Queue::to_active_or_backoff(Entry& e, const std::string& uid, clock::time_point now, Where which) {
  if (backing_off(e, now))
    to_backoff(e, uid, which);
  else
    to_active(e, uid);
}

void Queue::add_or_update(const kube::Pod& pod, clock::time_point now, clock::time_point arrived) {
  auto it = entries_.find(pod.uid);
  if (it == entries_.end()) {
    Entry e;
    e.pod = pod;
    e.first_queued = now;
    e.arrived = arrived == clock::time_point{} ? now : arrived;
    e.queued = now;
    auto [ins, ok] = entries_.emplace(pod.uid, std::move(e));
    to_active(ins->second, pod.uid);
    return;
  }
  Entry& e = it->second;
  switch (e.where) {
    case Where::active:
      if (e.pod.priority != pod.priority) {  // the priority is part of the order key
        active_.erase(ActiveKey{e.pod.priority, e.queued, e.seq, pod.uid});
        e.pod = pod;
        active_.insert(ActiveKey{e.pod.priority, e.queued, e.seq, pod.uid});
      } else {
        e.pod = pod;
      }
      break;
    case Where::unschedulable:
      e.pod = pod;  // its spec changed: it may fit now
      to_active_or_backoff(e, pod.uid, now);
      break;
    case Where::backoff:
    case Where::error_backoff: {
      auto& q = e.where == Where::backoff ? backoff_ : error_backoff_;
      q.erase(backoff_key(e, pod.uid));  // the priority is part of the order key
      e.pod = pod;
      q.insert(backoff_key(e, pod.uid));
      break;
    }
    case Where::in_flight:
    case Where::done:
      e.pod = pod;
      break;
  }
}

void Queue::remove(const std::string& uid) {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  detach(it->second, uid);
  entries_.erase(it);
}

std::optional<Queue::Item> Queue::pop(clock::time_point) {
  std::string uid;
  if (!active_.empty()) {
    uid = active_.begin()->uid;
  } else if (!backoff_.empty()) {
    uid = backoff_.begin()->uid;  // the one closest to the end of its backoff
  } else {
    return std::nullopt;
  }
  Entry& e = entries_.at(uid);
  detach(e, uid);
  e.where = Where::in_flight;
  ++e.attempts;
  e.popped_at_cycle = move_cycle_;
  return Item{e.pod, e.attempts, e.first_queued, e.arrived, e.queued};
}

void Queue::done(const std::string& uid) {
  auto it = entries_.find(uid);
  if (it != entries_.end()) it->second.where = Where::done;
}

void Queue::unschedulable(const std::string& uid, clock::time_point now) {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  detach(e, uid);  // before its keys change (it is in flight, normally in no queue)
  e.where = Where::in_flight;
  ++e.unschedulable_count;
  e.consecutive_errors = 0;  // the error, if any, is gone
  e.backoff_until = backoff_end(e.unschedulable_count, now);
  e.queued = now;  // back from an attempt: its age counts from now (upstream refreshes Timestamp)
  if (e.popped_at_cycle != move_cycle_) {
    // Something changed in the cluster while we were deciding: try again
    // after the backoff instead of waiting for the next event.
    to_active_or_backoff(e, uid, now);
    return;
  }
  e.where = Where::unschedulable;
  e.unschedulable_since = now;
  unschedulable_.insert({now, uid});
}

void Queue::backoff(const std::string& uid, clock::time_point now) {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  detach(e, uid);
  e.where = Where::in_flight;
  ++e.consecutive_errors;
  e.backoff_until = backoff_end(e.consecutive_errors, now);
  e.queued = now;  // back from an attempt, as in unschedulable()
  to_active_or_backoff(e, uid, now, Where::error_backoff);
}

std::size_t Queue::move_all_to_active_or_backoff(clock::time_point now) {
  return move_to_active_or_backoff_if(now, [](const kube::Pod&) { return true; });
}

std::size_t Queue::move_to_active_or_backoff_if(clock::time_point now,
                                                const std::function<bool(const kube::Pod&)>& helps) {
  // Pods in flight cannot be asked: their failure, if any, must not park
  // them as if nothing had happened.
  ++move_cycle_;
  std::vector<std::string> uids;
  uids.reserve(unschedulable_.size());
  for (const auto& entry : unschedulable_) {
    if (helps(entries_.at(entry.second).pod)) uids.push_back(entry.second);
  }
  for (auto& uid : uids) to_active_or_backoff(entries_.at(uid), uid, now);
  return uids.size();
}

void Queue::flush(clock::time_point now) {
  // flushBackoffQCompleted, run by upstream at each whole second: every pod
  // whose backoff ended in an earlier window.
  const clock::time_point window = window_of(now);
  for (auto* q : {&backoff_, &error_backoff_}) {
    while (!q->empty() && q->begin()->until < window) {
      std::string uid = q->begin()->uid;
      to_active(entries_.at(uid), uid);
    }
  }
  // flushUnschedulablePodsLeftover: moved as an event moves them.
  while (!unschedulable_.empty() && now - unschedulable_.begin()->first > opts_.max_unschedulable) {
    std::string uid = unschedulable_.begin()->second;
    to_active_or_backoff(entries_.at(uid), uid, now);
  }
}

bool Queue::in_flight(const std::string& uid) const {
  auto it = entries_.find(uid);
  return it != entries_.end() && (it->second.where == Where::in_flight || it->second.where == Where::done);
}

std::string_view Queue::where(const std::string& uid) const {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return "";
  switch (it->second.where) {
    case Where::active:
      return "active";
    case Where::backoff:
    case Where::error_backoff:
      return "backoff";
    case Where::unschedulable:
      return "unschedulable";
    case Where::in_flight:
      return "in flight";
    case Where::done:
      return "done";
  }
  return "";
}

std::optional<Queue::clock::time_point> Queue::next_backoff_expiry() const {
  std::optional<clock::time_point> next;
  for (const auto* q : {&backoff_, &error_backoff_}) {
    if (!q->empty() && (!next || q->begin()->until < *next)) next = q->begin()->until;
  }
  if (next) *next += kBackoffWindow;
  return next;
}

}  // namespace toysched::sched
