// The typed calls preemption makes, against a real API server (the lab):
// the victim's delete with its UID as a precondition, the victim as
// upstream's executor leaves it (DisruptionTarget patched, then deleted)
// read back by our decoder, the fields DefaultPreemption reads as the
// server really writes them, and an event naming a related pod.
//
// Pods use a scheduler nobody runs, so only the test moves them; a pod
// that must stay terminating holds a finalizer of ours, removed on the way
// out (a pod left with it would keep its namespace from ever going away).
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "async_run.hpp"
#include "lab_client.hpp"
#include "lab_fixture.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/util/scope_exit.hpp"

using namespace toysched;
using testing::Lab;
using testing::run_async;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* kHold = "toysched.example/hold";

// A pod nobody schedules; `overrides` adds to the generated object.
std::string create_pod(const Lab& lab, const std::string& ns, const std::string& name,
                       const std::string& metadata = "{}", const std::string& spec_extra = "") {
  const std::string overrides =
      R"({"metadata":)" + metadata + R"(,"spec":{"schedulerName":"nobody")" + spec_extra + "}}";
  lab.kubectl(
      {"-n", ns, "run", name, "--image=registry.k8s.io/pause:3.10", "--restart=Never", "--overrides=" + overrides});
  auto uid = lab.kubectl({"-n", ns, "get", "pod", name, "-o", "jsonpath={.metadata.uid}"});
  REQUIRE(!uid.empty());
  return uid;
}

// The pod's uid, "" once it is gone.
std::string uid_of(const Lab& lab, const std::string& ns, const std::string& name) {
  return lab.kubectl({"-n", ns, "get", "pod", name, "--ignore-not-found", "-o", "jsonpath={.metadata.uid}"});
}

bool eventually(const std::function<bool()>& pred, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(200ms);
  }
  return true;
}

// A namespace for one test case, deleted at its end, pass or fail.
struct Namespace {
  const Lab& lab;
  std::string name;
  Namespace(const Lab& l, const std::string& prefix) : lab(l), name(testing::unique_name(prefix)) {
    lab.kubectl({"create", "namespace", name});
  }
  ~Namespace() {
    try {
      lab.kubectl({"delete", "namespace", name, "--wait=false"});
    } catch (...) {
    }
  }
};

}  // namespace

TEST_CASE("delete_pod: the UID precondition spares any other pod of the name") {
  auto& lab = Lab::shared();
  Namespace ns(lab, "api-delete");
  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  auto del = [&](const std::string& name, const std::string& uid) {
    return run_async(io, c.api->delete_pod(ns.name, name, uid));
  };

  const auto first = create_pod(lab, ns.name, "victim");

  SUBCASE("a wrong uid: 409 Conflict, the pod stays") {
    auto r = del("victim", "00000000-0000-0000-0000-000000000000");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().http_status == 409);
    CHECK(r.error().is_conflict());
    REQUIRE(r.error().status.has_value());
    CHECK(r.error().status->reason == "Conflict");
    CHECK(uid_of(lab, ns.name, "victim") == first);
  }

  SUBCASE("the uid of a pod deleted and recreated under the name since: 409, the new pod stays") {
    lab.kubectl({"-n", ns.name, "delete", "pod", "victim", "--wait=true"});
    const auto second = create_pod(lab, ns.name, "victim");
    REQUIRE(second != first);
    auto r = del("victim", first);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().http_status == 409);
    CHECK(uid_of(lab, ns.name, "victim") == second);
  }

  SUBCASE("the right uid: deleted (an unbound pod goes at once)") {
    auto r = del("victim", first);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
    auto g = run_async(io, c.api->get_pod(ns.name, "victim"));
    if (g) {  // still there: it must be this pod, terminating
      CHECK(g->uid == first);
      CHECK(g->deleting);
    } else {
      CHECK(g.error().is_not_found());
    }
  }

  SUBCASE("the right uid of a bound pod: terminating, then gone once the kubelet lets go") {
    const std::string node = lab.kubectl({"get", "nodes", "-o", "jsonpath={.items[0].metadata.name}"});
    auto b = run_async(io, c.api->bind(ns.name, "victim", first, node));
    REQUIRE_MESSAGE(b.has_value(), (b ? "" : b.error().message));
    auto r = del("victim", first);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
    CHECK(eventually([&] { return uid_of(lab, ns.name, "victim").empty(); }, 60s));
  }

  SUBCASE("a pod that is not there: 404 NotFound") {
    auto r = del("never-was", first);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().http_status == 404);
    CHECK(r.error().is_not_found());
    REQUIRE(r.error().status.has_value());
    CHECK(r.error().status->reason == "NotFound");
    CHECK(uid_of(lab, ns.name, "victim") == first);  // the name's pod untouched
  }
}

