// --config: KubeSchedulerConfiguration decoding, v1 defaulting, upstream's
// validation messages, and the profile each config makes (plugins merged
// and multiPoint expanded as kube-scheduler does).
#include "toysched/config/scheduler_config.hpp"
#include "toysched/config/profiles.hpp"
#include "toysched/sched/plugins.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace toysched;
using config::Point;
using sched::PluginId;

namespace {

const std::string kHead =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

config::SchedulerConfig parse_ok(const std::string& yaml) {
  auto r = config::parse_scheduler_config(yaml);
  if (auto* err = std::get_if<std::string>(&r)) FAIL("unexpected error: " << *err);
  return std::get<config::SchedulerConfig>(r);
}

std::string parse_error(const std::string& yaml) {
  auto r = config::parse_scheduler_config(yaml);
  REQUIRE(std::holds_alternative<std::string>(r));
  return std::get<std::string>(r);
}

sched::Profile profile_ok(const config::ProfileConfig& p) {
  auto r = config::build_profile(p, 0);
  if (auto* err = std::get_if<std::string>(&r)) FAIL("unexpected error: " << *err);
  return std::move(std::get<sched::Profile>(r));
}

std::vector<PluginId> filter_ids(const sched::Profile& p) {
  std::vector<PluginId> out;
  for (const sched::Plugin* f : p.filters()) out.push_back(f->id());
  return out;
}

std::vector<std::pair<PluginId, std::int64_t>> score_ids(const sched::Profile& p) {
  std::vector<std::pair<PluginId, std::int64_t>> out;
  for (const auto& s : p.scorers()) out.emplace_back(s.plugin->id(), s.weight);
  return out;
}

}  // namespace

TEST_CASE("a config with only its kind is kube-scheduler's defaults: one default profile, leader election on") {
  auto c = parse_ok(kHead);
  REQUIRE(c.profiles.size() == 1);
  CHECK(c.profiles[0].scheduler_name == "default-scheduler");
  CHECK(c.parallelism == 16);
  CHECK(c.leader_election.leader_elect);
  CHECK(c.leader_election.resource_name == "kube-scheduler");
  CHECK(c.leader_election.resource_namespace == "kube-system");
  CHECK(c.client_connection.qps == 50);
  CHECK(c.client_connection.burst == 100);
  CHECK(c.pod_initial_backoff_seconds == 1);
  CHECK(c.pod_max_backoff_seconds == 10);

  // The profile it makes is the built-in default profile, plugin for
  // plugin, weight for weight, in the same order.
  const sched::Profile made = profile_ok(c.profiles[0]);
  const sched::Profile builtin = sched::Profile::make_default();
  CHECK(filter_ids(made) == filter_ids(builtin));
  CHECK(score_ids(made) == score_ids(builtin));
}

TEST_CASE("two profiles in one file: each its own name, strategy and plugins") {
  auto c = parse_ok(kHead +
                    "leaderElection: {leaderElect: false}\n"
                    "clientConnection: {kubeconfig: /tmp/kc, qps: 20, burst: 40}\n"
                    "parallelism: 8\n"
                    "podInitialBackoffSeconds: 2\n"
                    "podMaxBackoffSeconds: 30\n"
                    "percentageOfNodesToScore: 50\n"
                    "profiles:\n"
                    "- schedulerName: default-scheduler\n"
                    "- schedulerName: packer\n"
                    "  percentageOfNodesToScore: 100\n"
                    "  plugins:\n"
                    "    score:\n"
                    "      disabled: [{name: NodeResourcesBalancedAllocation}, {name: ImageLocality}]\n"
                    "      enabled: [{name: NodeResourcesFit, weight: 5}]\n"
                    "  pluginConfig:\n"
                    "  - name: NodeResourcesFit\n"
                    "    args:\n"
                    "      scoringStrategy:\n"
                    "        type: MostAllocated\n"
                    "        resources: [{name: cpu, weight: 1}, {name: memory}]\n"
                    "  - name: InterPodAffinity\n"
                    "    args: {hardPodAffinityWeight: 7}\n"
                    "  - name: VolumeBinding\n"
                    "    args: {bindTimeoutSeconds: 30}\n");
  CHECK_FALSE(c.leader_election.leader_elect);
  CHECK(c.client_connection.kubeconfig == "/tmp/kc");
  CHECK(c.client_connection.qps == 20);
  CHECK(c.client_connection.burst == 40);
  CHECK(c.parallelism == 8);
  CHECK(c.pod_initial_backoff_seconds == 2);
  CHECK(c.pod_max_backoff_seconds == 30);
  CHECK(c.percentage_of_nodes_to_score == 50);
  REQUIRE(c.profiles.size() == 2);
  CHECK(c.profiles[0].args.fit.type == sched::ScoringStrategyType::least_allocated);
  CHECK_FALSE(c.profiles[0].percentage_of_nodes_to_score.has_value());
  const auto& packer = c.profiles[1];
  CHECK(packer.scheduler_name == "packer");
  CHECK(packer.percentage_of_nodes_to_score == 100);
  CHECK(packer.args.fit.type == sched::ScoringStrategyType::most_allocated);
  CHECK(packer.args.fit.resources == std::vector<sched::ResourceSpec>{{"cpu", 1}, {"memory", 1}});
  CHECK(packer.args.hard_pod_affinity_weight == 7);
  CHECK(packer.args.bind_timeout_seconds == 30);
  CHECK(c.profiles[0].args.bind_timeout_seconds == 600);  // v1's default

  const sched::Profile p = profile_ok(packer);
  // The score point's own entry overrides multiPoint's and goes first.
  const std::vector<std::pair<PluginId, std::int64_t>> want{
      {PluginId::node_resources_fit, 5}, {PluginId::taint_toleration, 3},    {PluginId::node_affinity, 2},
      {PluginId::volume_binding, 1},     {PluginId::pod_topology_spread, 2}, {PluginId::inter_pod_affinity, 2}};
  CHECK(score_ids(p) == want);
  auto* fit = dynamic_cast<const sched::NodeResourcesFit*>(p.find(PluginId::node_resources_fit));
  REQUIRE(fit != nullptr);
  CHECK(fit->args().type == sched::ScoringStrategyType::most_allocated);
  CHECK(filter_ids(p) == filter_ids(sched::Profile::make_default()));  // filters untouched
}

