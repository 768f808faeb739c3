// Filters: each one passing and failing with upstream's exact reason, the
// matching tables (tolerations, node affinity, host ports), and NodeInfo's
// bookkeeping. Expected values come from kube-scheduler's plugins and
// component-helpers' matching rules (see plugins.hpp).
#include "builders.hpp"
#include "fit_fixtures.hpp"
#include "profile_fixtures.hpp"
#include "toysched/sched/node_info.hpp"
#include "toysched/sched/plugins.hpp"
#include "toysched/sched/profile.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace toysched;
using sched::Code;
using sched::NodeInfo;
using sched::PluginId;
using test::make_node;
using test::make_pod;
using test::term;
using Strings = std::vector<std::string>;

namespace {

Strings reasons(const kube::Pod& pod, const sched::FilterStatus& s) { return s.reason_strings(pod); }

}  // namespace

TEST_CASE("NodeName: only a set spec.nodeName can reject") {
  const NodeInfo n1 = make_node().name("n1").info();
  CHECK(sched::filter_node_name(make_pod(), n1).ok());
  CHECK(sched::filter_node_name(make_pod().node_name("n1"), n1).ok());
  const kube::Pod other = make_pod().node_name("n2");
  const auto s = sched::filter_node_name(other, n1);
  CHECK(s.code == Code::unresolvable);
  CHECK(s.plugin == PluginId::node_name);
  CHECK(reasons(other, s) == Strings{"node(s) didn't match the requested node name"});
}

