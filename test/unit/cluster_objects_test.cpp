// ClusterObjectIndex (cluster_objects.hpp): the namespace labels and the
// default spread selector, fed by hand through the handlers the informers
// use. The first two tables follow upstream's
// pkg/scheduler/framework/plugins/helper/spread_test.go (TestGetPodServices,
// TestDefaultSelector); the rest are the edges of DefaultSelector and
// GetPodServices that those tables do not reach.
#include "toysched/sched/cluster_objects.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "builders.hpp"
#include "toysched/kube/labels.hpp"

using namespace toysched;
using toysched::test::make_pod;

namespace {

kube::Service service(std::string ns, std::string name, kube::StringPairs selector) {
  kube::Service s;
  s.ns = std::move(ns);
  s.name = std::move(name);
  s.uid = "uid-" + s.name;
  s.resource_version = "1";
  s.selector = std::move(selector);
  return s;
}

kube::ReplicationController rc(std::string ns, std::string name, kube::StringPairs selector) {
  kube::ReplicationController r;
  r.ns = std::move(ns);
  r.name = std::move(name);
  r.selector = std::move(selector);
  return r;
}

template <class T>
T with_selector(std::string ns, std::string name, std::optional<kube::LabelSelector> selector) {
  T o;
  o.ns = std::move(ns);
  o.name = std::move(name);
  o.selector = std::move(selector);
  return o;
}
auto rs = with_selector<kube::ReplicaSet>;
auto ss = with_selector<kube::StatefulSet>;

kube::Namespace ns(std::string name, kube::StringPairs labels, std::string rv = "1") {
  kube::Namespace n;
  n.name = std::move(name);
  n.uid = "uid-" + n.name;
  n.resource_version = std::move(rv);
  n.labels = std::move(labels);
  return n;
}

kube::OwnerReference owner(std::string api_version, std::string kind, std::string name, bool controller = true) {
  return {std::move(api_version), std::move(kind), std::move(name), "uid-owner", controller};
}

kube::Pod owned_pod(std::string ns, kube::StringPairs labels, std::vector<kube::OwnerReference> owners) {
  kube::Pod p = make_pod().ns(std::move(ns)).name("test-pod");
  p.labels = std::move(labels);
  p.owners = std::move(owners);
  return p;
}

std::string selector_of(const sched::ClusterObjectIndex& ix, const kube::Pod& p) {
  return sched::selector_text(ix.default_selector(p));
}

}  // namespace

TEST_CASE("cluster objects: a pod's Services (spread_test.go TestGetPodServices)") {
  sched::ClusterObjectIndex ix;
  for (int i = 0; i < 3; ++i) {
    auto n = std::to_string(i);
    ix.handler<kube::Service>().on_add(service("test", "service-" + n, {{"app", "test-" + n}}));
  }
  for (int i = 0; i < 5; ++i) {
    auto n = std::to_string(i);
    kube::Pod p = owned_pod("test", {{"app", "test-" + n}, {"label", "label-" + n}}, {});
    CAPTURE(i);
    // pod-0..2: its one Service's selector; pod-3, pod-4: no Service.
    CHECK(selector_of(ix, p) == (i < 3 ? "app=test-" + n : ""));
  }
}

TEST_CASE("cluster objects: the default selector (spread_test.go TestDefaultSelector)") {
  // As upstream, each case adds to the same informers.
  sched::ClusterObjectIndex ix;
  const kube::StringPairs labels = {{"podLabelKey", "podLabelVal"}};

  // "DefaultSelector for default case"
  CHECK(selector_of(ix, owned_pod("test", labels, {})) == "");
  // "DefaultSelector for no OwnerReference pod case"
  ix.handler<kube::Service>().on_add(service("test", "test-service", {{"podLabelKey", "podLabelVal"}}));
  CHECK(selector_of(ix, owned_pod("test", labels, {})) == "podLabelKey=podLabelVal");
  // "DefaultSelector for ReplicaSet OwnerReference pod case"
  ix.handler<kube::ReplicaSet>().on_add(
      rs("test", "test-replicaset", kube::LabelSelector{{{"replicaSetLabelKey", "replicaSetLabelVal"}}, {}}));
  CHECK(selector_of(ix, owned_pod("test", labels, {owner("apps/v1", "ReplicaSet", "test-replicaset")})) ==
        "podLabelKey=podLabelVal,replicaSetLabelKey=replicaSetLabelVal");
  // "DefaultSelector for ReplicationController OwnerReference pod case"
  ix.handler<kube::ReplicationController>().on_add(
      rc("test", "test-replicationcontroller", {{"replicationLabelKey", "replicationLabelVal"}}));
  CHECK(selector_of(ix,
                    owned_pod("test", labels, {owner("v1", "ReplicationController", "test-replicationcontroller")})) ==
        "podLabelKey=podLabelVal,replicationLabelKey=replicationLabelVal");
  // "DefaultSelector for StatefulSet OwnerReference pod case"
  ix.handler<kube::StatefulSet>().on_add(
      ss("test", "test-statefulset", kube::LabelSelector{{{"statefulSetLabelKey", "statefulSetLabelVal"}}, {}}));
  CHECK(selector_of(ix, owned_pod("test", labels, {owner("apps/v1", "StatefulSet", "test-statefulset")})) ==
        "podLabelKey=podLabelVal,statefulSetLabelKey=statefulSetLabelVal");
}

