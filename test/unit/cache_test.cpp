#include <doctest/doctest.h>

#include "toysched/sched/cache.hpp"

#include <optional>

using namespace toysched;
using kube::Node;
using kube::Pod;

namespace {
Node node(std::string name, std::int64_t milli_cpu = 4000) {
  Node n;
  n.name = std::move(name);
  n.uid = "uid-" + n.name;
  n.resource_version = "1";
  n.allocatable.milli_cpu = milli_cpu;
  n.allocatable.memory = std::int64_t{32} << 30;
  n.allocatable.pods = 110;
  n.ready = true;
  return n;
}
Pod pod(std::string name, std::int64_t milli_cpu, std::string node_name = {}) {
  Pod p;
  p.ns = "d";
  p.name = name;
  p.uid = "uid-" + name;
  p.requests.milli_cpu = milli_cpu;
  p.node_name = std::move(node_name);
  return p;
}
}  // namespace

TEST_CASE("an assumed pod counts at once; the watch confirms it; forget undoes it") {
  sched::Cache c;
  c.add_node(node("n1"));
  REQUIRE(c.assume(pod("a", 500), "n1"));
  CHECK(c.node("n1")->requested.milli_cpu == 500);
  CHECK(c.node("n1")->pod_count == 1);
  CHECK(c.is_assumed("uid-a"));
  CHECK_FALSE(c.assume(pod("a", 500), "n1"));  // never decided twice

  c.add_pod(pod("a", 500, "n1"));  // the watch shows it bound
  CHECK_FALSE(c.is_assumed("uid-a"));
  CHECK(c.node("n1")->requested.milli_cpu == 500);  // counted once, not twice
  CHECK(c.bound_count() == 1);

  REQUIRE(c.assume(pod("b", 700), "n1"));
  c.forget("uid-b");
  CHECK(c.node("n1")->requested.milli_cpu == 500);
  CHECK(c.node("n1")->pod_count == 1);
  CHECK(c.assumed_count() == 0);
}

TEST_CASE("bound elsewhere than assumed: the accounting moves with it") {
  sched::Cache c;
  c.add_node(node("n1"));
  c.add_node(node("n2"));
  REQUIRE(c.assume(pod("a", 500), "n1"));
  c.add_pod(pod("a", 500, "n2"));  // someone else won the race onto n2
  CHECK(c.node("n1")->requested.milli_cpu == 0);
  CHECK(c.node("n2")->requested.milli_cpu == 500);
}

TEST_CASE("pods on a node not yet seen count once it appears; removed nodes leave the list") {
  sched::Cache c;
  c.add_pod(pod("early", 1000, "late-node"));
  CHECK(c.nodes().empty());
  c.add_node(node("late-node"));
  REQUIRE(c.nodes().size() == 1);
  CHECK(c.nodes()[0]->requested.milli_cpu == 1000);
  c.remove_node("late-node");
  CHECK(c.nodes().empty());
  CHECK_FALSE(c.assume(pod("x", 1), "late-node"));
  c.remove_pod(pod("early", 1000, "late-node"));
  CHECK(c.node("late-node") == nullptr);
}

TEST_CASE("nodes come in name order and a node update keeps its pods") {
  sched::Cache c;
  c.add_node(node("b"));
  c.add_node(node("a"));
  c.add_pod(pod("p", 300, "b"));
  auto updated = node("b", 8000);
  updated.resource_version = "2";
  c.update_node(updated);
  auto& ns = c.nodes();
  REQUIRE(ns.size() == 2);
  CHECK(ns[0]->node.name == "a");
  CHECK(ns[1]->node.name == "b");
  CHECK(ns[1]->node.allocatable.milli_cpu == 8000);
  CHECK(ns[1]->requested.milli_cpu == 300);
}