TEST_CASE("NodeUnschedulable: cordoned nodes reject unless the pod tolerates the cordon taint") {
  const NodeInfo open = make_node().info();
  const NodeInfo cordoned = make_node().unschedulable().info();
  const kube::Pod pod = make_pod();
  CHECK(sched::filter_node_unschedulable(pod, open).ok());
  const auto s = sched::filter_node_unschedulable(pod, cordoned);
  CHECK(s.code == Code::unresolvable);
  CHECK(reasons(pod, s) == Strings{"node(s) were unschedulable"});

  CHECK(sched::filter_node_unschedulable(
            make_pod().toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"), cordoned)
            .ok());
  CHECK(sched::filter_node_unschedulable(make_pod().toleration("", "Exists", ""), cordoned).ok());
  // A toleration for another effect does not cover the NoSchedule cordon.
  CHECK_FALSE(sched::filter_node_unschedulable(
                  make_pod().toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"), cordoned)
                  .ok());
}

TEST_CASE("NodeResourcesFit: pods, cpu, memory, ephemeral storage, extended") {
  NodeInfo ni =
      make_node().cpu("2").memory("4Gi").ephemeral_storage("10Gi").pods(3).extended("example.com/gpu", "2").info();
  ni.add_pod(make_pod().name("a").cpu("1500m").memory("3Gi").extended("example.com/gpu", "1"));

  SUBCASE("fits") {
    CHECK(sched::filter_node_resources_fit(make_pod().cpu("500m").memory("1Gi"), ni).ok());
    CHECK(sched::filter_node_resources_fit(make_pod().extended("example.com/gpu", "1"), ni).ok());
  }
  SUBCASE("exactly the remaining amount fits, one more unit does not") {
    CHECK(sched::filter_node_resources_fit(make_pod().cpu("500m"), ni).ok());
    const kube::Pod p = make_pod().cpu("501m");
    CHECK(reasons(p, sched::filter_node_resources_fit(p, ni)) == Strings{"Insufficient cpu"});
  }
  SUBCASE("several reasons at once, in upstream's order") {
    const kube::Pod p = make_pod().cpu("1").memory("2Gi").ephemeral_storage("11Gi").extended("example.com/gpu", "2");
    const auto s = sched::filter_node_resources_fit(p, ni);
    // 11Gi of ephemeral storage is more than the node has at all.
    CHECK(s.code == Code::unresolvable);
    CHECK(s.plugin == PluginId::node_resources_fit);
    CHECK(reasons(p, s) == Strings{"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                                   "Insufficient example.com/gpu"});
  }
  SUBCASE("an extended resource the node does not have at all") {
    const kube::Pod p = make_pod().extended("example.com/fpga", "1");
    CHECK(reasons(p, sched::filter_node_resources_fit(p, ni)) == Strings{"Insufficient example.com/fpga"});
  }
  SUBCASE("too many pods, with or without requests") {
    ni.add_pod(make_pod().name("b"));
    ni.add_pod(make_pod().name("c"));
    const kube::Pod empty = make_pod();
    CHECK(reasons(empty, sched::filter_node_resources_fit(empty, ni)) == Strings{"Too many pods"});
    const kube::Pod big = make_pod().cpu("1");
    CHECK(reasons(big, sched::filter_node_resources_fit(big, ni)) == Strings{"Too many pods", "Insufficient cpu"});
  }
  SUBCASE("a pod asking for nothing gets only the pod-count check") {
    NodeInfo full = make_node().cpu("1").memory("1Gi").info();
    full.add_pod(make_pod().cpu("2").memory("2Gi"));  // already overcommitted
    CHECK(sched::filter_node_resources_fit(make_pod(), full).ok());
  }
}

// fit_test.go TestEnoughRequests, the cases whose status (code and
// reasons) this filter decides, on its node (fit_fixtures.hpp) with one pod.
// Upstream's pods are built from containers; here each is its effective
// request (containers summed, init containers maxed, overhead added:
// decode_pod.cpp's business, tested in decode_test.cpp).
namespace {
struct EnoughRequestsCase {
  const char* name;
  kube::Pod pod, existing;
  Code code;
  Strings reasons;
};

std::vector<EnoughRequestsCase> enough_requests_cases() {
  return {
      {"no resources requested always fits", make_pod(), make_pod().cpu("10m").memory("20"), Code::success, {}},
      {"too many resources fails",
       make_pod().cpu("1m").memory("1"),
       make_pod().cpu("10m").memory("20"),
       Code::unschedulable,
       {"Insufficient cpu", "Insufficient memory"}},
      {"too many resources fails due to init container cpu",
       make_pod().cpu("3m").memory("1"),
       make_pod().cpu("8m").memory("19"),
       Code::unschedulable,
       {"Insufficient cpu"}},
      {"one resource memory fits",
       make_pod().cpu("2m").memory("1"),
       make_pod().cpu("9m").memory("5"),
       Code::unschedulable,
       {"Insufficient cpu"}},
      {"one resource cpu fits",
       make_pod().cpu("1m").memory("2"),
       make_pod().cpu("5m").memory("19"),
       Code::unschedulable,
       {"Insufficient memory"}},
      {"equal edge case", make_pod().cpu("5m").memory("1"), make_pod().cpu("5m").memory("19"), Code::success, {}},
      {"extended resource capacity enforced",
       make_pod().cpu("1m").memory("1").extended("example.com/aaa", "10"),
       make_pod(),
       Code::unresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced",
       make_pod().cpu("1m").memory("1").extended("example.com/aaa", "1"),
       make_pod().extended("example.com/aaa", "5"),
       Code::unschedulable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for multiple containers",
       make_pod().cpu("2m").memory("2").extended("example.com/aaa", "6"),
       make_pod().extended("example.com/aaa", "2"),
       Code::unresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable admits multiple init containers",
       make_pod().cpu("1m").memory("1").extended("example.com/aaa", "3"),
       make_pod().extended("example.com/aaa", "2"),
       Code::success,
       {}},
      {"extended resource allocatable enforced for unknown resource",
       make_pod().cpu("1m").memory("1").extended("example.com/bbb", "1"),
       make_pod(),
       Code::unresolvable,
       {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced",
       make_pod().cpu("1m").memory("1").extended("kubernetes.io/something", "10"),
       make_pod(),
       Code::unresolvable,
       {"Insufficient kubernetes.io/something"}},
      {"hugepages resource capacity enforced",
       make_pod().cpu("1m").memory("1").extended("hugepages-2Mi", "10"),
       make_pod(),
       Code::unresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced for multiple containers",
       make_pod().cpu("2m").memory("2").extended("hugepages-2Mi", "6"),
       make_pod().extended("hugepages-2Mi", "2"),
       Code::unresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"requests + overhead does not fit for memory",
       make_pod().cpu("2m").memory("16"),
       make_pod().cpu("5m").memory("5"),
       Code::unschedulable,
       {"Insufficient memory"}},
      {"pod-level cpu resource not fit",
       make_pod().cpu("7m").memory("2"),
       make_pod().cpu("5m").memory("5"),
       Code::unschedulable,
       {"Insufficient cpu"}},
  };
}
}  // namespace

TEST_CASE("NodeResourcesFit: fit_test.go TestEnoughRequests") {
  for (const EnoughRequestsCase& c : enough_requests_cases()) {
    CAPTURE(c.name);
    NodeInfo ni = test::enough_requests_node();
    ni.add_pod(c.existing);
    const auto s = sched::filter_node_resources_fit(c.pod, ni);
    CHECK(s.code == c.code);
    CHECK(reasons(c.pod, s) == c.reasons);
  }
}

// Upstream's "Too many pods" is never unresolvable: evicting a pod makes room.
TEST_CASE("NodeResourcesFit: fit_test.go TestNotEnoughRequests") {
  NodeInfo ni = make_node().cpu("10m").memory("20").pods(1).info();
  ni.add_pod(make_pod().name("a").cpu("5m").memory("19"));
  const kube::Pod pod = make_pod().cpu("5m").memory("1");
  const auto s = sched::filter_node_resources_fit(pod, ni);
  CHECK(s.code == Code::unschedulable);
  CHECK(reasons(pod, s) == Strings{"Too many pods"});
}

TEST_CASE("TaintToleration: an untolerated NoSchedule/NoExecute taint, named by no reason (v1.35+)") {
  const NodeInfo ni = make_node()
                          .taint("soft", "x", "PreferNoSchedule")
                          .taint("dedicated", "gpu", "NoSchedule")
                          .taint("evict", "", "NoExecute")
                          .info();
  const kube::Pod bare = make_pod();
  const auto s = sched::filter_taint_toleration(bare, ni);
  CHECK(s.code == Code::unresolvable);
  CHECK(reasons(bare, s) == Strings{"node(s) had untolerated taint(s)"});

  // Tolerating the first leaves the NoExecute one: the same text.
  const kube::Pod half = make_pod().toleration("dedicated", "Equal", "gpu", "NoSchedule");
  CHECK(reasons(half, sched::filter_taint_toleration(half, ni)) == Strings{"node(s) had untolerated taint(s)"});

  // PreferNoSchedule never blocks.
  CHECK(sched::filter_taint_toleration(
            make_pod().toleration("dedicated", "Exists", "").toleration("evict", "Exists", ""), ni)
            .ok());
  CHECK(sched::filter_taint_toleration(bare, make_node().taint("soft", "", "PreferNoSchedule").info()).ok());
}

TEST_CASE("toleration matching table (v1.Toleration.ToleratesTaint)") {
  struct Row {
    kube::Toleration tol;
    kube::Taint taint;
    bool want;
  };
  using kube::TaintEffect;
  using kube::TolerationOp;
  const kube::Taint gpu{"dedicated", "gpu", TaintEffect::no_schedule};
  const std::vector<Row> rows = {
      {{"", TolerationOp::exists, "", TaintEffect::all, {}}, gpu, true},  // tolerates everything
      {{"", TolerationOp::exists, "", TaintEffect::no_execute, {}}, gpu, false},
      {{"dedicated", TolerationOp::exists, "", TaintEffect::all, {}}, gpu, true},
      {{"dedicated", TolerationOp::exists, "cpu", TaintEffect::all, {}}, gpu, true},  // value ignored
      {{"dedicated", TolerationOp::equal, "gpu", TaintEffect::all, {}}, gpu, true},
      {{"dedicated", TolerationOp::equal, "cpu", TaintEffect::all, {}}, gpu, false},
      {{"dedicated", TolerationOp::equal, "gpu", TaintEffect::no_schedule, {}}, gpu, true},
      {{"dedicated", TolerationOp::equal, "gpu", TaintEffect::prefer_no_schedule, {}}, gpu, false},
      {{"other", TolerationOp::exists, "", TaintEffect::all, {}}, gpu, false},
      {{"dedicated", TolerationOp::unknown, "gpu", TaintEffect::all, {}}, gpu, false},
      {{"k", TolerationOp::equal, "", TaintEffect::all, {}}, {"k", "", TaintEffect::no_execute}, true},
      // An empty key with Equal (invalid in the API) still matches any key
      // with that value, as upstream's code reads.
      {{"", TolerationOp::equal, "gpu", TaintEffect::all, {}}, gpu, true},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(sched::tolerates(rows[i].tol, rows[i].taint) == rows[i].want);
  }
}

TEST_CASE("node affinity operators table (labels.Requirement)") {
  const kube::Node node =
      make_node().name("n1").label("zone", "a").label("gen", "5").label("word", "five").label("big", "+7");
  struct Row {
    kube::NodeSelectorRequirement r;
    bool want;
  };
  using test::req;
  const std::vector<Row> rows = {
      {req("zone", "In", {"a", "b"}), true},  {req("zone", "In", {"b"}), false},
      {req("missing", "In", {"a"}), false},   {req("zone", "In", {}), false},  // malformed: In needs values
      {req("zone", "NotIn", {"b"}), true},    {req("zone", "NotIn", {"a"}), false},
      {req("missing", "NotIn", {"a"}), true},  // absent label satisfies NotIn
      {req("zone", "Exists"), true},          {req("missing", "Exists"), false},
      {req("zone", "Exists", {"a"}), false},  // malformed: Exists takes no values
      {req("missing", "DoesNotExist"), true}, {req("zone", "DoesNotExist"), false},
      {req("gen", "Gt", {"4"}), true},        {req("gen", "Gt", {"5"}), false},
      {req("gen", "Lt", {"6"}), true},        {req("gen", "Lt", {"5"}), false},
      {req("gen", "Gt", {"-10"}), true},      {req("big", "Gt", {"6"}), true},  // "+7" parses as ParseInt does
      {req("word", "Gt", {"1"}), false},                                        // non-integer label
      {req("missing", "Lt", {"1"}), false},                                     // absent label
      {req("gen", "Gt", {"4", "3"}), false},                                    // malformed: exactly one value
      {req("gen", "Gt", {"four"}), false},                                      // malformed: integer value
      {req("gen", "Gt", {"4.5"}), false},     {req("zone", "Bogus", {"a"}), false},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(sched::label_requirement_matches(rows[i].r, node.labels) == rows[i].want);
  }

  SUBCASE("matchFields: metadata.name with In/NotIn and one value only") {
    CHECK(sched::field_requirement_matches(req("metadata.name", "In", {"n1"}), node));
    CHECK_FALSE(sched::field_requirement_matches(req("metadata.name", "In", {"n2"}), node));
    CHECK(sched::field_requirement_matches(req("metadata.name", "NotIn", {"n2"}), node));
    CHECK_FALSE(sched::field_requirement_matches(req("metadata.name", "NotIn", {"n1"}), node));
    CHECK_FALSE(sched::field_requirement_matches(req("metadata.name", "In", {"n1", "n2"}), node));
    CHECK_FALSE(sched::field_requirement_matches(req("metadata.name", "Exists"), node));
    CHECK_FALSE(sched::field_requirement_matches(req("metadata.uid", "In", {"n1"}), node));
  }
  SUBCASE("terms: expressions ANDed, an empty term matches nothing") {
    CHECK(sched::term_matches(term().expr("zone", "In", {"a"}).expr("gen", "Gt", {"1"}), node));
    CHECK_FALSE(sched::term_matches(term().expr("zone", "In", {"a"}).expr("gen", "Gt", {"9"}), node));
    CHECK(sched::term_matches(term().expr("zone", "In", {"a"}).field("metadata.name", "In", {"n1"}), node));
    CHECK_FALSE(sched::term_matches(term(), node));
  }
}

TEST_CASE("NodeAffinity filter: nodeSelector AND required terms (ORed)") {
  const NodeInfo a = make_node().name("na").label("zone", "a").label("disk", "ssd").info();
  const NodeInfo b = make_node().name("nb").label("zone", "b").info();

  const kube::Pod selector = make_pod().node_selector("disk", "ssd");
  CHECK(sched::filter_node_affinity(selector, a).ok());
  const auto s = sched::filter_node_affinity(selector, b);
  CHECK(s.code == Code::unresolvable);
  CHECK(reasons(selector, s) == Strings{"node(s) didn't match Pod's node affinity/selector"});

  const kube::Pod either =
      make_pod().required(term().expr("zone", "In", {"a"})).required(term().expr("zone", "In", {"b"}));
  CHECK(sched::filter_node_affinity(either, a).ok());
  CHECK(sched::filter_node_affinity(either, b).ok());

  // The selector and the terms must both hold.
  const kube::Pod both = make_pod().node_selector("disk", "ssd").required(term().expr("zone", "In", {"b"}));
  CHECK_FALSE(sched::filter_node_affinity(both, a).ok());
  CHECK_FALSE(sched::filter_node_affinity(both, b).ok());

  // A term with no requirements matches no node.
  CHECK_FALSE(sched::filter_node_affinity(make_pod().required(term()), a).ok());
}

TEST_CASE("host port conflicts (HostPortInfo.CheckConflict)") {
  struct Row {
    kube::HostPort want, used;
    bool conflict;
  };
  const std::vector<Row> rows = {
      {{80, "TCP", "0.0.0.0"}, {80, "TCP", "0.0.0.0"}, true},
      {{80, "TCP", "0.0.0.0"}, {80, "UDP", "0.0.0.0"}, false},  // protocols apart
      {{80, "TCP", "0.0.0.0"}, {81, "TCP", "0.0.0.0"}, false},
      {{80, "TCP", "10.0.0.1"}, {80, "TCP", "0.0.0.0"}, true},  // wildcard in use
      {{80, "TCP", "0.0.0.0"}, {80, "TCP", "10.0.0.1"}, true},  // wildcard wanted
      {{80, "TCP", "10.0.0.1"}, {80, "TCP", "10.0.0.1"}, true},
      {{80, "TCP", "10.0.0.1"}, {80, "TCP", "10.0.0.2"}, false},
      {{80, "", ""}, {80, "TCP", "0.0.0.0"}, true},  // API defaults
      {{80, "SCTP", "10.0.0.1"}, {80, "TCP", "10.0.0.1"}, false},
      {{0, "TCP", "0.0.0.0"}, {0, "TCP", "0.0.0.0"}, false},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(sched::host_ports_conflict(rows[i].want, rows[i].used) == rows[i].conflict);
  }

  NodeInfo ni = make_node().info();
  ni.add_pod(make_pod().name("web").host_port(8080, "TCP", "10.0.0.1"));
  CHECK(sched::filter_node_ports(make_pod().host_port(8080, "UDP"), ni).ok());
  CHECK(sched::filter_node_ports(make_pod().host_port(8080, "TCP", "10.0.0.2"), ni).ok());
  const kube::Pod clash = make_pod().host_port(9090).host_port(8080);
  const auto s = sched::filter_node_ports(clash, ni);
  CHECK(s.code == Code::unschedulable);  // evicting the holder would free it
  CHECK(reasons(clash, s) == Strings{"node(s) didn't have free ports for the requested pod ports"});
}

TEST_CASE("run_filters: upstream order, the first rejecting plugin decides") {
  // Tainted and too small: TaintToleration runs before NodeResourcesFit.
  NodeInfo ni = make_node().cpu("1").taint("dedicated", "gpu", "NoSchedule").info();
  const kube::Pod p = make_pod().cpu("2");
  auto s = test::default_profile().filter_one(p, ni);
  CHECK(s.plugin == PluginId::taint_toleration);
  CHECK(reasons(p, s) == Strings{"node(s) had untolerated taint(s)"});

  ni.node.unschedulable = true;
  s = test::default_profile().filter_one(p, ni);
  CHECK(s.plugin == PluginId::node_unschedulable);

  const kube::Pod tolerant = make_pod()
                                 .cpu("2")
                                 .toleration("dedicated", "Exists", "")
                                 .toleration("node.kubernetes.io/unschedulable", "Exists", "");
  s = test::default_profile().filter_one(tolerant, ni);
  CHECK(s.plugin == PluginId::node_resources_fit);
  CHECK(reasons(tolerant, s) == Strings{"Insufficient cpu"});

  CHECK(test::default_profile().filter_one(make_pod().cpu("1").toleration("", "Exists", ""), ni).ok());
}

TEST_CASE("NodeAffinity PreFilter narrows to the metadata.name sets") {
  SUBCASE("no name pins: all nodes") {
    CHECK(sched::prefilter_node_names(make_pod()).all);
    CHECK(sched::prefilter_node_names(
              make_pod().required(term().field("metadata.name", "In", {"a"})).required(term().expr("zone", "Exists")))
              .all);
  }
  SUBCASE("intersection within a term, union across terms") {
    const kube::Pod p =
        make_pod()
            .required(term().field("metadata.name", "In", {"a", "b"}).field("metadata.name", "In", {"b", "c"}))
            .required(term().field("metadata.name", "In", {"d"}));
    const auto set = sched::prefilter_node_names(p);
    CHECK_FALSE(set.all);
    CHECK_FALSE(set.conflict);
    CHECK(set.contains("b"));
    CHECK(set.contains("d"));
    CHECK_FALSE(set.contains("a"));
    CHECK_FALSE(set.contains("c"));
  }
  SUBCASE("conflict") {
    const auto set = sched::prefilter_node_names(
        make_pod().required(term().field("metadata.name", "In", {"a"}).field("metadata.name", "In", {"b"})));
    CHECK(set.conflict);
  }
}

TEST_CASE("NodeInfo: remove_pod is the exact inverse of add_pod") {
  NodeInfo ni = make_node().extended("example.com/gpu", "4").info();
  ni.add_pod(make_pod().name("base").cpu("250m").memory("1Gi").host_port(53, "UDP"));
  const NodeInfo before = ni;

  const kube::Pod p = make_pod()
                          .name("p")
                          .cpu("500m")
                          .memory("1Gi")
                          .ephemeral_storage("2Gi")
                          .extended("example.com/gpu", "1")
                          .extended("hugepages-2Mi", "4Mi")
                          .host_port(53, "UDP")
                          .host_port(8080);
  ni.add_pod(p);
  CHECK(ni.pod_count == 2);
  CHECK(ni.requested.milli_cpu == 750);
  CHECK(ni.requested.memory == (2LL << 30));
  CHECK(ni.requested.ephemeral_storage == (2LL << 30));
  CHECK(ni.requested.extended_value("example.com/gpu") == 1);
  CHECK(ni.requested.extended_value("hugepages-2Mi") == 4LL << 20);
  CHECK(ni.used_ports.size() == 3);  // a multiset: 53/UDP twice

  ni.remove_pod(p);
  CHECK(ni.requested == before.requested);
  CHECK(ni.requested.extended.empty());
  CHECK(ni.nonzero_milli_cpu == before.nonzero_milli_cpu);
  CHECK(ni.nonzero_memory == before.nonzero_memory);
  CHECK(ni.pod_count == before.pod_count);
  CHECK(ni.used_ports == before.used_ports);
}

TEST_CASE("NodeInfo: non-zero requests count a missing cpu/memory request as 100m/200Mi") {
  NodeInfo ni = make_node().info();
  ni.add_pod(make_pod().name("besteffort"));
  ni.add_pod(make_pod().name("cpu-only").cpu("1"));
  CHECK(ni.requested.milli_cpu == 1000);
  CHECK(ni.requested.memory == 0);
  CHECK(ni.nonzero_milli_cpu == 1100);
  CHECK(ni.nonzero_memory == 2 * 200LL * 1024 * 1024);
}