TEST_CASE("cluster objects: Services with an empty selector, or in another namespace, select no pod") {
  sched::ClusterObjectIndex ix;
  const kube::StringPairs labels = {{"app", "web"}, {"tier", "front"}};
  ix.handler<kube::Service>().on_add(service("a", "headless", {}));  // no spec.selector: not "every pod"
  ix.handler<kube::Service>().on_add(service("b", "web", {{"app", "web"}}));
  CHECK(selector_of(ix, owned_pod("a", labels, {})) == "");
  // Two Services of the pod's namespace merge; one that does not match stays out.
  ix.handler<kube::Service>().on_add(service("a", "web", {{"app", "web"}}));
  ix.handler<kube::Service>().on_add(service("a", "front", {{"tier", "front"}}));
  ix.handler<kube::Service>().on_add(service("a", "back", {{"tier", "back"}}));
  CHECK(selector_of(ix, owned_pod("a", labels, {})) == "app=web,tier=front");
  // A Service deleted, or changed not to select the pod, no longer counts.
  ix.handler<kube::Service>().on_delete(service("a", "front", {{"tier", "front"}}));
  ix.handler<kube::Service>().on_update(service("a", "web", {{"app", "web"}}), service("a", "web", {{"app", "api"}}));
  CHECK(selector_of(ix, owned_pod("a", labels, {})) == "");
  CHECK(ix.count<kube::Service>() == 4);  // a/headless, a/web, a/back, b/web
}

TEST_CASE("cluster objects: the controller is found by apiVersion, kind, namespace and name") {
  sched::ClusterObjectIndex ix;
  const kube::StringPairs labels = {{"app", "web"}};
  const kube::LabelSelector rs_sel{{{"app", "web"}, {"pod-template-hash", "h1"}}, {}};
  ix.handler<kube::ReplicaSet>().on_add(rs("a", "web-h1", rs_sel));
  ix.handler<kube::ReplicaSet>().on_add(rs("b", "other", rs_sel));
  ix.handler<kube::ReplicationController>().on_add(rc("a", "legacy", {{"rc", "x"}}));
  ix.handler<kube::StatefulSet>().on_add(ss("a", "db", kube::LabelSelector{{{"db", "1"}}, {}}));
  auto sel = [&](std::vector<kube::OwnerReference> owners) { return selector_of(ix, owned_pod("a", labels, owners)); };

  CHECK(sel({owner("apps/v1", "ReplicaSet", "web-h1")}) == "app=web,pod-template-hash=h1");
  // Not the controller: ignored, even when it names a known ReplicaSet.
  CHECK(sel({owner("apps/v1", "ReplicaSet", "web-h1", false)}) == "");
  // The first reference marked controller is the one.
  CHECK(sel({owner("apps/v1", "ReplicaSet", "web-h1", false), owner("apps/v1", "StatefulSet", "db")}) == "db=1");
  // Another group or version, another kind, a name only another namespace has.
  CHECK(sel({owner("extensions/v1beta1", "ReplicaSet", "web-h1")}) == "");
  CHECK(sel({owner("apps/v1/x", "ReplicaSet", "web-h1")}) == "");
  CHECK(sel({owner("apps/v1", "Deployment", "web-h1")}) == "");
  CHECK(sel({owner("apps/v1", "ReplicaSet", "other")}) == "");
  CHECK(sel({owner("apps/v1", "ReplicaSet", "gone")}) == "");
  // ReplicationController is core: "v1", and "/v1" parses to the same group version.
  CHECK(sel({owner("v1", "ReplicationController", "legacy")}) == "rc=x");
  CHECK(sel({owner("/v1", "ReplicationController", "legacy")}) == "rc=x");
  CHECK(sel({owner("apps/v1", "ReplicationController", "legacy")}) == "");
  CHECK(sel({owner("v1", "StatefulSet", "db")}) == "");
  // Deleted: no longer found.
  ix.handler<kube::ReplicaSet>().on_delete(rs("a", "web-h1", rs_sel));
  CHECK(sel({owner("apps/v1", "ReplicaSet", "web-h1")}) == "");
  CHECK(ix.count<kube::ReplicaSet>() == 1);
}

