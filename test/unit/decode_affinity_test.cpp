// Decoding what InterPodAffinity, PodTopologySpread and ImageLocality read:
// pod labels and owner references, pod (anti-)affinity terms, topology
// spread constraints, container images, and a node's status.images. JSON
// is in the shape and field order the API server writes (Go struct order,
// k8s.io/api v0.36.3 core/v1 types.go).
#include "toysched/kube/decode.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace toysched::kube;

namespace {

std::string pod_with(const std::string& metadata_extra, const std::string& spec) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"shop",)"
         R"("uid":"0b7e5b3c-1111-4c2a-9d1e-5f6a7b8c9d0e","resourceVersion":"12345",)"
         R"("creationTimestamp":"2026-01-01T10:00:00Z")" +
         (metadata_extra.empty() ? "" : "," + metadata_extra) + R"(},"spec":)" + spec +
         R"(,"status":{"phase":"Pending","qosClass":"BestEffort"}})";
}

std::string spec_with(const std::string& more) {
  return R"({"containers":[{"name":"app","image":"nginx:1.27","resources":{}}])" + (more.empty() ? "" : "," + more) +
         "}";
}

const char* const kFullPod = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "web-7d4b9c-x2k9q", "generateName": "web-7d4b9c-", "namespace": "shop",
    "uid": "6f1c2e0a-aaaa-bbbb-cccc-0123456789ab", "resourceVersion": "9981",
    "creationTimestamp": "2026-01-01T10:00:03Z",
    "labels": {"app": "web", "pod-template-hash": "7d4b9c", "tier": "frontend"},
    "annotations": {"note": "x"},
    "ownerReferences": [
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c",
       "uid": "1a2b3c4d-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true},
      {"apiVersion": "example.com/v1", "kind": "Thing", "name": "t", "uid": "u2"}],
    "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}]
  },
  "spec": {
    "volumes": [{"name": "kube-api-access-abcde", "projected": {"sources": []}}],
    "initContainers": [{"name": "migrate", "image": "registry.example.com/shop/migrate:2", "resources": {}}],
    "containers": [
      {"name": "app", "image": "registry.example.com/shop/web:1.4.0", "resources": {}},
      {"name": "proxy", "image": "envoyproxy/envoy@sha256:0123", "resources": {}}],
    "restartPolicy": "Always",
    "affinity": {
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
          "labelSelector": {"matchLabels": {"app": "cache"},
                            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
          "namespaces": ["shop", "infra"],
          "topologyKey": "topology.kubernetes.io/zone",
          "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists"}]},
          "matchLabelKeys": ["pod-template-hash"],
          "mismatchLabelKeys": ["tenant"]}],
        "preferredDuringSchedulingIgnoredDuringExecution": [{
          "weight": 30,
          "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}},
                              "topologyKey": "kubernetes.io/hostname", "namespaceSelector": {}}}]},
      "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
          "weight": 100,
          "podAffinityTerm": {"labelSelector": {"matchExpressions": [
              {"key": "app", "operator": "NotIn", "values": ["web"]},
              {"key": "legacy", "operator": "DoesNotExist"}]},
            "topologyKey": "kubernetes.io/hostname"}}]}},
    "schedulerName": "toy-scheduler",
    "topologySpreadConstraints": [
      {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 3,
       "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["pod-template-hash"]},
      {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
       "labelSelector": {"matchLabels": {"app": "web"}}}]
  },
  "status": {"phase": "Pending", "qosClass": "BestEffort"}
})";

}  // namespace

