// Preemption in the Scheduler: the PostFilter step of schedule_one, and the
// `preempt/<ns>/<pod>` task that carries a preemption out. The decision is
// preemption.cpp's; this is upstream's Executor (framework/preemption/
// executor.go), asynchronous as upstream's default: the scheduling cycle
// spawns the task and goes on, as it does with a bind.
//
// For each victim, in order: PATCH its status with the DisruptionTarget
// condition (so its owner and `kubectl describe` see why it goes), DELETE it
// with its UID as a precondition (a pod since recreated under the name is
// not touched), then post the Preempted event. A victim already gone (404,
// or another pod under its name) counts as evicted. The preemptor waits in
// the unschedulable pool: the victims' deletions move it back to be tried,
// and until the task ends it does not preempt again. An API error stops the
// task and sends every unschedulable pod back to be tried, the preemptor
// among them, as upstream activates the preemptor after a failed
// preemption. Both writes go through the bind gate: a leader past its renew
// deadline evicts nothing.
#include "toysched/sched/scheduler.hpp"

#include <boost/asio/co_spawn.hpp>

#include "toysched/log/log.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {

namespace asio = boost::asio;

namespace {

// The victim is no longer there to evict: deleted (404), or its name now
// belongs to another pod (409 on the DELETE's UID precondition, 422 on the
// patch's metadata.uid).
bool victim_gone(const kube::ApiError& e) { return e.is_not_found() || e.is_conflict() || e.http_status == 422; }
}  // namespace

std::optional<std::string> Scheduler::post_filter(const kube::Pod& pod, const ActiveProfile& prof,
                                                  const Cluster& cluster, Decision& d) {
  if (!prof.profile.preemption()) return std::nullopt;
  // Its last preemption is still being carried out: upstream keeps such a
  // pod out of the cycle; here it is tried, and may fit, but preempts no more.
  if (preempting_.count(pod.uid) > 0) return std::nullopt;
  ++stats_.preemption_attempts;
  PreemptionResult r = sched::preempt(prof.profile, pod, cluster, d.status == Decision::Status::unresolvable, rng_,
                                      std::chrono::system_clock::now());
  if (r.outcome != PreemptionResult::Outcome::nominated) {
    TS_LOG(5, "Status after running PostFilter plugins for pod", {"pod", key(pod)}, {"status", r.message});
    if (!r.message.empty()) d.message += " " + r.message;
    // No candidate anywhere: a nomination from an earlier preemption no
    // longer holds (upstream clears it; "not eligible" leaves it).
    if (r.outcome == PreemptionResult::Outcome::no_candidate && !pod.nominated_node_name.empty()) {
      nominator_.remove(pod.uid);
      return std::string();
    }
    return std::nullopt;
  }
  TS_LOG(2, "the target node for the preemption is determined", {"node", r.node}, {"pod", key(pod)},
         {"victims", static_cast<std::int64_t>(r.victims.size())});
  ++stats_.preemptions;
  if (observer_.preemption_victims) observer_.preemption_victims(r.victims.size());
  PreemptRequest req{pod, r.node, {}};
  req.victims.reserve(r.victims.size());
  for (const kube::Pod* v : r.victims) req.victims.push_back(*v);
  preempting_.insert(pod.uid);
  nominator_.nominate(pod, r.node);
  std::string task = "preempt/" + key(pod);
  asio::co_spawn(api_.transport().executor(), preempt(std::move(req)),
                 supervisor_.handler("preempt", std::move(task), async::Criticality::expendable));
  return r.node;
}

// Whatever happens, including an exception, the preemptor may preempt
// again afterwards, and after a failure is tried again.
asio::awaitable<void> Scheduler::preempt(PreemptRequest req) {
  trace::TaskScope task{"preempt/", req.preemptor.ns, "/", req.preemptor.name};
  struct settle {
    Scheduler& s;
    std::string uid;
    bool ok = false;
    ~settle() {
      s.preempting_.erase(uid);
      if (!ok) {
        ++s.stats_.preemption_errors;
        s.move_unschedulable("PreemptionFailed");
      }
      s.wake();
    }
  } guard{*this, req.preemptor.uid};
  TS_LOG(2, "Start the preemption asynchronously", {"preemptor", key(req.preemptor)}, {"node", req.node},
         {"numVictims", static_cast<std::int64_t>(req.victims.size())});
  for (const kube::Pod& victim : req.victims) {
    if (victim.deleting) {
      TS_LOG(2, "Victim Pod is already being deleted, skipping the API call for it", {"preemptor", key(req.preemptor)},
             {"node", req.node}, {"victim", key(victim)});
      continue;
    }
    if (!co_await evict(task, req, victim)) co_return;
  }
  guard.ok = true;
  TS_LOG(2, "Async Preemption finished completely", {"preemptor", key(req.preemptor)}, {"node", req.node});
}

asio::awaitable<bool> Scheduler::evict(trace::TaskScope& task, const PreemptRequest& req, const kube::Pod& victim) {
  auto gone = [&](const kube::ApiError& e) {
    ++stats_.victims_evicted;
    TS_LOG(2, "Victim Pod is already deleted", {"preemptor", key(req.preemptor)}, {"victim", key(victim)},
           {"node", req.node}, {"err", e.message});
    return true;
  };
  kube::RequestLimits limits;
  limits.may_send = bind_gate_;
  auto patched = co_await trace::traced(
      task, trace::points::preempt_patch,
      api_.patch_pod_status(victim.ns, victim.name, disruption_target_patch(victim.uid, req.preemptor.scheduler_name),
                            limits));
  if (!patched) {
    if (victim_gone(patched.error())) co_return gone(patched.error());
    TS_ERROR("Could not add DisruptionTarget condition due to preemption", {"preemptor", key(req.preemptor)},
             {"victim", key(victim)}, {"err", patched.error().message});
    co_return false;
  }
  auto deleted = co_await trace::traced(task, trace::points::preempt_delete,
                                        api_.delete_pod(victim.ns, victim.name, victim.uid, std::move(limits)));
  if (!deleted) {
    if (victim_gone(deleted.error())) co_return gone(deleted.error());
    TS_ERROR("Tried to preempted pod", {"pod", key(victim)}, {"preemptor", key(req.preemptor)},
             {"err", deleted.error().message});
    co_return false;
  }
  ++stats_.victims_evicted;
  TS_LOG(2, "Preemptor Pod preempted victim Pod", {"preemptor", key(req.preemptor)}, {"victim", key(victim)},
         {"node", req.node});
  events_.preempted(victim, req.preemptor, req.node);
  co_return true;
}

}  // namespace toysched::sched
