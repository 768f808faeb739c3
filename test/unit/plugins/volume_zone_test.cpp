// VolumeZone: upstream's volume_zone_test.go (TestSingleZone,
// TestMultiZone, TestWithBinding), case by case under its case names, then
// the default profile's messages.
#include "../builders.hpp"
#include "../profile_fixtures.hpp"
#include "../storage_fixture.hpp"
#include "filter_verdict.hpp"
#include "toysched/sched/algorithm.hpp"
#include "toysched/sched/explain.hpp"
#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/registry.hpp"

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

namespace {

constexpr const char* kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kRegion = "topology.kubernetes.io/region";
constexpr const char* kConflict = "UnschedulableAndUnresolvable: node(s) had no available volume zone";

// upstream's createPodWithVolume.
kube::Pod pod_with_volume(std::string claim) { return make_pod().name("pod_1").claim(std::move(claim)); }

NodeInfo host(kube::StringPairs labels) {
  NodeInfo ni = make_node().name("host1").info();
  ni.node.labels = std::move(labels);
  return ni;
}

// PreFilter, then Filter (upstream's tables check both, Filter even after
// a PreFilter that did not succeed; we stop there).
std::string verdict(const kube::Pod& pod, const NodeInfo& ni, const Storage& s) {
  return test::filter_verdict(PluginId::volume_zone, pod, ni, &s);
}

// upstream's PVC_NAME → VOL_NAME listers: claims naming a volume (no
// bind-completed annotation, as upstream's table has none).
void add_claims(Storage& s, std::initializer_list<std::pair<const char*, const char*>> claim_to_volume) {
  for (const auto& [c, v] : claim_to_volume) s.add_claim(c).volume_name = v;
}

}  // namespace

TEST_CASE("TestSingleZone") {
  Storage s;
  s.add_labelled_volume("Vol_1", {{kBetaZone, "us-west1-a"}});
  s.add_labelled_volume("Vol_2", {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}});
  s.add_labelled_volume("Vol_3", {{kBetaRegion, "us-west1"}});
  s.add_labelled_volume("Vol_Stable_1", {{kZone, "us-west1-a"}});
  s.add_labelled_volume("Vol_Stable_2", {{kRegion, "us-west1"}, {"uselessLabel", "none"}});
  s.add_labelled_volume("Vol_Stable_3", {{kZone, "us-west1-a"}, {kRegion, "us-west1-a"}});
  add_claims(s, {{"PVC_1", "Vol_1"},
                 {"PVC_2", "Vol_2"},
                 {"PVC_3", "Vol_3"},
                 {"PVC_4", "Vol_not_exist"},
                 {"PVC_Stable_1", "Vol_Stable_1"},
                 {"PVC_Stable_2", "Vol_Stable_2"},
                 {"PVC_Stable_3", "Vol_Stable_3"}});
  const kube::StringPairs useless = {{"uselessLabel", "none"}};
  auto with = [&](const char* key, const char* value) {
    kube::StringPairs l = {{key, value}};
    l.insert(l.end(), useless.begin(), useless.end());
    return host(l);
  };

  CHECK(verdict(make_pod().name("pod_1"), host({{kBetaZone, "us-west1-a"}}), s) == "skip");  // pod without volume
  CHECK(verdict(pod_with_volume("PVC_1"), host({}), s) == "pass");                           // node without labels
  CHECK(verdict(pod_with_volume("PVC_1"), with(kBetaZone, "us-west1-a"), s) == "pass");      // beta zone label matched
  CHECK(verdict(pod_with_volume("PVC_2"), with(kBetaRegion, "us-west1"), s) == "pass");  // beta region label matched
  CHECK(verdict(pod_with_volume("PVC_2"), with(kBetaRegion, "no_us-west1"), s) ==
        kConflict);  // beta region label doesn't match
  CHECK(verdict(pod_with_volume("PVC_1"), with(kBetaZone, "no_us-west1-a"), s) ==
        kConflict);  // beta zone label doesn't match
  CHECK(verdict(pod_with_volume("PVC_Stable_1"), with(kZone, "us-west1-a"), s) == "pass");  // zone label matched
  CHECK(verdict(pod_with_volume("PVC_Stable_2"), with(kRegion, "us-west1"), s) == "pass");  // region label matched
  CHECK(verdict(pod_with_volume("PVC_Stable_2"), with(kRegion, "no_us-west1"), s) ==
        kConflict);  // region label doesn't match
  CHECK(verdict(pod_with_volume("PVC_Stable_1"), with(kZone, "no_us-west1-a"), s) ==
        kConflict);  // zone label doesn't match
  CHECK(verdict(pod_with_volume("PVC_Stable_3"), host({{kZone, "us-west1-a"}}), s) ==
        kConflict);  // pv with zone and region, node with only zone
  CHECK(verdict(pod_with_volume("PVC_Stable_1"), host({{kBetaZone, "us-west1-a"}}), s) ==
        kConflict);  // pv with zone,node with beta zone
  CHECK(verdict(pod_with_volume("PVC_1"), host({{kZone, "us-west1-a"}}), s) ==
        "pass");  // pv with beta label,node with ga label, matched
  CHECK(verdict(pod_with_volume("PVC_1"), host({{kZone, "us-west1-b"}}), s) ==
        kConflict);  // pv with beta label,node with ga label, don't match
}

