// A pod's requests as kube-scheduler counts them, from the JSON the API
// server sends: pod-level requests (spec.resources), and the non-zero
// requests scoring uses. Cases are transcribed from upstream's tables, by
// name: noderesources/fit_test.go TestEnoughRequests and
// framework/types_test.go TestPodInfoCalculateResources.
#include "builders.hpp"
#include "fit_fixtures.hpp"
#include "toysched/kube/decode.hpp"
#include "toysched/sched/plugins.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace toysched;
using sched::Code;
using sched::NodeInfo;
using Strings = std::vector<std::string>;

namespace {

// A pending pod with `spec` (a JSON object's body, without braces).
kube::Pod decode(const std::string& spec) {
  const std::string json =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","uid":"u-1",)"
      R"("resourceVersion":"1"},"spec":{)" +
      spec + R"(},"status":{"phase":"Pending"}})";
  auto p = kube::decode_pod(json);
  REQUIRE(p.has_value());
  return *p;
}

// A container (upstream's tests leave its name empty) with `requests` as JSON.
std::string ctr(const std::string& requests) {
  return R"({"name":"","image":"registry.k8s.io/pause:3.10","resources":{"requests":)" + requests + "}}";
}

}  // namespace

// The pod-level hugepages cases, on TestEnoughRequests' node with no pod
// on it (framework.NewNodeInfo()).
TEST_CASE("pod-level hugepages: fit_test.go TestEnoughRequests") {
  const NodeInfo empty = test::enough_requests_node();
  SUBCASE("pod-level hugepages resource fit") {
    const kube::Pod pod =
        decode(R"("containers":[],"resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"5"}})");
    CHECK(pod.requests.extended_value("hugepages-2Mi") == 5);
    CHECK(sched::filter_node_resources_fit(pod, empty).ok());
  }
  SUBCASE("both pod-level and container-level hugepages resource fit") {
    const kube::Pod pod = decode(R"("containers":[)" + ctr(R"({"cpu":"1m","memory":"1","hugepages-2Mi":"3"})") +
                                 R"(],"resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"5"}})");
    // The pod level replaces the containers' 3.
    CHECK(pod.requests.extended_value("hugepages-2Mi") == 5);
    CHECK(sched::filter_node_resources_fit(pod, empty).ok());
  }
  SUBCASE("pod-level hugepages resource not fit") {
    const kube::Pod pod =
        decode(R"("containers":[],"resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"10"}})");
    const auto s = sched::filter_node_resources_fit(pod, empty);
    CHECK(s.code == Code::unresolvable);
    CHECK(s.reason_strings(pod) == Strings{"Insufficient hugepages-2Mi"});
  }
}

namespace {

constexpr std::int64_t kCpu = kube::kDefaultMilliCpuRequest;  // 100m
constexpr std::int64_t kMem = kube::kDefaultMemoryRequest;    // 200MB

// An init container asking `requests`; with `sidecar`, restartPolicy Always.
std::string init_ctr(const std::string& requests, bool sidecar = false) {
  std::string c = ctr(requests);
  if (sidecar) c.insert(c.size() - 1, R"(,"restartPolicy":"Always")");
  return c;
}

kube::NonZeroRequests nz(std::int64_t cpu, std::int64_t mem) { return {cpu, mem}; }

}  // namespace

