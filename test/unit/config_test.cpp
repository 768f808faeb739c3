// Client configuration from kubeconfig files written into a temp dir: every
// field, path forms, several files, refusals and errors. The in-cluster
// config, the loading order and the token source are in
// config_sources_test.cpp.
#include "toysched/kube/config.hpp"

#include "config_fixtures.hpp"
#include "toysched/kube/errors.hpp"

#include <doctest/doctest.h>

#include <string>

namespace fs = std::filesystem;
using namespace toysched::kube;
using namespace toysched::test::config;

namespace {

// "CA-PEM" etc. in base64, so tests can see which source a field came from.
constexpr const char* kCaB64 = "Q0EtUEVN";        // CA-PEM
constexpr const char* kCertB64 = "Q0VSVC1QRU0=";  // CERT-PEM
constexpr const char* kKeyB64 = "S0VZLVBFTQ==";   // KEY-PEM

const char* kFull = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://api.example.com:6443/base/
    tls-server-name: kubernetes.internal
    certificate-authority-data: Q0EtUEVN
users:
- name: admin
  user:
    token: s3cret-token
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTQ==
contexts:
- name: prod
  context:
    cluster: prod-cluster
    user: admin
    namespace: team-a
)";

}  // namespace

TEST_CASE("server URLs") {
  auto u = parse_server_url("https://api.example.com:6443/base/");
  REQUIRE(u.has_value());
  CHECK(u->scheme == "https");
  CHECK(u->host == "api.example.com");
  CHECK(u->port == 6443);
  CHECK(u->base_path == "/base");
  CHECK(u->to_string() == "https://api.example.com:6443/base");

  u = parse_server_url("https://10.0.0.1");
  REQUIRE(u.has_value());
  CHECK(u->port == 443);
  CHECK(u->base_path.empty());
  CHECK(u->authority() == "10.0.0.1");

  u = parse_server_url("http://localhost:8080");
  REQUIRE(u.has_value());
  CHECK_FALSE(u->tls());
  CHECK(u->port == 8080);

  u = parse_server_url("http://localhost");
  REQUIRE(u.has_value());
  CHECK(u->port == 80);

  u = parse_server_url("https://[fd00::1]:6443");
  REQUIRE(u.has_value());
  CHECK(u->host == "fd00::1");
  CHECK(u->authority() == "[fd00::1]:6443");

  u = parse_server_url("kube.local:6443");  // no scheme: https
  REQUIRE(u.has_value());
  CHECK(u->tls());
  CHECK(u->host == "kube.local");

  for (const char* bad : {"ftp://x", "https://", "https://h:0", "https://h:70000", "https://h:x", "https://user@h",
                          "https://h/?a=b", "https://fd00::1", "https://[fd00::1"}) {
    INFO(bad);
    CHECK_FALSE(parse_server_url(bad).has_value());
  }
}

TEST_CASE("kubeconfig: every field read back") {
  TempDir t;
  auto r = load_kubeconfig({t.write("config", kFull)});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->server.host == "api.example.com");
  CHECK(r->server.port == 6443);
  CHECK(r->server.base_path == "/base");
  CHECK(r->tls_server_name == "kubernetes.internal");
  CHECK_FALSE(r->insecure_skip_tls_verify);
  CHECK(r->ca_pem == "CA-PEM");
  CHECK(r->client_cert_pem == "CERT-PEM");
  CHECK(r->client_key_pem == "KEY-PEM");
  CHECK(r->token == "s3cret-token");
  CHECK(r->token_file.empty());
  CHECK(r->namespace_name == "team-a");
  CHECK(r->origin.file == (t.root / "config").string());
  CHECK(r->origin.context == "prod");
  CHECK(r->origin.cluster == "prod-cluster");
  CHECK(r->origin.user == "admin");
  CHECK(r->origin.describe().find("context \"prod\"") != std::string::npos);
}

TEST_CASE("kubeconfig: path forms resolve against the defining file, data beats path") {
  TempDir t;
  t.write("kube/pki/ca.crt", "CA-FROM-FILE");
  t.write("kube/pki/client.crt", "CERT-FROM-FILE");
  t.write("kube/pki/client.key", "KEY-FROM-FILE");
  t.write("kube/tok", "file-token\n");
  const fs::path cfg = t.write("kube/config", R"(current-context: c
clusters:
- name: k
  cluster:
    server: https://k:6443
    certificate-authority: pki/ca.crt
users:
- name: u
  user:
    client-certificate: pki/client.crt
    client-key: pki/client.key
    tokenFile: tok
contexts:
- name: c
  context: {cluster: k, user: u}
)");
  auto r = load_kubeconfig({cfg});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->ca_pem == "CA-FROM-FILE");
  CHECK(r->client_cert_pem == "CERT-FROM-FILE");
  CHECK(r->client_key_pem == "KEY-FROM-FILE");
  CHECK(r->token_file == (t.root / "kube/tok").string());
  CHECK(r->token.empty());
  CHECK(r->namespace_name == "default");

  // The -data forms win, even when the path form names a file that is missing.
  t.write("kube/config2", std::string(R"(current-context: c
clusters:
- name: k
  cluster:
    server: https://k
    certificate-authority: missing/ca.crt
    certificate-authority-data: )") +
                              kCaB64 + R"(
users:
- name: u
  user:
    client-certificate: missing/c.crt
    client-certificate-data: )" +
                              kCertB64 + R"(
    client-key: missing/c.key
    client-key-data: )" + kKeyB64 +
                              R"(
