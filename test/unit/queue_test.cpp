#include <doctest/doctest.h>

#include "toysched/sched/queue.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using toysched::kube::Pod;
using toysched::sched::Queue;
using namespace std::chrono_literals;

namespace {
Pod pod(std::string uid, int priority = 0) {
  Pod p;
  p.ns = "default";
  p.name = uid;
  p.uid = std::move(uid);
  p.priority = priority;
  return p;
}
const Queue::clock::time_point t0 = Queue::clock::time_point{} + 1h;
std::string pop_uid(Queue& q, Queue::clock::time_point now = t0) {
  auto item = q.pop(now);
  return item ? item->pod.uid : "";
}
}  // namespace

TEST_CASE("activeQ: higher priority first, then older first") {
  Queue q;
  q.add_or_update(pod("old-low", 0), t0);
  q.add_or_update(pod("new-high", 100), t0 + 1s);
  q.add_or_update(pod("new-low", 0), t0 + 2s);
  CHECK(pop_uid(q) == "new-high");
  CHECK(pop_uid(q) == "old-low");
  CHECK(pop_uid(q) == "new-low");
  CHECK(pop_uid(q) == "");
}

TEST_CASE("a pod in flight is not handed out again when the watch updates it") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  CHECK(q.in_flight("a"));
  q.add_or_update(pod("a"), t0 + 1s);  // e.g. a status update while binding
  CHECK(q.active_size() == 0);
  CHECK(pop_uid(q) == "");
  q.done("a");
  q.add_or_update(pod("a"), t0 + 2s);
  CHECK(pop_uid(q) == "");
  q.remove("a");  // the watch shows it bound
  CHECK_FALSE(q.in_flight("a"));
}

TEST_CASE("where a pod is: queued, popped without an outcome yet, done, backing off, gone") {
  Queue q;
  CHECK(q.where("a") == "");
  q.add_or_update(pod("a"), t0);
  CHECK(q.where("a") == "active");
  REQUIRE(pop_uid(q) == "a");
  CHECK(q.where("a") == "in flight");
  q.done("a");
  CHECK(q.where("a") == "done");
  q.add_or_update(pod("b"), t0);
  REQUIRE(pop_uid(q) == "b");
  q.backoff("b", t0);
  CHECK(q.where("b") == "backoff");
  q.remove("a");
  CHECK(q.where("a") == "");
}

// Consecutive errors (a failed bind each time): 1 s doubling to the 10 s
// cap. t0 is a whole second, so each backoff ends exactly at a window's
// start, and the pod leaves at the end of that window.
TEST_CASE("backoff doubles from 1 s to a 10 s cap, over when its 1 s window is") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  std::vector<std::chrono::seconds> waits;
  auto now = t0;
  for (int i = 0; i < 6; ++i) {
    REQUIRE(pop_uid(q, now) == "a");
    q.backoff("a", now);
    auto until = *q.next_backoff_expiry();
    waits.push_back(std::chrono::duration_cast<std::chrono::seconds>(until - now));
    q.flush(until - 1ms);
    CHECK(q.active_size() == 0);  // not a moment early
    q.flush(until);
    CHECK(q.active_size() == 1);
    now = until;
  }
  CHECK(waits == std::vector<std::chrono::seconds>{2s, 3s, 5s, 9s, 11s, 11s});
}

TEST_CASE("unschedulable pods wait for a cluster event, at most 5 minutes") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0);
  CHECK(q.unschedulable_size() == 1);
  q.flush(t0 + 4min);
  CHECK(q.active_size() == 0);
  q.flush(t0 + 5min);  // more than 5 minutes, as upstream's flush asks
  CHECK(q.active_size() == 0);
  q.flush(t0 + 5min + 1ms);
  CHECK(q.active_size() == 1);

  REQUIRE(pop_uid(q, t0 + 5min) == "a");
  q.unschedulable("a", t0 + 5min);
  q.move_all_to_active_or_backoff(t0 + 5min + 10s);  // a node was added
  CHECK(q.unschedulable_size() == 0);
  CHECK(q.active_size() == 1);
}

TEST_CASE("an event during the attempt sends the pod to backoff, not to wait") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.move_all_to_active_or_backoff(t0 + 1ms);  // a node appeared mid-decision
  q.unschedulable("a", t0 + 2ms);
  CHECK(q.unschedulable_size() == 0);
  CHECK(q.backoff_size() == 1);
}

TEST_CASE("deleted or bound elsewhere: gone from every queue") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  q.add_or_update(pod("b"), t0);
  q.remove("a");
  REQUIRE(pop_uid(q) == "b");
  q.unschedulable("b", t0);
  q.remove("b");
  CHECK(q.unschedulable_size() == 0);
  q.move_all_to_active_or_backoff(t0 + 1s);
  CHECK(pop_uid(q) == "");
}

