// VolumeBinding with claims of WaitForFirstConsumer classes: the cases of
// upstream's binder_test.go (TestFindPodVolumesWithoutProvisioning,
// TestFindPodVolumesWithProvisioning, TestAssumePodVolumes) that a
// scheduler without CSI translation or storage capacity can have, checked
// through Filter and Reserve on a few nodes. Bound and immediate claims:
// test/unit/volume_binding_test.cpp.
#include "toysched/sched/plugins/volume_binding.hpp"
#include "../builders.hpp"
#include "../profile_fixtures.hpp"
#include "../storage_fixture.hpp"
#include "toysched/sched/pre_bind.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace toysched;
using sched::NodeInfo;
using sched::PodVolumes;
using sched::PreFilterResult;
using test::make_node;
using test::make_pod;
using test::Storage;
using test::term;

namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;
constexpr const char* kBindConflict = "node(s) didn't find available persistent volumes to bind";

const std::vector<NodeInfo>& nodes() {
  static const std::vector<NodeInfo> n = [] {
    std::vector<NodeInfo> v = {make_node().name("n1").info(), make_node().name("n2").info(),
                               make_node().name("n3").info()};
    v[0].node.labels = {{"kubernetes.io/hostname", "n1"}, {"zone", "a"}};
    v[1].node.labels = {{"kubernetes.io/hostname", "n2"}, {"zone", "a"}};
    v[2].node.labels = {{"kubernetes.io/hostname", "n3"}, {"zone", "b"}};
    return v;
  }();
  return n;
}

// A WaitForFirstConsumer claim of class "wait" asking for `gi` GiB, RWO.
kube::PersistentVolumeClaim& wait_claim(Storage& s, std::string name, std::int64_t gi) {
  kube::PersistentVolumeClaim& c = s.add_claim(std::move(name));
  c.uid = "uid-" + c.name;
  c.resource_version = "10";
  c.storage_class_name = "wait";
  c.storage_request = gi * kGi;
  c.access_modes = kube::kReadWriteOnce;
  return c;
}

// An available local volume of class "wait" on `node` ("" for none).
kube::PersistentVolume& local_volume(Storage& s, std::string name, std::string node, std::int64_t gi) {
  kube::PersistentVolume& v =
      node.empty() ? s.add_labelled_volume(std::move(name), {})
                   : s.add_volume(std::move(name), {term().expr("kubernetes.io/hostname", "In", {node})});
  v.resource_version = "5";
  v.storage_class_name = "wait";
  v.capacity = gi * kGi;
  v.access_modes = kube::kReadWriteOnce | kube::kReadOnlyMany;
  v.available = true;
  return v;
}

kube::Pod pod_with(std::vector<std::string> claims) {
  kube::Pod p = make_pod().ns("default").name("p").uid("pod-uid");
  p.claims = std::move(claims);
  return p;
}

struct Run {
  sched::VolumeBinding plugin;
  std::vector<const NodeInfo*> ptrs = test::node_ptrs(nodes());
  sched::Cluster cluster{ptrs};

  explicit Run(const Storage& s) { cluster.objects = &s; }
  PreFilterResult::Kind pre_filter(const kube::Pod& p) { return plugin.pre_filter(p, cluster).kind; }
  // Each node's verdict: "pass" or its first reason.
  std::vector<std::string> verdicts() const {
    std::vector<std::string> out;
    for (const NodeInfo& ni : nodes()) {
      const sched::FilterStatus st = plugin.find(ni.node, nullptr);
      out.push_back(st.ok() ? "pass" : st.reason_strings(kube::Pod{}).front());
    }
    return out;
  }
  PodVolumes on(std::size_t node) const {
    PodVolumes v;
    REQUIRE(plugin.find(nodes()[node].node, &v).ok());
    return v;
  }
};

}  // namespace

