// pluginConfig args, as kube-scheduler's v1 types_pluginargs.go with its
// defaults and validation_pluginargs.go checks. Args that toy-scheduler
// cannot honour are refused by name: running with a config that says
// "ignore GPUs" or "add this node affinity" and silently not doing it
// would be worse than not starting.
#include "decode_detail.hpp"

#include <algorithm>

namespace toysched::config::detail {
namespace {

[[noreturn]] void not_implemented(const std::string& path, const std::string& what) {
  throw ConfigError(path + ": toy-scheduler does not implement " + what);
}

// apiVersion/kind inside args (TypeMeta), optional; kind must be the
// plugin's args type, as upstream's "has to match plugin args".
Fields args_fields(const YAML::Node& args, const std::string& path, const std::string& kind) {
  Fields f(args, path);
  const std::string k = read_string(f.take("kind"), at(path, "kind"));
  (void)read_string(f.take("apiVersion"), at(path, "apiVersion"));
  if (!k.empty() && k != kind) throw ConfigError(path + ": Invalid value: \"" + k + "\": has to match plugin args");
  return f;
}

bool empty_list(const YAML::Node& n) { return is_unset(n) || (n.IsSequence() && n.size() == 0); }

std::vector<sched::ResourceSpec> read_resources(const YAML::Node& n, const std::string& path) {
  std::vector<sched::ResourceSpec> out;
  read_list(n, path, [&](const YAML::Node& r, const std::string& where) {
    Fields rf(r, where);
    sched::ResourceSpec spec;
    spec.name = read_string(rf.take("name"), at(where, "name"));
    if (auto w = rf.take("weight"); !is_unset(w))
      spec.weight = read_int(w, at(where, "weight"), kInt64Min, kInt64Max);
    else
      spec.weight = 0;  // unset: v1 defaulting makes it 1
    rf.finish();
    out.push_back(std::move(spec));
  });
  return out;
}

void decode_fit(const YAML::Node& args, const std::string& path, sched::FitArgs& fit) {
  Fields f = args_fields(args, path, "NodeResourcesFitArgs");
  if (!empty_list(f.take("ignoredResources"))) not_implemented(at(path, "ignoredResources"), "ignored resources");
  if (!empty_list(f.take("ignoredResourceGroups")))
    not_implemented(at(path, "ignoredResourceGroups"), "ignored resource groups");
  if (auto s = f.take("scoringStrategy"); !is_unset(s)) {
    const std::string sp = at(path, "scoringStrategy");
    Fields sf(s, sp);
    const std::string type = read_string(sf.take("type"), at(sp, "type"));
    auto parsed = sched::parse_scoring_strategy_type(type);
    if (!parsed) throw ConfigError(sched::unsupported_scoring_strategy_error(type, path));
    fit.type = *parsed;
    fit.resources = read_resources(sf.take("resources"), at(sp, "resources"));
    fit.shape.reset();
    if (auto r = sf.take("requestedToCapacityRatio"); !is_unset(r)) {
      const std::string rp = at(sp, "requestedToCapacityRatio");
      Fields rf(r, rp);
      std::vector<sched::UtilizationShapePoint> shape;
      read_list(rf.take("shape"), at(rp, "shape"), [&](const YAML::Node& pt, const std::string& where) {
        Fields pf(pt, where);
        sched::UtilizationShapePoint point;
        point.utilization = read_int(pf.take("utilization"), at(where, "utilization"), kInt32Min, kInt32Max);
        point.score = read_int(pf.take("score"), at(where, "score"), kInt32Min, kInt32Max);
        pf.finish();
        shape.push_back(point);
      });
      rf.finish();
      fit.shape = std::move(shape);
    }
    sf.finish();
  }
  f.finish();
  sched::set_fit_args_defaults(fit);
  if (auto why = sched::validate_fit_args(fit, path); !why.empty()) throw ConfigError(why);
}

void decode_inter_pod_affinity(const YAML::Node& args, const std::string& path, PluginArgs& out) {
  Fields f = args_fields(args, path, "InterPodAffinityArgs");
  if (auto w = f.take("hardPodAffinityWeight"); !is_unset(w)) {
    const std::string wp = at(path, "hardPodAffinityWeight");
    const std::int64_t v = read_int(w, wp, kInt64Min, kInt64Max);
    if (v < 0 || v > 100)
      throw ConfigError(wp + ": Invalid value: " + std::to_string(v) + ": not in valid range [0, 100]");
    out.hard_pod_affinity_weight = static_cast<std::int32_t>(v);
  }
  if (read_bool(f.take("ignorePreferredTermsOfExistingPods"), at(path, "ignorePreferredTermsOfExistingPods")))
    not_implemented(at(path, "ignorePreferredTermsOfExistingPods"), "ignoring existing pods' preferred terms");
  f.finish();
}

void decode_spread(const YAML::Node& args, const std::string& path, PluginArgs& out) {
  Fields f = args_fields(args, path, "PodTopologySpreadArgs");
  const bool constraints = !empty_list(f.take("defaultConstraints"));
  const std::string type = read_string(f.take("defaultingType"), at(path, "defaultingType"));
  f.finish();
  if (type.empty() || type == "System") {
    if (constraints)
      throw ConfigError(at(path, "defaultConstraints") +
                        ": Invalid value: when .defaultingType is \"System\", defaultConstraints must be empty");
    out.spread_system_defaulting = true;
  } else if (type == "List") {
    if (constraints) not_implemented(at(path, "defaultConstraints"), "cluster-level default constraints");
    out.spread_system_defaulting = false;  // an empty list: no defaults at all
  } else {
    throw ConfigError(at(path, "defaultingType") + ": Unsupported value: \"" + type +
                      "\": supported values: \"System\", \"List\"");
  }
}

void decode_preemption(const YAML::Node& args, const std::string& path, sched::PreemptionArgs& out) {
  Fields f = args_fields(args, path, "DefaultPreemptionArgs");
  std::int64_t percentage = 10, absolute = 100;  // v1 defaults
  if (auto v = f.take("minCandidateNodesPercentage"); !is_unset(v))
    percentage = read_int(v, at(path, "minCandidateNodesPercentage"), kInt32Min, kInt32Max);
  if (auto v = f.take("minCandidateNodesAbsolute"); !is_unset(v))
    absolute = read_int(v, at(path, "minCandidateNodesAbsolute"), kInt32Min, kInt32Max);
  f.finish();
  if (percentage < 0 || percentage > 100)
    throw ConfigError(at(path, "minCandidateNodesPercentage") + ": Invalid value: " + std::to_string(percentage) +
                      ": not in valid range [0, 100]");
  if (absolute < 0)
    throw ConfigError(at(path, "minCandidateNodesAbsolute") + ": Invalid value: " + std::to_string(absolute) +
                      ": not in valid range [0, inf)");
  if (percentage == 0 && absolute == 0)
    throw ConfigError(path +
                      ": Invalid value: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be "
                      "both zero");
  out.min_candidate_nodes_percentage = static_cast<std::int32_t>(percentage);
  out.min_candidate_nodes_absolute = static_cast<std::int32_t>(absolute);
}

void decode_balanced(const YAML::Node& args, const std::string& path) {
  Fields f = args_fields(args, path, "NodeResourcesBalancedAllocationArgs");
  auto resources = read_resources(f.take("resources"), at(path, "resources"));
  f.finish();
  for (auto& r : resources)
    if (r.weight == 0) r.weight = 1;
  const std::vector<sched::ResourceSpec> ours{{"cpu", 1}, {"memory", 1}};
  if (!resources.empty() && resources != ours)
    not_implemented(at(path, "resources"), "NodeResourcesBalancedAllocation over resources other than cpu and memory");
}

void decode_volume_binding(const YAML::Node& args, const std::string& path, std::int64_t& timeout) {
  Fields f = args_fields(args, path, "VolumeBindingArgs");
  if (auto v = f.take("bindTimeoutSeconds"); !is_unset(v))
    timeout = read_int(v, at(path, "bindTimeoutSeconds"), kInt64Min, kInt64Max);
  // StorageCapacityScoring is off by default in v1.36.3, and so here.
  if (!is_unset(f.take("shape")))
    throw ConfigError(at(path, "shape") +
                      ": Invalid value: unexpected field `shape`, remove it or turn on the feature gate "
                      "StorageCapacityScoring");
  f.finish();
  if (timeout < 0)
    throw ConfigError(at(path, "bindTimeoutSeconds") + ": Invalid value: " + std::to_string(timeout) +
                      ": invalid BindTimeoutSeconds, should not be a negative value");
}

}  // namespace

void decode_plugin_args(const std::string& name, const YAML::Node& args, const std::string& path, PluginArgs& out) {
  if (name == "NodeResourcesFit") {
    decode_fit(args, path, out.fit);
  } else if (name == "InterPodAffinity") {
    decode_inter_pod_affinity(args, path, out);
  } else if (name == "PodTopologySpread") {
    decode_spread(args, path, out);
  } else if (name == "DefaultPreemption") {
    decode_preemption(args, path, out.preemption);
  } else if (name == "VolumeBinding") {
    decode_volume_binding(args, path, out.bind_timeout_seconds);
  } else if (name == "NodeResourcesBalancedAllocation") {
    decode_balanced(args, path);
  } else if (name == "NodeAffinity") {
    Fields f = args_fields(args, path, "NodeAffinityArgs");
    if (!is_unset(f.take("addedAffinity"))) not_implemented(at(path, "addedAffinity"), "NodeAffinity's addedAffinity");
    f.finish();
  } else {
    throw ConfigError(path + ": toy-scheduler has no args for plugin \"" + name + "\"");
  }
}

}  // namespace toysched::config::detail
