// Decoding the kinds read only for the plugins and preemption: Namespaces,
// Services, ReplicationControllers, ReplicaSets, StatefulSets,
// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
// VolumeAttachments, PodDisruptionBudgets, as lists and as watch events. JSON in the shape the
// API server writes (abridged: the decoder skips what it does not read, and
// tests elsewhere cover skipping).
#include "toysched/kube/decode.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace toysched::kube;

namespace {

std::string meta(const std::string& name, const std::string& ns, const std::string& rv) {
  std::string s = R"("metadata":{"name":")" + name + R"(",)";
  if (!ns.empty()) s += R"("namespace":")" + ns + R"(",)";
  return s + R"("uid":"uid-)" + name + R"(","resourceVersion":")" + rv +
         R"(","creationTimestamp":"2026-01-01T10:00:00Z","labels":{"team":"a"},)"
         R"("managedFields":[{"manager":"kubectl","operation":"Update"}]})";
}

std::string list(const char* kind, const std::string& items) {
  return std::string(R"({"kind":")") + kind +
         R"(","apiVersion":"v1","metadata":{"resourceVersion":"500",)"
         R"("continue":"tok"},"items":[)" +
         items + "]}";
}

std::string event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}";
}

const std::string kNamespace = R"({"kind":"Namespace","apiVersion":"v1",)" + meta("shop", "", "11") +
                               R"(,"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})";
const std::string kService = R"({"kind":"Service","apiVersion":"v1",)" + meta("web", "shop", "12") +
                             R"(,"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],)"
                             R"("selector":{"app":"web","tier":"frontend"},"clusterIP":"10.96.0.10",)"
                             R"("type":"ClusterIP","sessionAffinity":"None"},"status":{"loadBalancer":{}}})";
const std::string kHeadless = R"({"kind":"Service","apiVersion":"v1",)" + meta("external", "shop", "13") +
                              R"(,"spec":{"ports":[{"port":443}],"clusterIP":"None","type":"ClusterIP"}})";
const std::string kRc = R"({"kind":"ReplicationController","apiVersion":"v1",)" + meta("legacy", "shop", "14") +
                        R"(,"spec":{"replicas":2,"selector":{"app":"legacy"},"template":{"metadata":)"
                        R"({"labels":{"app":"legacy"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},)"
                        R"("status":{"replicas":2}})";
const std::string kRs =
    R"({"kind":"ReplicaSet","apiVersion":"apps/v1",)" + meta("web-7d4b9c", "shop", "15") +
    R"(,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web","pod-template-hash":"7d4b9c"},)"
    R"("matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]},"template":{"metadata":)"
    R"({"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":3}})";
const std::string kSts = R"({"kind":"StatefulSet","apiVersion":"apps/v1",)" + meta("db", "shop", "16") +
                         R"(,"spec":{"replicas":1,"selector":{"matchLabels":{"app":"db"}},"serviceName":"db",)"
                         R"("template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[]}}}})";

}  // namespace

TEST_CASE("decode: Namespaces, list and watch event") {
  Decoder d;
  auto l = d.list<Namespace>(list("NamespaceList", kNamespace));
  REQUIRE(l.has_value());
  CHECK(l->resource_version == "500");
  CHECK(l->continue_token == "tok");
  REQUIRE(l->items.size() == 1);
  const Namespace& n = l->items[0];
  CHECK(n.name == "shop");
  CHECK(n.uid == "uid-shop");
  CHECK(n.resource_version == "11");
  CHECK(n.labels == StringPairs{{"team", "a"}});

  auto ev = d.event<Namespace>(event("MODIFIED", kNamespace));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::modified);
  CHECK(ev->object.name == "shop");
  CHECK(ev->object.labels == StringPairs{{"team", "a"}});
}

