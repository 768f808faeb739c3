// Decoding the API server's JSON into the scheduler's compact objects.
// Literal JSON follows the shape `kubectl get -o json` and watch streams
// really have (k8s-api note §1, §2, §5, §7); expected pod requests follow
// component-helpers resource/helpers.go PodRequests (k8s-api note §8).
#include "toysched/kube/decode.hpp"

#include "toysched/kube/quantity.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

using namespace toysched::kube;
using namespace std::chrono_literals;

namespace {

// A pod as the server sends it, with `spec` supplied by the test.
std::string pod_json(const std::string& spec, const std::string& name = "web-0") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","uid":"0b7e5b3c-1111-4c2a-9d1e-5f6a7b8c9d0e","resourceVersion":"12345",)"
         R"("creationTimestamp":"2026-01-01T10:00:00Z","managedFields":[{"manager":"kubectl","operation":"Update"}]},)"
         R"("spec":)" +
         spec + R"(,"status":{"phase":"Pending","qosClass":"Burstable"}})";
}

// One container; `resources` is the body of its resources object.
std::string ctr(const std::string& name, const std::string& resources, const std::string& extra = "") {
  return R"({"name":")" + name + R"(","image":"registry.k8s.io/pause:3.10","resources":{)" + resources + "}" +
         (extra.empty() ? "" : "," + extra) + "}";
}

std::string spec_of(const std::string& containers, const std::string& init = "", const std::string& more = "") {
  std::string s = R"({"containers":[)" + containers + "]";
  if (!init.empty()) s += R"(,"initContainers":[)" + init + "]";
  if (!more.empty()) s += "," + more;
  return s + "}";
}

Resources requests_of(const std::string& spec) {
  auto p = decode_pod(pod_json(spec));
  REQUIRE(p.has_value());
  return p->requests;
}

}  // namespace