TEST_CASE("a priority change re-orders a waiting pod") {
  Queue q;
  q.add_or_update(pod("a", 0), t0);
  q.add_or_update(pod("b", 0), t0 + 1s);
  q.add_or_update(pod("b", 10), t0 + 2s);
  CHECK(pop_uid(q) == "b");
  CHECK(pop_uid(q) == "a");
}

TEST_CASE("a move keeps the backoff counted from the failure, not from the move") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0);  // first failure: 1 s of backoff, until t0 + 1 s: over with that window
  q.move_all_to_active_or_backoff(t0 + 900ms);
  REQUIRE(q.backoff_size() == 1);
  CHECK(*q.next_backoff_expiry() == t0 + 2s);
  q.flush(t0 + 2s);
  CHECK(q.active_size() == 1);
}

TEST_CASE("a spec update of an unschedulable pod keeps its backoff too") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0);
  q.add_or_update(pod("a", 5), t0 + 500ms);
  REQUIRE(q.backoff_size() == 1);
  CHECK(*q.next_backoff_expiry() == t0 + 2s);
}

TEST_CASE("an empty activeQ pops from backoffQ, after every active pod") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0);
  q.move_all_to_active_or_backoff(t0 + 100ms);  // backing off until t0 + 1 s
  q.add_or_update(pod("b"), t0 + 200ms);
  CHECK(pop_uid(q, t0 + 300ms) == "b");  // activeQ first
  auto item = q.pop(t0 + 300ms);         // then backoffQ, without waiting out the second
  REQUIRE(item);
  CHECK(item->pod.uid == "a");
  CHECK(item->attempts == 2);
  CHECK(q.backoff_size() == 0);
  CHECK(q.in_flight("a"));
}

TEST_CASE("backoffQ pops the pod whose backoff ends first") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  q.add_or_update(pod("b"), t0);
  REQUIRE(pop_uid(q) == "a");
  REQUIRE(pop_uid(q) == "b");
  q.unschedulable("b", t0);
  q.unschedulable("a", t0 + 10ms);
  q.move_all_to_active_or_backoff(t0 + 20ms);
  CHECK(pop_uid(q, t0 + 30ms) == "b");
  CHECK(pop_uid(q, t0 + 30ms) == "a");
}

TEST_CASE("a pod backing off after an error is not popped early") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.backoff("a", t0);  // e.g. the bind failed with a 500
  CHECK(pop_uid(q, t0 + 500ms) == "");
  CHECK(q.backoff_size() == 1);
  q.flush(t0 + 2s);
  CHECK(pop_uid(q, t0 + 2s) == "a");
}

namespace {
using toysched::sched::node_update_can_help;
using toysched::sched::pod_scaled_down;
toysched::kube::Node base_node() {
  toysched::kube::Node n;
  n.name = "n1";
  n.resource_version = "1";
  n.labels = {{"kubernetes.io/hostname", "n1"}, {"zone", "a"}};
  n.allocatable.milli_cpu = 4000;
  n.allocatable.pods = 110;
  n.ready = true;
  n.conditions = {{"MemoryPressure", "False"}, {"Ready", "True"}};
  n.internal_ip = "10.0.0.1";
  return n;
}
}  // namespace

TEST_CASE("node updates that cannot help an unschedulable pod do not move it") {
  const auto old = base_node();
  auto n = old;
  n.resource_version = "2";  // an annotation, a heartbeat, managedFields: only the RV differs here
  CHECK_FALSE(node_update_can_help(old, n));
  n.labels = {{"zone", "a"}, {"kubernetes.io/hostname", "n1"}};  // same labels, other order
  n.conditions = {{"Ready", "True"}, {"MemoryPressure", "False"}};
  n.internal_ip = "10.0.0.2";
  CHECK_FALSE(node_update_can_help(old, n));
}

TEST_CASE("node updates that can help: labels, taints, allocatable, cordon, condition status") {
  const auto old = base_node();
  auto n = old;
  n.labels[1].second = "b";
  CHECK(node_update_can_help(old, n));
  n = old;
  n.labels.emplace_back("disk", "ssd");
  CHECK(node_update_can_help(old, n));
  n = old;
  n.taints.push_back({"dedicated", "gpu", toysched::kube::TaintEffect::no_schedule});
  CHECK(node_update_can_help(old, n));
  CHECK(node_update_can_help(n, old));  // and a taint removed
  n = old;
  n.allocatable.milli_cpu = 8000;
  CHECK(node_update_can_help(old, n));
  n = old;
  n.unschedulable = true;
  CHECK(node_update_can_help(n, old));  // uncordoned
  n = old;
  n.conditions[0].second = "True";
  CHECK(node_update_can_help(old, n));
}

