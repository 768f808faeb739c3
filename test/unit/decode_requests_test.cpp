// Decoding a pod's requests: the effective requests kube-scheduler counts
// (component-helpers resource/helpers.go PodRequests, k8s-api note §8), and
// with in-place resize what a running pod's status adds.
#include "toysched/kube/decode.hpp"

#include "decode_fixtures.hpp"
#include "toysched/kube/quantity.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace toysched::kube;
using namespace toysched::test::decoding;

TEST_CASE("decode: effective pod requests") {
  SUBCASE("a limit without a request stands in for it; a request wins over its limit") {
    const auto r = requests_of(
        spec_of(ctr("a", R"("limits":{"cpu":"2","memory":"1Gi","example.com/gpu":"1"},"requests":{"cpu":"500m"})")));
    CHECK(r.milli_cpu == 500);
    CHECK(r.memory == 1 << 30);
    CHECK(r.extended_value("example.com/gpu") == 1);
  }
  SUBCASE("app containers sum") {
    const auto r = requests_of(spec_of(ctr("a", R"("requests":{"cpu":"100m","memory":"100Mi"})") + "," +
                                       ctr("b", R"("requests":{"cpu":"1.5","ephemeral-storage":"2G"})")));
    CHECK(r.milli_cpu == 1600);
    CHECK(r.memory == 100 << 20);
    CHECK(r.ephemeral_storage == 2'000'000'000);
  }
  SUBCASE("an init container larger than the sum wins, per resource") {
    const auto r = requests_of(spec_of(ctr("a", R"("requests":{"cpu":"100m","memory":"1Gi"})"),
                                       ctr("init", R"("requests":{"cpu":"2","memory":"10Mi"})")));
    CHECK(r.milli_cpu == 2000);
    CHECK(r.memory == 1 << 30);
  }
  SUBCASE("sidecars add to the sum and to every init container started after them") {
    // init order: plain i1 (1 cpu), sidecar s1 (300m), plain i2 (900m).
    // sum = app 200m + s1 300m = 500m; i1 alone = 1000m; i2 + s1 = 1200m.
    const auto r = requests_of(
        spec_of(ctr("app", R"("requests":{"cpu":"200m"})"),
                ctr("i1", R"("requests":{"cpu":"1"})") + "," +
                    ctr("s1", R"("requests":{"cpu":"300m","memory":"50Mi"})", R"("restartPolicy":"Always")") + "," +
                    ctr("i2", R"("requests":{"cpu":"900m"})")));
    CHECK(r.milli_cpu == 1200);
    CHECK(r.memory == 50 << 20);
  }
  SUBCASE("a sidecar alone counts once") {
    const auto r = requests_of(spec_of(ctr("app", R"("requests":{"cpu":"200m"})"),
                                       ctr("s", R"("requests":{"cpu":"300m"})", R"("restartPolicy":"Always")")));
    CHECK(r.milli_cpu == 500);
  }
  SUBCASE("overhead is added last") {
    const auto r =
        requests_of(spec_of(ctr("a", R"("requests":{"cpu":"100m","memory":"10Mi"})"),
                            ctr("i", R"("requests":{"cpu":"1"})"), R"("overhead":{"cpu":"250m","memory":"120Mi"})"));
    CHECK(r.milli_cpu == 1250);
    CHECK(r.memory == 130 << 20);
  }
  SUBCASE("extended resources and hugepages: summed, max with init, sorted") {
    const auto r = requests_of(spec_of(ctr("a", R"("requests":{"nvidia.com/gpu":"1","hugepages-2Mi":"4Mi"})") + "," +
                                           ctr("b", R"("limits":{"nvidia.com/gpu":"2"})"),
                                       ctr("i", R"("requests":{"nvidia.com/gpu":"4","example.com/fpga":"1"})")));
    CHECK(r.extended_value("nvidia.com/gpu") == 4);
    CHECK(r.extended_value("hugepages-2Mi") == 4 << 20);
    CHECK(r.extended_value("example.com/fpga") == 1);
    REQUIRE(r.extended.size() == 3);
    CHECK(r.extended[0].first == "example.com/fpga");
    CHECK(r.extended[2].first == "nvidia.com/gpu");
  }
  SUBCASE("pod-level resources replace cpu and memory, overhead still added") {
    const auto r =
        requests_of(spec_of(ctr("a", R"("requests":{"cpu":"100m","memory":"10Mi","ephemeral-storage":"1Gi"})"), "",
                            R"("resources":{"limits":{"memory":"1Gi"},"requests":{"cpu":"2"}},)"
                            R"("overhead":{"cpu":"10m"})"));
    CHECK(r.milli_cpu == 2010);
    CHECK(r.memory == 1 << 30);
    CHECK(r.ephemeral_storage == 1 << 30);
  }
  SUBCASE("a pod asking for nothing") {
    const auto r = requests_of(spec_of(ctr("a", "")));
    CHECK(r.empty());
  }
}

TEST_CASE("decode: requests whose quantities do not parse, or overflow int64") {
  SUBCASE("quantities that do not parse are errors, not zeros") {
    auto bad = decode_pod(pod_json(spec_of(ctr("a", R"("requests":{"cpu":"12x"})"))));
    REQUIRE(bad.has_error());
    CHECK(bad.error() == errc::quantity_invalid);
  }
  // Issue 13 item 2: these are valid to the API server, so they must decode
  // (as more than any node has), or the pod wedges every list and watch.
  SUBCASE("quantities beyond int64 saturate: memory 100E, cpu 1e16, 8Ei") {
    CHECK(requests_of(spec_of(ctr("a", R"("requests":{"memory":"100E"})"))).memory == kQuantityMax);
    CHECK(requests_of(spec_of(ctr("a", R"("requests":{"cpu":"1e16"})"))).milli_cpu == kQuantityMax);
    CHECK(requests_of(spec_of(ctr("a", R"("requests":{"memory":"8Ei"})"))).memory == kQuantityMax);
    CHECK(requests_of(spec_of(ctr("a", R"("limits":{"memory":"1e20"})"))).memory == kQuantityMax);
    CHECK(requests_of(spec_of(ctr("a", R"("requests":{"example.com/x":"1e30"})"))).extended_value("example.com/x") ==
          kQuantityMax);
    const auto n =
        decode_node(R"({"metadata":{"name":"n","uid":"u"},"status":{"allocatable":{"memory":"100E","cpu":"1e16"}}})");
    REQUIRE(n.has_value());
    CHECK(n->allocatable.memory == kQuantityMax);
    CHECK(n->allocatable.milli_cpu == kQuantityMax);
  }
  SUBCASE("sums saturate at the same bound instead of wrapping") {
    const auto r = requests_of(spec_of(
        ctr("a", R"("requests":{"memory":"7Ei"})") + "," + ctr("b", R"("requests":{"memory":"7Ei"})"),
        ctr("s", R"("requests":{"memory":"100E"})", R"("restartPolicy":"Always")"), R"("overhead":{"memory":"1e19"})"));
    CHECK(r.memory == kQuantityMax);
  }
}

// Issue 13 item 8, in-place pod resize (GA in 1.35): kube-scheduler 1.36
// counts each container as max(spec, status resources, allocated)
// (component-helpers resource/helpers.go PodRequests with
// UseStatusResources, as framework/types.go calls it).

namespace {

// The requests of a pod with the given spec and status.
Resources requests(const std::string& spec, const std::string& status) {
  const std::string json = R"({"metadata":{"name":"r","namespace":"d","uid":"u","resourceVersion":"1"},"spec":)" +
                           spec + R"(,"status":)" + status + "}";
  auto p = decode_pod(json);
  REQUIRE(p.has_value());
  return p->requests;
}

// A running pod's status with these container statuses.
std::string running(const std::string& statuses, const std::string& more = "") {
  return R"({"phase":"Running","containerStatuses":[)" + statuses + "]" + (more.empty() ? "" : "," + more) + "}";
}

// A running container's status with these status resources and allocatedResources.
std::string cstatus(const std::string& name, const std::string& resources, const std::string& allocated = "") {
  return R"({"name":")" + name + R"(","ready":true,"restartCount":0,"image":"pause","imageID":"pause",)" +
         R"("state":{"running":{"startedAt":"2026-01-01T10:00:00Z"}})" +
         (resources.empty() ? "" : R"(,"resources":)" + resources) +
         (allocated.empty() ? "" : R"(,"allocatedResources":)" + allocated) + "}";
}

const std::string one_cpu = spec_of(ctr("a", R"("requests":{"cpu":"1","memory":"1Gi"})"));

}  // namespace

TEST_CASE("decode: in-place resize, the requests a running pod counts") {
  SUBCASE("resized up and actuated beyond the spec: the actuated request counts") {
    const auto r = requests(one_cpu, running(cstatus("a", R"({"requests":{"cpu":"3"}})")));
    CHECK(r.milli_cpu == 3000);
    CHECK(r.memory == 1 << 30);  // per resource: the spec's memory still counts
  }
  SUBCASE("resized down, not yet carried out: the larger actuated request counts") {
    const auto r = requests(spec_of(ctr("a", R"("requests":{"cpu":"500m"})")),
                            running(cstatus("a", R"({"requests":{"cpu":"2"},"limits":{"cpu":"2"}})")));
    CHECK(r.milli_cpu == 2000);
  }
  SUBCASE("resized down and carried out: the spec again") {
    const auto r = requests(spec_of(ctr("a", R"("requests":{"cpu":"500m"})")),
                            running(cstatus("a", R"({"requests":{"cpu":"500m"}})", R"({"cpu":"500m"})")));
    CHECK(r.milli_cpu == 500);
  }
  SUBCASE("allocated beyond both counts") {
    const auto r = requests(one_cpu, running(cstatus("a", R"({"requests":{"cpu":"1"}})", R"({"cpu":"4"})")));
    CHECK(r.milli_cpu == 4000);
  }
  SUBCASE("allocatedResources alone, without status resources, is not read (as upstream)") {
    const auto r = requests(one_cpu, running(cstatus("a", "", R"({"cpu":"4"})")));
    CHECK(r.milli_cpu == 1000);
  }
  SUBCASE("an infeasible resize: the spec is not counted") {
    const auto r =
        requests(spec_of(ctr("a", R"("requests":{"cpu":"64"})")),
                 running(cstatus("a", R"({"requests":{"cpu":"1"}})", R"({"cpu":"1"})"),
                         R"("conditions":[{"type":"PodResizePending","status":"True","reason":"Infeasible"}])"));
    CHECK(r.milli_cpu == 1000);
  }
  SUBCASE("a deferred resize: the spec counts") {
    const auto r =
        requests(spec_of(ctr("a", R"("requests":{"cpu":"3"})")),
                 running(cstatus("a", R"({"requests":{"cpu":"1"}})"),
                         R"("conditions":[{"type":"PodResizePending","status":"True","reason":"Deferred"}])"));
    CHECK(r.milli_cpu == 3000);
  }
}

TEST_CASE("decode: in-place resize, container statuses by name, sidecars and pod-level resources") {
  SUBCASE("statuses match containers by name, in any order") {
    const auto r =
        requests(spec_of(ctr("a", R"("requests":{"cpu":"1"})") + "," + ctr("b", R"("requests":{"cpu":"1"})")),
                 running(cstatus("b", R"({"requests":{"cpu":"2"}})") + "," + cstatus("a", R"({"requests":{}})")));
    CHECK(r.milli_cpu == 3000);
  }
  SUBCASE("a sidecar's status counts; a finished init container's does not") {
    const std::string spec = spec_of(ctr("app", R"("requests":{"cpu":"1"})"),
                                     ctr("init", R"("requests":{"cpu":"500m"})") + "," +
                                         ctr("side", R"("requests":{"cpu":"100m"})", R"("restartPolicy":"Always")"));
    const auto r =
        requests(spec, running(cstatus("app", R"({"requests":{"cpu":"1"}})"),
                               R"("initContainerStatuses":[)" + cstatus("init", R"({"requests":{"cpu":"8"}})") + "," +
                                   cstatus("side", R"({"requests":{"cpu":"300m"}})") + "]"));
    CHECK(r.milli_cpu == 1300);
  }
  SUBCASE("pod-level resources: status.resources and allocatedResources of the pod") {
    const std::string spec =
        spec_of(ctr("a", R"("requests":{"cpu":"100m"})"), "", R"("resources":{"requests":{"cpu":"1","memory":"1Gi"}})");
    const auto r = requests(spec, R"({"phase":"Running","resources":{"requests":{"cpu":"2"}},)"
                                  R"("allocatedResources":{"cpu":"1","memory":"2Gi"}})");
    CHECK(r.milli_cpu == 2000);
    CHECK(r.memory == std::int64_t{2} << 30);
  }
  SUBCASE("status before spec reads the same") {
    const std::string json = R"({"status":)" + running(cstatus("a", R"({"requests":{"cpu":"3"}})")) +
                             R"(,"metadata":{"name":"r","namespace":"d","uid":"u"},"spec":)" + one_cpu + "}";
    const auto p = decode_pod(json);
    REQUIRE(p.has_value());
    CHECK(p->requests.milli_cpu == 3000);
  }
  SUBCASE("a pending pod: no statuses, the spec") {
    CHECK(requests(one_cpu, R"({"phase":"Pending"})").milli_cpu == 1000);
  }
}