TEST_CASE("decode: a full pod, every field the scheduler reads") {
  const std::string json = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-7d4b9c", "namespace": "shop", "uid": "6f1c2e0a-aaaa-bbbb-cccc-0123456789ab",
    "resourceVersion": "9981", "creationTimestamp": "2026-01-01T10:00:03Z",
    "deletionTimestamp": "2026-01-01T11:00:00Z", "deletionGracePeriodSeconds": 30,
    "labels": {"app": "web"}, "annotations": {"note": "x"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u"}]
  },
  "spec": {
    "schedulerName": "toy-scheduler", "priority": 1000, "priorityClassName": "high",
    "nodeSelector": {"disktype": "ssd", "zone": "a"},
    "affinity": {"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                              {"key": "gpu", "operator": "DoesNotExist"}]},
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 20, "preference": {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}}]},
      "podAntiAffinity": {}},
    "tolerations": [
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
      {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
      {"operator": "Exists"}],
    "containers": [{"name": "app", "image": "nginx", "ports": [
        {"containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
        {"containerPort": 9090, "protocol": "TCP"},
        {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}],
      "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}}}],
    "restartPolicy": "Always", "nodeName": ""
  },
  "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}
})";
  const auto p = decode_pod(json);
  REQUIRE(p.has_value());
  CHECK(p->ns == "shop");
  CHECK(p->name == "web-7d4b9c");
  CHECK(p->uid == "6f1c2e0a-aaaa-bbbb-cccc-0123456789ab");
  CHECK(p->resource_version == "9981");
  CHECK(p->scheduler_name == "toy-scheduler");
  CHECK(p->node_name.empty());
  CHECK(p->phase == "Pending");
  CHECK(p->deleting);
  CHECK_FALSE(p->scheduling_gated);
  CHECK(p->priority == 1000);
  REQUIRE(p->creation_timestamp.has_value());
  CHECK(*p->creation_timestamp == std::chrono::sys_days{2026y / 1 / 1} + 10h + 3s);
  CHECK(p->node_selector == StringPairs{{"disktype", "ssd"}, {"zone", "a"}});
  REQUIRE(p->required_affinity.size() == 2);
  CHECK(p->required_affinity[0].match_expressions ==
        std::vector<NodeSelectorRequirement>{{"kubernetes.io/arch", SelectorOp::in, {"amd64", "arm64"}},
                                             {"gpu", SelectorOp::does_not_exist, {}}});
  CHECK(p->required_affinity[1].match_fields ==
        std::vector<NodeSelectorRequirement>{{"metadata.name", SelectorOp::not_in, {"n1"}}});
  REQUIRE(p->preferred_affinity.size() == 1);
  CHECK(p->preferred_affinity[0].weight == 20);
  CHECK(p->preferred_affinity[0].term.match_expressions ==
        std::vector<NodeSelectorRequirement>{{"cores", SelectorOp::gt, {"8"}}});
  REQUIRE(p->tolerations.size() == 3);
  CHECK(p->tolerations[0] ==
        Toleration{"node.kubernetes.io/not-ready", TolerationOp::exists, "", TaintEffect::no_execute, 300});
  CHECK(p->tolerations[1] == Toleration{"dedicated", TolerationOp::equal, "web", TaintEffect::no_schedule, {}});
  CHECK(p->tolerations[2] == Toleration{"", TolerationOp::exists, "", TaintEffect::all, {}});
  CHECK(p->host_ports == std::vector<HostPort>{{8080, "TCP", "0.0.0.0"}, {53, "UDP", "10.0.0.1"}});
  CHECK(p->requests.milli_cpu == 250);
  CHECK(p->requests.memory == 64 << 20);
  CHECK(p->requests.pods == 0);
}

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
TEST_CASE("decode: in-place resize, the requests a running pod counts") {
  // A running pod with the given containers' spec and status.
  auto requests = [](const std::string& spec, const std::string& status) {
    const std::string json = R"({"metadata":{"name":"r","namespace":"d","uid":"u","resourceVersion":"1"},"spec":)" +
                             spec + R"(,"status":)" + status + "}";
    auto p = decode_pod(json);
    REQUIRE(p.has_value());
    return p->requests;
  };
  auto running = [](const std::string& statuses, const std::string& more = "") {
    return R"({"phase":"Running","containerStatuses":[)" + statuses + "]" + (more.empty() ? "" : "," + more) + "}";
  };
  auto cstatus = [](const std::string& name, const std::string& resources, const std::string& allocated = "") {
    return R"({"name":")" + name + R"(","ready":true,"restartCount":0,"image":"pause","imageID":"pause",)" +
           R"("state":{"running":{"startedAt":"2026-01-01T10:00:00Z"}})" +
           (resources.empty() ? "" : R"(,"resources":)" + resources) +
           (allocated.empty() ? "" : R"(,"allocatedResources":)" + allocated) + "}";
  };
  const std::string one_cpu = spec_of(ctr("a", R"("requests":{"cpu":"1","memory":"1Gi"})"));

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

TEST_CASE("decode: scheduling gates, init-container host ports") {
  const auto p = decode_pod(
      pod_json(spec_of(ctr("a", ""),
                       ctr("i", "", R"("ports":[{"containerPort":1,"hostPort":81}])") + "," +
                           ctr("s", "", R"("restartPolicy":"Always","ports":[{"containerPort":1,"hostPort":82}])"),
                       R"("schedulingGates":[{"name":"example.com/wait"}])")));
  REQUIRE(p.has_value());
  CHECK(p->scheduling_gated);
  CHECK(p->host_ports == std::vector<HostPort>{{82, "TCP", "0.0.0.0"}});
}

TEST_CASE("decode: a pod's claims, by name in volume order") {
  const auto p = decode_pod(
      pod_json(spec_of(ctr("a", ""), "",
                       R"("volumes":[{"name":"d","persistentVolumeClaim":{"claimName":"data","readOnly":true}},)"
                       R"({"name":"t","emptyDir":{}},{"name":"l","persistentVolumeClaim":{"claimName":"logs"}}])")));
  REQUIRE(p.has_value());
  CHECK(p->claims == std::vector<std::string>{"data", "logs"});
}

TEST_CASE("decode: a pod's in-tree disks, for VolumeRestrictions") {
  const auto p = decode_pod(pod_json(spec_of(
      ctr("a", ""), "",
      R"("volumes":[{"name":"t","emptyDir":{}},{"name":"g","gcePersistentDisk":{"pdName":"pd-1","fsType":"ext4"}},)"
      R"({"name":"e","awsElasticBlockStore":{"volumeID":"vol-1","readOnly":true}},)"
      R"({"name":"i","iscsi":{"targetPortal":"10.0.0.1:3260","iqn":"iqn.2016-12.server:t1","lun":0,"readOnly":true}},)"
      R"({"name":"r","rbd":{"monitors":["m1","m2"],"image":"img","user":"admin"}},)"
      R"({"name":"c","persistentVolumeClaim":{"claimName":"data"}},{"name":"h","hostPath":{"path":"/x"}}])")));
  REQUIRE(p.has_value());
  using Kind = InlineDisk::Kind;
  REQUIRE(p->disks.size() == 4);
  CHECK(p->disks[0] == InlineDisk{Kind::gce_pd, "pd-1", "", {}, false});
  CHECK(p->disks[1] == InlineDisk{Kind::aws_ebs, "vol-1", "", {}, true});
  CHECK(p->disks[2] == InlineDisk{Kind::iscsi, "iqn.2016-12.server:t1", "", {}, true});
  // No pool: the API's default, "rbd".
  CHECK(p->disks[3] == InlineDisk{Kind::rbd, "img", "rbd", {"m1", "m2"}, false});
  CHECK(p->claims == std::vector<std::string>{"data"});

  // A pod with none keeps none.
  const auto plain = decode_pod(pod_json(spec_of(ctr("a", ""), "", R"("volumes":[{"name":"t","emptyDir":{}}])")));
  REQUIRE(plain.has_value());
  CHECK(plain->disks.empty());
}

TEST_CASE("decode: hard constraints the scheduler does not evaluate are recorded") {
  auto decode = [](const std::string& more) {
    auto p = decode_pod(pod_json(spec_of(ctr("a", ""), "", more)));
    REQUIRE(p.has_value());
    return p->unsupported;
  };
  const std::string term = R"([{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"zone"}])";
  CHECK_FALSE(decode(R"("volumes":[{"name":"t","emptyDir":{}},{"name":"c","configMap":{"name":"x"}}])").any());

  // Required pod (anti-)affinity and DoNotSchedule spread are evaluated
  // (InterPodAffinity, PodTopologySpread): nothing to refuse.
  CHECK_FALSE(
      decode(R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)" + term + "}}").any());
  CHECK_FALSE(
      decode(R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)" + term + "}}")
          .any());
  CHECK_FALSE(
      decode(R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"},)"
             R"({"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])")
          .any());
  // Claims are evaluated (VolumeBinding): recorded by name, not refused.
  CHECK_FALSE(
      decode(R"("volumes":[{"name":"t","emptyDir":{}},{"name":"d","persistentVolumeClaim":{"claimName":"data"}}])")
          .any());
  CHECK(decode(R"("volumes":[{"name":"s","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["RWO"]}}}}])")
            .ephemeral_volume);
  CHECK(decode(R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"gpu-template"}])").resource_claims);

  // Only preferences, ScheduleAnyway, or empty lists: nothing a node must satisfy.
  const auto soft =
      decode(R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[],)"
             R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":)" +
             term.substr(1, term.size() - 2) +
             R"(}]},"podAntiAffinity":{}},"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",)"
             R"("whenUnsatisfiable":"ScheduleAnyway"}],"resourceClaims":[])");
  CHECK_FALSE(soft.any());
}

