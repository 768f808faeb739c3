#include "toysched/sched/events.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/json/writer.hpp"
#include "toysched/log/log.hpp"
#include "toysched/trace/tasks.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::sched {

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {
// A burst of 10 000 pods queues 10 000 Scheduled events (~5 MB): keep them
// all rather than drop what `kubectl describe` would show.
constexpr std::size_t kMaxQueued = 20000;
// Events are worth less than binds: while binds are waiting, none is posted
// unless the oldest has waited kMaxDelay (then one at a time, so a scheduler
// that is never idle still reports); when it is idle, several at once.
constexpr auto kMaxDelay = 5s;
constexpr int kMaxInFlightIdle = 8;
constexpr auto kRepeatAfter = 10min;

// How the API server refuses a patch carrying another pod's UID (a pod
// recreated under the name): 422 Invalid, "field is immutable", with a cause
// on metadata.uid (apiserver rest.BeforeUpdate's common-field validation).
bool refused_for_uid(const kube::ApiError& e) {
  if (e.http_status != 422 || !e.status) return false;
  for (const auto& cause : e.status->causes)
    if (cause.field == "metadata.uid") return true;
  return false;
}

// Why a refused write says the pod is no longer the one it was about, or
// nullptr for an ordinary failure.
const char* stale_reason(const kube::ApiError& e) {
  if (e.code == kube::errc::cancelled) return "bound, deleted or recreated";  // may_send said no
  if (e.is_not_found()) return "deleted (404)";
  if (refused_for_uid(e)) return "recreated under its name (UID refused)";
  return nullptr;
}
}  // namespace

namespace {
// A condition's lastTransitionTime: RFC 3339 to the second, as metav1.Time.
std::string now_seconds() { return kube::format_micro_time(std::chrono::system_clock::now()).substr(0, 19) + "Z"; }
}  // namespace

std::string pod_scheduled_false_patch(const std::string& uid, const std::string& reason, const std::string& message,
                                      const std::optional<std::string>& nominate) {
  json::Writer w;
  w.object().key("metadata").object().field("uid", uid).end();
  w.key("status").object();
  if (nominate && nominate->empty()) w.key("nominatedNodeName").null();
  if (nominate && !nominate->empty()) w.field("nominatedNodeName", *nominate);
  w.key("conditions").array().object();
  w.field("type", "PodScheduled").field("status", "False").field("reason", reason).field("message", message);
  w.key("lastProbeTime").null().field("lastTransitionTime", now_seconds());
  return std::move(w.end().end().end().end()).str();
}

std::string clear_nomination_patch(const std::string& uid) {
  json::Writer w;
  w.object().key("metadata").object().field("uid", uid).end();
  w.key("status").object().key("nominatedNodeName").null();
  return std::move(w.end().end()).str();
}

std::string disruption_target_patch(const std::string& uid, const std::string& scheduler_name) {
  json::Writer w;
  w.object().key("metadata").object().field("uid", uid).end();
  w.key("status").object().key("conditions").array().object();
  w.field("type", "DisruptionTarget").field("status", "True").field("reason", "PreemptionByScheduler");
  w.field("message", scheduler_name + ": preempting to accommodate a higher priority pod");
  w.field("lastTransitionTime", now_seconds());
  return std::move(w.end().end().end().end()).str();
}

EventRecorder::EventRecorder(kube::Api& api, std::string controller, std::string instance,
                             async::Supervisor& supervisor, OrderingGate& order)
    : api_(api),
      controller_(std::move(controller)),
      instance_(std::move(instance)),
      supervisor_(supervisor),
      order_(order) {}

void EventRecorder::push(Item item) {
  if (stopping_) return;
  item.queued = std::chrono::steady_clock::now();
  if (queue_.size() >= kMaxQueued) {
    TS_LOG(2, "Event queue full; dropping the oldest", {"reason", queue_.front().event.reason},
           {"pod", queue_.front().event.ns + "/" + queue_.front().event.pod_name});
    queue_.pop_front();
  }
  queue_.push_back(std::move(item));
  wakeup_.wake();
}

// Each profile reports as itself, as upstream's per-profile recorders:
// reportingController is the schedulerName the pod asked for.
const std::string& EventRecorder::controller_for(const kube::Pod& pod) const {
  return pod.scheduler_name.empty() ? controller_ : pod.scheduler_name;
}

void EventRecorder::scheduled(const kube::Pod& pod, const std::string& node) {
  last_failure_.erase(pod.uid);
  Item it;
  it.event = {pod.ns,
              pod.name,
              pod.uid,
              "Normal",
              "Scheduled",
              "Binding",
              "Successfully assigned " + pod.ns + "/" + pod.name + " to " + node,
              controller_for(pod),
              instance_};
  push(std::move(it));
}

