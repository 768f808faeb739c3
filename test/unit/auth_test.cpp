// The pure parts of the secure port: bearer tokens, verbs, always-allow
// paths, the review bodies and answers, the TTL cache, the refusals, and the
// server's TLS context.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>

#include <cstdio>
#include <fstream>

#include "toysched/serve/auth.hpp"
#include "toysched/serve/tls.hpp"

using namespace toysched::serve;
using namespace std::chrono_literals;

TEST_CASE("bearer tokens as the API server reads them") {
  CHECK(bearer_token("Bearer abc.def") == "abc.def");
  CHECK(bearer_token("bearer abc") == "abc");
  CHECK(bearer_token("BEARER   abc  ") == "abc");
  CHECK_FALSE(bearer_token(""));
  CHECK_FALSE(bearer_token("Bearer"));
  CHECK_FALSE(bearer_token("Bearer    "));
  CHECK_FALSE(bearer_token("Basic dXNlcjpwYXNz"));
  CHECK_FALSE(bearer_token("Bearerx abc"));
}

TEST_CASE("a non-resource request's verb is its method in lower case") {
  CHECK(request_verb("GET") == "get");
  CHECK(request_verb("PUT") == "put");
  CHECK(request_verb("HEAD") == "head");
  CHECK(request_verb("DELETE") == "delete");
  CHECK(request_verb("BREW") == "unknown");
}

TEST_CASE("always-allow paths: exact, or a prefix ending in *") {
  AuthOptions o;
  CHECK(path_matches("/healthz", o.always_allow_paths));
  CHECK(path_matches("/livez", o.always_allow_paths));
  CHECK(path_matches("/readyz", o.always_allow_paths));
  CHECK_FALSE(path_matches("/healthz/ping", o.always_allow_paths));
  CHECK_FALSE(path_matches("/metrics", o.always_allow_paths));
  CHECK_FALSE(path_matches("/debug/cache", o.always_allow_paths));
  CHECK(path_matches("/debug/cache", {"/debug/*"}));
  CHECK_FALSE(path_matches("/debugx", {"/debug/*"}));
}

TEST_CASE("the review bodies are the API's objects") {
  simdjson::dom::parser p;
  auto tr = p.parse(token_review_body("t\"ok"));
  CHECK(std::string_view(tr["kind"]) == "TokenReview");
  CHECK(std::string_view(tr["apiVersion"]) == "authentication.k8s.io/v1");
  CHECK(std::string_view(tr["spec"]["token"]) == "t\"ok");

  UserInfo u{"system:serviceaccount:ns:sa",
             "uid-1",
             {"system:serviceaccounts", "system:authenticated"},
             {{"authentication.kubernetes.io/pod-name", {"p"}}}};
  auto sar = p.parse(access_review_body(u, "put", "/debug/flags/v"));
  CHECK(std::string_view(sar["kind"]) == "SubjectAccessReview");
  CHECK(std::string_view(sar["spec"]["user"]) == u.name);
  CHECK(std::string_view(sar["spec"]["uid"]) == "uid-1");
  CHECK(std::string_view(sar["spec"]["groups"].at(1)) == "system:authenticated");
  CHECK(std::string_view(sar["spec"]["extra"]["authentication.kubernetes.io/pod-name"].at(0)) == "p");
  CHECK(std::string_view(sar["spec"]["nonResourceAttributes"]["path"]) == "/debug/flags/v");
  CHECK(std::string_view(sar["spec"]["nonResourceAttributes"]["verb"]) == "put");
}

TEST_CASE("review answers") {
  auto ok = parse_token_review(
      R"({"kind":"TokenReview","status":{"authenticated":true,"user":{"username":"alice","uid":"u1",)"
      R"("groups":["g1","system:authenticated"],"extra":{"k":["v1","v2"]}},"audiences":["x"]}})");
  REQUIRE(ok);
  CHECK(ok->authenticated);
  CHECK(ok->user.name == "alice");
  CHECK(ok->user.uid == "u1");
  CHECK(ok->user.groups == std::vector<std::string>{"g1", "system:authenticated"});
  REQUIRE(ok->user.extra.size() == 1);
  CHECK(ok->user.extra[0].second == std::vector<std::string>{"v1", "v2"});
  auto bad = parse_token_review(R"({"status":{"user":{},"error":"token expired"}})");
  REQUIRE(bad);
  CHECK_FALSE(bad->authenticated);
  CHECK(bad->error == "token expired");
  CHECK_FALSE(parse_token_review("not json"));
  CHECK_FALSE(parse_token_review(R"({"kind":"Status"})"));

  auto yes = parse_access_review(R"({"status":{"allowed":true,"reason":"RBAC: allowed by ClusterRoleBinding"}})");
  REQUIRE(yes);
  CHECK(yes->allowed);
  auto no = parse_access_review(R"({"status":{"allowed":false}})");
  REQUIRE(no);
  CHECK_FALSE(no->allowed);
  CHECK_FALSE(parse_access_review("[]"));
}

