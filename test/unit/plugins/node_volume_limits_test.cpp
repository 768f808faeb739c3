// NodeVolumeLimits: upstream's csi_test.go TestCSILimits, case by case
// under its case names (those without CSI migration, and with the pending
// pod's volumes as claims and ephemeral volumes), then the default
// profile's message.
#include "../builders.hpp"
#include "../storage_fixture.hpp"
#include "filter_verdict.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace toysched;
using sched::NodeInfo;
using sched::PluginId;
using test::make_node;
using test::make_pod;
using test::Storage;

namespace {

constexpr const char* kEbs = "ebs.csi.aws.com";
constexpr const char* kGce = "pd.csi.storage.gke.io";
constexpr const char* kNode = "node-for-max-pd-test-1";

enum class Limits { csinode, csinode_with_no_limit, none };

// upstream's fixtures: for each driver four CSI volumes "csi-DRIVER-J" and
// their claims; claim csi-4 unbound of class csi-sc, csi-5 unbound with no
// class, csi-6 of class csi-sc bound to a volume that does not exist; the
// class's provisioner is the first driver; `va_count` VolumeAttachments per
// driver on the node, of volumes csi-DRIVER-0, 1…; the node's CSINode.
Storage fixtures(std::vector<std::string> drivers, Limits limits, std::int64_t max_vols, int va_count = 0) {
  Storage s;
  for (const std::string& d : drivers) {
    for (int j = 0; j < 4; ++j) {
      const std::string name = "csi-" + d + "-" + std::to_string(j);
      kube::PersistentVolume& pv = s.volumes[name];
      pv.name = name;
      pv.csi_driver = d;
      pv.csi_volume_handle = name;
      s.add_claim(name).volume_name = name;
    }
    for (int j = 0; j < va_count; ++j) {
      kube::VolumeAttachment va;
      va.name = "va-" + d + "-" + std::to_string(j);
      va.node_name = kNode;
      va.attacher = d;
      va.persistent_volume_name = "csi-" + d + "-" + std::to_string(j);
      s.attachments_by_node[kNode].push_back(va);
    }
  }
  s.add_claim("csi-4").storage_class_name = "csi-sc";
  s.add_claim("csi-5");
  kube::PersistentVolumeClaim& missing_pv = s.add_claim("csi-6", "missing-in-action");
  missing_pv.storage_class_name = "csi-sc";
  s.add_class("csi-sc", false).provisioner = drivers.front();
  if (limits != Limits::none) {
    kube::CSINode& n = s.csi_nodes[kNode];
    n.name = kNode;
    for (const std::string& d : drivers)
      n.drivers.push_back({d, limits == Limits::csinode ? std::optional<std::int64_t>(max_vols) : std::nullopt});
  }
  return s;
}

kube::Pod pod_with(std::vector<std::string> claims, std::string name = "p") {
  kube::Pod p = make_pod().name(std::move(name));
  p.claims = std::move(claims);
  return p;
}

// On the node of upstream's tables, holding `existing`.
std::string verdict(const kube::Pod& pod, const std::vector<kube::Pod>& existing, const Storage& s) {
  NodeInfo ni = make_node().name(kNode).info();
  for (const kube::Pod& p : existing) ni.add_pod(p);
  return test::filter_verdict(PluginId::node_volume_limits, pod, ni, &s);
}

const std::string kExceeded = "Unschedulable: node(s) exceed max volume count";

}  // namespace

