// A kubeconfig user's `exec` block, checked as client-go's clientcmd
// validation and v1 defaulting check it, and the cluster's exec extension
// the plugin gets with provideClusterInfo.
#include <charconv>

#include "kubeconfig_fields.hpp"
#include "toysched/json/writer.hpp"

namespace toysched::kube::kubeconfig {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> string_list(const YAML::Node& map, const char* key, const std::string& what) {
  std::vector<std::string> out;
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) fail(errc::config_malformed, what + ": exec." + key + " must be a list" + line_of(n));
  for (const YAML::Node& item : n) {
    if (!item.IsScalar()) fail(errc::config_malformed, what + ": exec." + key + " holds a non-string" + line_of(item));
    out.push_back(item.Scalar());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> env_list(const YAML::Node& exec, const std::string& what) {
  std::vector<std::pair<std::string, std::string>> out;
  const YAML::Node n = exec["env"];
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) fail(errc::config_malformed, what + ": exec.env must be a list" + line_of(n));
  for (const YAML::Node& item : n) {
    if (!item.IsMap()) fail(errc::config_malformed, what + ": entries of exec.env must be maps" + line_of(item));
    std::string name = get_string(item, "name", what);
    if (name.empty()) fail(errc::config_invalid, what + ": an exec.env entry has no name" + line_of(item));
    out.emplace_back(std::move(name), get_string(item, "value", what));
  }
  return out;
}

// client-go's v1 defaulting: v1beta1 may leave the mode out (IfAvailable),
// v1 must say it.
InteractiveMode interactive_mode(const YAML::Node& exec, const std::string& api_version, const std::string& what) {
  const std::string mode = get_string(exec, "interactiveMode", what);
  if (mode.empty() && api_version == kExecV1beta1) return InteractiveMode::if_available;
  if (mode.empty()) fail(errc::config_invalid, what + ": exec.interactiveMode must be set with " + api_version);
  if (mode == "Never") return InteractiveMode::never;
  if (mode == "IfAvailable") return InteractiveMode::if_available;
  if (mode == "Always")
    fail(errc::config_unsupported_auth, what + ": exec plugin wants interactiveMode Always, but toy-scheduler never " +
                                            "gives a plugin a terminal (its stdin is /dev/null); use Never or " +
                                            "IfAvailable, or a non-interactive login");
  fail(errc::config_invalid, what + ": invalid exec.interactiveMode " + q(mode) + " (Never, IfAvailable or Always)");
}

// A plain YAML scalar as sigs.k8s.io/yaml would turn it into JSON: true,
// false, null and numbers keep their type; anything else is a string.
bool json_literal(const YAML::Node& n) {
  if (n.Tag() != "?") return false;  // quoted: a string
  const std::string& s = n.Scalar();
  if (s == "true" || s == "false" || s == "null") return true;
  double d = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && s.front() != '+';
}

void to_json(const YAML::Node& n, json::Writer& w, int depth) {
  if (depth > 64) fail(errc::config_malformed, "the exec extension is nested too deeply");
  if (n.IsMap()) {
    w.object();
    for (const auto& kv : n) {
      w.key(kv.first.Scalar());
      to_json(kv.second, w, depth + 1);
    }
    w.end();
  } else if (n.IsSequence()) {
    w.array();
    for (const YAML::Node& item : n) to_json(item, w, depth + 1);
    w.end();
  } else if (!n.IsDefined() || n.IsNull()) {
    w.null();
  } else if (json_literal(n)) {
    w.raw(n.Scalar());
  } else {
    w.value(n.Scalar());
  }
}

}  // namespace

ExecConfig read_exec(const YAML::Node& exec, const std::string& what, const fs::path& file) {
  if (!exec.IsMap()) fail(errc::config_malformed, what + ": exec must be a map" + line_of(exec));
  ExecConfig e;
  e.command = get_string(exec, "command", what);
  if (e.command.empty()) fail(errc::config_invalid, what + ": exec has no command");
  // A bare name is looked up in $PATH; anything with a separator is a path,
  // relative to the kubeconfig that names it (client-go's ResolvePaths).
  if (e.command.find('/') != std::string::npos) e.command = resolve(e.command, file).string();
  e.api_version = get_string(exec, "apiVersion", what);
  if (e.api_version.empty()) fail(errc::config_invalid, what + ": exec has no apiVersion");
  if (e.api_version != kExecV1 && e.api_version != kExecV1beta1)
    fail(errc::config_invalid, what + ": exec apiVersion " + q(e.api_version) + " is not supported (use " +
                                   std::string(kExecV1) + " or " + std::string(kExecV1beta1) + ")");
  e.args = string_list(exec, "args", what);
  e.env = env_list(exec, what);
  e.install_hint = get_string(exec, "installHint", what);
  e.interactive_mode = interactive_mode(exec, e.api_version, what);
  e.provide_cluster_info = get_bool(exec, "provideClusterInfo", what);
  return e;
}

std::string exec_extension_json(const YAML::Node& cluster, const std::string& what) {
  const YAML::Node list = cluster["extensions"];
  if (!list || !list.IsSequence()) return {};
  for (const YAML::Node& item : list) {
    if (!item.IsMap() || get_string(item, "name", what) != "client.authentication.k8s.io/exec") continue;
    const YAML::Node ext = item["extension"];
    if (!ext || ext.IsNull()) return {};
    json::Writer w;
    to_json(ext, w, 0);
    return std::move(w).str();
  }
  return {};
}

}  // namespace toysched::kube::kubeconfig