TEST_CASE("decode: a node") {
  const auto n = decode_node(R"({"kind":"Node","apiVersion":"v1",
    "metadata":{"name":"n1","uid":"node-uid-1","resourceVersion":"77",
      "labels":{"kubernetes.io/hostname":"n1","topology.kubernetes.io/zone":"a"}},
    "spec":{"podCIDR":"10.244.1.0/24","unschedulable":true,
      "taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"},
                {"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule","timeAdded":"2026-01-01T10:00:00Z"},
                {"key":"spot","effect":"PreferNoSchedule"}]},
    "status":{"capacity":{"cpu":"8"},
      "allocatable":{"cpu":"7910m","memory":"31Gi","ephemeral-storage":"95551679124","pods":"110",
                     "hugepages-2Mi":"0","example.com/gpu":"2"},
      "conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True","reason":"KubeletReady"}],
      "addresses":[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"10.0.0.11"}],
      "images":[{"names":["nginx"],"sizeBytes":1}]}})");
  REQUIRE(n.has_value());
  CHECK(n->name == "n1");
  CHECK(n->uid == "node-uid-1");
  CHECK(n->resource_version == "77");
  CHECK(*find_value(n->labels, "topology.kubernetes.io/zone") == "a");
  CHECK(find_value(n->labels, "nope") == nullptr);
  CHECK(n->unschedulable);
  CHECK(n->taints == std::vector<Taint>{{"dedicated", "gpu", TaintEffect::no_schedule},
                                        {"node.kubernetes.io/unschedulable", "", TaintEffect::no_schedule},
                                        {"spot", "", TaintEffect::prefer_no_schedule}});
  CHECK(n->allocatable.milli_cpu == 7910);
  CHECK(n->allocatable.memory == std::int64_t{31} << 30);
  CHECK(n->allocatable.ephemeral_storage == 95551679124);
  CHECK(n->allocatable.pods == 110);
  CHECK(n->allocatable.extended_value("example.com/gpu") == 2);
  CHECK(n->ready);
  // Every condition's status, for the queue's "did anything that matters change".
  CHECK(n->conditions == StringPairs{{"MemoryPressure", "False"}, {"Ready", "True"}});
  CHECK(n->internal_ip == "10.0.0.11");

  const auto not_ready = decode_node(
      R"({"metadata":{"name":"n2","uid":"u2"},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})");
  REQUIRE(not_ready.has_value());
  CHECK_FALSE(not_ready->ready);
  CHECK(not_ready->taints.empty());
}

