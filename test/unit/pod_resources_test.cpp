// A pod's requests as kube-scheduler counts them, from the JSON the API
// server sends: pod-level requests (spec.resources). Cases are transcribed
// from upstream's tables, by name: noderesources/fit_test.go
// TestEnoughRequests.
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
