// Exec credential plugins (client-go's plugin/pkg/client/auth/exec): what a
// kubeconfig's `user.exec` block asks for, and what the plugin prints.
//
// The plugin (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`)
// is a command run with the block's args and env added to ours, plus
// KUBERNETES_EXEC_INFO: an ExecCredential whose spec says whether it may
// talk to a person (never, here: its stdin is /dev/null) and, with
// provideClusterInfo, which cluster it is for. It prints an ExecCredential
// of the same apiVersion whose status holds a bearer token or a client
// certificate and key, and maybe an expirationTimestamp.
//
// Pure: parsing and building text only. Running the plugin is
// src/kube/exec_plugin.cpp; caching and refreshing the credential is
// src/kube/exec_auth.cpp.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toysched/kube/errors.hpp"

namespace toysched::kube {

// client-go's ExecInteractiveMode. toy-scheduler never has a terminal to
// give a plugin, so Always is refused when the kubeconfig is loaded and
// the others both mean "not interactive".
enum class InteractiveMode { never, if_available, always };

struct ExecConfig {
  std::string command;  // as written, or made absolute when relative with a '/' (client-go's ResolvePaths)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to our environment, in order
  std::string api_version;                               // client.authentication.k8s.io/v1 or v1beta1
  std::string install_hint;                              // shown when the command is missing
  InteractiveMode interactive_mode = InteractiveMode::if_available;
  bool provide_cluster_info = false;
  std::string cluster_json;  // spec.cluster as JSON when provide_cluster_info, else empty
};

inline constexpr std::string_view kExecV1 = "client.authentication.k8s.io/v1";
inline constexpr std::string_view kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

// What a plugin returned. Never log token or client_key_pem.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;  // none: valid until a 401
};

// The cluster as client-go's ConfigToExecCluster gives it to the plugin
// (clientauthentication Cluster, JSON field names and omitempty as Go
// writes them). `ca_pem` is base64-encoded; `config_json` is the cluster's
// `client.authentication.k8s.io/exec` extension, already JSON, or empty.
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string ca_pem;
  std::string config_json;
};
std::string exec_cluster_json(const ExecClusterInfo& c);

// KUBERNETES_EXEC_INFO's value: {"kind":"ExecCredential","apiVersion":…,
// "spec":{"cluster":…,"interactive":false}}.
std::string exec_info_json(const ExecConfig& c);

// Decodes a plugin's stdout. The apiVersion must be the configured one and
// the kind ExecCredential; a status with neither a token nor both halves
// of a certificate pair is refused, as client-go refuses it. Errors are
// errc::exec_failed with one line that says what is wrong (never a secret).
expected<ExecCredential> parse_exec_credential(std::string_view json, std::string_view api_version);

}  // namespace toysched::kube
