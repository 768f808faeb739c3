// KubeSchedulerConfiguration v1 from YAML: the document's shape, strictly
// (yaml_fields.hpp), with v1's defaults; plugin args in plugin_args.cpp,
// the checks in validate.cpp.
#include "decode_detail.hpp"

#include <fstream>

namespace toysched::config {

using namespace detail;

bool PluginSet::disables(std::string_view name) const noexcept {
  for (const auto& d : disabled)
    if (d.name == name || d.name == "*") return true;
  return false;
}

namespace {

void decode_leader_election(const YAML::Node& n, std::string_view path, LeaderElectionConfig& le) {
  Fields f(n, std::string(path));
  if (auto v = f.take("leaderElect"); !is_unset(v)) le.leader_elect = read_bool(v, at(path, "leaderElect"));
  if (auto v = f.take("leaseDuration"); !is_unset(v)) le.lease_duration = read_duration(v, at(path, "leaseDuration"));
  if (auto v = f.take("renewDeadline"); !is_unset(v)) le.renew_deadline = read_duration(v, at(path, "renewDeadline"));
  if (auto v = f.take("retryPeriod"); !is_unset(v)) le.retry_period = read_duration(v, at(path, "retryPeriod"));
  if (auto v = f.take("resourceLock"); !is_unset(v)) le.resource_lock = read_string(v, at(path, "resourceLock"));
  if (auto v = f.take("resourceName"); !is_unset(v)) le.resource_name = read_string(v, at(path, "resourceName"));
  if (auto v = f.take("resourceNamespace"); !is_unset(v))
    le.resource_namespace = read_string(v, at(path, "resourceNamespace"));
  f.finish();
}

void decode_client_connection(const YAML::Node& n, std::string_view path, ClientConnectionConfig& cc) {
  Fields f(n, std::string(path));
  cc.kubeconfig = read_string(f.take("kubeconfig"), at(path, "kubeconfig"));
  // Content types: we speak JSON whatever the file asks; the API server
  // answers JSON to a client that asks for it, so nothing is lost.
  (void)read_string(f.take("acceptContentTypes"), at(path, "acceptContentTypes"));
  (void)read_string(f.take("contentType"), at(path, "contentType"));
  // v1 defaults qps 50 and burst 100 when the fields are 0 or absent.
  if (auto v = f.take("qps"); !is_unset(v)) {
    cc.qps = read_number(v, at(path, "qps"));
    if (cc.qps == 0) cc.qps = 50;
  }
  if (auto v = f.take("burst"); !is_unset(v)) {
    cc.burst = static_cast<std::int32_t>(read_int(v, at(path, "burst"), kInt32Min, kInt32Max));
    if (cc.burst == 0) cc.burst = 100;
  }
  f.finish();
}

PluginSet decode_plugin_set(const YAML::Node& n, std::string_view path) {
  PluginSet set;
  Fields f(n, std::string(path));
  auto one = [](const YAML::Node& p, const std::string& where) {
    Fields pf(p, where);
    PluginRef ref;
    ref.name = read_string(pf.take("name"), at(where, "name"));
    if (auto w = pf.take("weight"); !is_unset(w))
      ref.weight = static_cast<std::int32_t>(read_int(w, at(where, "weight"), kInt32Min, kInt32Max));
    pf.finish();
    return ref;
  };
  const std::string enabled = at(path, "enabled"), disabled = at(path, "disabled");
  read_list(f.take("enabled"), enabled,
            [&](const YAML::Node& p, const std::string& where) { set.enabled.push_back(one(p, where)); });
  read_list(f.take("disabled"), disabled,
            [&](const YAML::Node& p, const std::string& where) { set.disabled.push_back(one(p, where)); });
  f.finish();
  return set;
}

Plugins decode_plugins(const YAML::Node& n, std::string_view path) {
  Plugins plugins;
  Fields f(n, std::string(path));
  for (std::size_t i = 0; i < kPointCount; ++i) {
    const auto point = static_cast<Point>(i);
    const std::string key(point_name(point));
    plugins[point] = decode_plugin_set(f.take(key), at(path, key));
  }
  f.finish();
  return plugins;
}

ProfileConfig decode_profile(const YAML::Node& n, const std::string& path) {
  ProfileConfig p;
  Fields f(n, path);
  p.scheduler_name = read_string(f.take("schedulerName"), at(path, "schedulerName"));
  if (auto v = f.take("percentageOfNodesToScore"); !is_unset(v))
    p.percentage_of_nodes_to_score =
        static_cast<std::int32_t>(read_int(v, at(path, "percentageOfNodesToScore"), kInt32Min, kInt32Max));
  if (auto v = f.take("plugins"); !is_unset(v)) p.plugins = decode_plugins(v, at(path, "plugins"));
  std::vector<std::string> seen;
  read_list(f.take("pluginConfig"), at(path, "pluginConfig"), [&](const YAML::Node& c, const std::string& where) {
    Fields cf(c, where);
    std::string name = read_string(cf.take("name"), at(where, "name"));
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw ConfigError(where + ": Duplicate value: \"" + name + "\"");
    seen.push_back(name);
    decode_plugin_args(name, cf.take("args"), at(where, "args"), p.args);
    cf.finish();
  });
  f.finish();
  return p;
}

void decode_top(Fields& f, SchedulerConfig& c) {
  const std::string api_version = read_string(f.take("apiVersion"), "apiVersion");
  const std::string kind = read_string(f.take("kind"), "kind");
  if (kind.empty()) throw ConfigError("Object 'Kind' is missing");
  if (kind != "KubeSchedulerConfiguration")
    throw ConfigError("kind \"" + kind + "\" is not KubeSchedulerConfiguration");
  if (api_version != "kubescheduler.config.k8s.io/v1")
    throw ConfigError("no kind \"KubeSchedulerConfiguration\" is registered for version \"" + api_version +
                      "\" (toy-scheduler reads kubescheduler.config.k8s.io/v1, as kube-scheduler v1.36)");
  if (auto v = f.take("parallelism"); !is_unset(v))
    c.parallelism = static_cast<std::int32_t>(read_int(v, "parallelism", kInt32Min, kInt32Max));
  decode_leader_election(f.take("leaderElection"), "leaderElection", c.leader_election);
  decode_client_connection(f.take("clientConnection"), "clientConnection", c.client_connection);
  // No profiling handlers here (no pprof in a C++ process): read, unused.
  (void)read_bool(f.take("enableProfiling"), "enableProfiling");
  (void)read_bool(f.take("enableContentionProfiling"), "enableContentionProfiling");
  // Informers run on a standby as on the leader either way; true only
  // delays kube-scheduler's cache fill, which changes no decision.
  (void)read_bool(f.take("delayCacheUntilActive"), "delayCacheUntilActive");
  if (auto v = f.take("percentageOfNodesToScore"); !is_unset(v))
    c.percentage_of_nodes_to_score =
        static_cast<std::int32_t>(read_int(v, "percentageOfNodesToScore", kInt32Min, kInt32Max));
  if (auto v = f.take("podInitialBackoffSeconds"); !is_unset(v))
    c.pod_initial_backoff_seconds = read_int(v, "podInitialBackoffSeconds", kInt64Min, kInt64Max);
  if (auto v = f.take("podMaxBackoffSeconds"); !is_unset(v))
    c.pod_max_backoff_seconds = read_int(v, "podMaxBackoffSeconds", kInt64Min, kInt64Max);
  if (auto v = f.take("extenders"); !is_unset(v) && !(v.IsSequence() && v.size() == 0))
    throw ConfigError("extenders: toy-scheduler does not implement scheduler extenders");
}

}  // namespace

LoadResult parse_scheduler_config(std::string_view yaml) {
  try {
    const YAML::Node doc = YAML::Load(std::string(yaml));
    SchedulerConfig c;
    Fields f(doc, "");
    decode_top(f, c);
    read_list(f.take("profiles"), "profiles",
              [&](const YAML::Node& p, const std::string& where) { c.profiles.push_back(decode_profile(p, where)); });
    f.finish();
    // v1 defaulting: no profile is one default profile; a lone profile
    // without a name is default-scheduler. Several need their names.
    if (c.profiles.empty()) c.profiles.emplace_back();
    if (c.profiles.size() == 1 && c.profiles[0].scheduler_name.empty())
      c.profiles[0].scheduler_name = "default-scheduler";
    if (auto why = validate(c); !why.empty()) return why;
    return c;
  } catch (const ConfigError& e) {
    return std::string(e.what());
  } catch (const YAML::Exception& e) {  // includes a bad document
    return "not a YAML document: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")";
  }
}

LoadResult load_scheduler_config(const std::string& path) {
  constexpr std::size_t kMaxBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read " + path;
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return "cannot read " + path;
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes) return path + " is larger than 1 MiB: not a scheduler configuration";
  return parse_scheduler_config(text);
}

}  // namespace toysched::config