TEST_CASE("decode: Services and ReplicationControllers keep their map selectors") {
  Decoder d;
  auto l = d.list<Service>(list("ServiceList", kService + "," + kHeadless));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 2);
  CHECK(l->items[0].ns == "shop");
  CHECK(l->items[0].name == "web");
  CHECK(l->items[0].uid == "uid-web");
  CHECK(l->items[0].resource_version == "12");
  CHECK(l->items[0].selector == StringPairs{{"app", "web"}, {"tier", "frontend"}});
  CHECK(l->items[1].selector.empty());  // a Service without a selector

  auto ev = d.event<Service>(event("ADDED", kService));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::added);
  CHECK(ev->object.selector == StringPairs{{"app", "web"}, {"tier", "frontend"}});

  auto rl = d.list<ReplicationController>(list("ReplicationControllerList", kRc));
  REQUIRE(rl.has_value());
  REQUIRE(rl->items.size() == 1);
  CHECK(rl->items[0].ns == "shop");
  CHECK(rl->items[0].name == "legacy");
  CHECK(rl->items[0].selector == StringPairs{{"app", "legacy"}});
  auto rev = d.event<ReplicationController>(event("DELETED", kRc));
  REQUIRE(rev.has_value());
  CHECK(rev->type == EventType::deleted);
  CHECK(rev->object.resource_version == "14");
  CHECK(rev->object.selector == StringPairs{{"app", "legacy"}});
}

TEST_CASE("decode: ReplicaSets and StatefulSets keep their label selectors") {
  Decoder d;
  auto l = d.list<ReplicaSet>(list("ReplicaSetList", kRs));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  const ReplicaSet& rs = l->items[0];
  CHECK(rs.ns == "shop");
  CHECK(rs.name == "web-7d4b9c");
  REQUIRE(rs.selector.has_value());
  CHECK(rs.selector->match_labels == StringPairs{{"app", "web"}, {"pod-template-hash", "7d4b9c"}});
  CHECK(rs.selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"track", SelectorOp::not_in, {"canary"}}});
  auto ev = d.event<ReplicaSet>(event("MODIFIED", kRs));
  REQUIRE(ev.has_value());
  CHECK(ev->object.selector == rs.selector);

  auto sl = d.list<StatefulSet>(list("StatefulSetList", kSts));
  REQUIRE(sl.has_value());
  REQUIRE(sl->items.size() == 1);
  CHECK(sl->items[0].name == "db");
  CHECK(sl->items[0].selector == LabelSelector{{{"app", "db"}}, {}});
  auto sev = d.event<StatefulSet>(event("ADDED", kSts));
  REQUIRE(sev.has_value());
  CHECK(sev->object.selector == LabelSelector{{{"app", "db"}}, {}});

  // No selector (the API server requires one for apps/v1; nothing trusted):
  // nullopt, which selects nothing, never an empty selector, which selects all.
  auto none = d.event<ReplicaSet>(event("ADDED", R"({"metadata":{"name":"x","namespace":"shop"},"spec":{}})"));
  REQUIRE(none.has_value());
  CHECK_FALSE(none->object.selector.has_value());
  auto null_sel =
      d.event<StatefulSet>(event("ADDED", R"({"metadata":{"name":"x","namespace":"shop"},"spec":{"selector":null}})"));
  REQUIRE(null_sel.has_value());
  CHECK_FALSE(null_sel->object.selector.has_value());
}

TEST_CASE("decode: bookmarks and errors of the new kinds' watches") {
  Decoder d;
  auto bm = d.event<Service>(
      R"({"type":"BOOKMARK","object":{"kind":"Service","apiVersion":"v1","metadata":{"resourceVersion":"900",)"
      R"("annotations":{"k8s.io/initial-events-end":"true"}}}})");
  REQUIRE(bm.has_value());
  CHECK(bm->type == EventType::bookmark);
  CHECK(bm->object.resource_version == "900");
  CHECK(bm->initial_events_end);
  auto err = d.event<Namespace>(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
                                R"("status":"Failure","message":"too old resource version","reason":"Expired",)"
                                R"("code":410}})");
  REQUIRE(err.has_value());
  CHECK(err->type == EventType::error);
  CHECK(is_expired(err->status));
}