// CalculateResource's Non0CPU / Non0Mem: what the pod adds to its node's
// non-zero sums. The DRA cases are left out (toy-scheduler refuses pods with
// resource claims).
TEST_CASE("non-zero requests: types_test.go TestPodInfoCalculateResources") {
  SUBCASE("requestless container") {
    const kube::Pod p = decode(R"("containers":[{"name":"","image":"i"}])");
    CHECK(p.requests.empty());
    CHECK(p.nonzero == nz(kCpu, kMem));
  }
  SUBCASE("1X container with requests") {
    const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"cpu":"500m","memory":"500M"})") + "]");
    CHECK(p.nonzero == nz(500, 500'000'000));
  }
  SUBCASE("2X container with requests") {
    const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"cpu":"500m","memory":"500M"})") + "," +
                               ctr(R"({"cpu":"700m","memory":"800M"})") + "]");
    CHECK(p.nonzero == nz(1200, 1'300'000'000));
  }
  SUBCASE("1X container and 1X init container with pod-level requests") {
    const kube::Pod p = decode(R"("initContainers":[)" + init_ctr(R"({"cpu":"500m","memory":"500M"})") +
                               R"(],"containers":[)" + ctr(R"({"cpu":"500m","memory":"500M"})") +
                               R"(],"resources":{"requests":{"cpu":"1200m","memory":"1200M"}})");
    CHECK(p.requests.milli_cpu == 1200);
    CHECK(p.requests.memory == 1'200'000'000);
    CHECK(p.nonzero == nz(1200, 1'200'000'000));
  }
  SUBCASE("1X container and 1X sidecar container with pod-level requests") {
    const kube::Pod p = decode(R"("initContainers":[)" + init_ctr(R"({"cpu":"500m","memory":"500M"})", true) +
                               R"(],"containers":[)" + ctr(R"({"cpu":"500m","memory":"500M"})") +
                               R"(],"resources":{"requests":{"cpu":"1200m","memory":"1200M"}})");
    CHECK(p.nonzero == nz(1200, 1'200'000'000));
  }
  SUBCASE("1X container with pod-level memory requests") {
    const kube::Pod p = decode(R"("initContainers":[)" + init_ctr("{}") + R"(],"containers":[)" + ctr("{}") +
                               R"(],"resources":{"requests":{"memory":"1200M"}})");
    CHECK(p.requests.milli_cpu == 0);
    CHECK(p.requests.memory == 1'200'000'000);
    CHECK(p.nonzero == nz(kCpu, 1'200'000'000));
  }
  SUBCASE("1X container with pod-level cpu requests") {
    const kube::Pod p = decode(R"("initContainers":[)" + init_ctr("{}") + R"(],"containers":[)" + ctr("{}") +
                               R"(],"resources":{"requests":{"cpu":"500m"}})");
    CHECK(p.nonzero == nz(500, kMem));
  }
  SUBCASE("1X container unsupported resources and pod-level supported resources") {
    const kube::Pod p =
        decode(R"("initContainers":[)" + init_ctr(R"({"ephemeral-storage":"500M"})") + R"(],"containers":[)" +
               ctr(R"({"ephemeral-storage":"800M"})") + R"(],"resources":{"requests":{"cpu":"500m"}})");
    CHECK(p.requests.milli_cpu == 500);
    CHECK(p.requests.ephemeral_storage == 800'000'000);
    CHECK(p.nonzero == nz(500, kMem));
  }
}

// Issue 47 item 7: the defaults are per container, not per pod.
TEST_CASE("non-zero requests: each container without a request gets the default") {
  SUBCASE("a container asking cpu only beside one asking nothing") {
    const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"cpu":"500m"})") + "," + ctr("{}") + "]");
    CHECK(p.requests.milli_cpu == 500);
    CHECK(p.requests.memory == 0);
    CHECK(p.nonzero == nz(500 + kCpu, 2 * kMem));
    CHECK(p.nonzero_incoming == p.nonzero);
  }
  SUBCASE("an explicit 0 is a request: no default") {
    const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"cpu":"0","memory":"0"})") + "]");
    CHECK(p.nonzero == nz(0, 0));
  }
  SUBCASE("a limit names the request (the API's defaulting)") {
    const kube::Pod p = decode(R"("containers":[{"name":"","image":"i","resources":{"limits":{"cpu":"2"}}}])");
    CHECK(p.nonzero == nz(2000, kMem));
  }
  SUBCASE("a plain init container counts as its defaults while it runs; a sidecar adds them") {
    // max(app 1000m, init 100m) = 1000m; memory max(200MB, 200MB).
    const kube::Pod plain =
        decode(R"("initContainers":[)" + init_ctr("{}") + R"(],"containers":[)" + ctr(R"({"cpu":"1"})") + "]");
    CHECK(plain.nonzero == nz(1000, kMem));
    // A sidecar runs beside the app: 1000m + 100m, 200MB + 200MB.
    const kube::Pod sidecar =
        decode(R"("initContainers":[)" + init_ctr("{}", true) + R"(],"containers":[)" + ctr(R"({"cpu":"1"})") + "]");
    CHECK(sidecar.nonzero == nz(1100, 2 * kMem));
  }
  SUBCASE("overhead adds to the defaults") {
    const kube::Pod p = decode(R"("containers":[)" + ctr("{}") + R"(],"overhead":{"cpu":"250m"})");
    CHECK(p.nonzero == nz(kCpu + 250, kMem));
  }
}

// With pod-level requests the two differ: the node's sums count no default
// for a resource some container names (getNonMissingContainerRequests), and
// take the pod level; the score of the pod being scheduled adds one per
// container without it and ignores the pod level (calculatePodResourceRequest
// in NodeResourcesFit's scorer, which v1.36.3 builds without the
// PodLevelResources gate).
TEST_CASE("non-zero requests: counted on a node and scored for the incoming pod") {
  const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"memory":"1Gi"})") + "," + ctr("{}") +
                             R"(],"resources":{"requests":{"cpu":"1"}})");
  CHECK(p.nonzero == nz(1000, 1LL << 30));
  CHECK(p.nonzero_incoming == nz(2 * kCpu, (1LL << 30) + kMem));

  NodeInfo ni = test::make_node().cpu("4").memory("32Gi").info();
  ni.add_pod(p);
  CHECK(ni.nonzero_milli_cpu == 1000);
  CHECK(ni.nonzero_memory == 1LL << 30);
  ni.remove_pod(p);
  CHECK(ni.nonzero_milli_cpu == 0);
  CHECK(ni.nonzero_memory == 0);
}

// LeastAllocated scores the incoming pod with its per-container defaults.
TEST_CASE("non-zero requests: LeastAllocated scores the per-container defaults") {
  // Two containers, neither asking memory: 2 × 200Mi = 419430400 bytes.
  // Node 4 cpu / 1000M, empty.
  //   cpu (4000 − 500 − 100) × 100 / 4000 = 85
  //   memory (1000000000 − 419430400) × 100 / 1000000000 = 58
  //   (85 + 58) / 2 = 71; with the defaults once per pod: 500m → 87, 200Mi → 79: 83.
  const kube::Pod p = decode(R"("containers":[)" + ctr(R"({"cpu":"500m"})") + "," + ctr("{}") + "]");
  const NodeInfo ni = test::make_node().cpu("4").memory("1000M").info();
  CHECK(sched::score_least_allocated(p, ni) == 71);
}