TEST_CASE("cluster objects: merging the Services' sets with the controller's selector") {
  sched::ClusterObjectIndex ix;
  const kube::StringPairs labels = {{"app", "web"}, {"track", "stable"}};
  ix.handler<kube::Service>().on_add(service("a", "web", {{"app", "web"}}));

  // A ReplicationController's selector is merged as a set: its value wins on
  // a shared key (labels.Merge), and the result is sorted by key.
  ix.handler<kube::ReplicationController>().on_add(rc("a", "rc", {{"track", "stable"}, {"app", "web2"}}));
  kube::Pod by_rc = owned_pod("a", labels, {owner("v1", "ReplicationController", "rc")});
  CHECK(selector_of(ix, by_rc) == "app=web2,track=stable");

  // A ReplicaSet's selector is ANDed in, expressions included: a pod must
  // satisfy both the Services' labels and the ReplicaSet's requirements.
  kube::LabelSelector with_expr{{{"track", "stable"}}, {{"env", kube::SelectorOp::not_in, {"dev"}}}};
  ix.handler<kube::ReplicaSet>().on_add(rs("a", "rs", with_expr));
  kube::Pod by_rs = owned_pod("a", labels, {owner("apps/v1", "ReplicaSet", "rs")});
  auto got = ix.default_selector(by_rs);
  CHECK(sched::selector_text(got) == "app=web,env notin (dev),track=stable");
  CHECK(kube::selector_matches(got, labels));
  CHECK_FALSE(kube::selector_matches(got, kube::StringPairs{{"app", "web"}, {"track", "canary"}}));
  CHECK_FALSE(kube::selector_matches(got, kube::StringPairs{{"app", "web"}, {"track", "stable"}, {"env", "dev"}}));

  // A selector upstream cannot convert (Gt in a label selector) adds nothing,
  // rather than making the whole default selector match nothing; so does an
  // absent one (labels.Nothing() has no requirements).
  ix.handler<kube::ReplicaSet>().on_update(
      rs("a", "rs", with_expr), rs("a", "rs", kube::LabelSelector{{}, {{"n", kube::SelectorOp::gt, {"1"}}}}));
  CHECK(selector_of(ix, by_rs) == "app=web");
  ix.handler<kube::ReplicaSet>().on_update(rs("a", "rs", std::nullopt), rs("a", "rs", std::nullopt));
  CHECK(selector_of(ix, by_rs) == "app=web");
  // An empty one ({}: everything) adds nothing either.
  ix.handler<kube::ReplicaSet>().on_update(rs("a", "rs", std::nullopt), rs("a", "rs", kube::LabelSelector{}));
  CHECK(selector_of(ix, by_rs) == "app=web");
}

TEST_CASE("cluster objects: namespace labels, and a change of them moves unschedulable pods") {
  std::vector<std::string> events;
  sched::ClusterObjectIndex ix([&](const char* e) { events.emplace_back(e); });
  CHECK(ix.namespace_labels("team-a") == nullptr);
  ix.handler<kube::Namespace>().on_add(ns("team-a", {{"team", "a"}}));
  ix.handler<kube::Namespace>().on_add(ns("a-namespace-name-longer-than-sso", {{"x", "y"}}));
  REQUIRE(ix.namespace_labels("team-a") != nullptr);
  CHECK(*ix.namespace_labels("team-a") == kube::StringPairs{{"team", "a"}});
  std::string_view long_name = "a-namespace-name-longer-than-sso";
  REQUIRE(ix.namespace_labels(long_name) != nullptr);
  CHECK(events.empty());  // a new namespace has no pods yet for a term to count

  ix.handler<kube::Namespace>().on_update(ns("team-a", {{"team", "a"}}), ns("team-a", {{"team", "a"}}, "2"));
  CHECK(events.empty());  // same labels: nothing can have changed for a pod
  ix.handler<kube::Namespace>().on_update(ns("team-a", {{"team", "a"}}, "2"), ns("team-a", {{"team", "b"}}, "3"));
  CHECK(events == std::vector<std::string>{"NamespaceUpdate"});
  CHECK(*ix.namespace_labels("team-a") == kube::StringPairs{{"team", "b"}});

  ix.handler<kube::Namespace>().on_delete(ns("team-a", {{"team", "b"}}, "3"));
  CHECK(ix.namespace_labels("team-a") == nullptr);
  CHECK(ix.count<kube::Namespace>() == 1);
}

