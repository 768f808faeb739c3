// The transport against a real API server (the lab): TLS verified, tokens,
// client certificates, keep-alive, a watch stream.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

#include "async_run.hpp"
#include "lab_fixture.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/kube/watch_framer.hpp"

using namespace toysched;
using namespace toysched::kube;
using testing::Lab;
using testing::run_async;
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

ClientConfig load(const std::string& path) {
  auto c = load_kubeconfig({path});
  REQUIRE_MESSAGE(c.has_value(), (c.has_value() ? "" : c.error().message));
  return *c;
}

std::unique_ptr<HttpTransport> make(asio::io_context& io, ClientConfig c) {
  auto t = HttpTransport::create(io.get_executor(), std::move(c));
  REQUIRE_MESSAGE(t.has_value(), (t.has_value() ? "" : t.error().message));
  return std::move(*t);
}

expected<HttpResponse> get(asio::io_context& io, Transport& t, std::string target) {
  HttpRequest req;
  req.target = std::move(target);
  return run_async(io, [&]() -> asio::awaitable<expected<HttpResponse>> { co_return co_await t.request(req); }());
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto p = fs::temp_directory_path() / (testing::unique_name("toysched-" + name));
  std::ofstream(p) << text;
  return p.string();
}

// n GETs at once (target(i) for the i-th); counts the 200s and the rest.
struct Tally {
  int ok = 0, other = 0;
};
Tally get_at_once(asio::io_context& io, Transport& t, int n, std::function<std::string(int)> target,
                  std::chrono::seconds timeout) {
  Tally tally;
  for (int i = 0; i < n; ++i) {
    asio::co_spawn(
        io,
        [&t, &tally, target, i]() -> asio::awaitable<void> {
          HttpRequest req;
          req.target = target(i);
          auto r = co_await t.request(req);
          if (r && r->status == 200)
            ++tally.ok;
          else
            ++tally.other;
        },
        asio::detached);
  }
  REQUIRE(testing::pump_until(
      io, [&] { return tally.ok + tally.other == n; }, timeout));
  return tally;
}

}  // namespace

TEST_CASE("token auth over verified TLS, with keep-alive") {
  auto& lab = Lab::shared();
  asio::io_context io;
  auto t = make(io, load(lab.kubeconfig()));
  for (int i = 0; i < 5; ++i) {
    auto r = get(io, *t, "/version");
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
    CHECK(r->status == 200);
    CHECK(r->body.find("\"gitVersion\": \"v1.36.3\"") != std::string::npos);
  }
  CHECK(t->connections_opened() == 1);
  auto nodes = get(io, *t, "/api/v1/nodes");
  REQUIRE(nodes.has_value());
  CHECK(nodes->status == 200);
  CHECK(nodes->body.find("lab-node-1") != std::string::npos);
}

TEST_CASE("client certificate auth") {
  auto& lab = Lab::shared();
  asio::io_context io;
  auto t = make(io, load(lab.cert_kubeconfig()));
  auto r = get(io, *t, "/api/v1/namespaces/default");
  REQUIRE(r.has_value());
  CHECK(r->status == 200);
}

TEST_CASE("a wrong CA fails with a clear TLS error") {
  auto& lab = Lab::shared();
  asio::io_context io;
  auto cfg = load(lab.kubeconfig());
  // Any other CA: the client certificate's issuer is not the serving CA.
  std::string dir = fs::path(lab.kubeconfig()).parent_path().string();
  std::string other_ca =
      testing::run_command({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-days", "1", "-subj", "/CN=not-the-lab", "-keyout", "/dev/null", "-out", "/dev/stdout"});
  cfg.ca_pem = other_ca;
  auto t = make(io, cfg);
  auto r = get(io, *t, "/version");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::tls_failed);
  CHECK(r.error().message.find("certificate verify failed") != std::string::npos);
}

TEST_CASE("verification stays on unless the kubeconfig says insecure-skip-tls-verify") {
  auto& lab = Lab::shared();
  asio::io_context io;
  // No certificate-authority: the system's roots, which do not know the lab's CA.
  auto cfg = load(lab.kubeconfig());
  cfg.ca_pem.clear();
  REQUIRE_FALSE(cfg.insecure_skip_tls_verify);
  auto t = make(io, cfg);
  auto r = get(io, *t, "/version");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::tls_failed);
  CHECK(r.error().message.find("certificate verify failed") != std::string::npos);
  // The same file with insecure-skip-tls-verify: true (and no CA, as the
  // kubeconfig rules require) is the one way to turn it off.
  std::ifstream in(lab.kubeconfig());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto ca = text.find("certificate-authority-data:");
  REQUIRE(ca != std::string::npos);
  auto eol = text.find('\n', ca);
  text.replace(ca, eol - ca, "insecure-skip-tls-verify: true");
  auto insecure = load(write_temp("insecure.kubeconfig", text));
  CHECK(insecure.insecure_skip_tls_verify);
  auto ti = make(io, insecure);
  auto ok = get(io, *ti, "/version");
  REQUIRE_MESSAGE(ok.has_value(), (ok ? "" : ok.error().message));
  CHECK(ok->status == 200);
}

