// VolumeRestrictions: upstream's volume_restrictions_test.go, case by case
// under its test and case names (the disk conflicts of the four in-tree
// kinds, TestAccessModeConflicts), then what its table does not cover:
// AddPod/RemovePod (preemption's what-ifs), namespaces, read-only sharing,
// and the whole default profile's messages.
#include "../builders.hpp"
#include "../profile_fixtures.hpp"
#include "../storage_fixture.hpp"
#include "filter_verdict.hpp"
#include "toysched/kube/decode.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/explain.hpp"
#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/registry.hpp"
#include "toysched/sched/what_if.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace toysched;
using sched::NodeInfo;
using sched::PluginId;
using sched::PreFilterResult;
using test::make_node;
using test::make_pod;
using test::Storage;
using Disk = kube::InlineDisk;

namespace {

constexpr const char* kDiskConflict = "node(s) had no available disk";
constexpr const char* kRwopConflict =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod";

Disk disk(Disk::Kind kind, std::string id, bool read_only = false) {
  Disk d;
  d.kind = kind;
  d.id = std::move(id);
  d.read_only = read_only;
  return d;
}
Disk rbd(std::vector<std::string> monitors, std::string pool, std::string image, bool read_only = false) {
  Disk d = disk(Disk::Kind::rbd, std::move(image), read_only);
  d.monitors = std::move(monitors);
  d.pool = std::move(pool);
  return d;
}

// A node holding `pods`, which must outlive it (NodeInfo keeps pointers).
NodeInfo node_with(const std::vector<kube::Pod>& pods) {
  NodeInfo ni = make_node().name("node-1").info();
  for (const kube::Pod& p : pods) ni.add_pod(p);
  return ni;
}

std::string verdict(const kube::Pod& pod, const NodeInfo& ni, const Storage* storage = nullptr) {
  return test::filter_verdict(PluginId::volume_restrictions, pod, ni, storage);
}

// upstream's Test{GCE,AWS,RBD,ISCSI}DiskConflicts: the same four cases
// for each kind, `same` and `other` being two disks of that kind.
void disk_conflict_cases(const Disk& same, const Disk& other) {
  const std::string conflict = std::string("Unschedulable: ") + kDiskConflict;
  const std::vector<kube::Pod> holding = {make_pod().name("holder").disk(same)};
  SUBCASE("nothing") { CHECK(verdict(make_pod(), node_with({})) == "skip"); }
  SUBCASE("one state") { CHECK(verdict(make_pod(), node_with(holding)) == "skip"); }
  SUBCASE("same state") { CHECK(verdict(make_pod().disk(same), node_with(holding)) == conflict); }
  SUBCASE("different state") { CHECK(verdict(make_pod().disk(other), node_with(holding)) == "pass"); }
}

}  // namespace

TEST_CASE("TestGCEDiskConflicts") {
  disk_conflict_cases(disk(Disk::Kind::gce_pd, "foo"), disk(Disk::Kind::gce_pd, "bar"));
  SUBCASE("pod with a volume that doesn't have restrictions") {
    kube::Decoder d;
    const auto p = d.pod(R"({"metadata":{"name":"p","namespace":"default","uid":"u"},)"
                         R"("spec":{"volumes":[{"name":"volume with no restriction","emptyDir":{}}],)"
                         R"("containers":[{"name":"c"}]}})");
    REQUIRE(p.has_value());
    CHECK(verdict(*p, node_with({})) == "skip");
  }
}

TEST_CASE("TestAWSDiskConflicts") {
  disk_conflict_cases(disk(Disk::Kind::aws_ebs, "foo"), disk(Disk::Kind::aws_ebs, "bar"));
}

TEST_CASE("TestRBDDiskConflicts") { disk_conflict_cases(rbd({"a", "b"}, "foo", "bar"), rbd({"c", "d"}, "foo", "bar")); }

TEST_CASE("TestISCSIDiskConflicts") {
  disk_conflict_cases(disk(Disk::Kind::iscsi, "iqn.2016-12.server:storage.target01"),
                      disk(Disk::Kind::iscsi, "iqn.2017-12.server:storage.target01"));
}