TEST_CASE("decode: a new kind's unreadable object is skipped with its identity, not the list's failure") {
  Decoder d;
  const std::string bad_service = R"({"metadata":{"name":"bad","namespace":"shop","uid":"u-bad",)"
                                  R"("resourceVersion":"20"},"spec":{"selector":["app"]}})";
  auto l = d.list<Service>(list("ServiceList", kService + "," + bad_service));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  CHECK(l->items[0].name == "web");
  REQUIRE(l->undecodable.size() == 1);
  CHECK(l->undecodable[0].name == "bad");
  CHECK(l->undecodable[0].ns == "shop");
  CHECK(l->undecodable[0].resource_version == "20");

  const std::string bad_rs = R"({"metadata":{"name":"rs","namespace":"shop","resourceVersion":"21"},)"
                             R"("spec":{"selector":{"matchExpressions":{"key":"a"}}}})";
  auto ev = d.event<ReplicaSet>(event("MODIFIED", bad_rs));
  REQUIRE(ev.has_value());
  REQUIRE(ev->undecodable.has_value());
  CHECK(ev->undecodable->name == "rs");
  CHECK(ev->undecodable->error == make_error_code(errc::json_malformed).message());

  // Wrong types anywhere the decoder reads, each an undecodable object.
  const std::string bad_objects[] = {
      R"({"metadata":{"name":"n","labels":{"a":1}}})",  // namespace labels
      R"({"metadata":{"name":"n","namespace":"s"},"spec":{"selector":{"app":["x"]}}})",
      R"({"metadata":{"name":"n","namespace":"s"},"spec":{"selector":{"matchLabels":[]}}})",
      R"({"metadata":{"name":"n","namespace":"s"},"spec":"x"})",
  };
  CHECK(d.event<Namespace>(event("ADDED", bad_objects[0]))->undecodable.has_value());
  CHECK(d.event<ReplicationController>(event("ADDED", bad_objects[1]))->undecodable.has_value());
  CHECK(d.event<StatefulSet>(event("ADDED", bad_objects[2]))->undecodable.has_value());
  CHECK(d.event<Service>(event("ADDED", bad_objects[3]))->undecodable.has_value());
  // A nameless object is missing a required field.
  auto nameless = d.event<Namespace>(event("ADDED", R"({"metadata":{"uid":"u"}})"));
  REQUIRE(nameless.has_value());
  REQUIRE(nameless->undecodable.has_value());
  CHECK(nameless->undecodable->error == make_error_code(errc::json_missing_field).message());
  // A broken event is the event's failure.
  auto broken = d.event<StatefulSet>(R"({"type":"ADDED","object":{"metadata":)");
  CHECK_FALSE(broken.has_value());
}

namespace {

// A claim with `annotations` (a JSON object's members, or "") and `spec`.
std::string claim(const std::string& name, const std::string& annotations, const std::string& spec,
                  const std::string& extra_meta = "") {
  return R"({"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"shop","uid":"uid-)" + name + R"(","resourceVersion":"30",)" + extra_meta +
         R"("annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}")" +
         (annotations.empty() ? "" : "," + annotations) + R"(}},"spec":{"accessModes":["ReadWriteOnce"],)" +
         R"("resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem")" + spec +
         R"(},"status":{"phase":"Pending"}})";
}

const std::string kBoundPv =
    R"({"kind":"PersistentVolume","apiVersion":"v1",)" + meta("pv-local", "", "40") +
    R"(,"spec":{"capacity":{"storage":"1Gi"},"local":{"path":"/mnt/disk"},"accessModes":["ReadWriteOnce"],)"
    R"("claimRef":{"namespace":"shop","name":"data"},"nodeAffinity":{"required":{"nodeSelectorTerms":[)"
    R"({"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1","n2"]}]},)"
    R"({"matchFields":[{"key":"metadata.name","operator":"In","values":["n3"]}]}]}},)"
    R"("persistentVolumeReclaimPolicy":"Delete","storageClassName":"local"},"status":{"phase":"Bound"}})";

}  // namespace

