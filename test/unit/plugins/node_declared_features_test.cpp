// NodeDeclaredFeatures: which pods need a declared node feature, which nodes
// declare it, and the reason a node that does not is given. Case names
// follow upstream's nodedeclaredfeatures_test.go where they test the same
// thing; upstream's tests use mock features, these the two real ones.
#include "../builders.hpp"
#include "toysched/kube/decode.hpp"
#include "toysched/sched/plugin_args.hpp"
#include "toysched/sched/profile.hpp"
#include "toysched/sched/queue.hpp"
#include "toysched/sched/registry.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace toysched;
using sched::Code;
using sched::PluginId;
using sched::PreFilterResult;
using test::make_node;
using test::make_pod;

namespace {

constexpr const char* kRestartAll = "RestartAllContainersOnContainerExits";
constexpr const char* kUserNsHostNet = "UserNamespacesHostNetworkSupport";

std::unique_ptr<sched::Plugin> plugin() {
  return sched::registry_entry(PluginId::node_declared_features).make(sched::PluginArgs{});
}

kube::Pod restarts_all() {
  kube::Pod p = make_pod();
  p.restarts_all_containers = true;
  return p;
}

kube::Pod host_network_user_ns(std::optional<bool> host_users) {
  kube::Pod p = make_pod();
  p.host_network = true;
  p.host_users = host_users;
  return p;
}

sched::NodeInfo node_declaring(std::vector<std::string> features) {
  sched::NodeInfo ni = make_node().info();
  ni.node.declared_features = std::move(features);
  return ni;
}

// The plugin's Filter on one node.
sched::FilterStatus filter_one(sched::Plugin& p, const kube::Pod& pod, const sched::NodeInfo& ni) {
  sched::Plugin* const list[] = {&p};
  return sched::filter_one(list, pod, ni);
}

// "skip" when PreFilter skips the plugin, else whether `ni` passes its Filter.
std::string verdict(const kube::Pod& pod, const sched::NodeInfo& ni) {
  auto pl = plugin();
  const sched::NodeInfo* one[] = {&ni};
  if (pl->pre_filter(pod, sched::Cluster{std::span<const sched::NodeInfo* const>(one)}).kind ==
      PreFilterResult::Kind::skip)
    return "skip";
  const sched::FilterStatus s = filter_one(*pl, pod, ni);
  return s.ok() ? "pass" : "reject";
}

}  // namespace

TEST_CASE("PreFilter: Pod with no requirements skips") {
  CHECK(verdict(make_pod(), node_declaring({})) == "skip");
  // hostNetwork alone, or with hostUsers true or unset, needs nothing.
  CHECK(verdict(host_network_user_ns(std::nullopt), node_declaring({})) == "skip");
  CHECK(verdict(host_network_user_ns(true), node_declaring({})) == "skip");
  kube::Pod user_ns_only = make_pod();
  user_ns_only.host_users = false;
  CHECK(verdict(user_ns_only, node_declaring({})) == "skip");
}

TEST_CASE("Filter: Node matches requirements / does not match / has no declared features") {
  CHECK(verdict(restarts_all(), node_declaring({kRestartAll})) == "pass");
  CHECK(verdict(restarts_all(), node_declaring({kUserNsHostNet})) == "reject");
  CHECK(verdict(restarts_all(), node_declaring({})) == "reject");
  CHECK(verdict(host_network_user_ns(false), node_declaring({kUserNsHostNet})) == "pass");
  CHECK(verdict(host_network_user_ns(false), node_declaring({})) == "reject");
}

TEST_CASE("Filter: Node with multiple features, pod requires subset; some but not all required features") {
  kube::Pod both = restarts_all();
  both.host_network = true;
  both.host_users = false;
  CHECK(verdict(restarts_all(), node_declaring({"ExtendWebSocketsToKubelet", kRestartAll, kUserNsHostNet})) == "pass");
  CHECK(verdict(both, node_declaring({kRestartAll, kUserNsHostNet})) == "pass");
  CHECK(verdict(both, node_declaring({kRestartAll})) == "reject");
}

TEST_CASE("the default profile rejects as upstream: UnschedulableAndUnresolvable, upstream's reason text") {
  // Decoded from the API's JSON: the rule's action on an init container,
  // the node's status.declaredFeatures.
  kube::Decoder d;
  auto pod = d.pod(R"({"metadata":{"name":"p","namespace":"default","uid":"u1"},
    "spec":{"schedulerName":"toy-scheduler","initContainers":[{"name":"i","image":"busybox",
      "restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[42]}}]}],
      "containers":[{"name":"c","image":"busybox"}]},"status":{"phase":"Pending"}})");
  REQUIRE(pod.has_value());
  CHECK(pod->restarts_all_containers);
  auto node = d.node(R"({"metadata":{"name":"n1","uid":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi",
    "pods":"110"},"declaredFeatures":["InPlacePodLevelResourcesVerticalScaling"]}})");
  REQUIRE(node.has_value());
  REQUIRE(node->declared_features == std::vector<std::string>{"InPlacePodLevelResourcesVerticalScaling"});

  sched::NodeInfo ni;
  ni.node = *node;
  const sched::Profile profile = sched::Profile::make_default();
  const sched::FilterStatus s = profile.filter_one(*pod, ni);
  CHECK(s.code == Code::unresolvable);
  CHECK(s.plugin == PluginId::node_declared_features);
  CHECK(s.reason_strings(*pod) == std::vector<std::string>{"node(s) didn't match Pod's required features"});

  ni.node.declared_features.push_back(kRestartAll);
  CHECK(profile.filter_one(*pod, ni).ok());

  auto host = d.pod(R"({"metadata":{"name":"h","namespace":"default","uid":"u2"},
    "spec":{"hostNetwork":true,"hostUsers":false,"containers":[{"name":"c","image":"busybox"}]}})");
  REQUIRE(host.has_value());
  CHECK(host->host_network);
  CHECK(host->host_users == false);
}

TEST_CASE("queueing: Node Update (Features Added) moves pods; Node Update (Features Unchanged) does not") {
  kube::Node old = make_node();
  kube::Node now = old;
  now.declared_features = {kRestartAll};
  CHECK(sched::node_update_can_help(old, now));
  CHECK_FALSE(sched::node_update_can_help(now, now));
}
