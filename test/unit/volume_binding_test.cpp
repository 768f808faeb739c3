// VolumeBinding, for bound and immediate claims: through the default
// profile's schedule_pod, so the messages are checked whole, as
// kube-scheduler's FailedScheduling events print them (the texts follow
// upstream's volumebinding plugin: volume_binding.go, binder.go).
#include "builders.hpp"
#include "profile_fixtures.hpp"
#include "storage_fixture.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace toysched;
using sched::Decision;
using sched::NodeInfo;
using test::make_node;
using test::make_pod;
using test::Storage;
using test::term;

namespace {

const std::vector<NodeInfo>& three_nodes() {
  static const std::vector<NodeInfo> nodes = {
      make_node().name("n1").info(),
      make_node().name("n2").info(),
      make_node().name("n3").info(),
  };
  return nodes;
}

Decision run(const kube::Pod& pod, const Storage& storage) {
  const auto ptrs = test::node_ptrs(three_nodes());
  sched::Cluster cluster(ptrs);
  cluster.objects = &storage;
  std::mt19937_64 rng(1);
  return sched::schedule_pod(test::default_profile(), pod, cluster, rng);
}

kube::Pod with_claims(std::vector<std::string> claims) {
  kube::Pod p = make_pod().ns("default").name("p");
  p.claims = std::move(claims);
  return p;
}

}  // namespace

TEST_CASE("VolumeBinding: a bound volume's node affinity decides the node") {
  Storage s;
  s.add_claim("data", "pv-1");
  s.add_volume("pv-1", {term().expr("kubernetes.io/hostname", "In", {"n2", "gone-1", "gone-2"})});
  const Decision d = run(with_claims({"data"}), s);
  REQUIRE(d.status == Decision::Status::scheduled);
  CHECK(d.node == "n2");
  CHECK(d.feasible_nodes == 1);

  SUBCASE("no node matches: unresolvable, upstream's reason") {
    s.volumes["pv-1"].node_affinity = {term().expr("kubernetes.io/hostname", "In", {"gone"})};
    const Decision no = run(with_claims({"data"}), s);
    CHECK(no.status == Decision::Status::unresolvable);
    CHECK(no.message == "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity.");
  }
  SUBCASE("required with no terms matches no node (MatchNodeSelectorTerms)") {
    s.volumes["pv-1"].node_affinity.clear();
    CHECK(run(with_claims({"data"}), s).status == Decision::Status::unresolvable);
  }
  SUBCASE("every bound volume must match: two volumes, disjoint nodes") {
    s.add_claim("logs", "pv-2");
    s.add_volume("pv-2", {term().expr("kubernetes.io/hostname", "In", {"n3"})});
    CHECK(run(with_claims({"data", "logs"}), s).status == Decision::Status::unresolvable);
  }
  SUBCASE("a volume with no node affinity admits every node") {
    s.volumes["pv-1"].has_node_affinity = false;
    s.volumes["pv-1"].node_affinity.clear();
    const Decision any = run(with_claims({"data"}), s);
    CHECK(any.status == Decision::Status::scheduled);
    CHECK(any.feasible_nodes == 3);
  }
}

TEST_CASE("VolumeBinding: claims that no node can help") {
  Storage s;
  SUBCASE("a claim that does not exist") {
    const Decision d = run(with_claims({"nope"}), s);
    CHECK(d.status == Decision::Status::unresolvable);
    CHECK(d.message == "0/3 nodes are available: persistentvolumeclaim \"nope\" not found.");
  }
  SUBCASE("a claim being deleted") {
    s.add_claim("data", "pv-1").deleting = true;
    CHECK(run(with_claims({"data"}), s).message ==
          "0/3 nodes are available: persistentvolumeclaim \"data\" is being deleted.");
  }
  SUBCASE("a claim bound to a volume that does not exist") {
    s.add_claim("data", "pv-gone");
    // VolumeZone's PreFilter, which runs before any Filter, says so first,
    // as upstream's does.
    CHECK(run(with_claims({"data"}), s).message == "0/3 nodes are available: persistentvolume \"pv-gone\" not found.");
    // Without VolumeZone, VolumeBinding's Filter rejects every node.
    auto plugin = sched::registry_entry(sched::PluginId::volume_binding).make({});
    const auto ptrs = test::node_ptrs(three_nodes());
    sched::Cluster cluster(ptrs);
    cluster.objects = &s;
    REQUIRE(plugin->pre_filter(with_claims({"data"}), cluster).kind == sched::PreFilterResult::Kind::run);
    sched::Plugin* const list[] = {plugin.get()};
    const sched::FilterStatus st = sched::filter_one(list, with_claims({"data"}), three_nodes()[0]);
    CHECK(st.reason_strings(with_claims({"data"})) ==
          std::vector<std::string>{"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"});
  }
  SUBCASE("unbound, no class (binds at once): wait for the volume controller") {
    s.add_claim("data");
    CHECK(run(with_claims({"data"}), s).message ==
          "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  }
  SUBCASE("named but not yet marked bind-completed: still unbound") {
    s.add_claim("data", "pv-1").bind_completed = false;
    s.add_volume("pv-1", {});
    CHECK(run(with_claims({"data"}), s).message ==
          "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  }
  SUBCASE("unbound, of a WaitForFirstConsumer class with no volume and no provisioner") {
    s.add_claim("data").storage_class_name = "local";
    s.add_class("local", true);
    CHECK(run(with_claims({"data"}), s).message ==
          "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind.");
    s.classes["local"].wait_for_first_consumer = false;  // Immediate: the controller's to bind
    CHECK(run(with_claims({"data"}), s).message ==
          "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.");
  }
}

TEST_CASE("VolumeBinding: a pod without claims is not its business") {
  const Storage s;
  const Decision d = run(make_pod().ns("default").name("p"), s);
  CHECK(d.status == Decision::Status::scheduled);
  CHECK(d.feasible_nodes == 3);
}
