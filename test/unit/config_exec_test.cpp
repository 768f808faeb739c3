// The kubeconfig's exec block, as client-go's clientcmd validation and v1
// defaulting read it: every field, defaults, refusals, merged files.
#include "config_fixtures.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/exec_credential.hpp"

#include <doctest/doctest.h>

#include <string>

namespace fs = std::filesystem;
using namespace toysched::kube;
using namespace toysched::test::config;

TEST_CASE("kubeconfig: an exec user, every field") {
  TempDir t;
  const fs::path p = t.write("dir/config", R"(current-context: eks
clusters:
- name: k
  cluster:
    server: https://k.example:6443
    certificate-authority-data: Q0EtUEVN
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: "sts", "n": 3, flag: true, list: [a, "1"]}
users:
- name: eks-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [eks, get-token, --cluster-name, prod]
      env: [{name: AWS_PROFILE, value: prod}, {name: EMPTY}]
      installHint: install the AWS CLI
      interactiveMode: Never
      provideClusterInfo: true
contexts:
- {name: eks, context: {cluster: k, user: eks-user}}
)");
  auto r = load_kubeconfig({p});
  REQUIRE(r.has_value());
  REQUIRE(r->exec);
  const ExecConfig& e = *r->exec;
  CHECK(e.command == (t.root / "dir/bin/get-token").string());  // relative to the kubeconfig, as client-go
  CHECK(e.args == std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"});
  REQUIRE(e.env.size() == 2);
  CHECK(e.env[0] == std::pair<std::string, std::string>{"AWS_PROFILE", "prod"});
  CHECK(e.env[1] == std::pair<std::string, std::string>{"EMPTY", ""});
  CHECK(e.api_version == kExecV1);
  CHECK(e.install_hint == "install the AWS CLI");
  CHECK(e.interactive_mode == InteractiveMode::never);
  CHECK(e.provide_cluster_info);
  CHECK(e.cluster_json == R"({"server":"https://k.example:6443","certificate-authority-data":"Q0EtUEVN",)"
                          R"("config":{"audience":"sts","n":3,"flag":true,"list":["a","1"]}})");
  CHECK(r->token.empty());
  CHECK(r->client_cert_pem.empty());
}

namespace {

// A kubeconfig of one cluster "k" whose context "c" uses user "u" (USER is
// its body), and whose context "tok" uses the user "with-token" (TOKEN_USER).
fs::path exec_kubeconfig(const TempDir& t, std::string_view user, std::string_view token_user = "{}") {
  return t.write("config",
                 "current-context: c\nclusters: [{name: k, cluster: {server: \"https://k\"}}]\nusers:\n"
                 "- {name: u, user: " +
                     std::string(user) + "}\n- {name: with-token, user: " + std::string(token_user) +
                     "}\ncontexts: [{name: c, context: {cluster: k, user: u}}, "
                     "{name: tok, context: {cluster: k, user: with-token}}]\n");
}

}  // namespace

TEST_CASE("kubeconfig: exec defaults, a command on $PATH, a static credential beside it") {
  TempDir t;
  const fs::path p =
      exec_kubeconfig(t, "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: gke-gcloud-auth-plugin}}",
                      "{token: static, exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: kubelogin}}");
  auto r = load_kubeconfig({p});
  REQUIRE(r.has_value());
  REQUIRE(r->exec);
  CHECK(r->exec->command == "gke-gcloud-auth-plugin");                // no separator: looked up in $PATH when run
  CHECK(r->exec->interactive_mode == InteractiveMode::if_available);  // v1beta1's default
  CHECK_FALSE(r->exec->provide_cluster_info);
  CHECK(r->exec->cluster_json.empty());
  // client-go sends a user's own token and never runs its plugin.
  r = load_kubeconfig({p}, "tok");
  REQUIRE(r.has_value());
  CHECK_FALSE(r->exec);
  CHECK(r->token == "static");
}

TEST_CASE("kubeconfig: exec blocks client-go refuses, refused by name") {
  TempDir t;
  auto load = [&](std::string_view exec) {
    return load_kubeconfig({exec_kubeconfig(t, "{exec: " + std::string(exec) + "}")});
  };
  const std::string v1 = "apiVersion: client.authentication.k8s.io/v1, ";
  require_error(load("{apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}"), errc::config_invalid,
                {"user \"u\"", "no command"});
  require_error(load("{command: x}"), errc::config_invalid, {"no apiVersion"});
  require_error(load("{command: x, apiVersion: client.authentication.k8s.io/v1alpha1}"), errc::config_invalid,
                {"v1alpha1", "not supported"});
  require_error(load("{" + v1 + "command: x}"), errc::config_invalid, {"interactiveMode must be set"});
  require_error(load("{" + v1 + "command: x, interactiveMode: Sometimes}"), errc::config_invalid,
                {"invalid exec.interactiveMode \"Sometimes\""});
  require_error(load("{" + v1 + "command: x, interactiveMode: Always}"), errc::config_unsupported_auth,
                {"interactiveMode Always", "terminal"});
  require_error(load("{" + v1 + "command: x, interactiveMode: Never, env: [{value: v}]}"), errc::config_invalid,
                {"exec.env entry has no name"});
  require_error(load("{" + v1 + "command: x, interactiveMode: Never, args: {a: b}}"), errc::config_malformed,
                {"exec.args must be a list"});
  require_error(load("[x]"), errc::config_malformed, {"exec must be a map"});
}

TEST_CASE("kubeconfig: the exec user of the second of two merged files") {
  TempDir t;
  const fs::path a = t.write("a/config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  const fs::path b = t.write("b/config", R"(users:
- name: u
  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin.sh, interactiveMode: IfAvailable}}
)");
  auto r = load_kubeconfig({a, b});
  REQUIRE(r.has_value());
  REQUIRE(r->exec);
  CHECK(r->exec->command == (t.root / "b/plugin.sh").string());  // the directory of the file that names it
  CHECK(r->exec->interactive_mode == InteractiveMode::if_available);
}