TEST_CASE("decode: PersistentVolumeClaims, their class, binding and deletion") {
  Decoder d;
  auto l = d.list<PersistentVolumeClaim>(
      list("PersistentVolumeClaimList", claim("data", R"("pv.kubernetes.io/bind-completed":"yes")",
                                              R"(,"storageClassName":"fast","volumeName":"pv-1")")));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  const PersistentVolumeClaim& c = l->items[0];
  CHECK(c.ns == "shop");
  CHECK(c.name == "data");
  CHECK(c.uid == "uid-data");
  CHECK(c.resource_version == "30");
  CHECK(c.volume_name == "pv-1");
  CHECK(c.storage_class_name == "fast");
  CHECK(c.bind_completed);  // any value: only the key's presence counts
  CHECK_FALSE(c.deleting);
  CHECK_FALSE(c.read_write_once_pod);  // ReadWriteOnce

  // The beta annotation wins over spec.storageClassName, even when empty.
  auto beta = d.event<PersistentVolumeClaim>(event(
      "ADDED", claim("beta", R"("volume.beta.kubernetes.io/storage-class":"slow")", R"(,"storageClassName":"fast")")));
  REQUIRE(beta.has_value());
  CHECK(beta->object.storage_class_name == "slow");
  CHECK_FALSE(beta->object.bind_completed);
  CHECK(beta->object.volume_name.empty());
  auto beta_empty = d.event<PersistentVolumeClaim>(event(
      "ADDED", claim("none", R"("volume.beta.kubernetes.io/storage-class":"")", R"(,"storageClassName":"fast")")));
  REQUIRE(beta_empty.has_value());
  CHECK(beta_empty->object.storage_class_name == "");

  // Neither: no class at all (the default class's business), not "".
  auto neither = d.event<PersistentVolumeClaim>(event("MODIFIED", claim("plain", "", "")));
  REQUIRE(neither.has_value());
  CHECK_FALSE(neither->object.storage_class_name.has_value());
  auto null_class = d.event<PersistentVolumeClaim>(event("MODIFIED", claim("nul", "", R"(,"storageClassName":null)")));
  REQUIRE(null_class.has_value());
  CHECK_FALSE(null_class->object.storage_class_name.has_value());

  auto deleting = d.event<PersistentVolumeClaim>(
      event("MODIFIED", claim("gone", "", "", R"("deletionTimestamp":"2026-01-01T10:00:00Z",)")));
  REQUIRE(deleting.has_value());
  CHECK(deleting->object.deleting);

  // Annotations after spec (any field order) are still read.
  auto late = d.event<PersistentVolumeClaim>(event(
      "ADDED",
      R"({"spec":{"storageClassName":"fast"},"metadata":{"name":"late","namespace":"shop",)"
      R"("annotations":{"volume.beta.kubernetes.io/storage-class":"slow","pv.kubernetes.io/bind-completed":""}}})"));
  REQUIRE(late.has_value());
  CHECK(late->object.storage_class_name == "slow");
  CHECK(late->object.bind_completed);

  // ReadWriteOncePod among the access modes (VolumeRestrictions reads it).
  auto solo = d.event<PersistentVolumeClaim>(
      event("ADDED", R"({"metadata":{"name":"solo","namespace":"shop"},)"
                     R"("spec":{"accessModes":["ReadOnlyMany","ReadWriteOncePod"],"volumeName":"pv-9"}})"));
  REQUIRE(solo.has_value());
  CHECK(solo->object.read_write_once_pod);
}

TEST_CASE("decode: PersistentVolumes keep their node affinity and labels") {
  Decoder d;
  auto l = d.list<PersistentVolume>(list("PersistentVolumeList", kBoundPv));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  const PersistentVolume& pv = l->items[0];
  CHECK(pv.name == "pv-local");
  CHECK(pv.uid == "uid-pv-local");
  CHECK(pv.resource_version == "40");
  CHECK(pv.has_node_affinity);
  REQUIRE(pv.node_affinity.size() == 2);
  CHECK(pv.node_affinity[0].match_expressions ==
        std::vector<NodeSelectorRequirement>{{"kubernetes.io/hostname", SelectorOp::in, {"n1", "n2"}}});
  CHECK(pv.node_affinity[1].match_fields ==
        std::vector<NodeSelectorRequirement>{{"metadata.name", SelectorOp::in, {"n3"}}});

  CHECK(pv.labels == StringPairs{{"team", "a"}});

  auto plain = d.event<PersistentVolume>(
      event("ADDED", R"({"metadata":{"name":"pv-nfs","uid":"u","resourceVersion":"41",)"
                     R"("labels":{"topology.kubernetes.io/zone":"z1__z2"}},)"
                     R"("spec":{"nfs":{"server":"s","path":"/"},"capacity":{"storage":"5Gi"}}})"));
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->object.has_node_affinity);
  CHECK(plain->object.node_affinity.empty());
  CHECK(plain->object.csi_driver.empty());  // not a CSI volume
  // Labels are kept: VolumeZone reads the zone and region ones.
  CHECK(plain->object.labels == StringPairs{{"topology.kubernetes.io/zone", "z1__z2"}});
  // nodeAffinity without `required`, or with a null one: no constraint.
  auto no_required = d.event<PersistentVolume>(
      event("ADDED", R"({"metadata":{"name":"pv"},"spec":{"nodeAffinity":{"required":null}}})"));
  REQUIRE(no_required.has_value());
  CHECK_FALSE(no_required->object.has_node_affinity);
  // A required selector with no terms is present (and matches no node).
  auto no_terms = d.event<PersistentVolume>(
      event("ADDED", R"({"metadata":{"name":"pv"},"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[]}}}})"));
  REQUIRE(no_terms.has_value());
  CHECK(no_terms->object.has_node_affinity);
  CHECK(no_terms->object.node_affinity.empty());
}

