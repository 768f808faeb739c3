// Decoding what DefaultPreemption reads of a pod: spec.preemptionPolicy,
// status.nominatedNodeName, status.startTime, and whether the pod is being
// deleted by a scheduler's preemption (upstream default_preemption.go
// podTerminatingByPreemption). Beside decode_test.cpp, which is over the
// house's file size already.
#include "toysched/kube/decode.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace toysched::kube;
using namespace std::chrono_literals;

namespace {

const std::string kMeta = R"("metadata":{"name":"victim","namespace":"default","uid":"u-1","resourceVersion":"7"})";
const std::string kMetaDeleting =
    R"("metadata":{"name":"victim","namespace":"default","uid":"u-1","resourceVersion":"7",)"
    R"("deletionTimestamp":"2026-01-01T10:05:00Z","deletionGracePeriodSeconds":30})";
const std::string kSpec = R"("spec":{"containers":[{"name":"app","image":"pause"}]})";

// A pod made of the given top-level parts, in the order given: the server
// writes metadata, spec, status, but nothing in JSON promises it.
std::string pod(std::initializer_list<std::string> parts) {
  std::string s = R"({"kind":"Pod","apiVersion":"v1")";
  for (const auto& p : parts) s += "," + p;
  return s + "}";
}

std::string status_with(const std::string& conditions) {
  return R"("status":{"phase":"Running","conditions":[)" + conditions + "]}";
}

std::string condition(const std::string& type, const std::string& status, const std::string& reason) {
  std::string s = R"({"type":")" + type + R"(","status":")" + status + R"(")";
  if (!reason.empty()) s += R"(,"reason":")" + reason + R"(")";
  return s + R"(,"lastTransitionTime":"2026-01-01T10:04:59Z","message":"m"})";
}

const std::string kPreempted = condition("DisruptionTarget", "True", "PreemptionByScheduler");

Pod decoded(const std::string& json) {
  auto p = decode_pod(json);
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : p.error().message()));
  return std::move(*p);
}

}  // namespace

TEST_CASE("decode: spec.preemptionPolicy") {
  auto with_policy = [](const std::string& v) {
    return decoded(pod({kMeta, R"("spec":{"preemptionPolicy":)" + v + R"(,"containers":[]})"}));
  };
  CHECK(with_policy(R"("Never")").preempt_never);
  CHECK_FALSE(with_policy(R"("PreemptLowerPriority")").preempt_never);
  CHECK_FALSE(with_policy("null").preempt_never);  // null reads as absent: the default
  CHECK_FALSE(decoded(pod({kMeta, kSpec})).preempt_never);
  CHECK_FALSE(decode_pod(pod({kMeta, R"("spec":{"preemptionPolicy":1})"})).has_value());  // wrong type
}

TEST_CASE("decode: status.nominatedNodeName and status.startTime") {
  const auto p = decoded(pod({kMeta, kSpec,
                              R"("status":{"phase":"Pending","nominatedNodeName":"n3",)"
                              R"("startTime":"2026-01-01T10:00:07Z"})"}));
  CHECK(p.nominated_node_name == "n3");
  REQUIRE(p.start_time.has_value());
  CHECK(*p.start_time == std::chrono::sys_days{2026y / 1 / 1} + 10h + 7s);

  SUBCASE("absent: empty and nullopt (a pod no kubelet has started)") {
    const auto q = decoded(pod({kMeta, kSpec, R"("status":{"phase":"Pending"})"}));
    CHECK(q.nominated_node_name.empty());
    CHECK_FALSE(q.start_time.has_value());
  }
  SUBCASE("null: the same") {
    const auto q = decoded(pod({kMeta, kSpec, R"("status":{"nominatedNodeName":null,"startTime":null})"}));
    CHECK(q.nominated_node_name.empty());
    CHECK_FALSE(q.start_time.has_value());
  }
  SUBCASE("a startTime that is no time fails the pod, as a bad creationTimestamp does") {
    CHECK_FALSE(decode_pod(pod({kMeta, kSpec, R"("status":{"startTime":"yesterday"})"})).has_value());
  }
}

TEST_CASE("decode: terminating by preemption") {
  SUBCASE("deletionTimestamp and DisruptionTarget True/PreemptionByScheduler") {
    CHECK(decoded(pod({kMetaDeleting, kSpec, status_with(kPreempted)})).terminating_by_preemption);
  }
  SUBCASE("deletionTimestamp after status: the same (the flag waits for the whole object)") {
    const auto p = decoded(pod({kSpec, status_with(kPreempted), kMetaDeleting}));
    CHECK(p.deleting);
    CHECK(p.terminating_by_preemption);
  }
  SUBCASE("among other conditions, in any place") {
    const auto conds = condition("Ready", "False", "") + "," + kPreempted + "," + condition("PodScheduled", "True", "");
    CHECK(decoded(pod({kMetaDeleting, kSpec, status_with(conds)})).terminating_by_preemption);
  }
  SUBCASE("not being deleted: false, whatever the condition says") {
    const auto p = decoded(pod({kMeta, kSpec, status_with(kPreempted)}));
    CHECK_FALSE(p.deleting);
    CHECK_FALSE(p.terminating_by_preemption);
  }
  SUBCASE("deletionTimestamp null: not being deleted") {
    const std::string meta = R"("metadata":{"name":"v","namespace":"d","uid":"u","deletionTimestamp":null})";
    CHECK_FALSE(decoded(pod({meta, kSpec, status_with(kPreempted)})).terminating_by_preemption);
  }
  SUBCASE("a DisruptionTarget with another reason: false (an eviction, a taint manager)") {
    const auto p = decoded(
        pod({kMetaDeleting, kSpec, status_with(condition("DisruptionTarget", "True", "EvictionByEvictionAPI"))}));
    CHECK(p.deleting);
    CHECK_FALSE(p.terminating_by_preemption);
  }
  SUBCASE("the reason but status False: false") {
    CHECK_FALSE(decoded(pod({kMetaDeleting, kSpec,
                             status_with(condition("DisruptionTarget", "False", "PreemptionByScheduler"))}))
                    .terminating_by_preemption);
  }
  SUBCASE("the reason on another condition type: false") {
    CHECK_FALSE(decoded(pod({kMetaDeleting, kSpec, status_with(condition("Ready", "True", "PreemptionByScheduler"))}))
                    .terminating_by_preemption);
  }
  SUBCASE("deleting without any condition: false") {
    CHECK_FALSE(decoded(pod({kMetaDeleting, kSpec, R"("status":{"phase":"Running"})"})).terminating_by_preemption);
  }
  SUBCASE("only the first DisruptionTarget counts, as upstream reads it") {
    const auto other = condition("DisruptionTarget", "True", "DeletionByTaintManager");
    CHECK_FALSE(decoded(pod({kMetaDeleting, kSpec, status_with(other + "," + kPreempted)})).terminating_by_preemption);
    CHECK(decoded(pod({kMetaDeleting, kSpec, status_with(kPreempted + "," + other)})).terminating_by_preemption);
  }
}

TEST_CASE("decode: the preemption fields through a list and a watch event") {
  const std::string p = pod({kSpec, status_with(kPreempted), kMetaDeleting});
  Decoder d;
  auto list = d.list<Pod>(R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[)" + p + "]}");
  REQUIRE(list.has_value());
  REQUIRE(list->items.size() == 1);
  CHECK(list->items[0].terminating_by_preemption);
  auto ev = d.event<Pod>(R"({"type":"MODIFIED","object":)" + p + "}");
  REQUIRE(ev.has_value());
  CHECK(ev->object.terminating_by_preemption);
}
