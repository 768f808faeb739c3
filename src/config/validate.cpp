// validation.go's checks on a KubeSchedulerConfiguration, in its words:
// "<field path>: Invalid value: <value>: <why>". The first error is the
// one line a bad config gets.
#include "decode_detail.hpp"
#include "toysched/options.hpp"

namespace toysched::config {
namespace {

std::string invalid(const std::string& path, const std::string& value, const std::string& why) {
  return path + ": Invalid value: " + value + ": " + why;
}

std::string check_percentage(const std::string& path, std::optional<std::int32_t> p) {
  if (p && (*p < 0 || *p > 100)) return invalid(path, std::to_string(*p), "not in valid range [0-100]");
  return {};
}

std::string check_leader_election(const LeaderElectionConfig& le) {
  if (!le.leader_elect) return {};
  if (le.resource_lock != "leases")
    return invalid("leaderElection.resourceLock", "\"" + le.resource_lock + "\"",
                   "resourceLock value must be \"leases\"");
  if (le.resource_name.empty()) return "leaderElection.resourceName: Required value";
  if (le.resource_namespace.empty()) return "leaderElection.resourceNamespace: Required value";
  LeaderElectionOptions o;
  o.lease_duration = le.lease_duration;
  o.renew_deadline = le.renew_deadline;
  o.retry_period = le.retry_period;
  if (auto why = validate_leader_election(o); !why.empty()) return "leaderElection: " + why;
  return {};
}

}  // namespace

std::string validate(const SchedulerConfig& c) {
  if (auto why = check_leader_election(c.leader_election); !why.empty()) return why;
  if (c.client_connection.burst < 0)
    return invalid("clientConnection.burst", std::to_string(c.client_connection.burst), "must be non-negative");
  if (c.parallelism <= 0)
    return invalid("parallelism", std::to_string(c.parallelism), "should be an integer value greater than zero");
  for (std::size_t i = 0; i < c.profiles.size(); ++i) {
    const ProfileConfig& p = c.profiles[i];
    const std::string path = detail::at("profiles", i);
    if (p.scheduler_name.empty()) return path + ".schedulerName: Required value";
    if (auto why = check_percentage(path + ".percentageOfNodesToScore", p.percentage_of_nodes_to_score); !why.empty())
      return why;
    for (std::size_t j = 0; j < i; ++j)
      if (c.profiles[j].scheduler_name == p.scheduler_name)
        return path + ".schedulerName: Duplicate value: \"" + p.scheduler_name + "\"";
  }
  if (auto why = check_percentage("percentageOfNodesToScore", c.percentage_of_nodes_to_score); !why.empty()) return why;
  if (c.pod_initial_backoff_seconds <= 0)
    return invalid("podInitialBackoffSeconds", std::to_string(c.pod_initial_backoff_seconds), "must be greater than 0");
  if (c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds)
    return invalid("podMaxBackoffSeconds", std::to_string(c.pod_max_backoff_seconds),
                   "must be greater than or equal to PodInitialBackoffSeconds");
  // A day is far beyond any sensible backoff, and keeps the milliseconds
  // the queue computes with far from overflow.
  if (c.pod_max_backoff_seconds > 86'400)
    return invalid("podMaxBackoffSeconds", std::to_string(c.pod_max_backoff_seconds),
                   "toy-scheduler takes at most 86400 (a day)");
  return {};
}

}  // namespace toysched::config