TEST_CASE("a wrong token is a 401 response; a replaced token file is picked up without a restart") {
  auto& lab = Lab::shared();
  asio::io_context io;
  auto cfg = load(lab.kubeconfig());
  std::string good = cfg.token;
  std::string file = write_temp("token", "not-a-valid-token");
  cfg.token.clear();
  cfg.token_file = file;
  auto t = make(io, cfg);
  auto r1 = get(io, *t, "/api/v1/nodes");
  REQUIRE(r1.has_value());
  CHECK(r1->status == 401);
  std::ofstream(file) << good;  // the kubelet rotated the token
  auto r2 = get(io, *t, "/api/v1/nodes");
  REQUIRE(r2.has_value());
  CHECK(r2->status == 200);
  fs::remove(file);
}

TEST_CASE("nothing listening: connect fails with its own code") {
  asio::io_context io;
  auto cfg = load(Lab::shared().kubeconfig());
  cfg.server.port = 1;  // nothing listens on tcpmux
  auto t = make(io, cfg);
  auto r = get(io, *t, "/version");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::connect_failed);
}

TEST_CASE("a watch stream delivers events as they happen") {
  auto& lab = Lab::shared();
  std::string ns = testing::unique_name("transport-watch");
  lab.kubectl({"create", "namespace", ns});
  asio::io_context io;
  auto t = make(io, load(lab.kubeconfig()));
  WatchFramer framer;
  std::vector<std::string> lines;
  bool ok = run_async(io, [&]() -> asio::awaitable<bool> {
    // Not kube-root-ca.crt: the lab's root-CA publisher puts it in every new
    // namespace, as kube-controller-manager does, at a moment of its own.
    auto s = co_await t->open_stream("/api/v1/namespaces/" + ns +
                                         "/configmaps?watch=1&timeoutSeconds=30"
                                         "&fieldSelector=metadata.name%21%3Dkube-root-ca.crt",
                                     framer);
    if (!s) co_return false;
    if (framer.status() != 200) co_return false;
    // Create objects from outside while the stream is open.
    testing::run_command(
        {testing::build_dir() + "/kubectl", "--kubeconfig", lab.kubeconfig(), "-n", ns, "create", "configmap", "one"});
    testing::run_command(
        {testing::build_dir() + "/kubectl", "--kubeconfig", lab.kubeconfig(), "-n", ns, "create", "configmap", "two"});
    std::string line;
    while (lines.size() < 2) {
      auto more = co_await (*s)->read_into(framer, std::chrono::seconds(20));
      if (!more || !*more) co_return false;
      while (framer.next_line(line)) lines.push_back(line);
    }
    (*s)->close();
    co_return true;
  }());
  CHECK(ok);
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0].find("\"type\":\"ADDED\"") != std::string::npos);
  CHECK(lines[0].find("\"name\":\"one\"") != std::string::npos);
  CHECK(lines[1].find("\"name\":\"two\"") != std::string::npos);
  lab.kubectl({"delete", "namespace", ns, "--wait=false"});
}

TEST_CASE("429 with Retry-After from a real API server is retried until it succeeds") {
  // An API server that takes one request at a time (priority and fairness
  // off): 10 at once must meet its plain-text 429s, and every one of them
  // must end in a 200 after honouring Retry-After (10 tries, 1 s apart).
  auto lab = Lab::start({"--nodes", "1", "--no-kubelet", "--max-requests-inflight", "1"});
  asio::io_context io;
  auto cfg = load(lab.kubeconfig());
  // system:masters is never throttled: ask as a plain service account
  // (every authenticated user may read /openapi).
  lab.kubectl({"create", "serviceaccount", "tester", "-n", "default"});
  cfg.token = lab.kubectl({"create", "token", "tester", "-n", "default"});
  while (!cfg.token.empty() && (cfg.token.back() == '\n' || cfg.token.back() == '\r')) cfg.token.pop_back();
  kube::TransportOptions opts;
  opts.qps = -1;  // no client-side limit: we want the server to push back
  auto created = HttpTransport::create(io.get_executor(), cfg, opts);
  REQUIRE(created.has_value());
  auto& t = **created;
  // /openapi/v2 is a few MB: slow enough to overlap.
  auto [ok, other] = get_at_once(
      io, t, 10, [](int) { return std::string("/openapi/v2"); }, std::chrono::seconds(120));
  std::uint64_t throttled = 0;
  for (const auto& [key, n] : t.request_counts())
    if (key.second == "429") throttled += n;
  MESSAGE("10 concurrent GET /openapi/v2: " << ok << " ok, " << throttled << " 429s retried");
  CHECK(ok == 10);
  CHECK(other == 0);
  CHECK(throttled > 0);
}