TEST_CASE("decode: StorageClasses, WaitForFirstConsumer or Immediate") {
  Decoder d;
  const std::string wffc = R"({"kind":"StorageClass","apiVersion":"storage.k8s.io/v1",)" + meta("local", "", "50") +
                           R"(,"provisioner":"kubernetes.io/no-provisioner","reclaimPolicy":"Delete",)"
                           R"("volumeBindingMode":"WaitForFirstConsumer"})";
  const std::string immediate = R"({"kind":"StorageClass","apiVersion":"storage.k8s.io/v1",)" +
                                meta("standard", "", "51") +
                                R"(,"provisioner":"rancher.io/local-path","volumeBindingMode":"Immediate"})";
  auto l = d.list<StorageClass>(list("StorageClassList", wffc + "," + immediate));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 2);
  CHECK(l->items[0].name == "local");
  CHECK(l->items[0].uid == "uid-local");
  CHECK(l->items[0].resource_version == "50");
  CHECK(l->items[0].wait_for_first_consumer);
  CHECK(l->items[1].name == "standard");
  CHECK_FALSE(l->items[1].wait_for_first_consumer);
  CHECK(l->items[1].provisioner == "rancher.io/local-path");  // NodeVolumeLimits: an unbound claim's driver

  auto ev = d.event<StorageClass>(event("DELETED", wffc));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::deleted);
  CHECK(ev->object.wait_for_first_consumer);
  // Absent (the API server defaults it to Immediate): not waiting.
  auto unset = d.event<StorageClass>(event("ADDED", R"({"metadata":{"name":"x"},"provisioner":"p"})"));
  REQUIRE(unset.has_value());
  CHECK_FALSE(unset->object.wait_for_first_consumer);
  // A wrong type is the object's failure, not the watch's.
  auto bad = d.event<StorageClass>(event("ADDED", R"({"metadata":{"name":"x"},"volumeBindingMode":1})"));
  REQUIRE(bad.has_value());
  CHECK(bad->undecodable.has_value());
}

TEST_CASE("decode: PodDisruptionBudgets keep their selector, allowance and disrupted pods") {
  Decoder d;
  // As the disruption controller leaves one: minAvailable met with one to spare.
  const std::string full =
      R"({"kind":"PodDisruptionBudget","apiVersion":"policy/v1",)" + meta("web-pdb", "shop", "60") +
      R"(,"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"},)"
      R"("matchExpressions":[{"key":"track","operator":"In","values":["stable"]}]},)"
      R"("unhealthyPodEvictionPolicy":"IfHealthyBudget"},)"
      R"("status":{"observedGeneration":1,"disruptedPods":{"web-1":"2026-01-01T10:00:00Z",)"
      R"("web-0":"2026-01-01T10:00:01Z"},"disruptionsAllowed":1,"currentHealthy":3,"desiredHealthy":2,)"
      R"("expectedPods":3,"conditions":[{"type":"DisruptionAllowed","status":"True","reason":"SufficientPods"}]}})";
  const std::string bare = R"({"kind":"PodDisruptionBudget","apiVersion":"policy/v1",)" + meta("none", "shop", "61") +
                           R"(,"spec":{"maxUnavailable":1}})";
  auto l = d.list<PodDisruptionBudget>(list("PodDisruptionBudgetList", full + "," + bare));
  REQUIRE(l.has_value());
  CHECK(l->resource_version == "500");
  REQUIRE(l->items.size() == 2);
  const PodDisruptionBudget& p = l->items[0];
  CHECK(p.ns == "shop");
  CHECK(p.name == "web-pdb");
  CHECK(p.uid == "uid-web-pdb");
  CHECK(p.resource_version == "60");
  REQUIRE(p.selector.has_value());
  CHECK(p.selector->match_labels == StringPairs{{"app", "web"}});
  REQUIRE(p.selector->match_expressions.size() == 1);
  CHECK(p.selector->match_expressions[0].key == "track");
  CHECK(p.selector->match_expressions[0].op == SelectorOp::in);
  CHECK(p.selector->match_expressions[0].values == std::vector<std::string>{"stable"});
  CHECK(p.disruptions_allowed == 1);
  // Only the keys are kept, in the server's order.
  CHECK(p.disrupted_pods == std::vector<std::string>{"web-1", "web-0"});
  CHECK(p.disrupted("web-0"));
  CHECK_FALSE(p.disrupted("web-2"));
  // No selector, no status yet (the controller has not seen it): nothing
  // selected, nothing allowed.
  CHECK(l->items[1].name == "none");
  CHECK_FALSE(l->items[1].selector.has_value());
  CHECK(l->items[1].disruptions_allowed == 0);
  CHECK(l->items[1].disrupted_pods.empty());

  auto ev = d.event<PodDisruptionBudget>(event("MODIFIED", full));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::modified);
  CHECK_FALSE(ev->undecodable.has_value());
  CHECK(ev->object.name == "web-pdb");
  CHECK(ev->object.disruptions_allowed == 1);
  CHECK(ev->object.disrupted_pods.size() == 2);
}

