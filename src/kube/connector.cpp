#include "connector.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstring>
#include <string_view>

namespace toysched::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Why a CA, certificate or key did not load. OpenSSL's "no start line" does
// not tell bytes that are no PEM at all from a PEM block of the wrong kind
// (a key where a certificate belongs), so name what was found.
std::string pem_problem(std::string_view pem, std::string_view want, const boost::system::error_code& ec) {
  constexpr std::string_view begin_tag = "-----BEGIN ";
  const auto begin = pem.find(begin_tag);
  const auto label = begin == std::string_view::npos ? begin : begin + begin_tag.size();
  const auto end = label == std::string_view::npos ? label : pem.find("-----", label);
  if (end == std::string_view::npos || end - label > 64) return "it is not PEM (no \"-----BEGIN\" line)";
  const std::string_view found = pem.substr(label, end - label);
  if (found.find(want) == std::string_view::npos)
    return ec.message() + " (it holds a PEM " + std::string(found) + " block, not a " + std::string(want) + ")";
  return ec.message();
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The reason OpenSSL gave for refusing the peer, in words.
std::string tls_reason(tls_stream& s, const boost::system::error_code& ec) {
  long verify = SSL_get_verify_result(s.native_handle());
  if (verify != X509_V_OK) return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
  return ec.message();
}

}  // namespace

beast::tcp_stream& Connection::lowest() {
  if (auto* t = std::get_if<tls_stream>(&stream)) return beast::get_lowest_layer(*t);
  return std::get<beast::tcp_stream>(stream);
}

Error fail(errc code, std::string message) { return {make_error_code(code), std::move(message)}; }

expected<std::optional<ssl::context>> Connector::tls_context(const ClientConfig& cfg) {
  if (!cfg.server.tls()) return std::optional<ssl::context>{};
  auto bad = [](std::string what) { return Error{make_error_code(errc::config_invalid), std::move(what)}; };
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  if (!cfg.ca_pem.empty()) {
    ctx.add_certificate_authority(asio::buffer(cfg.ca_pem), ec);
    if (ec)
      return bad("certificate authority of " + cfg.origin.describe() +
                 " does not load: " + pem_problem(cfg.ca_pem, "CERTIFICATE", ec));
  } else {
    ctx.set_default_verify_paths(ec);
  }
  if (!cfg.client_cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(cfg.client_cert_pem), ec);
    if (ec)
      return bad("client certificate of " + cfg.origin.describe() +
                 " does not load: " + pem_problem(cfg.client_cert_pem, "CERTIFICATE", ec));
    ctx.use_private_key(asio::buffer(cfg.client_key_pem), ssl::context::pem, ec);
    if (ec)
      return bad("client key of " + cfg.origin.describe() +
                 " does not load: " + pem_problem(cfg.client_key_pem, "PRIVATE KEY", ec));
    if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
      return bad("client key of " + cfg.origin.describe() + " does not match its certificate");
  }
  ctx.set_verify_mode(cfg.insecure_skip_tls_verify ? ssl::verify_none : ssl::verify_peer);
  return std::optional<ssl::context>(std::move(ctx));
}

Connector::Connector(asio::any_io_executor ex, const ClientConfig& config, std::optional<ssl::context> tls)
    : ex_(ex), config_(config), tls_(std::move(tls)), where_(config.server.to_string()) {}

std::string Connector::verify_name() const {
  return config_.tls_server_name.empty() ? config_.server.host : config_.tls_server_name;
}

asio::awaitable<expected<std::unique_ptr<Connection>>> Connector::connect(milliseconds budget, bool offer_h2) {
  std::unique_ptr<Connection> c = tls_ ? std::make_unique<Connection>(ex_, *tls_) : std::make_unique<Connection>(ex_);
  tcp::resolver resolver(ex_);
  auto [rec, endpoints] =
      co_await resolver.async_resolve(config_.server.host, std::to_string(config_.server.port), nothrow);
  if (rec) co_return fail(errc::connect_failed, "resolve " + config_.server.host + ": " + rec.message());
  c->lowest().expires_after(budget);
  auto [cec, ep] = co_await c->lowest().async_connect(endpoints, nothrow);
  if (cec == beast::error::timeout)
    co_return fail(errc::connect_timeout,
                   "connect to " + where_ + ": timed out after " + std::to_string(budget.count()) + "ms");
  if (cec) co_return fail(errc::connect_failed, "connect to " + where_ + ": " + cec.message());
  c->lowest().socket().set_option(tcp::no_delay(true));
  if (auto* t = std::get_if<tls_stream>(&c->stream)) {
    std::string name = verify_name();
    SSL* ssl_handle = t->native_handle();
    if (!is_ip_address(name)) SSL_set_tlsext_host_name(ssl_handle, name.c_str());  // SNI is for names only
    if (!config_.insecure_skip_tls_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
      int ok = is_ip_address(name) ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                                   : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
      if (ok != 1) co_return fail(errc::tls_failed, "cannot verify server name \"" + name + "\"");
    }
    // Offered per connection, never on the context: a connection that
    // did not offer h2 is sure to speak HTTP/1.1.
    static constexpr unsigned char protos[] = "\x02h2\x08http/1.1";
    if (offer_h2) SSL_set_alpn_protos(ssl_handle, protos, sizeof protos - 1);
    auto [hec] = co_await t->async_handshake(ssl::stream_base::client, nothrow);
    if (hec == beast::error::timeout)
      co_return fail(errc::connect_timeout, "TLS handshake with " + where_ + ": timed out");
    if (hec) co_return fail(errc::tls_failed, "TLS handshake with " + where_ + ": " + tls_reason(*t, hec));
  }
  c->lowest().expires_never();
  ++opened_;
  co_return c;
}

bool Connector::chose_h2(Connection& c) {
  auto* t = std::get_if<tls_stream>(&c.stream);
  if (t == nullptr) return false;
  const unsigned char* proto = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(t->native_handle(), &proto, &len);
  return len == 2 && std::memcmp(proto, "h2", 2) == 0;
}

}  // namespace toysched::kube