TEST_CASE("TestMultiZone") {
  Storage s;
  s.add_labelled_volume("Vol_1", {{kBetaZone, "us-west1-a"}});
  s.add_labelled_volume("Vol_2", {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}});
  s.add_labelled_volume("Vol_3", {{kBetaZone, "us-west1-c__us-west1-a"}});
  s.add_labelled_volume("Vol_Stable_1", {{kZone, "us-west1-a"}});
  s.add_labelled_volume("Vol_Stable_2", {{kZone, "us-west1-c__us-west1-a"}});
  add_claims(s, {{"PVC_1", "Vol_1"},
                 {"PVC_2", "Vol_2"},
                 {"PVC_3", "Vol_3"},
                 {"PVC_4", "Vol_not_exist"},
                 {"PVC_Stable_1", "Vol_Stable_1"},
                 {"PVC_Stable_2", "Vol_Stable_2"}});

  CHECK(verdict(pod_with_volume("PVC_3"), host({}), s) == "pass");  // node without labels
  CHECK(verdict(pod_with_volume("PVC_3"), host({{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}), s) ==
        "pass");  // beta zone label matched
  CHECK(verdict(pod_with_volume("PVC_1"), host({{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}), s) ==
        kConflict);  // beta zone label doesn't match
  CHECK(verdict(pod_with_volume("PVC_Stable_2"), host({{kZone, "us-west1-a"}, {"uselessLabel", "none"}}), s) ==
        "pass");  // zone label matched
  CHECK(verdict(pod_with_volume("PVC_Stable_1"), host({{kZone, "us-west1-b"}, {"uselessLabel", "none"}}), s) ==
        kConflict);  // zone label doesn't match
}

TEST_CASE("TestWithBinding") {
  Storage s;
  s.add_class("Class_Immediate", false);
  s.add_class("Class_Wait", true);
  s.add_labelled_volume("Vol_1", {{kBetaZone, "us-west1-a"}});
  add_claims(s, {{"PVC_1", "Vol_1"}});
  s.add_claim("PVC_NoSC").storage_class_name = "Class_0";
  s.add_claim("PVC_EmptySC");
  s.add_claim("PVC_WaitSC").storage_class_name = "Class_Wait";
  s.add_claim("PVC_ImmediateSC").storage_class_name = "Class_Immediate";
  const NodeInfo test_node = host({{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}});

  CHECK(verdict(pod_with_volume("PVC_1"), test_node, s) == "pass");  // label zone failure domain matched
  CHECK(verdict(pod_with_volume("PVC_EmptySC"), test_node, s) ==
        "prefilter: PersistentVolumeClaim had no pv name and storageClass name");  // unbound volume empty storage class
  // unbound volume no storage class: the real lister's NotFound (upstream's
  // table uses a fake lister, which names the resource in the plural)
  CHECK(verdict(pod_with_volume("PVC_NoSC"), test_node, s) ==
        "prefilter: storageclass.storage.k8s.io \"Class_0\" not found");
  // unbound volume immediate binding mode: upstream's table leaves the mode
  // unset ("VolumeBindingMode not set"), which the API server never does: it
  // defaults to Immediate.
  CHECK(verdict(pod_with_volume("PVC_ImmediateSC"), test_node, s) == "prefilter: PersistentVolume had no name");
  CHECK(verdict(pod_with_volume("PVC_WaitSC"), test_node, s) == "skip");  // unbound volume wait binding mode
}

TEST_CASE("VolumeZone: claims and volumes that do not exist, labels that do not parse") {
  Storage s;
  s.add_claim("gone-volume", "Vol_not_exist");
  s.add_labelled_volume("Vol_bad", {{kZone, "a____b"}, {kRegion, "r"}});
  s.add_claim("bad-label", "Vol_bad");
  s.add_labelled_volume("Vol_plain", {{"uselessLabel", "none"}});
  s.add_claim("plain", "Vol_plain");
  const NodeInfo node = host({{kZone, "z"}, {kRegion, "r"}});

  CHECK(verdict(pod_with_volume("nope"), node, s) == "prefilter: persistentvolumeclaim \"nope\" not found");
  CHECK(verdict(pod_with_volume("gone-volume"), node, s) == "prefilter: persistentvolume \"Vol_not_exist\" not found");
  // "a____b" has an empty zone between its delimiters: that label is
  // ignored, the region still counts.
  CHECK(verdict(pod_with_volume("bad-label"), node, s) == "pass");
  CHECK(verdict(pod_with_volume("bad-label"), host({{kZone, "z"}, {kRegion, "q"}}), s) == kConflict);
  // No topology label on the volume: nothing to check.
  CHECK(verdict(pod_with_volume("plain"), node, s) == "skip");
  // Two volumes: every one of their labels must match.
  s.add_labelled_volume("Vol_z", {{kZone, "z"}});
  s.add_labelled_volume("Vol_y", {{kZone, "y"}});
  s.add_claim("z", "Vol_z");
  s.add_claim("y", "Vol_y");
  CHECK(verdict(make_pod().name("pod_1").claim("z").claim("y"), node, s) == kConflict);
  CHECK(verdict(make_pod().name("pod_1").claim("z").claim("plain"), node, s) == "pass");
}

TEST_CASE("the default profile: zones decide, and a missing volume is VolumeZone's to report") {
  Storage s;
  s.add_labelled_volume("pv", {{kZone, "zone-1"}});
  s.add_claim("data", "pv");
  std::vector<NodeInfo> nodes = {make_node().name("n1").label(kZone, "zone-0").info(),
                                 make_node().name("n2").label(kZone, "zone-1").info(),
                                 make_node().name("n3").label(kZone, "zone-1").info()};
  const auto ptrs = test::node_ptrs(nodes);
  sched::Cluster cluster(ptrs);
  cluster.objects = &s;
  std::mt19937_64 rng(1);
  sched::DecisionTrace trace;
  const sched::Decision d = sched::schedule_pod(test::default_profile(), make_pod().name("probe").claim("data"),
                                                cluster, rng, nullptr, nullptr, &trace);
  CHECK(d.status == sched::Decision::Status::scheduled);
  CHECK(d.node != "n1");
  CHECK(d.feasible_nodes == 2);
  REQUIRE(trace.rejected.size() == 1);
  CHECK(trace.rejected[0].plugin == PluginId::volume_zone);
  CHECK(trace.rejected[0].node() == "n1");

  s.volumes["pv"].labels = {{kZone, "zone-9"}};
  const sched::Decision none =
      sched::schedule_pod(test::default_profile(), make_pod().name("probe").claim("data"), cluster, rng);
  CHECK(none.status == sched::Decision::Status::unresolvable);
  CHECK(none.message == "0/3 nodes are available: 3 node(s) had no available volume zone.");

  // A bound claim whose volume is gone: VolumeZone's PreFilter says so,
  // before any node is filtered (VolumeBinding's Filter would reject each).
  s.add_claim("orphan", "pv-gone");
  const sched::Decision orphan =
      sched::schedule_pod(test::default_profile(), make_pod().name("probe").claim("orphan"), cluster, rng);
  CHECK(orphan.status == sched::Decision::Status::unresolvable);
  CHECK(orphan.message == "0/3 nodes are available: persistentvolume \"pv-gone\" not found.");
}