TEST_CASE("a bound pod resized down frees room; resized up does not") {
  Pod old = pod("a");
  old.requests.milli_cpu = 500;
  old.requests.memory = 1 << 20;
  old.requests.extended = {{"example.com/gpu", 2}};
  Pod now = old;
  CHECK_FALSE(pod_scaled_down(old, now));
  now.requests.milli_cpu = 1000;
  CHECK_FALSE(pod_scaled_down(old, now));
  now.requests.milli_cpu = 250;
  CHECK(pod_scaled_down(old, now));
  now = old;
  now.requests.memory = 1 << 19;
  CHECK(pod_scaled_down(old, now));
  now = old;
  now.requests.extended.clear();  // an extended request dropped
  CHECK(pod_scaled_down(old, now));
}

TEST_CASE("a pod back from unschedulable or backoff keeps its age: it goes before pods queued after it") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0 + 1s);             // queued again at t0 + 1 s
  q.add_or_update(pod("b"), t0 + 2s);        // arrives while a waits
  q.move_all_to_active_or_backoff(t0 + 3s);  // a's 1 s backoff is over: active
  CHECK(pop_uid(q, t0 + 3s) == "a");
  CHECK(pop_uid(q, t0 + 3s) == "b");

  q.add_or_update(pod("c"), t0 + 4s);
  REQUIRE(pop_uid(q, t0 + 4s) == "c");
  q.backoff("c", t0 + 5s);  // a failed bind: back at t0 + 5 s, until the window of t0 + 6 s is over
  q.add_or_update(pod("d"), t0 + 5500ms);
  q.flush(t0 + 7s);
  CHECK(pop_uid(q, t0 + 7s) == "c");
  CHECK(pop_uid(q, t0 + 7s) == "d");
}

TEST_CASE("a filtered move takes only the unschedulable pods the event may help") {
  Queue q;
  Pod partner = pod("needs-partner");
  partner.labels = {{"wants", "db"}};
  q.add_or_update(partner, t0);
  q.add_or_update(pod("needs-room"), t0);
  REQUIRE(pop_uid(q) == "needs-partner");
  REQUIRE(pop_uid(q) == "needs-room");
  q.unschedulable("needs-partner", t0);
  q.unschedulable("needs-room", t0);
  auto wants_db = [](const Pod& p) { return toysched::kube::find_value(p.labels, "wants") != nullptr; };
  CHECK(q.move_to_active_or_backoff_if(t0 + 20s, wants_db) == 1);
  CHECK(q.unschedulable_size() == 1);
  CHECK(pop_uid(q, t0 + 20s) == "needs-partner");
  CHECK(pop_uid(q, t0 + 20s) == "");  // needs-room still waits for an event of its own
  CHECK(q.move_all_to_active_or_backoff(t0 + 21s) == 1);
  CHECK(pop_uid(q, t0 + 21s) == "needs-room");
}

TEST_CASE("for_each_waiting: each queue in serving order, at most per_queue of each, nothing in flight") {
  Queue q;
  q.add_or_update(pod("a-low", 0), t0);
  q.add_or_update(pod("b-high", 100), t0 + 1s);
  q.add_or_update(pod("c-low", 0), t0 + 2s);
  q.add_or_update(pod("d-unsched", 0), t0 + 3s);
  auto first = q.pop(t0 + 4s);  // b-high: in flight, not waiting
  REQUIRE(first);
  auto second = q.pop(t0 + 4s);  // a-low, made unschedulable
  REQUIRE(second);
  q.unschedulable(second->pod.uid, t0 + 4s);
  std::vector<std::string> seen;
  q.for_each_waiting([&](const Pod& p, const char* queue, int) { seen.push_back(std::string(queue) + ":" + p.uid); });
  CHECK(seen == std::vector<std::string>{"active:c-low", "active:d-unsched", "unschedulable:a-low"});
  seen.clear();
  q.for_each_waiting([&](const Pod& p, const char* queue, int) { seen.push_back(std::string(queue) + ":" + p.uid); },
                     1);
  CHECK(seen == std::vector<std::string>{"active:c-low", "unschedulable:a-low"});
}