TEST_CASE("cluster objects: selector_text is labels.Selector's String()") {
  kube::LabelSelector s{{{"b", "2"}}, {{"a", kube::SelectorOp::in, {"x", "y"}}, {"c", kube::SelectorOp::exists, {}}}};
  s.match_expressions.push_back({"d", kube::SelectorOp::does_not_exist, {}});
  // Requirements sorted by key, as upstream's internalSelector keeps them.
  CHECK(sched::selector_text(s) == "a in (x,y),b=2,c,!d");
  CHECK(sched::selector_text(kube::LabelSelector{}) == "");
}

namespace {

kube::PersistentVolumeClaim pvc(std::string ns, std::string name, std::string volume, std::string rv = "1") {
  kube::PersistentVolumeClaim c;
  c.ns = std::move(ns);
  c.name = std::move(name);
  c.uid = "uid-" + c.name;
  c.resource_version = std::move(rv);
  c.volume_name = std::move(volume);
  return c;
}

kube::PersistentVolume pv(std::string name, std::string rv = "1") {
  kube::PersistentVolume v;
  v.name = std::move(name);
  v.uid = "uid-" + v.name;
  v.resource_version = std::move(rv);
  return v;
}

kube::StorageClass storage_class(std::string name, bool wait, std::string rv = "1") {
  kube::StorageClass c;
  c.name = std::move(name);
  c.uid = "uid-" + c.name;
  c.resource_version = std::move(rv);
  c.wait_for_first_consumer = wait;
  return c;
}

}  // namespace

TEST_CASE("cluster objects: claims, volumes and classes, found, updated, forgotten") {
  std::vector<std::string> events;
  sched::ClusterObjectIndex ix([&](const char* e) { events.emplace_back(e); });
  const sched::ClusterObjects& objects = ix;  // what the plugins see
  CHECK(objects.claim("a", "data") == nullptr);
  CHECK(objects.volume("pv-1") == nullptr);
  CHECK(objects.storage_class("local") == nullptr);

  ix.handler<kube::PersistentVolumeClaim>().on_add(pvc("a", "data", ""));
  ix.handler<kube::PersistentVolumeClaim>().on_add(pvc("b", "data", "pv-2"));
  ix.handler<kube::PersistentVolume>().on_add(pv("pv-1"));
  ix.handler<kube::StorageClass>().on_add(storage_class("local", true));
  CHECK(events == std::vector<std::string>{"PersistentVolumeClaimAdd", "PersistentVolumeClaimAdd",
                                           "PersistentVolumeAdd", "StorageClassAdd"});
  REQUIRE(objects.claim("a", "data") != nullptr);
  CHECK(objects.claim("a", "data")->volume_name.empty());
  REQUIRE(objects.claim("b", "data") != nullptr);  // same name, another namespace
  CHECK(objects.claim("b", "data")->volume_name == "pv-2");
  CHECK(objects.claim("a", "other") == nullptr);
  CHECK(objects.claim("c", "data") == nullptr);
  REQUIRE(objects.volume("pv-1") != nullptr);
  CHECK(objects.volume("pv-1")->uid == "uid-pv-1");
  REQUIRE(objects.storage_class("local") != nullptr);
  CHECK(objects.storage_class("local")->wait_for_first_consumer);
  CHECK(ix.count<kube::PersistentVolumeClaim>() == 2);
  CHECK(ix.count<kube::PersistentVolume>() == 1);
  CHECK(ix.count<kube::StorageClass>() == 1);

  // An update replaces the object and moves the pods VolumeBinding may now let in.
  events.clear();
  ix.handler<kube::PersistentVolumeClaim>().on_update(pvc("a", "data", ""), pvc("a", "data", "pv-1", "2"));
  kube::PersistentVolume zoned = pv("pv-1", "2");
  zoned.has_node_affinity = true;
  ix.handler<kube::PersistentVolume>().on_update(pv("pv-1"), zoned);
  ix.handler<kube::StorageClass>().on_update(storage_class("local", true), storage_class("local", false, "2"));
  CHECK(events ==
        std::vector<std::string>{"PersistentVolumeClaimUpdate", "PersistentVolumeUpdate", "StorageClassUpdate"});
  CHECK(objects.claim("a", "data")->volume_name == "pv-1");
  CHECK(objects.volume("pv-1")->has_node_affinity);
  CHECK_FALSE(objects.storage_class("local")->wait_for_first_consumer);

  // A delete is forgotten and moves no pod: nothing rejected can fit for it.
  events.clear();
  ix.handler<kube::PersistentVolumeClaim>().on_delete(pvc("a", "data", "pv-1", "2"));
  ix.handler<kube::PersistentVolume>().on_delete(zoned);
  ix.handler<kube::StorageClass>().on_delete(storage_class("local", false, "2"));
  CHECK(events.empty());
  CHECK(objects.claim("a", "data") == nullptr);
  CHECK(objects.claim("b", "data") != nullptr);
  CHECK(objects.volume("pv-1") == nullptr);
  CHECK(objects.storage_class("local") == nullptr);
  CHECK(ix.count<kube::PersistentVolumeClaim>() == 1);
  CHECK(ix.count<kube::PersistentVolume>() == 0);
  CHECK(ix.count<kube::StorageClass>() == 0);
}