TEST_CASE("decode: a pod with every field the pod plugins read") {
  auto p = decode_pod(kFullPod);
  REQUIRE(p.has_value());
  CHECK(p->labels == StringPairs{{"app", "web"}, {"pod-template-hash", "7d4b9c"}, {"tier", "frontend"}});
  REQUIRE(p->owners.size() == 2);
  CHECK(p->owners[0] ==
        OwnerReference{"apps/v1", "ReplicaSet", "web-7d4b9c", "1a2b3c4d-0000-4000-8000-000000000001", true});
  CHECK(p->owners[1] == OwnerReference{"example.com/v1", "Thing", "t", "u2", false});

  // Containers' images first, then init containers', as ImageLocality sums them.
  CHECK(p->images == std::vector<std::string>{"registry.example.com/shop/web:1.4.0", "envoyproxy/envoy@sha256:0123",
                                              "registry.example.com/shop/migrate:2"});

  REQUIRE(p->pod_affinity.required.size() == 1);
  const auto& req = p->pod_affinity.required[0];
  REQUIRE(req.label_selector.has_value());
  CHECK(req.label_selector->match_labels == StringPairs{{"app", "cache"}});
  CHECK(req.label_selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"tier", SelectorOp::in, {"a", "b"}}});
  CHECK(req.namespaces == std::vector<std::string>{"shop", "infra"});
  CHECK(req.topology_key == "topology.kubernetes.io/zone");
  REQUIRE(req.namespace_selector.has_value());
  CHECK(req.namespace_selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"team", SelectorOp::exists, {}}});
  CHECK(req.match_label_keys == std::vector<std::string>{"pod-template-hash"});
  CHECK(req.mismatch_label_keys == std::vector<std::string>{"tenant"});
  REQUIRE(p->pod_affinity.preferred.size() == 1);
  CHECK(p->pod_affinity.preferred[0].weight == 30);
  // An empty namespaceSelector ({}: every namespace) is not an absent one.
  CHECK(p->pod_affinity.preferred[0].term.namespace_selector == LabelSelector{});
  CHECK(p->pod_affinity.preferred[0].term.topology_key == "kubernetes.io/hostname");

  CHECK(p->pod_anti_affinity.required.empty());
  REQUIRE(p->pod_anti_affinity.preferred.size() == 1);
  const auto& anti = p->pod_anti_affinity.preferred[0];
  CHECK(anti.weight == 100);
  CHECK_FALSE(anti.term.namespace_selector.has_value());
  REQUIRE(anti.term.label_selector.has_value());
  CHECK(anti.term.label_selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"app", SelectorOp::not_in, {"web"}},
                                             {"legacy", SelectorOp::does_not_exist, {}}});

  REQUIRE(p->topology_spread.size() == 2);
  const auto& hard = p->topology_spread[0];
  CHECK(hard.max_skew == 1);
  CHECK(hard.topology_key == "topology.kubernetes.io/zone");
  CHECK(hard.when_unsatisfiable == WhenUnsatisfiable::do_not_schedule);
  CHECK(hard.label_selector == LabelSelector{{{"app", "web"}}, {}});
  CHECK(hard.min_domains == 3);
  CHECK(hard.node_affinity_policy == InclusionPolicy::ignore);
  CHECK(hard.node_taints_policy == InclusionPolicy::honor);
  CHECK(hard.match_label_keys == std::vector<std::string>{"pod-template-hash"});
  const auto& soft = p->topology_spread[1];
  CHECK(soft.max_skew == 2);
  CHECK(soft.when_unsatisfiable == WhenUnsatisfiable::schedule_anyway);
  CHECK_FALSE(soft.min_domains.has_value());
  CHECK(soft.node_affinity_policy == InclusionPolicy::honor);  // API defaults
  CHECK(soft.node_taints_policy == InclusionPolicy::ignore);

  // Pod (anti-)affinity and hard spreads are evaluated (InterPodAffinity,
  // PodTopologySpread): no refusal for them.
  CHECK_FALSE(p->unsupported.any());
}