TEST_CASE("which unschedulable pods a placed pod's add or relabel may let in") {
  using toysched::sched::assigned_pod_add_can_help;
  using toysched::sched::assigned_pod_relabel_can_help;
  Pod plain = pod("plain");
  Pod affine = pod("affine");
  affine.pod_affinity.required.emplace_back();
  Pod anti = pod("anti");
  anti.pod_anti_affinity.required.emplace_back();
  Pod spread = pod("spread");
  spread.topology_spread.emplace_back().when_unsatisfiable = toysched::kube::WhenUnsatisfiable::do_not_schedule;
  Pod spread_anyway = pod("spread-anyway");
  spread_anyway.topology_spread.emplace_back().when_unsatisfiable = toysched::kube::WhenUnsatisfiable::schedule_anyway;

  CHECK_FALSE(assigned_pod_add_can_help(plain));
  CHECK(assigned_pod_add_can_help(affine));
  CHECK(assigned_pod_add_can_help(spread));
  CHECK_FALSE(assigned_pod_add_can_help(spread_anyway));
  // An added pod never helps a pod kept out by anti-affinity; a relabelled
  // one may (its old labels matched, its new ones do not).
  CHECK_FALSE(assigned_pod_add_can_help(anti));
  CHECK(assigned_pod_relabel_can_help(anti));
  CHECK(assigned_pod_relabel_can_help(affine));
  CHECK(assigned_pod_relabel_can_help(spread));
  CHECK_FALSE(assigned_pod_relabel_can_help(plain));
}

// backoff_queue_test.go TestBackoffQueue_getBackoffTime, through the queue:
// the counts come from attempts, the end from the last failure's time.
TEST_CASE("backoff: TestBackoffQueue_getBackoffTime") {
  const Queue::Options opts{1s, 32s, 5min};
  // `n` unschedulable attempts, the last at t0; then `errors` failed binds
  // at t0; the pod's backoff end (next_backoff_expiry less the window).
  auto backoff_end = [&](int n, int errors, Queue::Options o) {
    Queue q(o);
    q.add_or_update(pod("a"), t0 - 1h);
    for (int i = 0; i < n + errors; ++i) {
      const auto at = t0 - 1h + std::chrono::minutes(i);
      REQUIRE(pop_uid(q, at) == "a");
      q.move_all_to_active_or_backoff(at);  // an event mid-attempt: to backoffQ, not to wait
      if (i < n) {
        q.unschedulable("a", at);
      } else {
        q.backoff("a", at);
      }
      q.flush(at + 1h);  // every backoff over: back to activeQ
    }
    REQUIRE(pop_uid(q, t0) == "a");
    if (errors > 0) {
      q.backoff("a", t0);  // one more, to read the backoff it gets
    } else {
      q.move_all_to_active_or_backoff(t0);
      q.unschedulable("a", t0);
    }
    const auto next = q.next_backoff_expiry();
    return next ? std::optional(*next - Queue::kBackoffWindow) : std::nullopt;
  };
  SUBCASE("backoff by UnschedulableCount") { CHECK(backoff_end(15, 0, opts) == t0 + 32s); }
  SUBCASE("backoff is calculated with ConsecutiveErrorsCount") { CHECK(backoff_end(5, 15, opts) == t0 + 32s); }
  SUBCASE("an unschedulable attempt after errors counts unschedulable attempts again") {
    // 2 unschedulable, 3 errors, 1 unschedulable: the third unschedulable attempt, 4 s.
    Queue q(opts);
    q.add_or_update(pod("a"), t0 - 1h);
    for (int i = 0; i < 5; ++i) {
      REQUIRE(pop_uid(q, t0 - 1h) == "a");
      if (i < 2) {
        q.move_all_to_active_or_backoff(t0 - 1h);
        q.unschedulable("a", t0 - 1h);
      } else {
        q.backoff("a", t0 - 1h);
      }
      q.flush(t0);
    }
    REQUIRE(pop_uid(q, t0) == "a");
    q.move_all_to_active_or_backoff(t0);
    q.unschedulable("a", t0);
    CHECK(*q.next_backoff_expiry() == t0 + 4s + Queue::kBackoffWindow);
  }
  SUBCASE("zero maxBackoffDuration means no backoff") {
    Queue q(Queue::Options{0s, 0s, 5min});
    q.add_or_update(pod("a"), t0);
    REQUIRE(pop_uid(q) == "a");
    q.backoff("a", t0);
    CHECK_FALSE(q.next_backoff_expiry().has_value());
    CHECK(q.active_size() == 1);
  }
}