TEST_CASE("decode: a PodDisruptionBudget's null selector is not its empty one") {
  Decoder d;
  auto pdb = [&](const std::string& spec, const std::string& status = "{}") {
    auto ev = d.event<PodDisruptionBudget>(event(
        "ADDED", R"({"metadata":{"name":"b","namespace":"shop"},"spec":)" + spec + R"(,"status":)" + status + "}"));
    REQUIRE(ev.has_value());
    REQUIRE_FALSE(ev->undecodable.has_value());
    return ev->object;
  };
  // null and absent: nullopt (selects no pod).
  CHECK_FALSE(pdb(R"({"selector":null})").selector.has_value());
  CHECK_FALSE(pdb(R"({"minAvailable":1})").selector.has_value());
  // {}: present and empty (the API's "every pod of the namespace").
  auto empty = pdb(R"({"selector":{}})");
  REQUIRE(empty.selector.has_value());
  CHECK(empty.selector->empty());
  auto no_terms = pdb(R"({"selector":{"matchLabels":{},"matchExpressions":[]}})");
  REQUIRE(no_terms.selector.has_value());
  CHECK(no_terms.selector->empty());
  // null status fields read as absent; a disrupted pod's null time still names it.
  auto nulls = pdb("{}", R"({"disruptionsAllowed":null,"disruptedPods":{"p":null}})");
  CHECK(nulls.disruptions_allowed == 0);
  CHECK(nulls.disrupted_pods == std::vector<std::string>{"p"});
  CHECK(pdb("{}", R"({"disruptedPods":null})").disrupted_pods.empty());
  CHECK(pdb("{}", R"({"disruptedPods":{}})").disrupted_pods.empty());
}

TEST_CASE("decode: a malformed PodDisruptionBudget is refused, not the list or the watch") {
  Decoder d;
  const char* bad[] = {
      R"({"metadata":{"name":"b","namespace":"s"},"status":{"disruptionsAllowed":"1"}})",
      R"({"metadata":{"name":"b","namespace":"s"},"status":{"disruptionsAllowed":4294967296}})",
      R"({"metadata":{"name":"b","namespace":"s"},"status":{"disruptedPods":["p"]}})",
      R"({"metadata":{"name":"b","namespace":"s"},"status":{"disruptedPods":{"p":7}}})",
      R"({"metadata":{"name":"b","namespace":"s"},"spec":{"selector":[]}})",
      R"({"metadata":{"name":"b","namespace":"s"},"spec":{"selector":{"matchLabels":{"app":1}}}})",
      R"({"metadata":{"name":"b","namespace":"s"},"spec":"x"})",
      R"({"metadata":{"namespace":"s"},"spec":{}})",  // no name
  };
  for (const char* obj : bad) {
    CAPTURE(obj);
    auto ev = d.event<PodDisruptionBudget>(event("ADDED", obj));
    REQUIRE(ev.has_value());
    CHECK(ev->undecodable.has_value());
    auto l = d.list<PodDisruptionBudget>(list("PodDisruptionBudgetList", obj));
    REQUIRE(l.has_value());
    CHECK(l->items.empty());
    CHECK(l->undecodable.size() == 1);
  }
  // Broken JSON is the event's own failure.
  CHECK_FALSE(d.event<PodDisruptionBudget>(R"({"type":"ADDED","object":{"metadata":{"name":"b")").has_value());
}