TEST_CASE("decode: the pod plugins' fields absent or null") {
  auto bare = decode_pod(pod_with("", spec_with("")));
  REQUIRE(bare.has_value());
  CHECK(bare->labels.empty());
  CHECK(bare->owners.empty());
  CHECK(bare->pod_affinity.empty());
  CHECK(bare->pod_anti_affinity.empty());
  CHECK(bare->topology_spread.empty());
  CHECK(bare->images == std::vector<std::string>{"nginx:1.27"});
  // Nothing of this allocates on a pod without it.
  CHECK(bare->labels.capacity() == 0);
  CHECK(bare->owners.capacity() == 0);
  CHECK(bare->topology_spread.capacity() == 0);

  auto nulls = decode_pod(pod_with(R"("labels":null,"ownerReferences":null)",
                                   spec_with(R"("affinity":{"podAffinity":null,"podAntiAffinity":{)"
                                             R"("requiredDuringSchedulingIgnoredDuringExecution":null,)"
                                             R"("preferredDuringSchedulingIgnoredDuringExecution":null}},)"
                                             R"("topologySpreadConstraints":null)")));
  REQUIRE(nulls.has_value());
  CHECK(nulls->labels.empty());
  CHECK(nulls->owners.empty());
  CHECK(nulls->pod_affinity.empty());
  CHECK(nulls->pod_anti_affinity.empty());
  CHECK(nulls->topology_spread.empty());
  CHECK_FALSE(nulls->unsupported.any());

  // A term whose labelSelector is null or absent keeps nullopt: it matches
  // no pod, unlike an empty selector, which matches all.
  auto terms = decode_pod(pod_with("", spec_with(R"("affinity":{"podAntiAffinity":{)"
                                                 R"("requiredDuringSchedulingIgnoredDuringExecution":[)"
                                                 R"({"labelSelector":null,"topologyKey":"k"},{"topologyKey":"k"},)"
                                                 R"({"labelSelector":{},"topologyKey":"k"}]}},)"
                                                 R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"k",)"
                                                 R"("whenUnsatisfiable":"DoNotSchedule","labelSelector":null,)"
                                                 R"("minDomains":null,"nodeAffinityPolicy":null}])")));
  REQUIRE(terms.has_value());
  REQUIRE(terms->pod_anti_affinity.required.size() == 3);
  CHECK_FALSE(terms->pod_anti_affinity.required[0].label_selector.has_value());
  CHECK_FALSE(terms->pod_anti_affinity.required[1].label_selector.has_value());
  CHECK(terms->pod_anti_affinity.required[2].label_selector == LabelSelector{});
  REQUIRE(terms->topology_spread.size() == 1);
  CHECK_FALSE(terms->topology_spread[0].label_selector.has_value());
  CHECK_FALSE(terms->topology_spread[0].min_domains.has_value());
  CHECK(terms->topology_spread[0].node_affinity_policy == InclusionPolicy::honor);
}

TEST_CASE("decode: label selector operators other than the four read as unknown") {
  auto p = decode_pod(pod_with("", spec_with(R"("affinity":{"podAffinity":{)"
                                             R"("requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":)"
                                             R"({"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]},)"
                                             R"({"key":"b","operator":"Lt","values":["1"]},)"
                                             R"({"key":"c","operator":"Matches","values":["x"]},)"
                                             R"({"key":"d","operator":"Exists"}]},"topologyKey":"k"}]}})")));
  REQUIRE(p.has_value());
  REQUIRE(p->pod_affinity.required.size() == 1);
  const auto& e = p->pod_affinity.required[0].label_selector->match_expressions;
  REQUIRE(e.size() == 4);
  CHECK(e[0].op == SelectorOp::unknown);
  CHECK(e[1].op == SelectorOp::unknown);
  CHECK(e[2].op == SelectorOp::unknown);
  CHECK(e[3].op == SelectorOp::exists);
  // Node affinity keeps Gt and Lt: they are valid there.
  auto n = decode_pod(
      pod_with("", spec_with(R"("affinity":{"nodeAffinity":{)"
                             R"("requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
                             R"([{"matchExpressions":[{"key":"cores","operator":"Gt","values":["8"]}]}]}}})")));
  REQUIRE(n.has_value());
  CHECK(n->required_affinity.at(0).match_expressions.at(0).op == SelectorOp::gt);
  // An unknown whenUnsatisfiable is not DoNotSchedule: no refusal flag.
  auto w = decode_pod(pod_with("", spec_with(R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"k",)"
                                             R"("whenUnsatisfiable":"Sometimes"}])")));
  REQUIRE(w.has_value());
  CHECK(w->topology_spread.at(0).when_unsatisfiable == WhenUnsatisfiable::unknown);
}