TEST_CASE("static volumes: the node must hold a free volume that fits the claim") {
  Storage s;
  s.add_class("wait", true);
  wait_claim(s, "data", 4);
  local_volume(s, "pv-n2", "n2", 10);
  local_volume(s, "pv-n3", "n3", 5);
  Run r(s);
  REQUIRE(r.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
  CHECK(r.verdicts() == std::vector<std::string>{kBindConflict, "pass", "pass"});
  CHECK(r.on(2).bind.front().first->name == "pv-n3");

  SUBCASE("too small, wrong mode, wrong access, not available, taken: no match") {
    auto& pv = s.volumes["pv-n3"];
    SUBCASE("capacity") { pv.capacity = 3 * kGi; }
    SUBCASE("volume mode") { pv.block = true; }
    SUBCASE("access modes") { s.claims["default/data"].access_modes = kube::kReadWriteMany; }
    SUBCASE("phase") { pv.available = false; }
    SUBCASE("bound to another claim") { pv.claim_ref = kube::ClaimRef{"default", "other", "x"}; }
    SUBCASE("another class") { pv.storage_class_name = "other"; }
    SUBCASE("being deleted") { pv.deleting = true; }
    SUBCASE("a selector the volume's labels do not match") {
      s.claims["default/data"].selector = kube::LabelSelector{{{"tier", "fast"}}, {}};
    }
    Run again(s);
    REQUIRE(again.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
    CHECK(again.verdicts()[2] == kBindConflict);
  }
}

TEST_CASE("static volumes: the smallest fit, unless one is pre-bound to the claim") {
  Storage s;
  s.add_class("wait", true);
  wait_claim(s, "data", 1);
  local_volume(s, "big", "", 100);
  local_volume(s, "small", "", 2);
  Run r(s);
  REQUIRE(r.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
  CHECK(r.on(0).bind.front().first->name == "small");

  s.volumes["big"].claim_ref = kube::ClaimRef{"default", "data", ""};  // pre-bound by a user, uid not set
  Run pre(s);
  REQUIRE(pre.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
  CHECK(pre.on(0).bind.front().first->name == "big");
}

TEST_CASE("two claims never get one volume; the smaller claim is matched first") {
  Storage s;
  s.add_class("wait", true);
  wait_claim(s, "large", 8);
  wait_claim(s, "tiny", 1);
  local_volume(s, "pv-10", "n1", 10);
  local_volume(s, "pv-2", "n1", 2);
  Run r(s);
  REQUIRE(r.pre_filter(pod_with({"large", "tiny"})) == PreFilterResult::Kind::run);
  const PodVolumes v = r.on(0);
  REQUIRE(v.bind.size() == 2);
  CHECK(v.bind[0].second->name == "tiny");
  CHECK(v.bind[0].first->name == "pv-2");
  CHECK(v.bind[1].first->name == "pv-10");
  CHECK(r.verdicts()[1] == kBindConflict);
}

TEST_CASE("provisioning: a class with a provisioner, where its topology allows") {
  Storage s;
  s.add_class("wait", true).provisioner = "lab.toysched.dev/hostpath";
  wait_claim(s, "data", 4);
  Run r(s);
  REQUIRE(r.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
  CHECK(r.verdicts() == std::vector<std::string>{"pass", "pass", "pass"});
  CHECK(r.on(1).provision.front()->name == "data");

  SUBCASE("allowedTopologies") {
    s.classes["wait"].allowed_topologies = {kube::TopologyTerm{{{"zone", {"b", "c"}}}}};
    Run z(s);
    REQUIRE(z.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
    CHECK(z.verdicts() == std::vector<std::string>{kBindConflict, kBindConflict, "pass"});
  }
  SUBCASE("kubernetes.io/no-provisioner provisions nothing") {
    s.classes["wait"].provisioner = "kubernetes.io/no-provisioner";
    Run none(s);
    REQUIRE(none.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
    CHECK(none.verdicts() == std::vector<std::string>{kBindConflict, kBindConflict, kBindConflict});
  }
  SUBCASE("a claim whose selected node is set waits for that node alone") {
    s.claims["default/data"].selected_node = "n3";
    Run sel(s);
    REQUIRE(sel.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
    CHECK(sel.verdicts() == std::vector<std::string>{kBindConflict, kBindConflict, "pass"});
  }
}

TEST_CASE("Reserve assumes: the next decision sees the volume taken and the claim promised") {
  Storage s;
  s.add_class("wait", true).provisioner = "p";
  wait_claim(s, "a", 1);
  wait_claim(s, "b", 1);
  wait_claim(s, "c", 1);
  local_volume(s, "only", "n2", 1);
  Run r(s);
  REQUIRE(r.pre_filter(pod_with({"a"})) == PreFilterResult::Kind::run);
  std::unique_ptr<sched::PreBind> first = r.plugin.reserve(pod_with({"a"}), nodes()[1], r.cluster);
  REQUIRE(first != nullptr);
  CHECK(s.assumed.claim_ref(s.volumes["only"])->name == "a");

  // b finds no volume any more: on n2 it would be provisioned instead.
  REQUIRE(r.pre_filter(pod_with({"b"})) == PreFilterResult::Kind::run);
  CHECK(r.on(1).bind.empty());
  CHECK(r.on(1).provision.size() == 1);
  std::unique_ptr<sched::PreBind> second = r.plugin.reserve(pod_with({"b"}), nodes()[0], r.cluster);
  REQUIRE(second != nullptr);
  CHECK(*s.assumed.selected_node(s.claims["default/b"]) == "n1");

  // A newer version of the volume from the informer replaces the assumption.
  s.volumes["only"].resource_version = "6";
  CHECK_FALSE(s.assumed.claim_ref(s.volumes["only"]).has_value());
  s.volumes["only"].resource_version = "5";

  first->unreserve();
  second->unreserve();
  second->unreserve();  // once only
  CHECK(s.assumed.size() == 0);
  CHECK_FALSE(s.assumed.claim_ref(s.volumes["only"]).has_value());
  CHECK_FALSE(s.assumed.selected_node(s.claims["default/b"]).has_value());

  // A pod whose claims are all bound leaves nothing to do.
  s.add_claim("done", "only");
  REQUIRE(r.pre_filter(pod_with({"done"})) != PreFilterResult::Kind::reject);
  CHECK(r.plugin.reserve(pod_with({"done"}), nodes()[1], r.cluster) == nullptr);
}

TEST_CASE("generic ephemeral volumes: the claim the controller makes for the pod") {
  Storage s;
  s.add_class("wait", true).provisioner = "p";
  kube::Pod pod = make_pod().ns("default").name("web-0").uid("pod-uid");
  pod.ephemeral_volumes = {"scratch"};
  sched::VolumeBinding plugin;
  const auto ptrs = test::node_ptrs(nodes());
  sched::Cluster cluster{ptrs};
  cluster.objects = &s;
  PreFilterResult r = plugin.pre_filter(pod, cluster);
  CHECK(r.kind == PreFilterResult::Kind::reject);
  CHECK(r.message == "waiting for ephemeral volume controller to create the persistentvolumeclaim \"web-0-scratch\"");
  kube::PersistentVolumeClaim& c = wait_claim(s, "web-0-scratch", 1);
  c.controller_uid = "someone-else";
  r = plugin.pre_filter(pod, cluster);
  CHECK(r.message == "PVC default/web-0-scratch was not created for pod default/web-0 (pod is not owner)");
  c.controller_uid = "pod-uid";
  CHECK(plugin.pre_filter(pod, cluster).kind == PreFilterResult::Kind::run);
  CHECK(plugin.find(nodes()[0].node, nullptr).ok());
}

TEST_CASE("provisioning: CSIStorageCapacity, for a driver that publishes it") {
  // upstream's TestCapacity: the driver opts in with storageCapacity; a
  // capacity of the class reachable from the node must hold the request.
  Storage s;
  s.add_class("wait", true).provisioner = "csi.example";
  wait_claim(s, "data", 4);
  auto capacity = [&](std::optional<std::int64_t> limit, kube::StringPairs topology) {
    kube::CSIStorageCapacity c;
    c.storage_class_name = "wait";
    c.limit = limit;
    c.node_topology = kube::LabelSelector{std::move(topology), {}};
    s.capacities.push_back(c);
  };
  auto verdicts = [&] {
    Run r(s);
    REQUIRE(r.pre_filter(pod_with({"data"})) == PreFilterResult::Kind::run);
    return r.verdicts();
  };
  constexpr const char* kNoSpace = "node(s) did not have enough free storage";
  SUBCASE("a driver that does not publish capacity: not checked") {
    CHECK(verdicts() == std::vector<std::string>{"pass", "pass", "pass"});
    s.drivers["csi.example"].storage_capacity = false;
    CHECK(verdicts() == std::vector<std::string>{"pass", "pass", "pass"});
  }
  SUBCASE("no capacity at all") {
    s.drivers["csi.example"].storage_capacity = true;
    CHECK(verdicts() == std::vector<std::string>{kNoSpace, kNoSpace, kNoSpace});
  }
  SUBCASE("enough in zone b only, too little in zone a, another class's anywhere") {
    s.drivers["csi.example"].storage_capacity = true;
    capacity(5 * kGi, {{"zone", "b"}});
    capacity(3 * kGi, {{"zone", "a"}});
    capacity(100 * kGi, {});
    s.capacities.back().storage_class_name = "other";
    CHECK(verdicts() == std::vector<std::string>{kNoSpace, kNoSpace, "pass"});
  }
  SUBCASE("no limit set, or no topology: reachable from no node") {
    s.drivers["csi.example"].storage_capacity = true;
    capacity(std::nullopt, {});
    capacity(10 * kGi, {});
    s.capacities.back().node_topology.reset();
    CHECK(verdicts() == std::vector<std::string>{kNoSpace, kNoSpace, kNoSpace});
  }
  SUBCASE("an empty topology selector reaches every node") {
    s.drivers["csi.example"].storage_capacity = true;
    capacity(4 * kGi, {});
    CHECK(verdicts() == std::vector<std::string>{"pass", "pass", "pass"});
  }
}