TEST_CASE("decode: a PersistentVolume's CSI driver and handle") {
  Decoder d;
  auto ev = d.event<PersistentVolume>(
      event("ADDED", R"({"metadata":{"name":"pv-ebs","uid":"u","resourceVersion":"42"},)"
                     R"("spec":{"capacity":{"storage":"5Gi"},"csi":{"driver":"ebs.csi.aws.com",)"
                     R"("volumeHandle":"vol-0abc","fsType":"ext4","volumeAttributes":{"a":"b"}}}})"));
  REQUIRE(ev.has_value());
  CHECK(ev->object.csi_driver == "ebs.csi.aws.com");
  CHECK(ev->object.csi_volume_handle == "vol-0abc");
  auto null_csi = d.event<PersistentVolume>(event("ADDED", R"({"metadata":{"name":"pv"},"spec":{"csi":null}})"));
  REQUIRE(null_csi.has_value());
  CHECK(null_csi->object.csi_driver.empty());
}

TEST_CASE("decode: what VolumeBinding matches a WaitForFirstConsumer claim to a volume by") {
  Decoder d;
  auto c = d.event<PersistentVolumeClaim>(
      event("ADDED",
            R"({"metadata":{"name":"data-web-0","namespace":"shop","uid":"c1","resourceVersion":"7",)"
            R"("annotations":{"volume.kubernetes.io/selected-node":"n2","other":"x"},)"
            R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"web-0","uid":"p1","controller":true}]},)"
            R"("spec":{"accessModes":["ReadWriteOnce","ReadOnlyMany"],"volumeMode":"Block",)"
            R"("resources":{"requests":{"storage":"2Gi"}},"selector":{"matchLabels":{"tier":"fast"}},)"
            R"("storageClassName":"lab-standard","volumeAttributesClassName":"gold"},"status":{"phase":"Pending"}})"));
  REQUIRE(c.has_value());
  CHECK(c->object.access_modes == (kReadWriteOnce | kReadOnlyMany));
  CHECK(c->object.block);
  CHECK(c->object.storage_request == 2 * (std::int64_t{1} << 30));
  REQUIRE(c->object.selector.has_value());
  CHECK(c->object.selector->match_labels == StringPairs{{"tier", "fast"}});
  CHECK(c->object.selected_node == "n2");
  CHECK(c->object.controller_uid == "p1");
  CHECK(c->object.attributes_class == "gold");
  CHECK_FALSE(c->object.read_write_once_pod);

  auto pv = d.event<PersistentVolume>(
      event("MODIFIED",
            R"({"metadata":{"name":"pv-1","uid":"v1","resourceVersion":"9",)"
            R"("annotations":{"volume.beta.kubernetes.io/storage-class":"beta"}},)"
            R"("spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteOncePod"],"storageClassName":"spec",)"
            R"("claimRef":{"kind":"PersistentVolumeClaim","namespace":"shop","name":"data","uid":"c2"},)"
            R"("hostPath":{"path":"/tmp"}},"status":{"phase":"Available"}})"));
  REQUIRE(pv.has_value());
  CHECK(pv->object.capacity == 10 * (std::int64_t{1} << 30));
  CHECK(pv->object.access_modes == kReadWriteOncePod);
  CHECK(pv->object.storage_class_name == "beta");  // the beta annotation wins, as GetPersistentVolumeClass
  REQUIRE(pv->object.claim_ref.has_value());
  CHECK(*pv->object.claim_ref == ClaimRef{"shop", "data", "c2"});
  CHECK(pv->object.available);
  CHECK_FALSE(pv->object.block);

  auto bound = d.event<PersistentVolume>(
      event("MODIFIED", R"({"metadata":{"name":"pv-2"},"spec":{"claimRef":null},"status":{"phase":"Bound"}})"));
  REQUIRE(bound.has_value());
  CHECK_FALSE(bound->object.claim_ref.has_value());
  CHECK_FALSE(bound->object.available);

  auto sc = d.event<StorageClass>(
      event("ADDED", R"({"metadata":{"name":"zonal"},"provisioner":"p","volumeBindingMode":"WaitForFirstConsumer",)"
                     R"("allowedTopologies":[{"matchLabelExpressions":[{"key":"zone","values":["a","b"]}]}]})"));
  REQUIRE(sc.has_value());
  REQUIRE(sc->object.allowed_topologies.size() == 1);
  CHECK(sc->object.allowed_topologies[0].expressions ==
        std::vector<std::pair<std::string, std::vector<std::string>>>{{"zone", {"a", "b"}}});

  auto written = d.object<PersistentVolumeClaim>(R"({"metadata":{"name":"x","namespace":"n","resourceVersion":"12"}})");
  REQUIRE(written.has_value());
  CHECK(written->resource_version == "12");
}

