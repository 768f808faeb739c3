// Where the client configuration comes from besides a kubeconfig file: the
// in-cluster config from an injected environment, the loading order, and
// the rotating token source on a fake clock.
#include "toysched/kube/config.hpp"

#include "config_fixtures.hpp"
#include "toysched/kube/errors.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

namespace fs = std::filesystem;
using namespace toysched::kube;
using namespace toysched::test::config;

namespace {

// An environment of these variables and this service account directory.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  fs::path sa_dir;
  Environment env() const {
    Environment e;
    e.lookup = [v = vars](const std::string& k) -> std::optional<std::string> {
      auto it = v.find(k);
      if (it == v.end()) return std::nullopt;
      return it->second;
    };
    e.serviceaccount_dir = sa_dir;
    return e;
  }
};

}  // namespace

TEST_CASE("in-cluster config from the service account volume") {
  TempDir t;
  const fs::path sa = t.root / "var/run/secrets/kubernetes.io/serviceaccount";
  t.write(sa / "ca.crt", "CLUSTER-CA");
  t.write(sa / "token", "sa-token\n");
  t.write(sa / "namespace", "academy-build\n");
  FakeEnv fe{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}, sa};

  auto r = load_in_cluster(fe.env());
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->server.to_string() == "https://10.96.0.1");
  CHECK(r->server.port == 443);
  CHECK(r->ca_pem == "CLUSTER-CA");
  CHECK(r->token_file == (sa / "token").string());
  CHECK(r->token.empty());
  CHECK(r->namespace_name == "academy-build");
  CHECK(r->origin.in_cluster);
  CHECK_FALSE(r->insecure_skip_tls_verify);

  fe.vars["KUBERNETES_SERVICE_HOST"] = "fd00:10:96::1";
  fe.vars["KUBERNETES_SERVICE_PORT"] = "6443";
  fe.vars["POD_NAMESPACE"] = "from-env";
  r = load_in_cluster(fe.env());
  REQUIRE(r.has_value());
  CHECK(r->server.host == "fd00:10:96::1");
  CHECK(r->server.to_string() == "https://[fd00:10:96::1]:6443");
  CHECK(r->namespace_name == "from-env");

  fs::remove(sa / "namespace");
  fe.vars.erase("POD_NAMESPACE");
  r = load_in_cluster(fe.env());
  REQUIRE(r.has_value());
  CHECK(r->namespace_name == "default");

  fe.vars["KUBERNETES_SERVICE_PORT"] = "https";
  require_error(load_in_cluster(fe.env()), errc::config_invalid, {"in-cluster", "port"});
  fe.vars.erase("KUBERNETES_SERVICE_PORT");
  require_error(load_in_cluster(fe.env()), errc::config_not_found, {"KUBERNETES_SERVICE_PORT"});

  fe.vars["KUBERNETES_SERVICE_PORT"] = "443";
  fs::remove(sa / "token");
  require_error(load_in_cluster(fe.env()), errc::config_unreadable, {(sa / "token").string()});
  t.write(sa / "token", "x");
  fs::remove(sa / "ca.crt");
  require_error(load_in_cluster(fe.env()), errc::config_unreadable, {(sa / "ca.crt").string()});
}