TEST_CASE("decode: lists with resourceVersion and continue") {
  const std::string list = R"({"kind":"PodList","apiVersion":"v1",
    "metadata":{"resourceVersion":"5000","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTAwMH0","remainingItemCount":3},
    "items":[)" + pod_json(spec_of(ctr("a", R"("requests":{"cpu":"1"})")), "p1") +
                           "," + pod_json(spec_of(ctr("a", "")), "p2") + "]}";
  const auto l = decode_pod_list(list);
  REQUIRE(l.has_value());
  CHECK(l->resource_version == "5000");
  CHECK(l->continue_token == "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTAwMH0");
  REQUIRE(l->items.size() == 2);
  CHECK(l->items[0].name == "p1");
  CHECK(l->items[0].requests.milli_cpu == 1000);
  CHECK(l->items[1].name == "p2");

  const auto nodes = decode_node_list(R"({"kind":"NodeList","metadata":{"resourceVersion":"9"},"items":[]})");
  REQUIRE(nodes.has_value());
  CHECK(nodes->items.empty());
  CHECK(nodes->resource_version == "9");
  CHECK(nodes->continue_token.empty());

  // One bad item does not fail the page (issue 13 item 2): it is left out
  // and named; the reflector keeps what it knew of it.
  const auto bad = decode_node_list(R"({"metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"x"}}]})");
  REQUIRE(bad.has_value());
  CHECK(bad->items.empty());
  REQUIRE(bad->undecodable.size() == 1);
  CHECK(bad->undecodable[0].name == "x");
  CHECK(bad->undecodable[0].error == "required field missing");
  CHECK(bad->resource_version == "3");
}

namespace {
// A pod of ours, pending, that the full decoder refuses for `why`.
std::string bad_pod(const std::string& name, const std::string& spec_extra) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"uid-)" + name +
         R"(","resourceVersion":"7","labels":{"a":"b"}},"spec":{"schedulerName":"toy-scheduler",)" + spec_extra +
         R"(},"status":{"phase":"Pending"}})";
}
}  // namespace

// Issue 13 item 2: one pod must never wedge an informer. Before, any of
// these failed the whole list (and so every relist, forever).
TEST_CASE("decode: a list skips the items it cannot read and names them") {
  const std::string bad_quantity =
      bad_pod("bad-q", R"("containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"12x"}}}])");
  const std::string bad_type = bad_pod("bad-t", R"("priority":"high","nodeName":"n1")");
  const std::string no_uid = R"({"metadata":{"name":"no-uid","namespace":"ns"},"spec":{"schedulerName":5}})";
  const std::string list = R"({"kind":"PodList","metadata":{"resourceVersion":"99"},"items":[)" +
                           pod_json(spec_of(ctr("a", R"("requests":{"cpu":"1"})")), "p1") + "," + bad_quantity + "," +
                           pod_json(spec_of(ctr("a", R"("requests":{"cpu":"2"})")), "p2") + "," + bad_type + "," +
                           no_uid + "," + pod_json(spec_of(ctr("a", R"("requests":{"cpu":"3"})")), "p3") + "]}";
  const auto l = decode_pod_list(list);
  REQUIRE(l.has_value());
  CHECK(l->resource_version == "99");
  // The items after a bad one are read in full: the walk recovered.
  REQUIRE(l->items.size() == 3);
  CHECK(l->items[0].name == "p1");
  CHECK(l->items[1].name == "p2");
  CHECK(l->items[1].requests.milli_cpu == 2000);
  CHECK(l->items[2].name == "p3");
  CHECK(l->items[2].requests.milli_cpu == 3000);
  REQUIRE(l->undecodable.size() == 3);
  const Undecodable& q = l->undecodable[0];
  CHECK(q.name == "bad-q");
  CHECK(q.ns == "ns");
  CHECK(q.uid == "uid-bad-q");
  CHECK(q.resource_version == "7");
  CHECK(q.scheduler_name == "toy-scheduler");
  CHECK(q.node_name.empty());
  CHECK_FALSE(q.deleting);
  CHECK(q.error == "invalid quantity");
  CHECK(l->undecodable[1].name == "bad-t");
  CHECK(l->undecodable[1].node_name == "n1");
  CHECK(l->undecodable[1].error == "malformed JSON");
  CHECK(l->undecodable[2].name == "no-uid");
  CHECK(l->undecodable[2].uid.empty());
  CHECK(l->undecodable[2].scheduler_name.empty());  // mistyped: ignored by the tolerant read too

  // A broken JSON text still fails whole, wherever it is cut.
  Decoder d;
  for (std::size_t n = 0; n < list.size(); ++n) {
    CAPTURE(n);
    REQUIRE(d.pod_list(std::string_view(list).substr(0, n)).has_error());
  }
}