TEST_CASE("decode: CSIDrivers and CSIStorageCapacities, for provisioning") {
  Decoder d;
  auto driver = d.event<CSIDriver>(
      event("ADDED", R"({"metadata":{"name":"csi.example"},"spec":{"attachRequired":true,"storageCapacity":true}})"));
  REQUIRE(driver.has_value());
  CHECK(driver->object.storage_capacity);
  auto both = d.event<CSIStorageCapacity>(
      event("ADDED", R"({"metadata":{"name":"c1","namespace":"kube-system"},"storageClassName":"fast",)"
                     R"("nodeTopology":{"matchLabels":{"zone":"a"}},"capacity":"10Gi","maximumVolumeSize":"2Gi"})"));
  REQUIRE(both.has_value());
  CHECK(both->object.storage_class_name == "fast");
  CHECK(both->object.limit == 2 * (std::int64_t{1} << 30));  // maximumVolumeSize wins
  REQUIRE(both->object.node_topology.has_value());
  CHECK(both->object.node_topology->match_labels == StringPairs{{"zone", "a"}});
  auto capacity_only = d.event<CSIStorageCapacity>(
      event("ADDED", R"({"metadata":{"name":"c2","namespace":"x"},"storageClassName":"fast","capacity":"1Gi"})"));
  REQUIRE(capacity_only.has_value());
  CHECK(capacity_only->object.limit == (std::int64_t{1} << 30));
  CHECK_FALSE(capacity_only->object.node_topology.has_value());
  auto neither = d.event<CSIStorageCapacity>(
      event("ADDED", R"({"metadata":{"name":"c3","namespace":"x"},"storageClassName":"fast","capacity":null})"));
  REQUIRE(neither.has_value());
  CHECK_FALSE(neither->object.limit.has_value());
}

TEST_CASE("decode: CSINodes keep each driver's attach limit") {
  Decoder d;
  const std::string n1 = R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1",)" + meta("n1", "", "60") +
                         R"(,"spec":{"drivers":[{"name":"ebs.csi.aws.com","nodeID":"i-1",)"
                         R"("topologyKeys":["topology.ebs.csi.aws.com/zone"],"allocatable":{"count":25}},)"
                         R"({"name":"efs.csi.aws.com","nodeID":"i-1","topologyKeys":null},)"
                         R"({"name":"x.csi","nodeID":"i-1","allocatable":{"count":null}}]}})";
  auto l = d.list<CSINode>(list("CSINodeList", n1));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  const CSINode& n = l->items[0];
  CHECK(n.name == "n1");
  CHECK(n.resource_version == "60");
  REQUIRE(n.drivers.size() == 3);
  CHECK(n.drivers[0] == CSINode::Driver{"ebs.csi.aws.com", 25});
  CHECK(n.drivers[1] == CSINode::Driver{"efs.csi.aws.com", std::nullopt});  // no allocatable: no limit
  CHECK(n.drivers[2] == CSINode::Driver{"x.csi", std::nullopt});            // a null count: no limit
  auto bad = d.event<CSINode>(event("ADDED", R"({"metadata":{"name":"n2"},"spec":{"drivers":[{"name":1}]}})"));
  REQUIRE(bad.has_value());
  CHECK(bad->undecodable.has_value());
}

TEST_CASE("decode: VolumeAttachments keep their attacher, node and volume") {
  Decoder d;
  const std::string va = R"({"kind":"VolumeAttachment","apiVersion":"storage.k8s.io/v1",)" + meta("csi-123", "", "70") +
                         R"(,"spec":{"attacher":"ebs.csi.aws.com","nodeName":"n1",)"
                         R"("source":{"persistentVolumeName":"pv-ebs"}},"status":{"attached":true}})";
  auto ev = d.event<VolumeAttachment>(event("MODIFIED", va));
  REQUIRE(ev.has_value());
  CHECK(ev->object.name == "csi-123");
  CHECK(ev->object.attacher == "ebs.csi.aws.com");
  CHECK(ev->object.node_name == "n1");
  CHECK(ev->object.persistent_volume_name == "pv-ebs");
  // CSI migration's inline volume spec: no volume name.
  auto inline_spec = d.event<VolumeAttachment>(
      event("ADDED", R"({"metadata":{"name":"csi-9"},"spec":{"attacher":"a","nodeName":"n1",)"
                     R"("source":{"inlineVolumeSpec":{"csi":{"driver":"a","volumeHandle":"h"}}}}})"));
  REQUIRE(inline_spec.has_value());
  CHECK(inline_spec->object.persistent_volume_name.empty());
}