void EventRecorder::failed_scheduling(const kube::Pod& pod, const std::string& message, bool scheduler_error,
                                      const std::optional<std::string>& nominate) {
  auto now = std::chrono::steady_clock::now();
  auto& last = last_failure_[pod.uid];
  if (!nominate && last.message == message && now - last.at < kRepeatAfter) return;  // said already
  last = {message, now};
  Item it;
  it.event = {pod.ns,   pod.name, pod.uid, "Warning", "FailedScheduling", "Scheduling", message, controller_for(pod),
              instance_};
  it.pod_ns = pod.ns;
  it.pod_name = pod.name;
  it.condition_patch =
      pod_scheduled_false_patch(pod.uid, scheduler_error ? "SchedulerError" : "Unschedulable", message, nominate);
  push(std::move(it));
}

void EventRecorder::preempted(const kube::Pod& victim, const kube::Pod& preemptor, const std::string& node) {
  Item it;
  it.event = {victim.ns,
              victim.name,
              victim.uid,
              "Normal",
              "Preempted",
              "Preempting",
              "Preempted by pod " + preemptor.uid + " on node " + node,
              controller_for(preemptor),
              instance_};
  it.event.related_ns = preemptor.ns;
  it.event.related_name = preemptor.name;
  it.event.related_uid = preemptor.uid;
  push(std::move(it));
}

void EventRecorder::forget(const std::string& pod_uid) { last_failure_.erase(pod_uid); }

// Only a FailedScheduling (the item with a status patch) can go stale: a
// Scheduled event reports a bind that happened, whatever came after.
bool EventRecorder::stale(const Item& item) const {
  return !item.condition_patch.empty() && still_pending_ &&
         !still_pending_(item.pod_ns, item.pod_name, item.event.pod_uid);
}

void EventRecorder::drop_stale(const Item& item, const char* why) {
  ++dropped_stale_;
  TS_LOG(4, "Dropped a FailedScheduling: the pod is no longer pending", {"pod", item.pod_ns + "/" + item.pod_name},
         {"uid", item.event.pod_uid}, {"why", why});
}

asio::awaitable<void> EventRecorder::post(Item item) {
  trace::TaskScope task{"events/", item.event.reason, "/", item.event.ns, "/", item.event.pod_name};
  // Asked again after the rate limiter's wait, right before each write.
  auto still_wanted = [this, &item] { return !stale(item); };
  if (!item.condition_patch.empty()) {
    // From the moment the patch is let go until its answer (or failure),
    // a bind of the pod waits on the ordering gate.
    bool sent = false;
    util::scope_exit answered([&] {
      if (sent) order_.answered(item.event.pod_uid);
    });
    kube::RequestLimits limits;
    limits.may_send = [&] {
      if (!still_wanted()) return false;
      if (!sent) order_.sent(item.event.pod_uid);
      sent = true;
      return true;
    };
    auto r = co_await trace::traced(task, trace::points::events_post,
                                    api_.patch_pod_status(item.pod_ns, item.pod_name, item.condition_patch, limits));
    if (!r) {
      if (const char* why = stale_reason(r.error())) {  // the event would be as stale
        drop_stale(item, why);
        co_return;
      }
      TS_LOG(2, "Failed to update the pod's PodScheduled condition", {"pod", item.pod_ns + "/" + item.pod_name},
             {"err", r.error().message});
    }
  }
  kube::RequestLimits limits;
  if (!item.condition_patch.empty()) limits.may_send = still_wanted;
  auto r = co_await trace::traced(task, trace::points::events_post, api_.create_event(item.event, limits));
  if (!r && r.error().code == kube::errc::cancelled) {
    drop_stale(item, stale_reason(r.error()));
  } else if (!r) {
    TS_LOG(2, "Event not posted", {"reason", item.event.reason}, {"pod", item.event.ns + "/" + item.event.pod_name},
           {"err", r.error().message});
  }
}

asio::awaitable<void> EventRecorder::run() {
  trace::TaskScope task("events");
  auto ex = co_await asio::this_coro::executor;
  while (!stopping_ || !queue_.empty()) {
    const bool busy = busy_ && busy_() && !stopping_;
    const bool overdue = !queue_.empty() && std::chrono::steady_clock::now() - queue_.front().queued >= kMaxDelay;
    const int limit = !busy ? kMaxInFlightIdle : overdue ? 1 : 0;
    while (!queue_.empty() && in_flight_ < limit) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      if (stale(item)) {  // not worth a request, nor a rate-limit token
        drop_stale(item, "bound, deleted or recreated");
        continue;
      }
      ++in_flight_;
      std::string name = "events/" + item.event.reason + "/" + item.event.ns + "/" + item.event.pod_name;
      auto report = supervisor_.handler("events/post", std::move(name), async::Criticality::expendable);
      asio::co_spawn(ex, post(std::move(item)), [this, report](std::exception_ptr e) {
        --in_flight_;
        wakeup_.wake();
        report(e);
      });
    }
    if (stopping_ && queue_.empty()) break;
    // Busy with events held back: look again soon (the binds end without
    // telling us); otherwise sleep until something is queued or posted.
    // Stopping does not end this loop early: what is queued is still sent.
    co_await wakeup_.sleep_for(task, trace::points::events_wait, busy && !queue_.empty() ? 100ms : 1h);
  }
}

void EventRecorder::stop() {
  stopping_ = true;
  wakeup_.wake();
}

}  // namespace toysched::sched