TEST_CASE("refusals are the API server's Status objects") {
  auto u = unauthorized();
  CHECK(u.status == 401);
  CHECK(u.body.find(R"("reason":"Unauthorized")") != std::string::npos);
  auto f = forbidden("bob", "get", "/debug/cache", "");
  CHECK(f.status == 403);
  CHECK(f.body.find(R"(forbidden: User \"bob\" cannot get path \"/debug/cache\")") != std::string::npos);
  CHECK(f.body.find(R"("code":403)") != std::string::npos);
}

TEST_CASE("the TTL cache forgets at the deadline and stays bounded") {
  using clock = TtlCache<int>::clock;
  TtlCache<int> c(3);
  auto t0 = clock::now();
  c.put("a", 1, t0 + 10s, t0);
  REQUIRE(c.get("a", t0 + 9s));
  CHECK(*c.get("a", t0 + 9s) == 1);
  CHECK_FALSE(c.get("a", t0 + 10s));
  CHECK_FALSE(c.get("b", t0));
  c.put("b", 2, t0 + 1s, t0);
  c.put("c", 3, t0 + 10s, t0);
  c.put("d", 4, t0 + 10s, t0 + 2s);  // full: the expired "b" goes
  CHECK(c.size() == 3);
  CHECK_FALSE(c.get("b", t0));
  CHECK(c.get("a", t0 + 2s));
  c.put("e", 5, t0 + 10s, t0 + 2s);  // full, nothing expired: all go
  CHECK(c.size() == 1);
  CHECK(c.get("e", t0 + 2s));
}

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::string("/tmp/toysched-auth-test-") + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("server TLS: self-signed without files; files must load and match") {
  auto self = make_server_tls({}, "myhost");
  REQUIRE(std::holds_alternative<std::shared_ptr<boost::asio::ssl::context>>(self));
  auto* ctx = std::get<std::shared_ptr<boost::asio::ssl::context>>(self)->native_handle();
  X509* cert = SSL_CTX_get0_certificate(ctx);
  REQUIRE(cert != nullptr);
  CHECK(SSL_CTX_check_private_key(ctx) == 1);
  CHECK(X509_check_host(cert, "localhost", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(cert, "myhost", 0, 0, nullptr) == 1);
  CHECK(X509_check_ip_asc(cert, "127.0.0.1", 0) == 1);

  auto missing = make_server_tls({"/nonexistent/cert.pem", "/nonexistent/key.pem"}, "h");
  REQUIRE(std::holds_alternative<std::string>(missing));
  CHECK(std::get<std::string>(missing).find("--tls-cert-file=/nonexistent/cert.pem") == 0);
  auto half = make_server_tls({"/x", ""}, "h");
  REQUIRE(std::holds_alternative<std::string>(half));

  // A key that is not the certificate's: refused, the files named, no PEM.
  auto garbage = write_temp("key.pem", "-----BEGIN PRIVATE KEY-----\nnotbase64\n-----END PRIVATE KEY-----\n");
  FILE* f = std::fopen((garbage + ".crt").c_str(), "w");
  REQUIRE(f != nullptr);
  PEM_write_X509(f, cert);
  std::fclose(f);
  auto bad = make_server_tls({garbage + ".crt", garbage}, "h");
  REQUIRE(std::holds_alternative<std::string>(bad));
  CHECK(std::get<std::string>(bad).find("--tls-private-key-file=" + garbage) == 0);
  CHECK(std::get<std::string>(bad).find("notbase64") == std::string::npos);
  std::remove(garbage.c_str());
  std::remove((garbage + ".crt").c_str());
}
