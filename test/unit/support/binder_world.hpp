// A Binder with everything it touches, as the Scheduler wires it, over the
// scripted transport and a model of the server's pods: the binds' client
// and the events' client are one scripted transport, so every request of
// the binding cycle and of the events it causes is an await point of the
// scenario. The events' still-pending check asks the server's model (an
// informer in step); the pod informer the binder asks lags (it shows every
// pod pending), so a replayed bind's 409 is settled by a GET of the pod.
#pragma once

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>
#include <vector>

#include "pod_server.hpp"
#include "scripted_transport.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/sched/binder.hpp"
#include "toysched/sched/cache.hpp"
#include "toysched/sched/events.hpp"
#include "toysched/sched/ordering_gate.hpp"
#include "toysched/sched/queue.hpp"
#include "toysched/sched/reports.hpp"

namespace toysched::testing {

struct BinderWorld {
  boost::asio::io_context io;
  ScriptedTransport fake{io.get_executor()};
  kube::Api api{fake};
  PodServer server;
  sched::Cache cache;
  sched::Queue queue;
  sched::OrderingGate order;
  async::Supervisor supervisor;
  sched::EventRecorder events{api, "toy-scheduler", "toy-scheduler-test", supervisor, order};
  sched::SchedulerStats stats;
  sched::SchedulerObserver observer;
  std::function<void(const sched::Outcome&)> outcome;
  int moved = 0;  // move_unschedulable calls
  kube::Pod informer_copy;
  bool gate_open = true;
  sched::Binder binder;

  BinderWorld();

  // The pod as the scheduler holds it (pending, ours).
  kube::Pod pod(const std::string& key) const;
  // The scheduling cycle's part: queued, popped, assumed on `node`, its
  // bind spawned with what Reserve left to do before it (`pre_binds`).
  void decide(const std::string& key, const std::string& node,
              std::vector<std::unique_ptr<sched::PreBind>> pre_binds = {});
  // Queue::where: "active", "backoff", "unschedulable", "in flight", "done", "".
  std::string where(const std::string& uid) const;
  // Runs the loop until `pred` holds (at most `limit` handlers); true if it did.
  bool run_until(const std::function<bool()>& pred, int limit = 100000);
  // Stops the event recorder (it sends what is queued) and runs the loop dry.
  void finish();
};

// How the pod's bind ended, as the scheduler's own state says: bound by us
// (on `node`, done in the queue), a 409 to a POST sent once (a race lost:
// done, never retried), or back in backoff; never bound twice, its POST
// never sent twice but by the transport's replay.
void check_pod(BinderWorld& w, const std::string& key, const std::string& node);
// Nothing left holding a bind slot, the ordering gate, an event or a
// frame; no request off the script, no task failed.
void check_idle(BinderWorld& w);

}  // namespace toysched::testing