TEST_CASE("loading order: --kubeconfig, $KUBECONFIG, in cluster, ~/.kube/config") {
  TempDir t;
  auto kubeconfig = [&](const fs::path& rel, std::string_view server) {
    return t.write(rel,
                   "current-context: c\nclusters: [{name: k, cluster: {server: \"" + std::string(server) +
                       "\"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n");
  };
  const fs::path flag = kubeconfig("flag/config", "https://from-flag");
  const fs::path envfile = kubeconfig("env/config", "https://from-env");
  kubeconfig("home/.kube/config", "https://from-home");
  const fs::path sa = t.root / "sa";
  t.write(sa / "ca.crt", "CA");
  t.write(sa / "token", "tok");

  FakeEnv fe{{{"KUBECONFIG", (t.root / "missing").string() + ":" + envfile.string()},
              {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
              {"KUBERNETES_SERVICE_PORT", "443"},
              {"HOME", (t.root / "home").string()}},
             sa};
  auto host = [&](std::string_view flag_path) {
    auto r = load_client_config(flag_path, {}, fe.env());
    if (!r) return "error: " + r.error().message;
    return r->origin.in_cluster ? "in-cluster" : r->server.host;
  };

  CHECK(host(flag.string()) == "from-flag");
  CHECK(host({}) == "from-env");
  fe.vars.erase("KUBECONFIG");
  CHECK(host({}) == "in-cluster");
  fe.vars.erase("KUBERNETES_SERVICE_PORT");  // both are needed
  CHECK(host({}) == "from-home");
  fe.vars["HOME"] = (t.root / "nowhere").string();
  require_error(load_client_config({}, {}, fe.env()), errc::config_not_found, {"--kubeconfig", "KUBECONFIG"});

  // An explicit path that does not exist is an error, never a fallback.
  require_error(load_client_config((t.root / "typo").string(), {}, fe.env()), errc::config_unreadable,
                {(t.root / "typo").string(), "--kubeconfig"});
  // $KUBECONFIG with no existing file is an error that shows its value.
  fe.vars["KUBECONFIG"] = (t.root / "x").string() + ":" + (t.root / "y").string();
  require_error(load_client_config({}, {}, fe.env()), errc::config_not_found, {"$KUBECONFIG", (t.root / "y").string()});
  // --context reaches the file.
  fe.vars.erase("KUBECONFIG");
  require_error(load_client_config(flag.string(), "other", fe.env()), errc::config_invalid, {"context \"other\""});
}

TEST_CASE("token source: reload after 60 s, after invalidate, keep the last token") {
  TempDir t;
  const fs::path file = t.write("token", "token-1\n");
  auto now = TokenSource::Clock::time_point{} + std::chrono::hours(1);
  auto ts = TokenSource::file(file, {}, [&] { return now; });
  CHECK(ts.uses_file());

  CHECK(ts.current() == "token-1");
  t.write("token", "token-2");
  now += std::chrono::seconds(60);
  CHECK(ts.current() == "token-1");  // not yet: only after more than 60 s
  now += std::chrono::seconds(1);
  CHECK(ts.current() == "token-2");

  t.write("token", "token-3");
  now += std::chrono::seconds(5);
  CHECK(ts.current() == "token-2");
  ts.invalidate();  // a 401
  CHECK(ts.current() == "token-3");
  CHECK_FALSE(ts.take_error());

  // The file vanishes: the last good token stays, the error is reported once.
  fs::remove(file);
  now += std::chrono::seconds(61);
  CHECK(ts.current() == "token-3");
  auto err = ts.take_error();
  REQUIRE(err);
  CHECK(err->code == make_error_code(errc::token_unreadable));
  CHECK(err->message.find(file.string()) != std::string::npos);
  CHECK(err->message.find("token-3") == std::string::npos);
  CHECK(ts.current() == "token-3");
  ts.invalidate();
  CHECK(ts.current() == "token-3");
  CHECK_FALSE(ts.take_error());  // same run of failures: not reported again

  // It comes back: picked up on the next call (failures do not wait 60 s).
  t.write("token", "token-4");
  CHECK(ts.current() == "token-4");
  fs::remove(file);
  ts.invalidate();
  CHECK(ts.current() == "token-4");
  CHECK(ts.take_error());  // a new run of failures is reported again
}

TEST_CASE("token source from a config") {
  TempDir t;
  ClientConfig c;
  c.token = "inline";
  auto fixed = TokenSource::for_config(c);
  CHECK_FALSE(fixed.uses_file());
  CHECK(fixed.current() == "inline");
  fixed.invalidate();
  CHECK(fixed.current() == "inline");

  // A token file wins over the inline token once it can be read.
  c.token_file = (t.root / "tok").string();
  auto now = TokenSource::Clock::time_point{};
  auto ts = TokenSource::for_config(c, [&] { return now; });
  CHECK(ts.current() == "inline");
  REQUIRE(ts.take_error());
  t.write("tok", "  from-file \n");
  CHECK(ts.current() == "from-file");

  // An empty file is a failure, not an empty token.
  t.write("tok", "\n");
  ts.invalidate();
  CHECK(ts.current() == "from-file");
  CHECK(ts.take_error());

  CHECK(TokenSource().current().empty());
}