TEST_CASE("multiPoint: '*' disables every default; plugins named there run at every point they implement") {
  auto c = parse_ok(kHead +
                    "profiles:\n"
                    "- plugins:\n"
                    "    multiPoint:\n"
                    "      disabled: [{name: '*'}]\n"
                    "      enabled:\n"
                    "      - {name: SchedulingGates}\n"
                    "      - {name: PrioritySort}\n"
                    "      - {name: DefaultBinder}\n"
                    "      - {name: NodeResourcesFit, weight: 4}\n"
                    "      - {name: NodeName}\n");
  const sched::Profile p = profile_ok(c.profiles[0]);
  CHECK(filter_ids(p) == std::vector<PluginId>{PluginId::node_resources_fit, PluginId::node_name});
  CHECK(score_ids(p) == std::vector<std::pair<PluginId, std::int64_t>>{{PluginId::node_resources_fit, 4}});

  // Disabled at one point only: the plugin still runs at the others.
  auto d = parse_ok(kHead +
                    "profiles:\n"
                    "- plugins:\n"
                    "    score:\n"
                    "      disabled: [{name: '*'}]\n"
                    "    preScore:\n"
                    "      disabled: [{name: '*'}]\n");
  const sched::Profile q = profile_ok(d.profiles[0]);
  CHECK(q.scorers().empty());
  CHECK(filter_ids(q) == filter_ids(sched::Profile::make_default()));
}

TEST_CASE("PodTopologySpread defaultingType List without constraints: no system defaults") {
  auto c = parse_ok(kHead +
                    "profiles:\n"
                    "- pluginConfig:\n"
                    "  - name: PodTopologySpread\n"
                    "    args: {defaultingType: List}\n");
  CHECK_FALSE(c.profiles[0].args.spread_system_defaulting);
  CHECK(parse_ok(kHead).profiles[0].args.spread_system_defaulting);
}

TEST_CASE("DefaultPreemption: on by default with its args; disabled at postFilter, no preemption") {
  const sched::Profile defaults = profile_ok(parse_ok(kHead).profiles[0]);
  REQUIRE(defaults.preemption().has_value());
  CHECK(defaults.preemption()->min_candidate_nodes_percentage == 10);
  CHECK(defaults.preemption()->min_candidate_nodes_absolute == 100);

  auto args = parse_ok(kHead +
                       "profiles:\n"
                       "- pluginConfig:\n"
                       "  - name: DefaultPreemption\n"
                       "    args: {minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 7}\n");
  const sched::Profile tuned = profile_ok(args.profiles[0]);
  REQUIRE(tuned.preemption().has_value());
  CHECK(tuned.preemption()->min_candidate_nodes_percentage == 50);
  CHECK(tuned.preemption()->min_candidate_nodes_absolute == 7);

  auto off = parse_ok(kHead +
                      "profiles:\n"
                      "- plugins:\n"
                      "    postFilter:\n"
                      "      disabled: [{name: DefaultPreemption}]\n");
  CHECK_FALSE(profile_ok(off.profiles[0]).preemption().has_value());
  auto multi = parse_ok(kHead +
                        "profiles:\n"
                        "- plugins:\n"
                        "    multiPoint:\n"
                        "      disabled: [{name: DefaultPreemption}]\n");
  CHECK_FALSE(profile_ok(multi.profiles[0]).preemption().has_value());
}