contexts:
- name: c
  context: {cluster: k, user: u}
)");
  r = load_kubeconfig({t.root / "kube/config2"});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->ca_pem == "CA-PEM");
  CHECK(r->client_cert_pem == "CERT-PEM");
  CHECK(r->client_key_pem == "KEY-PEM");
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify and plain http are taken from the file") {
  TempDir t;
  auto r = load_kubeconfig({t.write("config", R"(current-context: c
clusters:
- {name: k, cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true}}
users:
- {name: u, user: {}}
contexts:
- {name: c, context: {cluster: k, user: u}}
)")});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->insecure_skip_tls_verify);
  CHECK(r->server.scheme == "http");
  CHECK(r->server.port == 8080);
  CHECK(r->token.empty());
  CHECK(r->client_cert_pem.empty());
}

TEST_CASE("kubeconfig: several files, first definition and first current-context win") {
  TempDir t;
  const fs::path a = t.write("a/config", R"(clusters:
- {name: shared, cluster: {server: "https://from-a"}}
contexts:
- {name: ctx-a, context: {cluster: shared, user: ua}}
- {name: ctx-b, context: {cluster: shared, user: ua}}
users:
- {name: ua, user: {tokenFile: tok}}
)");
  t.write("a/tok", "token-a");
  const fs::path b = t.write("b/config", R"(current-context: ctx-b
clusters:
- {name: shared, cluster: {server: "https://from-b"}}
- {name: only-b, cluster: {server: "https://only-b"}}
contexts:
- {name: ctx-b, context: {cluster: only-b, user: ub, namespace: from-b}}
users:
- {name: ub, user: {token: tb}}
)");
  const fs::path c = t.write("c/config", "current-context: ctx-a\n");
  const fs::path missing = t.root / "nope/config";

  auto r = load_kubeconfig({missing, a, b, c});
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  // current-context from b (a has none, b's comes before c's); ctx-b as a defines it.
  CHECK(r->origin.context == "ctx-b");
  CHECK(r->origin.file == a.string());
  CHECK(r->server.host == "from-a");
  CHECK(r->namespace_name == "default");
  // The tokenFile resolves against a's directory, the file that defined the user.
  CHECK(r->token_file == (t.root / "a/tok").string());

  // The other order: b's definitions win now.
  r = load_kubeconfig({b, a});
  REQUIRE(r.has_value());
  CHECK(r->server.host == "only-b");
  CHECK(r->token == "tb");
  CHECK(r->namespace_name == "from-b");

  // --context overrides every current-context.
  r = load_kubeconfig({missing, a, b, c}, "ctx-a");
  REQUIRE(r.has_value());
  CHECK(r->origin.context == "ctx-a");
  CHECK(r->server.host == "from-a");

  // The list from $KUBECONFIG: ':'-separated, empties and duplicates dropped.
  auto list = split_kubeconfig_list(a.string() + "::" + b.string() + ":" + a.string() + ":");
  REQUIRE(list.size() == 2);
  CHECK(list[0] == a);
  CHECK(list[1] == b);

  require_error(load_kubeconfig({missing}), errc::config_not_found, {missing.string()});
}

TEST_CASE("kubeconfig: auth-provider and basic-auth users are refused by name") {
  TempDir t;
  const fs::path p = t.write("config", R"(current-context: gcp
clusters:
- {name: k, cluster: {server: "https://k"}}
users:
- name: old-gcp
  user:
    auth-provider:
      name: gcp
- name: basic
  user: {username: admin, password: hunter2}
- name: both
  user:
    auth-provider: {name: gcp}
    exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Never}
contexts:
- {name: gcp, context: {cluster: k, user: old-gcp}}
- {name: basic, context: {cluster: k, user: basic}}
- {name: both, context: {cluster: k, user: both}}
)");
  require_error(
      load_kubeconfig({p}, "gcp"), errc::config_unsupported_auth,
      {"user \"old-gcp\"", p.string(), "auth-provider (gcp)", "does not support", "use a token or client certificate"});
  auto r = load_kubeconfig({p}, "basic");
  require_error(r, errc::config_unsupported_auth, {"user \"basic\"", "basic auth"});
  CHECK(r.error().message.find("hunter2") == std::string::npos);
  require_error(load_kubeconfig({p}, "both"), errc::config_invalid, {"user \"both\"", "both exec and auth-provider"});
}