TEST_CASE("a victim as upstream's executor leaves it decodes as terminating by preemption") {
  auto& lab = Lab::shared();
  Namespace ns(lab, "api-victim");
  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  const auto uid = create_pod(lab, ns.name, "victim", std::string(R"({"finalizers":[")") + kHold + R"("]})");
  util::scope_exit release([&] {  // the finalizer goes whatever happens below
    try {
      lab.kubectl({"-n", ns.name, "patch", "pod", "victim", "--type=json", "-p",
                   R"([{"op":"remove","path":"/metadata/finalizers"}])"});
    } catch (...) {
    }
  });

  // As executor.go's PreemptPod: the DisruptionTarget condition first, then
  // the delete. The condition carries lastTransitionTime, as upstream's
  // UpdatePodCondition sets it: the disruption controller takes a
  // DisruptionTarget on a pod not being deleted for stale once it is 2 min
  // old, and one without a time for stale at once (it flips it to False).
  const std::string now = kube::format_micro_time(std::chrono::system_clock::now()).substr(0, 19) + "Z";
  auto p =
      run_async(io, c.api->patch_pod_status(ns.name, "victim",
                                            R"({"status":{"conditions":[{"type":"DisruptionTarget","status":"True",)"
                                            R"("reason":"PreemptionByScheduler","lastTransitionTime":")" +
                                                now + R"(","message":"toy-scheduler: preempting"}]}})"));
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message));
  auto before = run_async(io, c.api->get_pod(ns.name, "victim"));
  REQUIRE_MESSAGE(before.has_value(), (before ? "" : before.error().message));
  CHECK_FALSE(before->deleting);
  CHECK_FALSE(before->terminating_by_preemption);  // the condition alone is not enough

  auto d = run_async(io, c.api->delete_pod(ns.name, "victim", uid));
  REQUIRE_MESSAGE(d.has_value(), (d ? "" : d.error().message));
  auto after = run_async(io, c.api->get_pod(ns.name, "victim"));
  REQUIRE_MESSAGE(after.has_value(), (after ? "" : after.error().message));
  CHECK(after->uid == uid);
  CHECK(after->deleting);
  CHECK(after->terminating_by_preemption);

  // A second delete of a pod already terminating is no error (the
  // executor may retry): the server answers 200 with the object.
  auto again = run_async(io, c.api->delete_pod(ns.name, "victim", uid));
  CHECK_MESSAGE(again.has_value(), (again ? "" : again.error().message));
}

TEST_CASE("preemptionPolicy, nominatedNodeName and startTime as the server writes them") {
  auto& lab = Lab::shared();
  Namespace ns(lab, "api-fields");
  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  auto get = [&](const std::string& name) {
    auto g = run_async(io, c.api->get_pod(ns.name, name));
    REQUIRE_MESSAGE(g.has_value(), (g ? "" : g.error().message));
    return std::move(*g);
  };

  // Priority admission copies the class's policy into the pod's spec.
  const std::string pc = testing::unique_name("toysched-never");
  lab.kubectl({"create", "priorityclass", pc, "--value=100", "--preemption-policy=Never"});
  util::scope_exit delete_class([&] {
    try {
      lab.kubectl({"delete", "priorityclass", pc, "--wait=false"});
    } catch (...) {
    }
  });
  create_pod(lab, ns.name, "never", "{}", R"(,"priorityClassName":")" + pc + R"(")");
  const auto plain_uid = create_pod(lab, ns.name, "plain");
  CHECK(get("never").preempt_never);
  CHECK(get("never").priority == 100);
  const auto plain = get("plain");
  CHECK_FALSE(plain.preempt_never);  // admission wrote PreemptLowerPriority
  CHECK(plain.nominated_node_name.empty());
  CHECK_FALSE(plain.start_time.has_value());  // no kubelet has started it

  auto p = run_async(io, c.api->patch_pod_status(ns.name, "plain", R"({"status":{"nominatedNodeName":"lab-node-2"}})"));
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message));
  CHECK(get("plain").nominated_node_name == "lab-node-2");

  // The lab's kubelet starts a bound pod and sets status.startTime.
  const auto bound_at = std::chrono::system_clock::now();
  auto b = run_async(io, c.api->bind(ns.name, "plain", plain_uid, "lab-node-1"));
  REQUIRE_MESSAGE(b.has_value(), (b ? "" : b.error().message));
  REQUIRE(eventually([&] { return get("plain").start_time.has_value(); }, 60s));
  const auto started = *get("plain").start_time;
  // Whole seconds on the wire: the start is no earlier than the bind's second.
  CHECK(started >= std::chrono::floor<std::chrono::seconds>(bound_at));
  CHECK(started <= std::chrono::system_clock::now());
}

TEST_CASE("an event with a related pod is created (201) and reads back with it") {
  auto& lab = Lab::shared();
  Namespace ns(lab, "api-event");
  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  const auto victim = create_pod(lab, ns.name, "victim");
  const auto preemptor = create_pod(lab, ns.name, "preemptor");

  auto created = [&] {
    const auto& counts = c.transport->request_counts();
    auto it = counts.find({"POST", "201"});
    return it == counts.end() ? std::uint64_t{0} : it->second;
  };
  kube::Api::Event e;
  e.ns = ns.name, e.pod_name = "victim", e.pod_uid = victim;
  e.type = "Normal", e.reason = "Preempted", e.action = "Preempting";
  e.note = "Preempted by pod " + preemptor + " on node lab-node-1";
  e.reporting_controller = "toy-scheduler", e.reporting_instance = "toy-scheduler-api-test";
  e.related_ns = ns.name, e.related_name = "preemptor", e.related_uid = preemptor;
  auto r = run_async(io, c.api->create_event(e));
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(created() == 1);

  // One without: no related object at all.
  kube::Api::Event plain = e;
  plain.reason = "Scheduled", plain.action = "Binding", plain.note = "no related";
  plain.related_ns.clear(), plain.related_name.clear(), plain.related_uid.clear();
  auto r2 = run_async(io, c.api->create_event(plain));
  REQUIRE_MESSAGE(r2.has_value(), (r2 ? "" : r2.error().message));
  CHECK(created() == 2);

  const auto back = lab.kubectl(
      {"-n", ns.name, "get", "events.v1.events.k8s.io", "--sort-by=.reason", "-o",
       R"(jsonpath={range .items[*]}{.reason} {.regarding.name} {.related.kind}/{.related.namespace}/{.related.name}/{.related.uid};{end})"});
  CHECK(back == "Preempted victim Pod/" + ns.name + "/preemptor/" + preemptor + ";Scheduled victim ///;");
}