namespace {

kube::PodDisruptionBudget pdb(std::string ns, std::string name, std::int32_t allowed, std::string rv = "1") {
  kube::PodDisruptionBudget b;
  b.ns = std::move(ns);
  b.name = std::move(name);
  b.uid = "uid-" + b.ns + "-" + b.name;
  b.resource_version = std::move(rv);
  b.selector = kube::LabelSelector{{{"app", "web"}}, {}};
  b.disruptions_allowed = allowed;
  return b;
}

// "ns/name allowed" of each budget, in pdbs() order.
std::vector<std::string> listed(const sched::ClusterObjects& objects) {
  std::vector<std::string> out;
  for (const kube::PodDisruptionBudget* b : objects.pdbs())
    out.push_back(b->ns + "/" + b->name + " " + std::to_string(b->disruptions_allowed));
  return out;
}

}  // namespace

TEST_CASE("cluster objects: PodDisruptionBudgets, listed sorted, updated in place, forgotten") {
  std::vector<std::string> events;
  sched::ClusterObjectIndex ix([&](const char* e) { events.emplace_back(e); });
  const sched::ClusterObjects& objects = ix;  // what preemption sees
  CHECK(objects.pdbs().empty());

  ix.handler<kube::PodDisruptionBudget>().on_add(pdb("b", "web", 1));
  ix.handler<kube::PodDisruptionBudget>().on_add(pdb("a", "zeta", 0));
  ix.handler<kube::PodDisruptionBudget>().on_add(pdb("a", "alpha", 2));
  ix.handler<kube::PodDisruptionBudget>().on_add(pdb("c", "web", 3));
  // By namespace then name, whatever the order they came in.
  CHECK(listed(objects) == std::vector<std::string>{"a/alpha 2", "a/zeta 0", "b/web 1", "c/web 3"});
  CHECK(ix.count<kube::PodDisruptionBudget>() == 4);

  // An update (the controller's status write) is seen through the same
  // pointer: the list is not rebuilt.
  const kube::PodDisruptionBudget* before = objects.pdbs()[2];
  kube::PodDisruptionBudget evicting = pdb("b", "web", 0, "2");
  evicting.disrupted_pods = {"web-0"};
  ix.handler<kube::PodDisruptionBudget>().on_update(pdb("b", "web", 1), evicting);
  REQUIRE(objects.pdbs().size() == 4);
  CHECK(objects.pdbs()[2] == before);
  CHECK(objects.pdbs()[2]->disruptions_allowed == 0);
  CHECK(objects.pdbs()[2]->resource_version == "2");
  CHECK(objects.pdbs()[2]->disrupted("web-0"));
  // An update of one never seen (a missed add) adds it.
  ix.handler<kube::PodDisruptionBudget>().on_update(pdb("a", "mid", 5), pdb("a", "mid", 5, "2"));
  CHECK(listed(objects) == std::vector<std::string>{"a/alpha 2", "a/mid 5", "a/zeta 0", "b/web 0", "c/web 3"});

  ix.handler<kube::PodDisruptionBudget>().on_delete(pdb("a", "zeta", 0));
  ix.handler<kube::PodDisruptionBudget>().on_delete(evicting);
  ix.handler<kube::PodDisruptionBudget>().on_delete(pdb("d", "never-seen", 0));  // a no-op
  CHECK(listed(objects) == std::vector<std::string>{"a/alpha 2", "a/mid 5", "c/web 3"});
  CHECK(ix.count<kube::PodDisruptionBudget>() == 3);
  ix.handler<kube::PodDisruptionBudget>().on_delete(pdb("a", "alpha", 2));
  ix.handler<kube::PodDisruptionBudget>().on_delete(pdb("a", "mid", 5));
  ix.handler<kube::PodDisruptionBudget>().on_delete(pdb("c", "web", 3));
  CHECK(objects.pdbs().empty());
  CHECK(ix.count<kube::PodDisruptionBudget>() == 0);

  // A budget only orders preemption's victims: no change to one moves a pod.
  CHECK(events.empty());
}