TEST_CASE("decode: a watch event whose object cannot be read is skipped, not failed") {
  const std::string bad =
      bad_pod("bad", R"("containers":[{"name":"a","resources":{"limits":{"cpu":"x1"}}}],"nodeName":"")");
  for (const char* type : {"ADDED", "MODIFIED", "DELETED"}) {
    CAPTURE(type);
    const auto e = decode_pod_event(std::string(R"({"type":")") + type + R"(","object":)" + bad + "}\n");
    REQUIRE(e.has_value());
    CHECK(to_string(e->type) == type);
    REQUIRE(e->undecodable.has_value());
    CHECK(e->undecodable->name == "bad");
    CHECK(e->undecodable->uid == "uid-bad");
    CHECK(e->undecodable->resource_version == "7");
    CHECK(e->undecodable->error == "invalid quantity");
    CHECK(e->object.name.empty());
  }
  SUBCASE("object before type") {
    const auto e = decode_pod_event(R"({"object":)" + bad + R"(,"type":"MODIFIED"})");
    REQUIRE(e.has_value());
    REQUIRE(e->undecodable.has_value());
    CHECK(e->undecodable->name == "bad");
  }
  SUBCASE("a good event has none") {
    const auto e = decode_pod_event(R"({"type":"ADDED","object":)" + pod_json(spec_of(ctr("a", ""))) + "}");
    REQUIRE(e.has_value());
    CHECK_FALSE(e->undecodable.has_value());
  }
  SUBCASE("a bookmark or an ERROR that cannot be read still fails the event") {
    CHECK(decode_pod_event(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":5}}})").has_error());
    CHECK(decode_pod_event(R"({"type":"ERROR","object":{"kind":"Status","code":"x"}})").has_error());
  }
  SUBCASE("cut anywhere, it fails whole") {
    const std::string full = R"({"type":"ADDED","object":)" + bad + "}";
    Decoder d;
    for (std::size_t n = 0; n < full.size(); ++n) {
      CAPTURE(n);
      REQUIRE(d.pod_event(std::string_view(full).substr(0, n)).has_error());
    }
  }
}

TEST_CASE("decode: watch events") {
  SUBCASE("ADDED and DELETED carry the object") {
    const auto e = decode_pod_event(R"({"type":"ADDED","object":)" + pod_json(spec_of(ctr("a", ""))) + "}\n");
    REQUIRE(e.has_value());
    CHECK(e->type == EventType::added);
    CHECK(e->object.name == "web-0");
    const auto d = decode_pod_event(R"({"type":"DELETED","object":)" + pod_json(spec_of(ctr("a", ""))) + "}");
    REQUIRE(d.has_value());
    CHECK(d->type == EventType::deleted);
    CHECK(d->object.uid == "0b7e5b3c-1111-4c2a-9d1e-5f6a7b8c9d0e");
  }
  SUBCASE("object before type still decodes") {
    const auto e = decode_node_event(R"({"object":{"metadata":{"name":"n1","uid":"u"}},"type":"MODIFIED"})");
    REQUIRE(e.has_value());
    CHECK(e->type == EventType::modified);
    CHECK(e->object.name == "n1");
  }
  SUBCASE("BOOKMARK: only the resourceVersion") {
    const auto b = decode_pod_event(
        R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12746"}}})");
    REQUIRE(b.has_value());
    CHECK(b->type == EventType::bookmark);
    CHECK(b->object.resource_version == "12746");
    CHECK(b->object.name.empty());
    CHECK_FALSE(b->initial_events_end);
  }
  SUBCASE("BOOKMARK ending the initial events of a streaming list") {
    const auto b = decode_node_event(
        R"({"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"812",)"
        R"("creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true","other":"x"}},)"
        R"("spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{}}}})");
    REQUIRE(b.has_value());
    CHECK(b->type == EventType::bookmark);
    CHECK(b->object.resource_version == "812");
    CHECK(b->initial_events_end);
  }
  SUBCASE("ERROR with 410 Expired") {
    const auto e = decode_pod_event(
        R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
        R"x("message":"too old resource version: 123 (456)","reason":"Expired","code":410}})x");
    REQUIRE(e.has_value());
    CHECK(e->type == EventType::error);
    CHECK(e->status.code == 410);
    CHECK(e->status.reason == "Expired");
    CHECK(e->status.message == "too old resource version: 123 (456)");
    CHECK(is_expired(e->status));
  }
  SUBCASE("lease events") {
    const auto e = decode_lease_event(
        R"({"type":"MODIFIED","object":{"kind":"Lease","metadata":{"name":"kube-scheduler","namespace":"kube-system"},)"
        R"("spec":{"holderIdentity":"a_1","leaseDurationSeconds":15}}})");
    REQUIRE(e.has_value());
    CHECK(e->object.holder_identity == "a_1");
    CHECK(e->object.lease_duration_seconds == 15);
  }
  SUBCASE("broken events") {
    const std::string pod = pod_json(spec_of(ctr("a", "")));
    const std::string full = R"({"type":"ADDED","object":)" + pod + "}";
    for (std::size_t cut : {full.size() - 1, full.size() / 2, std::size_t{10}}) {
      CAPTURE(cut);
      const auto t = decode_pod_event(full.substr(0, cut));
      REQUIRE(t.has_error());
      CHECK(t.error() == errc::json_malformed);
    }
    CHECK(decode_pod_event(R"({"type":"EXPLODED","object":{}})").error() == errc::json_malformed);
    CHECK(decode_pod_event(R"({"type":"ADDED"})").error() == errc::json_missing_field);
    CHECK(decode_pod_event(full + full).error() == errc::json_malformed);
    // A pod without a uid: the event is read, the pod is not.
    const auto no_uid = decode_pod_event(R"({"type":"ADDED","object":{"metadata":{"name":"p","namespace":"d"}}})");
    REQUIRE(no_uid.has_value());
    REQUIRE(no_uid->undecodable.has_value());
    CHECK(no_uid->undecodable->error == "required field missing");
  }
}

