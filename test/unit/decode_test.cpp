// Decoding the API server's JSON into the scheduler's compact objects: a
// pod, a node, Status bodies, MicroTime and the Lease. Literal JSON follows
// the shape `kubectl get -o json` really has (k8s-api note §1); a pod's
// requests are in decode_requests_test.cpp, lists and watch events in
// decode_lists_test.cpp.
#include "toysched/kube/decode.hpp"

#include "decode_fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace toysched::kube;
using namespace toysched::test::decoding;
using namespace std::chrono_literals;

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
  CHECK(p->ephemeral_volumes.empty());
}

TEST_CASE("decode: a pod's ephemeral volumes, by name, whichever field comes first") {
  const auto p = decode_pod(pod_json(
      spec_of(ctr("a", ""), "",
              R"("volumes":[{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{}}}},)"
              R"({"ephemeral":{"volumeClaimTemplate":{"spec":{}}},"name":"cache"},{"name":"t","emptyDir":{}}])")));
  REQUIRE(p.has_value());
  CHECK(p->ephemeral_volumes == std::vector<std::string>{"scratch", "cache"});
  CHECK_FALSE(p->unsupported.any());  // their claims go through VolumeBinding
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
  CHECK_FALSE(
      decode(R"("volumes":[{"name":"s","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["RWO"]}}}}])").any());
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