TEST_CASE("TestCSILimits") {
  const std::string ebs = kEbs, gce = kGce;
  const kube::Pod running = pod_with({"csi-" + ebs + "-3"}, "running");
  const kube::Pod pending_volume = pod_with({"csi-4"}, "pending");
  const kube::Pod unbound_pvc_2 = pod_with({"csi-4"}, "pending2");  // another pod, the same unbound claim
  const kube::Pod missing_pv = pod_with({"csi-6"}, "missing-pv");
  const kube::Pod no_sc = pod_with({"csi-5"}, "no-sc");
  const kube::Pod gce_two = pod_with({"csi-" + gce + "-1", "csi-" + gce + "-2"}, "gce-two");
  const kube::Pod ebs_one = pod_with({"csi-" + ebs + "-0"}, "ebs-one");
  const kube::Pod ebs_two = pod_with({"csi-" + ebs + "-1", "csi-" + ebs + "-2"}, "ebs-two");

  SUBCASE("should count VolumeAttachments towards volume limit when no pods exist") {
    CHECK(verdict(ebs_one, {}, fixtures({ebs}, Limits::csinode, 2, 2)) == kExceeded);
  }
  SUBCASE("should schedule pod when VolumeAttachments count does not exceed limit") {
    CHECK(verdict(ebs_one, {}, fixtures({ebs}, Limits::csinode, 2, 1)) == "pass");
  }
  SUBCASE("fits when node volume limit >= new pods CSI volume") {
    CHECK(verdict(ebs_one, {running, ebs_two}, fixtures({ebs}, Limits::csinode, 4)) == "pass");
  }
  SUBCASE("doesn't when node volume limit <= pods CSI volume") {
    CHECK(verdict(ebs_one, {running, ebs_two}, fixtures({ebs}, Limits::csinode, 2)) == kExceeded);
  }
  SUBCASE("should when driver does not support volume limits") {
    CHECK(verdict(ebs_one, {running, ebs_two}, fixtures({ebs}, Limits::csinode_with_no_limit, 2)) == "pass");
  }
  SUBCASE("count pending PVCs towards volume limit <= pods CSI volume") {
    CHECK(verdict(ebs_one, {pending_volume, ebs_two}, fixtures({ebs}, Limits::csinode, 2)) == kExceeded);
  }
  SUBCASE("count multiple pending pvcs towards volume limit >= pods CSI volume") {
    CHECK(verdict(ebs_one, {pending_volume, unbound_pvc_2, ebs_two}, fixtures({ebs}, Limits::csinode, 4)) == "pass");
  }
  SUBCASE("should count PVCs with invalid PV name but valid SC") {
    CHECK(verdict(ebs_one, {missing_pv, ebs_two}, fixtures({ebs}, Limits::csinode, 2)) == kExceeded);
  }
  SUBCASE("don't count pvcs with missing SC towards volume limit") {
    CHECK(verdict(ebs_one, {running, no_sc}, fixtures({ebs}, Limits::csinode, 2)) == "pass");
  }
  SUBCASE("count pvcs with the same type towards volume limit") {
    CHECK(verdict(ebs_one, {gce_two, ebs_two}, fixtures({ebs, gce}, Limits::csinode, 2)) == kExceeded);
  }
  SUBCASE("don't count pvcs with different type towards volume limit") {
    CHECK(verdict(gce_two, {ebs_two, running}, fixtures({ebs, gce}, Limits::csinode, 2)) == "pass");
  }
  SUBCASE("nil csi node") { CHECK(verdict(ebs_one, {running, ebs_two}, fixtures({ebs}, Limits::none, 2)) == "pass"); }
}

TEST_CASE("TestCSILimits: placed pods' ephemeral volumes") {
  // upstream's ephemeralVolumePod (volume "xyz") and ephemeralTwoVolumePod
  // ("x", "y"), both named "abc", placed; their claims "abc-…" unbound, of
  // class csi-sc, so counted under its provisioner.
  const std::string ebs = kEbs;
  const kube::Pod running = pod_with({"csi-" + ebs + "-3"}, "running");
  const kube::Pod ebs_one = pod_with({"csi-" + ebs + "-0"}, "ebs-one");
  const kube::Pod ebs_two = pod_with({"csi-" + ebs + "-1", "csi-" + ebs + "-2"}, "ebs-two");
  kube::Pod ephemeral = pod_with({}, "abc");
  ephemeral.ephemeral_volumes = {"xyz"};
  kube::Pod ephemeral_two = pod_with({}, "abc");
  ephemeral_two.ephemeral_volumes = {"x", "y"};
  const auto with_claims = [](Storage s, std::vector<std::string> names) {
    for (const auto& n : names) s.add_claim(n).storage_class_name = "csi-sc";
    return s;
  };
  SUBCASE("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume") {
    const Storage s = with_claims(fixtures({ebs}, Limits::csinode, 2), {"abc-x", "abc-y"});
    CHECK(verdict(ebs_one, {running, ephemeral_two}, s) == kExceeded);
  }
  SUBCASE("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume") {
    const Storage s = with_claims(fixtures({ebs}, Limits::csinode, 3), {"abc-xyz"});
    CHECK(verdict(ebs_one, {running, ephemeral, ebs_two}, s) == kExceeded);
  }
  SUBCASE("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume") {
    const Storage s = with_claims(fixtures({ebs}, Limits::csinode, 5), {"abc-xyz"});
    CHECK(verdict(ebs_one, {running, ephemeral, ebs_two}, s) == "pass");
  }
}