TEST_CASE("decode: every truncation and random byte flips fail cleanly") {
  const std::string full = R"({"type":"ADDED","object":)" +
                           pod_json(spec_of(ctr("a", R"("requests":{"cpu":"1"},"limits":{"memory":"1Gi"})",
                                                R"("ports":[{"containerPort":80,"hostPort":80}])"),
                                            ctr("i", R"("requests":{"cpu":"2"})"),
                                            R"("tolerations":[{"operator":"Exists"}],"priority":5)")) +
                           "}";
  REQUIRE(decode_pod_event(full).has_value());
  Decoder d;
  for (std::size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    REQUIRE(d.pod_event(std::string_view(full).substr(0, n)).has_error());
  }
  // Flipped bytes may still be valid JSON; what matters is no crash and a
  // value (perhaps with an undecodable object) or one of our error codes.
  std::mt19937 rng(42);
  int errors = 0, undecodable = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = full;
    for (int k = 0; k < 3; ++k) s[rng() % s.size()] = static_cast<char>(rng() % 256);
    const auto e = d.pod_event(s);
    if (e.has_error()) {
      ++errors;
      REQUIRE(e.error().category() == error_category());
    } else if (e->undecodable) {
      ++undecodable;
    }
  }
  CHECK(errors > 1000);
  CHECK(undecodable > 100);
}

TEST_CASE("decode: malformed, mistyped and oversized input") {
  CHECK(decode_pod("").error() == errc::json_malformed);
  CHECK(decode_pod("not json").error() == errc::json_malformed);
  CHECK(decode_pod("[1,2]").error() == errc::json_malformed);
  CHECK(decode_pod("42").error() == errc::json_malformed);
  CHECK(decode_pod("null").error() == errc::json_malformed);
  CHECK(decode_pod(R"({"metadata":{"name":"a","namespace":"b","uid":"c"},"spec":{"priority":"high"}})").error() ==
        errc::json_malformed);
  CHECK(decode_pod(R"({"metadata":{"name":"a","namespace":"b","uid":"c"},"spec":{"priority":4294967296}})").error() ==
        errc::json_malformed);
  CHECK(decode_pod(R"({"metadata":{"name":"a","namespace":"b","uid":"c"}} trailing)").error() == errc::json_malformed);
  CHECK(decode_pod(R"({"metadata":{"namespace":"b","uid":"c"}})").error() == errc::json_missing_field);
  CHECK(decode_node(R"({"metadata":{"name":"n"}})").error() == errc::json_missing_field);
  CHECK(decode_lease(R"({"metadata":{"namespace":"x"}})").error() == errc::json_missing_field);

  // A hostile 20 MB object: refused before parsing.
  std::string huge = R"({"metadata":{"name":"a","namespace":"b","uid":"c","annotations":{"x":")";
  huge += std::string(20 << 20, 'a');
  huge += R"("}}})";
  CHECK(decode_pod(huge).error() == errc::object_too_large);
  CHECK(decode_pod_event(R"({"type":"ADDED","object":)" + huge + "}").error() == errc::object_too_large);
  // Just under the limit is fine.
  std::string big = R"({"metadata":{"name":"a","namespace":"b","uid":"c","annotations":{"x":")";
  big += std::string(kMaxObjectBytes - 200, 'a');
  big += R"("}}})";
  CHECK(decode_pod(big).has_value());
}