TEST_CASE("decode: the pod plugins' fields with the wrong JSON type are malformed") {
  const std::string bad_metadata[] = {
      R"("labels":["app"])",
      R"("labels":{"app":1})",
      R"("ownerReferences":{"kind":"ReplicaSet"})",
      R"("ownerReferences":[{"controller":"true"}])",
      R"("ownerReferences":[{"name":7}])",
  };
  for (const auto& m : bad_metadata) {
    CAPTURE(m);
    auto p = decode_pod(pod_with(m, spec_with("")));
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error() == errc::json_malformed);
  }
  const std::string bad_spec[] = {
      R"("affinity":{"podAffinity":[]})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{}}})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[7]}})",
      R"("affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":"1"}]}})",
      R"("affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1e99}]}})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":[]}]}})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"namespaces":"a"}]}})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":1}]}})",
      R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":)"
      R"({"matchExpressions":[{"key":"a","operator":"In","values":"x"}]}}]}})",
      R"("topologySpreadConstraints":{})",
      R"("topologySpreadConstraints":[{"maxSkew":"1"}])",
      R"("topologySpreadConstraints":[{"maxSkew":4294967296}])",
      R"("topologySpreadConstraints":[{"minDomains":true}])",
      R"("topologySpreadConstraints":[{"nodeTaintsPolicy":1}])",
      R"("topologySpreadConstraints":[{"matchLabelKeys":[1]}])",
      R"("topologySpreadConstraints":[{"whenUnsatisfiable":false}])",
  };
  for (const auto& s : bad_spec) {
    CAPTURE(s);
    auto p = decode_pod(pod_with("", spec_with(s)));
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error() == errc::json_malformed);
  }
  auto image = decode_pod(pod_with("", R"({"containers":[{"name":"app","image":["nginx"]}]})"));
  REQUIRE_FALSE(image.has_value());
  CHECK(image.error() == errc::json_malformed);
}

TEST_CASE("decode: a node's status.images") {
  const std::string json = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","uid":"u1",)"
                           R"("resourceVersion":"7"},"status":{"images":[)"
                           R"({"names":["registry.k8s.io/pause@sha256:ee6521","registry.k8s.io/pause:3.10"],)"
                           R"("sizeBytes":320368},{"names":["nginx:1.27"],"sizeBytes":67108864},)"
                           R"({"names":null},{"sizeBytes":5}]}})";
  auto n = decode_node(json);
  REQUIRE(n.has_value());
  REQUIRE(n->images.size() == 4);
  CHECK(n->images[0] == ContainerImage{{"registry.k8s.io/pause@sha256:ee6521", "registry.k8s.io/pause:3.10"}, 320368});
  CHECK(n->images[1] == ContainerImage{{"nginx:1.27"}, 67108864});
  CHECK(n->images[2] == ContainerImage{});
  CHECK(n->images[3] == ContainerImage{{}, 5});

  auto none = decode_node(R"({"metadata":{"name":"n1","uid":"u1"},"status":{"images":null}})");
  REQUIRE(none.has_value());
  CHECK(none->images.empty());
  for (const char* bad : {R"({"images":{}})", R"({"images":[{"names":"a"}]})", R"({"images":[{"sizeBytes":"1"}]})"}) {
    CAPTURE(bad);
    auto b = decode_node(std::string(R"({"metadata":{"name":"n1","uid":"u1"},"status":)") + bad + "}");
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::json_malformed);
  }
}
