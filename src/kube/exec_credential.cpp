// Parsing what an exec credential plugin prints, and the JSON it is given
// (client-go's plugin/pkg/client/auth/exec refreshCredsLocked and
// rest.ConfigToExecCluster); see exec_credential.hpp.
#include "toysched/kube/exec_credential.hpp"

#include <simdjson.h>

#include <cstdint>

#include "toysched/json/writer.hpp"
#include "toysched/kube/objects.hpp"

namespace toysched::kube {

namespace dom = simdjson::dom;

namespace {

Error bad(std::string message) { return {make_error_code(errc::exec_failed), std::move(message)}; }

// A value of the plugin's output quoted in a message: at most 64 bytes,
// control characters as '?', so the message stays one line (main() and the
// log print it as one).
std::string quoted(std::string_view v) {
  std::string s(v.substr(0, 64));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "\"" + s + "\"";
}

std::string base64(std::string_view in) {
  static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < in.size() ? digits[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? digits[v & 63] : '=';
  }
  return out;
}

// A string field of the status; absent or null is empty, another type is
// an error (Go's decoder refuses it too).
bool string_field(dom::object o, std::string_view key, std::string& out, std::string& why) {
  dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS || e.is_null()) return true;
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) {
    why = "status." + std::string(key) + " is not a string";
    return false;
  }
  out = std::string(s);
  return true;
}

}  // namespace

std::string exec_cluster_json(const ExecClusterInfo& c) {
  json::Writer w;
  w.object().field("server", c.server);
  if (!c.tls_server_name.empty()) w.field("tls-server-name", c.tls_server_name);
  if (c.insecure_skip_tls_verify) w.field("insecure-skip-tls-verify", true);
  if (!c.ca_pem.empty()) w.field("certificate-authority-data", base64(c.ca_pem));
  if (!c.config_json.empty()) w.key("config").raw(c.config_json);
  return std::move(w.end()).str();
}

std::string exec_info_json(const ExecConfig& c) {
  json::Writer w;
  w.object().field("kind", "ExecCredential").field("apiVersion", c.api_version).key("spec").object();
  if (c.provide_cluster_info && !c.cluster_json.empty()) w.key("cluster").raw(c.cluster_json);
  w.field("interactive", false).end();  // no terminal is ever given to the plugin
  return std::move(w.end()).str();
}

expected<ExecCredential> parse_exec_credential(std::string_view text, std::string_view api_version) {
  dom::parser parser;
  dom::element doc;
  if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS)
    return bad("its output is not JSON (an ExecCredential was expected)");
  dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return bad("its output is not a JSON object");
  std::string_view kind, version;
  // Absent or not a string: left empty, and refused just below.
  if (root["kind"].get_string().get(kind) != simdjson::SUCCESS) kind = {};
  if (root["apiVersion"].get_string().get(version) != simdjson::SUCCESS) version = {};
  if (kind != "ExecCredential") return bad("its output is not an ExecCredential (kind " + quoted(kind) + ")");
  if (version != api_version)
    return bad("it returned apiVersion " + quoted(version) + " but the kubeconfig asks for " +
               std::string(api_version));
  dom::object status;
  if (root["status"].get_object().get(status) != simdjson::SUCCESS)
    return bad("its ExecCredential has no status field");
  ExecCredential c;
  std::string why, expiry;
  if (!string_field(status, "token", c.token, why) ||
      !string_field(status, "clientCertificateData", c.client_cert_pem, why) ||
      !string_field(status, "clientKeyData", c.client_key_pem, why) ||
      !string_field(status, "expirationTimestamp", expiry, why))
    return bad("its ExecCredential is malformed: " + why);
  if (c.token.empty() && c.client_cert_pem.empty() && c.client_key_pem.empty())
    return bad("it returned no token and no client certificate");
  if (c.client_cert_pem.empty() != c.client_key_pem.empty())
    return bad("it returned a client certificate or key, not both");
  if (!expiry.empty()) {
    c.expiry = parse_micro_time(expiry);  // metav1.Time: RFC 3339, as MicroTime without its six digits
    if (!c.expiry) return bad("its status.expirationTimestamp is not an RFC 3339 time");
  }
  return c;
}

}  // namespace toysched::kube