// Upstream clears a failed pod's nomination when its profile has no
// PostFilter plugin at all; DynamicResources' PostFilter alone still counts.
TEST_CASE("PostFilter: DynamicResources' stays when DefaultPreemption is disabled; '*' leaves none") {
  const auto with = [](const std::string& plugins) {
    return profile_ok(parse_ok(kHead + "profiles:\n- plugins:\n" + plugins).profiles[0]);
  };
  CHECK(profile_ok(parse_ok(kHead).profiles[0]).post_filter());
  CHECK(with("    postFilter:\n      disabled: [{name: DefaultPreemption}]\n").post_filter());
  const sched::Profile none = with("    postFilter:\n      disabled: [{name: '*'}]\n");
  CHECK_FALSE(none.post_filter());
  CHECK_FALSE(none.preemption().has_value());
  CHECK_FALSE(
      with("    multiPoint:\n      disabled: [{name: DefaultPreemption}, {name: DynamicResources}]\n").post_filter());
}

TEST_CASE("invalid configs: each one line naming the field, as kube-scheduler's") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {kHead + "bogus: 1\n", "strict decoding error: unknown field \"bogus\""},
      {kHead + "profiles:\n- schedulerName: a\n  plugin: {}\n", "unknown field \"profiles[0].plugin\""},
      {"apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
       "no kind \"KubeSchedulerConfiguration\" is registered for version \"kubescheduler.config.k8s.io/v1beta3\""},
      {"apiVersion: kubescheduler.config.k8s.io/v1\n", "Object 'Kind' is missing"},
      {kHead + "parallelism: 0\n", "parallelism: Invalid value: 0: should be an integer value greater than zero"},
      {kHead + "parallelism: \"16\"\n", "parallelism: expected an integer"},
      {kHead + "parallelism: 99999999999\n", "parallelism: 99999999999 is out of range"},
      {kHead + "percentageOfNodesToScore: 101\n",
       "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
      {kHead + "profiles:\n- schedulerName: a\n- schedulerName: a\n",
       "profiles[1].schedulerName: Duplicate value: \"a\""},
      {kHead + "profiles:\n- schedulerName: a\n- {}\n", "profiles[1].schedulerName: Required value"},
      {kHead + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
       "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"},
      {kHead + "podInitialBackoffSeconds: 0\n", "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"},
      {kHead + "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
       "--leader-elect-lease-duration must be greater than"},
      {kHead + "leaderElection: {leaseDuration: soon}\n", "leaderElection.leaseDuration: invalid duration \"soon\""},
      {kHead + "leaderElection: {resourceLock: endpoints}\n", "resourceLock value must be \"leases\""},
      {kHead + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Bogus}}\n",
       "Unsupported value: \"Bogus\""},
      {kHead + "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
       "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
      {kHead + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n  - name: NodeResourcesFit\n",
       "profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\""},
      {kHead + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResources: [gpu]}\n",
       "toy-scheduler does not implement ignored resources"},
      {kHead + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: {}}\n",
       "toy-scheduler does not implement NodeAffinity's addedAffinity"},
      {kHead + "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: -1}\n",
       "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not "
       "be a negative value"},
      {kHead + "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: []}\n",
       "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"},
      {kHead + "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {}\n",
       "toy-scheduler has no args for plugin \"Coscheduling\""},
      {kHead + "extenders:\n- urlPrefix: http://x\n", "does not implement scheduler extenders"},
      {kHead + "profiles: [\n", "not a YAML document"},
      {kHead + "profiles: 3\n", "profiles: expected a list"},
  };
  for (const auto& [yaml, want] : cases) {
    CAPTURE(yaml);
    const std::string err = parse_error(yaml);
    CHECK(err.find(want) != std::string::npos);
    CHECK(err.find('\n') == std::string::npos);  // one line
  }
}

TEST_CASE("invalid plugin sets: unknown, absent or half-enabled plugins are refused by name") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"    filter:\n      enabled: [{name: Coscheduling}]\n",
       "profiles[0].plugins.filter: plugin \"Coscheduling\" does not exist"},
      {"    multiPoint:\n      enabled: [{name: GangScheduling}]\n",
       "plugin \"GangScheduling\": toy-scheduler does not implement this plugin"},
      {"    score:\n      enabled: [{name: NodeName}]\n", "plugin \"NodeName\" does not extend score plugin"},
      {"    queueSort:\n      disabled: [{name: '*'}]\n", "only one queue sort plugin can be enabled"},
      {"    bind:\n      disabled: [{name: DefaultBinder}]\n", "at least one bind plugin is needed"},
      {"    preFilter:\n      disabled: [{name: NodeAffinity}]\n",
       "runs NodeAffinity's filter only with its preFilter"},
      {"    preScore:\n      disabled: [{name: '*'}]\n", "score only with its preScore"},
  };
  for (const auto& [plugins, want] : cases) {
    CAPTURE(plugins);
    auto c = parse_ok(kHead + "profiles:\n- plugins:\n" + plugins);
    auto r = config::build_profile(c.profiles[0], 0);
    REQUIRE(std::holds_alternative<std::string>(r));
    CHECK(std::get<std::string>(r).find(want) != std::string::npos);
  }
}

TEST_CASE("load_scheduler_config: a missing file and an oversized one are one clear line") {
  auto missing = config::load_scheduler_config("/nonexistent/config.yaml");
  REQUIRE(std::holds_alternative<std::string>(missing));
  CHECK(std::get<std::string>(missing) == "cannot read /nonexistent/config.yaml");
}
