// Reading kubeconfig fields, shared by config.cpp (clusters, contexts,
// static credentials) and kubeconfig_exec.cpp (the exec block). Private
// to src/kube.
//
// Field-reading code is deep and has a failure at every step; it throws
// Failure and load_kubeconfig turns it back into a value at the boundary.
// Failure never escapes config.cpp's load_kubeconfig.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"

namespace toysched::kube::kubeconfig {

struct Failure {
  Error error;
};

// The message on one line: main() prints it as one log line.
Error make_error(errc code, std::string message);
[[noreturn]] void fail(errc code, std::string message);
std::string q(std::string_view s);         // "s", quoted
std::string line_of(const YAML::Node& n);  // " (line N)" or ""

// `what` names the owner for messages: `user "u" in /path`.
std::string get_string(const YAML::Node& map, const char* key, const std::string& what);
bool get_bool(const YAML::Node& map, const char* key, const std::string& what);

// `p` made absolute against the directory of the file that named it.
std::filesystem::path resolve(const std::filesystem::path& p, const std::filesystem::path& defining_file);

// The user's `exec` block (`what` names the user, `file` defines it).
ExecConfig read_exec(const YAML::Node& exec, const std::string& what, const std::filesystem::path& file);
// The cluster's `client.authentication.k8s.io/exec` extension as JSON, or
// "" when it has none (given to the plugin as spec.cluster.config).
std::string exec_extension_json(const YAML::Node& cluster, const std::string& what);

}  // namespace toysched::kube::kubeconfig