// HTTP/2 (issue 20): kube-apiserver chooses h2 by ALPN, as it does for
// client-go. Each request is a stream of one connection; before, each
// request in flight took a connection of its own.
TEST_CASE("requests in flight together share one HTTP/2 connection") {
  auto& lab = Lab::shared();
  asio::io_context io;
  auto t = make(io, load(lab.kubeconfig()));
  auto [ok, other] = get_at_once(
      io, *t, 20, [](int i) { return std::string(i % 2 ? "/version" : "/api/v1/nodes"); }, std::chrono::seconds(60));
  CHECK(other == 0);
  CHECK(ok == 20);
  CHECK(t->http2());
  CHECK(t->connections_opened() == 1);
  CHECK(t->idle_connections() == 0);  // no HTTP/1.1 connection was needed
}

TEST_CASE("DISABLE_HTTP2 keeps to HTTP/1.1 connections, as in client-go") {
  auto& lab = Lab::shared();
  asio::io_context io;
  setenv("DISABLE_HTTP2", "1", 1);
  auto t = make(io, load(lab.kubeconfig()));  // read when the transport is made
  unsetenv("DISABLE_HTTP2");
  auto r = get(io, *t, "/version");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->status == 200);
  CHECK_FALSE(t->http2());
  CHECK(t->idle_connections() == 1);  // kept alive in the HTTP/1.1 pool
}

// On one HTTP/2 connection, a request that fails with `want` (its stream
// reset by us) must leave the connection to serve the next one.
void fails_alone(TransportOptions opts, const std::string& target, errc want) {
  asio::io_context io;
  auto created = HttpTransport::create(io.get_executor(), load(Lab::shared().kubeconfig()), opts);
  REQUIRE(created.has_value());
  auto& t = **created;
  auto first = get(io, t, target);
  REQUIRE_FALSE(first.has_value());
  CHECK(first.error().code == want);
  auto next = get(io, t, "/version");
  REQUIRE_MESSAGE(next.has_value(), (next ? "" : next.error().message));
  CHECK(next->status == 200);
  CHECK(t.http2());
  CHECK(t.connections_opened() == 1);
}

TEST_CASE("over HTTP/2, a body over the limit fails alone; the connection serves the next request") {
  TransportOptions opts;
  opts.max_body_bytes = 1024;  // the node list is larger; /version is not
  fails_alone(opts, "/api/v1/nodes", errc::object_too_large);
}

TEST_CASE("over HTTP/2, a request out of time is cut; the connection serves the next request") {
  TransportOptions opts;
  opts.request_timeout = std::chrono::milliseconds(500);
  // A watch answers its headers and then holds the stream open.
  fails_alone(opts, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30", errc::request_timeout);
}

TEST_CASE("requests waiting for an HTTP/2 connection that fails to open share its error, not a turn each") {
  // A server that takes TCP connections and never answers the TLS handshake:
  // every opening ends at the connect timeout. The requests that came while
  // the first opened must not each try in turn (8 timeouts end to end).
  asio::io_context io;
  asio::ip::tcp::acceptor silent(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::vector<asio::ip::tcp::socket> held;
  std::function<void()> accept_next = [&] {
    silent.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket s) {
      if (ec) return;
      held.push_back(std::move(s));
      accept_next();
    });
  };
  accept_next();
  auto cfg = load(Lab::shared().kubeconfig());
  cfg.server.port = silent.local_endpoint().port();
  TransportOptions opts;
  opts.connect_timeout = std::chrono::milliseconds(300);
  auto created = HttpTransport::create(io.get_executor(), cfg, opts);
  REQUIRE(created.has_value());
  auto [ok, other] = get_at_once(
      io, **created, 8, [](int) { return std::string("/version"); }, std::chrono::seconds(30));
  CHECK(ok == 0);
  CHECK(other == 8);
  CHECK(held.size() == 1);  // one opening, shared
}