TEST_CASE("cluster objects: a ClusterObjects that keeps no budgets lists none") {
  struct NoBudgets final : sched::ClusterObjects {
    const kube::StringPairs* namespace_labels(std::string_view) const override { return nullptr; }
    kube::LabelSelector default_selector(const kube::Pod&) const override { return {}; }
  } none;
  CHECK(none.pdbs().empty());
}

TEST_CASE("cluster objects: CSINodes and VolumeAttachments, and the changes that move pods") {
  std::vector<std::string> events;
  sched::ClusterObjectIndex ix([&](const char* e) { events.emplace_back(e); });
  const sched::ClusterObjects& objects = ix;
  const auto csi_node = [](std::optional<std::int64_t> ebs, std::optional<std::int64_t> gce) {
    kube::CSINode n;
    n.name = "n1";
    n.drivers = {{"ebs.csi.aws.com", ebs}, {"pd.csi.storage.gke.io", gce}};
    return n;
  };
  CHECK(objects.csi_node("n1") == nullptr);
  ix.handler<kube::CSINode>().on_add(csi_node(2, std::nullopt));
  REQUIRE(objects.csi_node("n1") != nullptr);
  CHECK(objects.csi_node("n1")->drivers.size() == 2);
  CHECK(events == std::vector<std::string>{"CSINodeAdd"});
  // upstream's isSchedulableAfterCSINodeUpdated: only a raised limit helps
  // (no count counts as 0).
  events.clear();
  ix.handler<kube::CSINode>().on_update(csi_node(2, std::nullopt), csi_node(1, std::nullopt));
  CHECK(events.empty());
  ix.handler<kube::CSINode>().on_update(csi_node(1, std::nullopt), csi_node(1, 0));
  CHECK(events.empty());
  ix.handler<kube::CSINode>().on_update(csi_node(1, 0), csi_node(1, 3));
  CHECK(events == std::vector<std::string>{"CSINodeUpdate"});

  const auto va = [](std::string name, std::string node) {
    kube::VolumeAttachment a;
    a.name = std::move(name);
    a.node_name = std::move(node);
    a.attacher = "ebs.csi.aws.com";
    a.persistent_volume_name = "pv-" + a.name;
    return a;
  };
  events.clear();
  ix.handler<kube::VolumeAttachment>().on_add(va("a", "n1"));
  ix.handler<kube::VolumeAttachment>().on_add(va("b", "n1"));
  ix.handler<kube::VolumeAttachment>().on_add(va("c", "n2"));
  ix.handler<kube::VolumeAttachment>().on_update(va("b", "n1"), va("b", "n1"));
  CHECK(events.empty());  // an attachment added never lets a pod in
  CHECK(objects.attachments("n1").size() == 2);
  CHECK(objects.attachments("n2").size() == 1);
  CHECK(objects.attachments("n3").empty());
  CHECK(ix.count<kube::VolumeAttachment>() == 3);
  ix.handler<kube::VolumeAttachment>().on_delete(va("a", "n1"));
  CHECK(events == std::vector<std::string>{"VolumeAttachmentDelete"});
  REQUIRE(objects.attachments("n1").size() == 1);
  CHECK(objects.attachments("n1")[0].name == "b");
  ix.handler<kube::CSINode>().on_delete(csi_node(1, 3));
  CHECK(objects.csi_node("n1") == nullptr);
}