TEST_CASE("kubeconfig: validation errors name what is wrong") {
  TempDir t;
  auto load = [&](std::string_view text, std::string_view context = {}) {
    return load_kubeconfig({t.write("config", text)}, context);
  };
  const std::string cfg = (t.root / "config").string();

  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
users: [{name: u, user: {client-certificate-data: Q0VSVC1QRU0=}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_invalid, {"user \"u\"", "client-certificate but no client-key"});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
users: [{name: u, user: {client-key: key.pem}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_invalid, {"user \"u\"", "client-key but no client-certificate"});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k", insecure-skip-tls-verify: true, certificate-authority-data: Q0EtUEVN}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_invalid, {"cluster \"k\"", "insecure-skip-tls-verify", "certificate-authority"});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {certificate-authority-data: Q0EtUEVN}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_invalid, {"cluster \"k\"", cfg, "has no server"});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "ftp://k"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_invalid, {"cluster \"k\"", "ftp://k", "scheme"});

  const std::string ok_body = R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
users: [{name: u, user: {}}]
contexts:
- {name: c, context: {cluster: k, user: u}}
- {name: no-cluster, context: {cluster: gone, user: u}}
- {name: no-user, context: {cluster: k, user: gone-user}}
)";
  REQUIRE(load(ok_body).has_value());
  require_error(load(ok_body, "staging"), errc::config_invalid, {"context \"staging\" not found", cfg});
  require_error(load(ok_body, "no-cluster"), errc::config_invalid, {"cluster \"gone\"", "context \"no-cluster\""});
  require_error(load(ok_body, "no-user"), errc::config_invalid, {"user \"gone-user\"", "context \"no-user\""});
  require_error(load("clusters: []\n"), errc::config_invalid, {"no current-context", "--context"});

  // Files named by the config that cannot be read, and bad base64.
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k", certificate-authority: pki/none.crt}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_unreadable, {"certificate-authority", (t.root / "pki/none.crt").string()});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
users: [{name: u, user: {tokenFile: /nonexistent/token}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_unreadable, {"tokenFile", "/nonexistent/token"});
  require_error(load(R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k", certificate-authority-data: "not base64!"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"),
                errc::config_malformed, {"certificate-authority-data", "base64"});
}

TEST_CASE("kubeconfig: bad YAML and wrong shapes name the file and line") {
  TempDir t;
  const fs::path p = t.write("broken", "clusters:\n- name: k\n  cluster: {server: [unclosed\n");
  auto r = load_kubeconfig({p});
  require_error(r, errc::config_malformed, {p.string(), "not valid YAML", "line "});

  const fs::path shape = t.write("shape", "current-context: c\nclusters:\n  name: k\n");
  require_error(load_kubeconfig({shape}), errc::config_malformed,
                {shape.string(), "clusters must be a list", "line 3"});

  const fs::path field = t.write("field", R"(current-context: c
clusters: [{name: k, cluster: {server: {nested: 1}}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  require_error(load_kubeconfig({field}), errc::config_malformed,
                {field.string(), "server must be a string", "line 2"});

  // A binary file: yaml-cpp names the bad escape byte; it must not reach the
  // terminal raw.
  const fs::path binary = t.write("binary", std::string("key: \"\\\x1b[2J\"\n"));
  auto bin = load_kubeconfig({binary});
  require_error(bin, errc::config_malformed, {binary.string(), "not valid YAML", "escape"});
  for (char c : bin.error().message) CHECK(static_cast<unsigned char>(c) >= 0x20);

  // A directory in place of a file is unreadable, with the path and reason.
  fs::create_directories(t.root / "dir");
  require_error(load_kubeconfig({t.root / "dir"}), errc::config_unreadable, {(t.root / "dir").string()});
}

TEST_CASE("kubeconfig: empty files, and files too large to be one, are refused clearly") {
  TempDir t;
  // Empty or comments only: client-go's empty config, named as such.
  for (const char* text : {"", "# nothing but a comment\n"}) {
    const fs::path p = t.write("empty", text);
    require_error(load_kubeconfig({p}), errc::config_invalid, {p.string(), "is empty"});
  }
  // One empty file beside a good one is fine.
  REQUIRE(load_kubeconfig({t.write("empty", ""), t.write("full", kFull)}).has_value());

  // A file past the limit fails on its size, before YAML sees it; one at the
  // limit is read (and fails for what it says).
  const std::string padding(kMaxConfigFileBytes - 1, '#');
  const fs::path at_limit = t.write("at-limit", padding + "\n");
  require_error(load_kubeconfig({at_limit}), errc::config_invalid, {"is empty"});
  const fs::path huge = t.write("huge", std::string(kFull) + padding);
  require_error(load_kubeconfig({huge}), errc::config_unreadable, {huge.string(), "too large", "16 MiB"});

  // So does a referenced file without end (/dev/zero), where a token belongs.
  const fs::path endless = t.write("endless", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k"}}]
users: [{name: u, user: {tokenFile: /dev/zero}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  require_error(load_kubeconfig({endless}), errc::config_unreadable, {"tokenFile", "/dev/zero", "too large"});
}