// Issue 13 item 2: a valid pod of 1.3 MB of '<' (under etcd's 1.5 MiB)
// reaches us as a 7.8 MB event, each '<' escaped as \u003c by the API
// server. Refused at 4 MiB, it wedged the pod watch: every re-watch
// replayed it.
TEST_CASE("decode: a valid object escaped to six times its stored size") {
  std::string pod = R"({"type":"ADDED","object":{"metadata":{"name":"big","namespace":"d","uid":"u",)"
                    R"("resourceVersion":"5"},"spec":{"schedulerName":"toy-scheduler","containers":[{"name":"c",)"
                    R"("env":[{"name":"X","value":")";
  for (int i = 0; i < 1'300'000; ++i) pod += "\\u003c";
  pod += R"("}]}]}}})";
  REQUIRE(pod.size() > std::size_t{7'800'000});
  Decoder d;
  const auto e = d.pod_event(pod);
  REQUIRE(e.has_value());
  CHECK(e->object.name == "big");
  // The decoder gives the memory back for the small events that follow.
  CHECK(d.pod_event(R"({"type":"ADDED","object":)" + pod_json(spec_of(ctr("a", ""))) + "}").has_value());
}

TEST_CASE("decode: Status bodies") {
  const auto s = decode_status(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"",)"
      R"("reason":"Conflict","details":{"name":"p","kind":"pods/binding","causes":[{"reason":"FieldValueInvalid",)"
      R"("message":"bad","field":"target.name"}],"retryAfterSeconds":2},"code":409})");
  REQUIRE(s.has_value());
  CHECK(s->code == 409);
  CHECK(s->status == "Failure");
  CHECK(s->reason == "Conflict");
  CHECK(s->message == R"(Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1")");
  CHECK(s->details_name == "p");
  CHECK(s->details_kind == "pods/binding");
  CHECK(s->causes == std::vector<StatusCause>{{"FieldValueInvalid", "bad", "target.name"}});
  CHECK(s->retry_after_seconds == 2);
  CHECK_FALSE(is_expired(*s));
  CHECK(decode_status(R"({"kind":"Pod","code":200})").error() == errc::json_missing_field);
}

TEST_CASE("MicroTime: format and parse") {
  using namespace std::chrono;
  const TimePoint t = sys_days{2026y / 1 / 1} + 10h + 5min + 2s + 123456us;
  CHECK(format_micro_time(t) == "2026-01-01T10:05:02.123456Z");
  CHECK(format_micro_time(sys_days{2026y / 1 / 1}) == "2026-01-01T00:00:00.000000Z");
  // Below the microsecond is dropped (floor), as MicroTime cannot hold it.
  CHECK(format_micro_time(t + 999ns) == "2026-01-01T10:05:02.123456Z");
  CHECK(parse_micro_time("2026-01-01T10:05:02.123456Z") == t);
  CHECK(parse_micro_time("2026-01-01T10:05:02.123456789Z") == t);
  CHECK(parse_micro_time("2026-01-01T10:05:02.1Z") == sys_days{2026y / 1 / 1} + 10h + 5min + 2s + 100ms);
  CHECK(parse_micro_time("2026-01-01T10:05:02Z") == sys_days{2026y / 1 / 1} + 10h + 5min + 2s);
  CHECK(parse_micro_time("2026-01-01T12:05:02.123456+02:00") == t);
  CHECK(parse_micro_time("2026-01-01T05:35:02.123456-04:30") == t);
  for (const char* bad : {"", "2026-01-01", "2026-01-01T10:05:02", "2026-01-01T10:05:02.Z", "2026-02-30T10:05:02Z",
                          "2026-01-01T24:00:00Z", "2026-01-01 10:05:02Z", "2026-01-01T10:05:02Zx",
                          "2026-01-01T10:05:02+0200", "2026-01-01T10:05:02.123456z"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_micro_time(bad).has_value());
  }
}