TEST_CASE("disk conflicts: read-only sharing, and kinds that never share") {
  const auto holder = [](Disk d) { return std::vector<kube::Pod>{make_pod().name("holder").disk(std::move(d))}; };
  const std::string conflict = std::string("Unschedulable: ") + kDiskConflict;
  // GCE PD, iSCSI and RBD: shared when every pod mounts it read-only.
  for (auto kind : {Disk::Kind::gce_pd, Disk::Kind::iscsi}) {
    CHECK(verdict(make_pod().disk(disk(kind, "d", true)), node_with(holder(disk(kind, "d", true)))) == "pass");
    CHECK(verdict(make_pod().disk(disk(kind, "d", true)), node_with(holder(disk(kind, "d", false)))) == conflict);
    CHECK(verdict(make_pod().disk(disk(kind, "d", false)), node_with(holder(disk(kind, "d", true)))) == conflict);
  }
  CHECK(verdict(make_pod().disk(rbd({"m"}, "p", "i", true)), node_with(holder(rbd({"m"}, "p", "i", true)))) == "pass");
  CHECK(verdict(make_pod().disk(rbd({"m", "n"}, "p", "i")), node_with(holder(rbd({"n"}, "p", "i")))) == conflict);
  CHECK(verdict(make_pod().disk(rbd({"m"}, "p", "i")), node_with(holder(rbd({"m"}, "q", "i")))) == "pass");
  // EBS: one pod per volume, read-only or not.
  CHECK(verdict(make_pod().disk(disk(Disk::Kind::aws_ebs, "v", true)),
                node_with(holder(disk(Disk::Kind::aws_ebs, "v", true)))) == conflict);
  // The same name in another kind is another disk.
  CHECK(verdict(make_pod().disk(disk(Disk::Kind::gce_pd, "x")), node_with(holder(disk(Disk::Kind::aws_ebs, "x")))) ==
        "pass");
}

TEST_CASE("TestAccessModeConflicts") {
  Storage s;
  s.add_claim("claim-with-rwop-1").read_write_once_pod = true;
  s.add_claim("claim-with-rwop-2").read_write_once_pod = true;
  s.add_claim("claim-with-rwx");
  const kube::Pod pod_with_one_pvc = make_pod().name("pod-with-one-pvc").claim("claim-with-rwop-1").node_name("node-1");
  const kube::Pod pod_with_two_pvcs =
      make_pod().name("pod-with-two-pvcs").claim("claim-with-rwop-1").claim("claim-with-rwop-2").node_name("node-1");
  const kube::Pod pod_with_one_conflict =
      make_pod().name("pod-with-one-conflict").claim("claim-with-rwop-1").node_name("node-1");
  const kube::Pod pod_with_two_conflicts = make_pod()
                                               .name("pod-with-two-conflicts")
                                               .claim("claim-with-rwop-1")
                                               .claim("claim-with-rwop-2")
                                               .node_name("node-1");
  const kube::Pod pod_with_rwx = make_pod().name("pod-with-rwx").claim("claim-with-rwx").node_name("node-1");
  const std::string conflict = std::string("Unschedulable: ") + kRwopConflict;

  SUBCASE("nothing") { CHECK(verdict(make_pod(), node_with({}), &s) == "skip"); }
  SUBCASE("failed to get PVC") {
    const Storage none;
    CHECK(verdict(pod_with_one_pvc, node_with({}), &none) ==
          "prefilter: persistentvolumeclaim \"claim-with-rwop-1\" not found");
  }
  SUBCASE("no access mode conflict") { CHECK(verdict(pod_with_one_pvc, node_with({pod_with_rwx}), &s) == "skip"); }
  SUBCASE("access mode conflict, unschedulable") {
    CHECK(verdict(pod_with_one_conflict, node_with({pod_with_one_pvc, pod_with_rwx}), &s) == conflict);
  }
  SUBCASE("two conflicts, unschedulable") {
    CHECK(verdict(pod_with_two_conflicts, node_with({pod_with_two_pvcs, pod_with_rwx}), &s) == conflict);
  }
}