// Issue 47 item 8: failed binds count as errors, not as unschedulable
// attempts. After 3 unschedulable attempts a failed bind backs off 1 s
// (the first error), not 8 s (the fourth attempt).
TEST_CASE("backoff: a failed bind after unschedulable attempts is the first error") {
  Queue q;
  q.add_or_update(pod("a"), t0);
  auto now = t0;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(pop_uid(q, now) == "a");
    q.unschedulable("a", now);
    now += 6min;
    q.flush(now);  // the 5-minute flush brings it back
  }
  REQUIRE(pop_uid(q, now) == "a");
  q.backoff("a", now);  // the bind failed
  CHECK(*q.next_backoff_expiry() == now + 1s + Queue::kBackoffWindow);
}

// backoff_queue_test.go TestBackoffQueue_popAllBackoffCompleted: of pods
// failed 2 s ago and pods failing 1 s from now, one failure each, the
// first leave at `now`, from either queue.
TEST_CASE("backoff: TestBackoffQueue_popAllBackoffCompleted") {
  const auto now = t0 + 500ms;  // not on a window's edge
  Queue q;
  for (const char* uid : {"pod0", "pod1", "pod2", "pod3"}) q.add_or_update(pod(uid), t0 - 1min);
  for (int i = 0; i < 4; ++i) REQUIRE_FALSE(pop_uid(q, t0 - 1min).empty());
  q.move_all_to_active_or_backoff(t0 - 1min);  // pod0, pod1: back through backoffQ
  q.unschedulable("pod0", now - 2s);
  q.unschedulable("pod1", now + 1s);
  q.backoff("pod2", now - 2s);  // errorBackoffQ
  q.backoff("pod3", now + 1s);
  REQUIRE(q.backoff_size() == 4);
  q.flush(now);
  std::vector<std::string> moved;
  for (std::string uid; !(uid = pop_uid(q, now)).empty() && q.in_flight(uid);) {
    moved.push_back(uid);
    if (q.active_size() == 0) break;  // the rest would come from backoffQ early
  }
  std::sort(moved.begin(), moved.end());
  CHECK(moved == std::vector<std::string>{"pod0", "pod2"});
  CHECK(q.backoff_size() == 2);
}

// backoff_queue_test.go TestBackoffQueueOrdering: pods whose backoffs end in
// one window leave it in activeQ's order (priority, then age).
TEST_CASE("backoff: TestBackoffQueueOrdering") {
  Queue q;
  struct P {
    const char* uid;
    int priority;
    Queue::clock::duration failed;  // before t0 (a window's start)
  };
  const P pods[] = {{"pod0", 1, 0s}, {"pod1", 1, 1s}, {"pod2", 2, 2s - 1ms},
                    {"pod3", 1, 2s}, {"pod4", 2, 2s}, {"pod5", 1, 3s}};
  for (const P& p : pods) q.add_or_update(pod(p.uid, p.priority), t0 - 1min);
  for (std::size_t i = 0; i < std::size(pods); ++i) REQUIRE_FALSE(pop_uid(q, t0 - 1min).empty());
  q.move_all_to_active_or_backoff(t0 - 1min);
  for (const P& p : pods) q.unschedulable(p.uid, t0 - p.failed);
  q.flush(t0);
  // Those done at t0 are in activeQ now (priority, then age); popping an
  // empty activeQ takes backoffQ's head, so read the order from backoffQ.
  Queue order;
  for (const P& p : pods) order.add_or_update(pod(p.uid, p.priority), t0 - 1min);
  for (std::size_t i = 0; i < std::size(pods); ++i) REQUIRE_FALSE(pop_uid(order, t0 - 1min).empty());
  order.move_all_to_active_or_backoff(t0 - 1min);
  for (const P& p : pods) order.unschedulable(p.uid, t0 - p.failed);
  std::vector<std::string> popped;
  for (std::string uid; !(uid = pop_uid(order, t0)).empty();) popped.push_back(uid);
  CHECK(popped == std::vector<std::string>{"pod5", "pod4", "pod2", "pod3", "pod1", "pod0"});
  CHECK(q.active_size() == 4);  // pod5, pod4, pod2, pod3: their windows are over at t0
}

// flushUnschedulablePodsLeftover moves pods as an event would: one still
// backing off goes to backoffQ (with a backoff longer than the wait).
TEST_CASE("backoff: the unschedulable flush sends a pod still backing off to backoffQ") {
  Queue q(Queue::Options{10s, 10s, 1s});
  q.add_or_update(pod("a"), t0);
  REQUIRE(pop_uid(q) == "a");
  q.unschedulable("a", t0);
  q.flush(t0 + 1500ms);
  CHECK(q.unschedulable_size() == 0);
  CHECK(q.active_size() == 0);
  CHECK(q.backoff_size() == 1);
  q.flush(t0 + 11s);
  CHECK(q.active_size() == 1);
}