// Found by fuzz-watch-event and fuzz-lease (UBSan: signed overflow in the
// nanosecond cast): a creationTimestamp or renewTime in year 1013 or 4052.
TEST_CASE("MicroTime: a time beyond what TimePoint holds is refused, not overflowed") {
  using namespace std::chrono;
  for (const char* far :
       {"1013-11-30T09:00:00Z", "4052-11-30T09:05:02.123456Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z",
        "1677-09-21T00:12:43.145224Z", "2262-04-11T23:47:16.854776Z", "2262-04-11T23:00:00-01:00"}) {
    CAPTURE(far);
    CHECK_FALSE(parse_micro_time(far).has_value());
  }
  // The first and last microseconds it holds still parse.
  CHECK(parse_micro_time("1677-09-21T00:12:43.145225Z") == ceil<microseconds>(TimePoint::min()));
  CHECK(parse_micro_time("2262-04-11T23:47:16.854775Z") == floor<microseconds>(TimePoint::max()));
  // In an object, such a time is a malformed field like any other.
  auto pod = decode_pod(R"({"metadata":{"name":"p","uid":"u","creationTimestamp":"1013-11-30T09:00:00Z"}})");
  REQUIRE_FALSE(pod.has_value());
  CHECK(pod.error() == errc::json_malformed);
}

TEST_CASE("Lease: encode then decode is exact to the microsecond") {
  using namespace std::chrono;
  Lease l;
  l.ns = "academy-build";
  l.name = "toy-scheduler";
  l.resource_version = "4711";
  l.holder_identity = "toy-scheduler-6f\"c\\\n\x01";  // escaping must survive
  l.lease_duration_seconds = 15;
  l.acquire_time = sys_days{2026y / 1 / 1} + 10h + 1us;
  l.renew_time = sys_days{2026y / 1 / 1} + 10h + 5min + 2s + 123456us;
  l.lease_transitions = 3;
  l.preferred_holder = "b";
  const std::string json = encode_lease(l);
  CHECK(json.find(R"("renewTime":"2026-01-01T10:05:02.123456Z")") != std::string::npos);
  CHECK(json.find(R"("resourceVersion":"4711")") != std::string::npos);
  CHECK(json.find(R"(\u0001)") != std::string::npos);
  CHECK(json.find("strategy") == std::string::npos);
  const auto back = decode_lease(json);
  REQUIRE(back.has_value());
  CHECK(back->ns == l.ns);
  CHECK(back->name == l.name);
  CHECK(back->resource_version == "4711");
  CHECK(back->holder_identity == l.holder_identity);
  CHECK(back->lease_duration_seconds == 15);
  CHECK(back->acquire_time == l.acquire_time);
  CHECK(back->renew_time == l.renew_time);
  CHECK(back->lease_transitions == 3);
  CHECK_FALSE(back->strategy.has_value());
  CHECK(back->preferred_holder == "b");

  // A released lease: empty holder written explicitly, no RV on create.
  Lease released;
  released.name = "x";
  const auto rj = encode_lease(released);
  CHECK(rj.find(R"("holderIdentity":"")") != std::string::npos);
  CHECK(rj.find("resourceVersion") == std::string::npos);
  // Null times from the server read as absent.
  const auto n = decode_lease(R"({"metadata":{"name":"x"},"spec":{"holderIdentity":null,"acquireTime":null}})");
  REQUIRE(n.has_value());
  CHECK(n->holder_identity.empty());
  CHECK_FALSE(n->acquire_time.has_value());
}

TEST_CASE("Decoder: reusable, and reads a caller's padded buffer in place") {
  Decoder d;
  const std::string body = pod_json(spec_of(ctr("a", R"("requests":{"cpu":"100m"})")));
  for (int i = 0; i < 1000; ++i) {
    const auto p = d.pod(body);
    REQUIRE(p.has_value());
    REQUIRE(p->requests.milli_cpu == 100);
  }
  std::string padded = body + std::string(kJsonPadding, '\0');
  const auto p = d.pod(std::string_view(padded.data(), body.size()), padded.size());
  REQUIRE(p.has_value());
  CHECK(p->name == "web-0");
  // An error leaves the decoder usable.
  CHECK(d.pod("{").has_error());
  CHECK(d.pod(body).has_value());
}
