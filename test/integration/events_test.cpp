// EventRecorder against a real API server: a FailedScheduling queued for a
// pod that is then recreated under its name, bound, or deleted before the
// write goes out must not land on whatever holds the name by then.
//
// The writes are queued first and the recorder run afterwards, so every
// change is in the server before the first request: deterministic, with no
// race against the recorder. The scheduler's informer view is played by the
// still-pending hook, lagging on purpose where the server must be the guard.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <string>

#include "async_run.hpp"
#include "lab_client.hpp"
#include "lab_fixture.hpp"
#include "toysched/async/supervisor.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/log/log.hpp"
#include "toysched/sched/events.hpp"

using namespace toysched;
using testing::Lab;
using testing::pump_until;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// A pod nobody schedules (no scheduler of that name runs), so that only our
// writes and the test's touch its status.
kube::Pod create_pod(const Lab& lab, const std::string& ns, const std::string& name) {
  lab.kubectl({"-n", ns, "run", name, "--image=registry.k8s.io/pause:3.10", "--restart=Never",
               R"(--overrides={"spec":{"schedulerName":"nobody"}})"});
  kube::Pod p;
  p.ns = ns;
  p.name = name;
  p.uid = lab.kubectl({"-n", ns, "get", "pod", name, "-o", "jsonpath={.metadata.uid}"});
  REQUIRE(!p.uid.empty());
  return p;
}

// "status/reason" of the pod's PodScheduled condition, "" without one.
std::string pod_scheduled(const Lab& lab, const std::string& ns, const std::string& name) {
  return lab.kubectl({"-n", ns, "get", "pod", name, "-o",
                      R"(jsonpath={range .status.conditions[?(@.type=="PodScheduled")]}{.status}/{.reason}{end})"});
}

// "name/uid " of the pod each FailedScheduling event in ns is about.
std::string failed_scheduling_events(const Lab& lab, const std::string& ns) {
  return lab.kubectl({"-n", ns, "get", "events", "--field-selector", "reason=FailedScheduling", "-o",
                      R"(jsonpath={range .items[*]}{.involvedObject.name}/{.involvedObject.uid} {end})"});
}

}  // namespace

TEST_CASE("a queued FailedScheduling never lands on a pod recreated, bound or deleted since") {
  log::set_verbosity(4);
  auto& lab = Lab::shared();
  const std::string ns = testing::unique_name("events-stale");
  lab.kubectl({"create", "namespace", ns});
  const std::string node = lab.kubectl({"get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"});

  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  async::Supervisor supervisor;
  sched::OrderingGate order;
  sched::EventRecorder rec(*c.api, "toy-scheduler", "toy-scheduler-events-test", supervisor, order);

  const auto recreated = create_pod(lab, ns, "recreated");
  const auto bound = create_pod(lab, ns, "bound");
  const auto deleted = create_pod(lab, ns, "deleted");
  const auto control = create_pod(lab, ns, "control");  // still pending: its write must land
  const std::string why = "0/3 nodes are available: 3 Insufficient cpu.";
  for (const auto* p : {&recreated, &bound, &deleted, &control}) rec.failed_scheduling(*p, why);

  // While the writes wait: the name passes to a new pod, a pod is bound,
  // another deleted.
  lab.kubectl({"-n", ns, "delete", "pod", "recreated", "--wait=true"});
  const auto second = create_pod(lab, ns, "recreated");
  REQUIRE(second.uid != recreated.uid);
  auto b = testing::run_async(io, c.api->bind(ns, "bound", bound.uid, node));
  REQUIRE_MESSAGE(b.has_value(), (b ? "" : b.error().message));
  lab.kubectl({"-n", ns, "delete", "pod", "deleted", "--wait=true"});

  // The informer, as the scheduler's would at worst: it has seen the bind,
  // not yet the delete nor the recreate. The server guards the rest.
  rec.set_still_pending(
      [&](const std::string&, const std::string& name, const std::string&) { return name != "bound"; });
  bool done = false;
  rec.stop();  // sends what is queued, then ends
  asio::co_spawn(io, rec.run(), [&](std::exception_ptr e) {
    done = true;
    if (e) std::rethrow_exception(e);
  });
  REQUIRE(pump_until(
      io, [&] { return done && rec.pending() == 0; }, 60s));

  CHECK(pod_scheduled(lab, ns, "control") == "False/Unschedulable");  // the writes do work
  CHECK(pod_scheduled(lab, ns, "recreated") == "");                   // the new pod was never touched
  CHECK(pod_scheduled(lab, ns, "bound") == "True/");                  // as the bind left it
  CHECK(failed_scheduling_events(lab, ns) == "control/" + control.uid + " ");
  CHECK(rec.dropped_stale() == 3);
  lab.kubectl({"delete", "namespace", ns, "--wait=false"});
}
