// The `preempt/<ns>/<pod>` task that carries a preemption out. The decision
// is preemption.cpp's, the PostFilter step that calls it the scheduling
// cycle's (scheduler.cpp); this is upstream's Executor (framework/
// preemption/executor.go), asynchronous as upstream's default: the
// scheduling cycle spawns the task and goes on, as it does with a bind.
//
// First, unless every victim is already being deleted (upstream then
// starts no goroutine and writes nothing), the pods of lower priority
// nominated to the node lose their nomination: a PATCH of
// status.nominatedNodeName to null each, so that neither they nor anyone
// reading the API count on room the preemptor takes (the watch then ends
// their nomination here too, as upstream's informer does). A failure there
// does not stop the eviction but ends the task as failed, as upstream
// counts its goroutine as an error.
//
// Then, for each victim, in order: PATCH its status with the DisruptionTarget
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
#include "toysched/sched/binder.hpp"

#include <boost/asio/co_spawn.hpp>

#include <algorithm>

#include "toysched/log/log.hpp"
#include "toysched/trace/tasks.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::sched {

namespace asio = boost::asio;

namespace {

// The victim is no longer there to evict: deleted (404), or its name now
// belongs to another pod (409 on the DELETE's UID precondition, 422 on the
// patch's metadata.uid).
bool victim_gone(const kube::ApiError& e) { return e.is_not_found() || e.is_conflict() || e.http_status == 422; }

bool any_to_evict(const PreemptRequest& req) {
  return std::any_of(req.victims.begin(), req.victims.end(), [](const kube::Pod& v) { return !v.deleting; });
}
}  // namespace

void Binder::spawn_preempt(PreemptRequest req) {
  preempting_.insert(req.preemptor.uid);
  std::string task = "preempt/" + key(req.preemptor);
  asio::co_spawn(api_.transport().executor(), preempt(std::move(req)),
                 supervisor_.handler("preempt", std::move(task), async::Criticality::expendable));
}

// Whatever happens, including an exception, the preemptor may preempt
// again afterwards, and after a failure is tried again.
asio::awaitable<void> Binder::preempt(PreemptRequest req) {
  trace::TaskScope task{"preempt/", req.preemptor.ns, "/", req.preemptor.name};
  bool ok = false;  // declared before the guard, so it outlives it
  util::scope_exit settle([this, &ok, uid = req.preemptor.uid] {
    preempting_.erase(uid);
    if (!ok) {
      ++ctx_.stats.preemption_errors;
      ctx_.move_unschedulable("PreemptionFailed");
    }
    ctx_.wake();
  });
  TS_LOG(2, "Start the preemption asynchronously", {"preemptor", key(req.preemptor)}, {"node", req.node},
         {"numVictims", static_cast<std::int64_t>(req.victims.size())});
  const bool cleared = !any_to_evict(req) || co_await clear_outranked(task, req);
  for (const kube::Pod& victim : req.victims) {
    if (victim.deleting) {
      TS_LOG(2, "Victim Pod is already being deleted, skipping the API call for it", {"preemptor", key(req.preemptor)},
             {"node", req.node}, {"victim", key(victim)});
      continue;
    }
    if (!co_await evict(task, req, victim)) co_return;
  }
  ok = cleared;
  TS_LOG(2, "Async Preemption finished completely", {"preemptor", key(req.preemptor)}, {"node", req.node},
         {"result", ok ? "success" : "error"});
}

// False if a nomination could not be cleared. A pod gone meanwhile (404, or
// a new pod under its name: 422 on the UID) has no nomination left to clear.
asio::awaitable<bool> Binder::clear_outranked(trace::TaskScope& task, const PreemptRequest& req) {
  bool ok = true;
  for (const kube::Pod& p : req.outranked) {
    kube::RequestLimits limits;
    limits.may_send = gate_;
    auto r = co_await trace::traced(task, trace::points::preempt_clear,
                                    api_.patch_pod_status(p.ns, p.name, clear_nomination_patch(p.uid), limits));
    if (r || r.error().is_not_found() || r.error().http_status == 422) continue;
    TS_ERROR("Cannot clear 'NominatedNodeName' field from lower priority pods on the same target node",
             {"node", req.node}, {"pod", key(p)}, {"err", r.error().message});
    ok = false;
  }
  co_return ok;
}

asio::awaitable<bool> Binder::evict(trace::TaskScope& task, const PreemptRequest& req, const kube::Pod& victim) {
  auto gone = [&](const kube::ApiError& e) {
    ++ctx_.stats.victims_evicted;
    TS_LOG(2, "Victim Pod is already deleted", {"preemptor", key(req.preemptor)}, {"victim", key(victim)},
           {"node", req.node}, {"err", e.message});
    return true;
  };
  kube::RequestLimits limits;
  limits.may_send = gate_;
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
  ++ctx_.stats.victims_evicted;
  TS_LOG(2, "Preemptor Pod preempted victim Pod", {"preemptor", key(req.preemptor)}, {"victim", key(victim)},
         {"node", req.node});
  ctx_.events.preempted(victim, req.preemptor, req.node);
  co_return true;
}

}  // namespace toysched::sched