TEST_CASE("pods are grouped by namespace, labels and deletion; pods with pod affinity are listed") {
  sched::Cache c;
  c.add_node(node("n1"));
  Pod a = pod("a", 100, "n1"), b = pod("b", 100, "n1"), other_ns = pod("c", 100, "n1");
  a.labels = b.labels = other_ns.labels = {{"app", "web"}};
  other_ns.ns = "e";
  Pod anti = pod("anti", 100, "n1");
  anti.labels = {{"app", "web"}, {"tier", "x"}};
  anti.pod_anti_affinity.required.push_back(kube::PodAffinityTerm{});
  c.add_pod(a);
  c.add_pod(b);
  c.add_pod(other_ns);
  CHECK(c.assume(anti, "n1"));
  const sched::NodeInfo& ni = *c.node("n1");
  auto web_in_d = [](const sched::PodGroup& g) { return g.ns == "d" && kube::find_value(g.labels, "app") != nullptr; };
  CHECK(ni.pod_groups.size() == 3);  // d {app=web} ×2, e {app=web}, d {app=web, tier=x}
  CHECK(ni.count_pods(web_in_d, true) == 3);
  REQUIRE(ni.pods_with_affinity.size() == 1);
  CHECK(ni.pods_with_affinity.front()->name == "anti");
  CHECK(ni.pods_with_required_anti_affinity.size() == 1);

  // The cache's own copy is what NodeInfo points to: the caller's may go.
  anti = Pod{};
  CHECK(ni.pods_with_required_anti_affinity.front()->name == "anti");
  c.forget("uid-anti");
  CHECK(ni.pods_with_affinity.empty());
  CHECK(ni.pods_with_required_anti_affinity.empty());
  CHECK(ni.pod_groups.size() == 2);

  // A terminating pod moves to a group of its own, not counted when asked so.
  Pod b_deleting = b;
  b_deleting.deleting = true;
  c.update_pod(b, b_deleting);
  CHECK(ni.count_pods(web_in_d, true) == 2);
  CHECK(ni.count_pods(web_in_d, false) == 1);
  c.remove_pod(a);
  c.remove_pod(b_deleting);
  CHECK(ni.pod_groups.size() == 1);
  CHECK(ni.count_pods(web_in_d, true) == 0);
}

TEST_CASE("who bound a pod: us, another scheduler while we watched, or unknown (before we listed)") {
  sched::Cache c;
  c.add_node(node("n1"));
  c.add_node(node("n2"));
  auto by = [&](const std::string& uid) {
    std::optional<sched::Cache::BoundBy> found;
    c.for_each_pod([&](const Pod& p, bool, sched::Cache::BoundBy b) {
      if (p.uid == uid) found = b;
    });
    return found;
  };
  c.add_pod(pod("old", 100, "n1"));  // in the first list
  c.mark_listed();
  c.add_pod(pod("theirs", 100, "n2"));
  REQUIRE(c.assume(pod("ours", 100), "n1"));
  CHECK(by("uid-ours") == sched::Cache::BoundBy::us);  // assumed: ours, bind in flight
  c.add_pod(pod("ours", 100, "n1"));
  REQUIRE(c.assume(pod("raced", 100), "n1"));
  c.add_pod(pod("raced", 100, "n2"));  // the watch shows it elsewhere before our 409
  REQUIRE(c.assume(pod("same", 100), "n1"));
  c.add_pod(pod("same", 100, "n1"));  // a rival chose our node: only the 409 tells
  c.lost_race("uid-same");
  CHECK(by("uid-old") == sched::Cache::BoundBy::unknown);
  CHECK(by("uid-theirs") == sched::Cache::BoundBy::other);
  CHECK(by("uid-ours") == sched::Cache::BoundBy::us);
  CHECK(by("uid-raced") == sched::Cache::BoundBy::other);
  CHECK(by("uid-same") == sched::Cache::BoundBy::other);
  c.lost_race("uid-nobody");  // not in the cache: nothing happens
  CHECK_FALSE(by("uid-nobody"));
}