TEST_CASE("ReadWriteOncePod: in use anywhere in the cluster, in the pod's namespace only") {
  Storage s;
  s.add_claim("data").read_write_once_pod = true;
  const std::vector<kube::Pod> users = {make_pod().name("user").claim("data")};
  const kube::Pod probe = make_pod().name("probe").claim("data");
  const NodeInfo with_user = node_with(users);
  NodeInfo empty = make_node().name("node-2").info();
  const NodeInfo* both[] = {&with_user, &empty};
  sched::Cluster cluster{std::span<const NodeInfo* const>(both)};
  cluster.objects = &s;
  test::FilterVerdict v(PluginId::volume_restrictions);
  REQUIRE(v.pre_filter(probe, cluster) == "run");
  // Every node is rejected, the user's and the empty one alike.
  CHECK(v.filter(probe, empty) == std::string("Unschedulable: ") + kRwopConflict);
  CHECK(v.filter(probe, with_user) == std::string("Unschedulable: ") + kRwopConflict);

  SUBCASE("a claim of the same name in another namespace is another claim") {
    kube::Pod elsewhere = probe;
    elsewhere.ns = "other";
    Storage other_ns;
    other_ns.add_claim("data").read_write_once_pod = true;
    other_ns.claims["other/data"] = other_ns.claims["default/data"];
    other_ns.claims["other/data"].ns = "other";
    cluster.objects = &other_ns;
    CHECK(v.pre_filter(elsewhere, cluster) == "skip");
  }
  SUBCASE("a claim that is not ReadWriteOncePod may be shared") {
    s.claims["default/data"].read_write_once_pod = false;
    CHECK(v.pre_filter(probe, cluster) == "skip");
  }
}

TEST_CASE("ReadWriteOncePod: AddPod/RemovePod move the count, as preemption's what-ifs need") {
  Storage s;
  s.add_claim("data").read_write_once_pod = true;
  const std::vector<kube::Pod> pods = {make_pod().name("user").claim("data").node_name("node-1"),
                                       make_pod().name("bystander").node_name("node-1")};
  const kube::Pod& user = pods[0];
  const kube::Pod& bystander = pods[1];
  const kube::Pod probe = make_pod().name("probe").claim("data");
  const NodeInfo node = node_with(pods);
  const NodeInfo* one[] = {&node};
  sched::Cluster cluster{std::span<const NodeInfo* const>(one)};
  cluster.objects = &s;
  test::FilterVerdict v(PluginId::volume_restrictions);
  REQUIRE(v.pre_filter(probe, cluster) == "run");
  sched::Plugin* const filters[] = {v.plugin.get()};
  {
    sched::NodeWhatIf without(filters, probe, node);
    without.remove(bystander);
    CHECK_FALSE(without.filter().ok());  // the claim's user is still there
    without.remove(user);
    CHECK(without.filter().ok());  // gone: the claim is free
  }
  // The what-if ended: its edits are undone.
  CHECK(v.filter(probe, node) == std::string("Unschedulable: ") + kRwopConflict);
}

namespace {

sched::Decision decide(const kube::Pod& pod, const std::vector<NodeInfo>& nodes, const Storage& s) {
  const auto ptrs = test::node_ptrs(nodes);
  sched::Cluster cluster(ptrs);
  cluster.objects = &s;
  std::mt19937_64 rng(1);
  return sched::schedule_pod(test::default_profile(), pod, cluster, rng);
}

}  // namespace

TEST_CASE("the default profile: upstream's messages, and who says a claim is missing") {
  Storage s;
  s.add_claim("data", "pv").read_write_once_pod = true;
  s.add_volume("pv", {}).has_node_affinity = false;
  const kube::Pod user = make_pod().name("user").claim("data").node_name("n1");
  std::vector<NodeInfo> nodes = {make_node().name("n1").info(), make_node().name("n2").info()};
  nodes[0].add_pod(user);

  const sched::Decision d = decide(make_pod().name("probe").claim("data"), nodes, s);
  CHECK(d.status == sched::Decision::Status::unschedulable);
  CHECK(d.message == std::string("0/2 nodes are available: 2 ") + kRwopConflict + ".");

  // The profile's first PreFilter to look claims up is VolumeRestrictions'.
  sched::DecisionTrace trace;
  const auto ptrs = test::node_ptrs(nodes);
  sched::Cluster cluster(ptrs);
  cluster.objects = &s;
  std::mt19937_64 rng(1);
  const sched::Decision missing = sched::schedule_pod(test::default_profile(), make_pod().name("probe").claim("nope"),
                                                      cluster, rng, nullptr, nullptr, &trace);
  CHECK(missing.status == sched::Decision::Status::unresolvable);
  CHECK(missing.message == "0/2 nodes are available: persistentvolumeclaim \"nope\" not found.");
  CHECK(trace.pre_filter_rejected_by == PluginId::volume_restrictions);
}