TEST_CASE("TestCSILimits: a pending pod's ephemeral volume") {
  // upstream's ephemeralVolumePod "abc" in its "new pod" cases: the claim
  // "abc-xyz" must exist and be the pod's own.
  kube::Pod pod = pod_with({}, "abc");
  pod.uid = "abc-uid";
  pod.ephemeral_volumes = {"xyz"};
  const kube::Pod running = pod_with({std::string("csi-") + kEbs + "-3"}, "running");
  Storage s = fixtures({kEbs}, Limits::csinode, 1);
  SUBCASE("ephemeral volume missing") {
    CHECK(verdict(pod, {}, s) ==
          "prefilter: looking up PVC default/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found");
  }
  SUBCASE("ephemeral volume not owned") {
    s.add_claim("abc-xyz").storage_class_name = "csi-sc";
    CHECK(verdict(pod, {}, s) ==
          "prefilter: PVC default/abc-xyz was not created for pod default/abc (pod is not owner)");
  }
  SUBCASE("ephemeral volume unbound, and room for it") {
    kube::PersistentVolumeClaim& c = s.add_claim("abc-xyz");
    c.storage_class_name = "csi-sc";
    c.controller_uid = "abc-uid";
    CHECK(verdict(pod, {}, s) == "pass");
    SUBCASE("ephemeral doesn't when node volume limit <= pods CSI volume") {
      CHECK(verdict(pod, {running}, s) == kExceeded);
    }
  }
}

TEST_CASE("TestCSILimits: PreFilter") {
  const Storage s = fixtures({kEbs}, Limits::csinode, 2);
  SUBCASE("skip Filter when the pod only uses secrets and configmaps") {
    CHECK(verdict(make_pod().name("cm"), {}, s) == "skip");
  }
  SUBCASE("don't skip Filter when the pod has pvcs") {
    CHECK(verdict(pod_with({std::string("csi-") + kEbs + "-0"}), {}, s) == "pass");
  }
  // upstream rejects every node in Filter with this text
  // (UnschedulableAndUnresolvable); VolumeBinding's PreFilter rejects such
  // a pod first in the default profile.
  SUBCASE("a claim that does not exist") {
    CHECK(verdict(pod_with({"nope"}), {}, s) ==
          "prefilter: looking up PVC default/nope: persistentvolumeclaim \"nope\" not found");
  }
}

TEST_CASE("NodeVolumeLimits: a volume several placed pods share counts once; a raised limit lets the pod in") {
  const std::string ebs = kEbs;
  const kube::Pod a = pod_with({"csi-" + ebs + "-1"}, "a");
  const kube::Pod b = pod_with({"csi-" + ebs + "-1"}, "b");  // the same volume
  const kube::Pod incoming = pod_with({"csi-" + ebs + "-0"}, "in");
  CHECK(verdict(incoming, {a, b}, fixtures({ebs}, Limits::csinode, 2)) == "pass");
  CHECK(verdict(incoming, {a, b}, fixtures({ebs}, Limits::csinode, 1)) == kExceeded);
  // The pod's own volume already in use on the node is not new there.
  const kube::Pod again = pod_with({"csi-" + ebs + "-1"}, "again");
  CHECK(verdict(again, {a, b}, fixtures({ebs}, Limits::csinode, 1)) == "pass");
}
