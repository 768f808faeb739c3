// Exec credentials: what a plugin prints (ExecCredential v1 and v1beta1)
// and what it is given (KUBERNETES_EXEC_INFO). The kubeconfig's exec block
// is in config_exec_test.cpp.
#include "toysched/kube/exec_credential.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace toysched::kube;
using namespace std::chrono;

namespace {

std::string credential(std::string_view version, std::string_view status) {
  return R"({"kind":"ExecCredential","apiVersion":")" + std::string(version) + R"(","spec":{},"status":)" +
         std::string(status) + "}";
}

template <class T>
void require_exec_error(const expected<T>& r, std::string_view needle) {
  REQUIRE_FALSE(r.has_value());
  INFO(r.error().message);
  CHECK(r.error().code == make_error_code(errc::exec_failed));
  CHECK(r.error().message.find(needle) != std::string::npos);
  CHECK(r.error().message.find('\n') == std::string::npos);  // one log line
}

}  // namespace

TEST_CASE("ExecCredential: a token, with or without an expiry, in v1 and v1beta1") {
  auto c = parse_exec_credential(credential(kExecV1, R"({"token":"abc","expirationTimestamp":"2026-12-07T21:00:00Z"})"),
                                 kExecV1);
  REQUIRE(c.has_value());
  CHECK(c->token == "abc");
  REQUIRE(c->expiry);
  CHECK(*c->expiry == sys_days{year{2026} / 12 / 7} + hours(21));
  c = parse_exec_credential(
      credential(kExecV1, R"({"token":"abc","expirationTimestamp":"2026-12-07T21:00:00.5+01:00"})"), kExecV1);
  REQUIRE(c.has_value());
  CHECK(*c->expiry == sys_days{year{2026} / 12 / 7} + hours(20) + milliseconds(500));
  c = parse_exec_credential(credential(kExecV1beta1, R"({"token":"t","unknownField":1})"), kExecV1beta1);
  REQUIRE(c.has_value());
  CHECK(c->token == "t");
  CHECK_FALSE(c->expiry);
}

TEST_CASE("ExecCredential: a client certificate and key") {
  auto c = parse_exec_credential(credential(kExecV1, R"({"clientCertificateData":"CERT\n","clientKeyData":"KEY\n"})"),
                                 kExecV1);
  REQUIRE(c.has_value());
  CHECK(c->token.empty());
  CHECK(c->client_cert_pem == "CERT\n");
  CHECK(c->client_key_pem == "KEY\n");
  require_exec_error(parse_exec_credential(credential(kExecV1, R"({"clientCertificateData":"C"})"), kExecV1),
                     "not both");
  require_exec_error(parse_exec_credential(credential(kExecV1, R"({"clientKeyData":"K","token":"t"})"), kExecV1),
                     "not both");
}

TEST_CASE("ExecCredential: garbage and wrong documents are clear errors, never the token") {
  require_exec_error(parse_exec_credential("Password: ", kExecV1), "not JSON");
  require_exec_error(parse_exec_credential("", kExecV1), "not JSON");
  require_exec_error(parse_exec_credential("[1,2]", kExecV1), "not a JSON object");
  require_exec_error(parse_exec_credential(R"({"kind":"Pod","apiVersion":"v1"})", kExecV1), "not an ExecCredential");
  // Found by fuzz-exec-credential: a newline of the output in the message.
  require_exec_error(parse_exec_credential(R"({"kind":"Exec\nCredential"})", kExecV1), "(kind \"Exec?Credential\")");
  require_exec_error(parse_exec_credential(R"({"kind":"ExecCredential","apiVersion":"v\r1"})", kExecV1),
                     "apiVersion \"v?1\"");
  auto wrong = parse_exec_credential(credential(kExecV1beta1, R"({"token":"secret"})"), kExecV1);
  require_exec_error(wrong, "asks for client.authentication.k8s.io/v1");
  CHECK(wrong.error().message.find("secret") == std::string::npos);
  require_exec_error(
      parse_exec_credential(R"({"kind":"ExecCredential","apiVersion":")" + std::string(kExecV1) + "\"}", kExecV1),
      "no status");
  require_exec_error(parse_exec_credential(credential(kExecV1, "{}"), kExecV1), "no token");
  require_exec_error(parse_exec_credential(credential(kExecV1, R"({"token":7})"), kExecV1), "status.token");
  require_exec_error(
      parse_exec_credential(credential(kExecV1, R"({"token":"t","expirationTimestamp":"tomorrow"})"), kExecV1),
      "RFC 3339");
}

TEST_CASE("KUBERNETES_EXEC_INFO: interactive false, the cluster only when asked for") {
  ExecConfig c;
  c.api_version = std::string(kExecV1);
  c.cluster_json = exec_cluster_json({"https://k:6443", "name.internal", false, "CA", R"({"audience":"x"})"});
  CHECK(c.cluster_json ==
        R"({"server":"https://k:6443","tls-server-name":"name.internal","certificate-authority-data":"Q0E=",)"
        R"("config":{"audience":"x"}})");
  CHECK(exec_info_json(c) ==
        R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}})");
  c.provide_cluster_info = true;
  CHECK(exec_info_json(c) == R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":)"
                             R"({"cluster":)" +
                                 c.cluster_json + R"(,"interactive":false}})");
  CHECK(exec_cluster_json({"http://k", "", true, "", ""}) ==
        R"({"server":"http://k","insecure-skip-tls-verify":true})");
}
