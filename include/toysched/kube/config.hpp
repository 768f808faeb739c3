// Client configuration: where the API server is and how to prove who we are.
//
// Pure: reads files and an injected environment, never touches the network.
// The transport gets a ClientConfig; main() prints a Error's message
// (always one line, never a token) and exits 1.
//
// Where the configuration comes from, in the order kube-scheduler uses:
//
//   --kubeconfig PATH ──(set)──► that one file (it must exist)
//        │ (empty)
//   $KUBECONFIG a:b:c ──(set)──► those files, merged; missing ones skipped
//        │ (unset)
//   $KUBERNETES_SERVICE_HOST ─(both set)─► in-cluster: service account
//   and _PORT                              token, ca.crt, namespace
//        │ (unset)
//   $HOME/.kube/config ──(exists)──► that file
//        │
//   error: no configuration
//
// Merging several kubeconfig files follows client-go (tools/clientcmd
// loader.go): the first file to define a cluster, user or context name wins
// that name whole (no field-by-field merge), and the first non-empty
// current-context wins. Relative paths in a file are resolved against that
// file's directory. `*-data` (base64) beats the path form of the same field.
// Within one file the first entry of a name wins as well.
//
// Credentials: a token, a token file, a client certificate, or an exec
// plugin (exec_credential.hpp; run by the transport, never here). Users
// with an `auth-provider` or basic auth are refused with an error that
// names the user, rather than silently connecting anonymously.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toysched/kube/errors.hpp"
#include "toysched/kube/exec_credential.hpp"

namespace toysched::kube {

// The API server's URL, split the way the transport needs it.
struct ServerUrl {
  std::string scheme = "https";  // "https", or "http" only when the file says so
  std::string host;              // without IPv6 brackets: what to resolve and connect to
  std::uint16_t port = 443;      // 443 / 80 when the URL names none
  std::string base_path;         // "" or "/prefix" without trailing slash (e.g. Rancher proxies)

  bool tls() const { return scheme == "https"; }
  // host[:port] for the Host header, IPv6 bracketed, default port omitted.
  std::string authority() const;
  std::string to_string() const;
};

// Accepts "https://h", "https://h:6443/base", "http://[::1]:8080", and a bare
// "h:6443" (taken as https, as client-go does when TLS is configured).
// Refuses other schemes, user info, queries and fragments.
expected<ServerUrl> parse_server_url(std::string_view text);

// Where a configuration came from, for log lines and error messages.
struct ConfigOrigin {
  bool in_cluster = false;
  std::string file;     // the kubeconfig file that defined the context ("" in cluster)
  std::string context;  // "" in cluster
  std::string cluster;
  std::string user;
  // `context "c" (cluster "k", user "u") in /path` or `in-cluster config`.
  std::string describe() const;
};

// What the transport needs. PEM fields hold the bytes as read; the transport
// parses them. Never log `token` or `client_key_pem`.
struct ClientConfig {
  ServerUrl server;
  std::string tls_server_name;  // SNI / name to verify; empty: server.host
  // Only ever true because the kubeconfig said so; the caller logs a warning.
  bool insecure_skip_tls_verify = false;
  std::string ca_pem;  // empty: the system's trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;                       // inline bearer token; a token_file takes over when readable
  std::string token_file;                  // absolute path, re-read by TokenSource (tokens rotate)
  std::string namespace_name = "default";  // context namespace / in-cluster namespace
  // The user's exec plugin, when it has no token or certificate of its own.
  std::optional<ExecConfig> exec;
  ConfigOrigin origin;
};

// The process environment, injectable so tests (and only their inputs)
// differ from production. Empty variables count as unset, as in client-go.
struct Environment {
  std::function<std::optional<std::string>(const std::string&)> lookup;
  // The service account volume every pod gets (automountServiceAccountToken).
  std::filesystem::path serviceaccount_dir = "/var/run/secrets/kubernetes.io/serviceaccount";

  static Environment process();                    // getenv() and the real path
  std::string get(const std::string& name) const;  // "" when unset
};

// The largest kubeconfig, CA, certificate, key or token file read (16 MiB,
// far above any real one): a bigger file is refused with a clear error.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{16} << 20;

// Splits a $KUBECONFIG value on ':', dropping empty entries and duplicates.
std::vector<std::filesystem::path> split_kubeconfig_list(std::string_view value);

// Loads and merges kubeconfig files (see the top of this file). Files that do
// not exist are skipped; if none exists that is an error. `context`
// overrides current-context when not empty.
expected<ClientConfig> load_kubeconfig(const std::vector<std::filesystem::path>& files, std::string_view context = {});

// The in-cluster configuration (client-go rest.InClusterConfig):
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service
// account's ca.crt and token file; namespace from $POD_NAMESPACE, else the
// namespace file, else "default".
expected<ClientConfig> load_in_cluster(const Environment& env);

// The whole loading order (diagram at the top). `kubeconfig` and `context`
// are the --kubeconfig and --context flags, empty when not given.
expected<ClientConfig> load_client_config(std::string_view kubeconfig, std::string_view context,
                                          const Environment& env);

// The bearer token for each request.
//
// A token file is re-read when more than reload_period has passed since the
// last successful read (bound service account tokens rotate, and the kubelet
// rewrites the file well before expiry) and on the first call after
// invalidate() (the caller got a 401). When the file cannot be read the last
// good token is kept and every later call retries; the failure is reported
// once per run of failures through take_error(). An inline token from the
// kubeconfig is used until the file has been read once (client-go does the
// same: the file wins when readable).
class TokenSource {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;
  static constexpr std::chrono::seconds reload_period{60};

  TokenSource() = default;  // no token: anonymous requests
  static TokenSource fixed(std::string token);
  static TokenSource file(std::filesystem::path path, std::string initial = {}, Now now = &Clock::now);
  static TokenSource for_config(const ClientConfig& config, Now now = &Clock::now);

  // The token to send; empty means send no Authorization header.
  const std::string& current();
  // Forces a re-read on the next current() (after a 401).
  void invalidate() { stale_ = true; }
  // A read failure not yet reported (path and reason, never the token).
  std::optional<Error> take_error();

  bool uses_file() const { return !path_.empty(); }

 private:
  void reload();

  std::string token_;
  std::filesystem::path path_;
  Now now_;
  std::optional<Clock::time_point> last_read_;
  bool stale_ = false;
  bool failing_ = false;  // inside a run of failed reads; reported already
  std::optional<Error> pending_error_;
};

}  // namespace toysched::kube
