// Opening a connection to the API server: DNS, TCP, then TLS with the
// kubeconfig's CA and client certificate, the server's name checked, and
// HTTP/2 offered by ALPN when asked. Private to src/kube (HttpTransport).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "h2_session.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"

namespace toysched::kube {

// One connection, plain or TLS, with what the HTTP/1.1 pool keeps beside it.
struct Connection {
  std::variant<boost::beast::tcp_stream, tls_stream> stream;
  boost::beast::flat_buffer buffer;
  bool reused = false;
  std::chrono::steady_clock::time_point idle_since;  // put back in the pool

  explicit Connection(boost::asio::any_io_executor ex) : stream(std::in_place_type<boost::beast::tcp_stream>, ex) {}
  Connection(boost::asio::any_io_executor ex, boost::asio::ssl::context& ctx)
      : stream(std::in_place_type<tls_stream>, ex, ctx) {}

  boost::beast::tcp_stream& lowest();
};

Error fail(errc code, std::string message);

class Connector {
 public:
  // The TLS context of an https server (nullopt for http), or why its CA,
  // certificate or key does not load (errc::config_invalid).
  static expected<std::optional<boost::asio::ssl::context>> tls_context(const ClientConfig& config);

  Connector(boost::asio::any_io_executor ex, const ClientConfig& config, std::optional<boost::asio::ssl::context> tls);

  // A connection within `budget` (errc::connect_timeout past it), offering
  // h2 by ALPN when `offer_h2`; errc::connect_failed or errc::tls_failed.
  boost::asio::awaitable<expected<std::unique_ptr<Connection>>> connect(std::chrono::milliseconds budget,
                                                                        bool offer_h2 = false);
  // The server picked "h2" on this TLS connection.
  static bool chose_h2(Connection& c);

  // New connections use `tls` (a new client certificate from an exec
  // plugin). Open ones keep theirs: OpenSSL counts each connection's
  // reference to its SSL_CTX, so the old context outlives this object.
  void set_tls(boost::asio::ssl::context tls) { tls_ = std::move(tls); }

  // "https://host:port", for messages.
  const std::string& where() const noexcept { return where_; }
  std::uint64_t opened() const noexcept { return opened_; }

 private:
  std::string verify_name() const;
  boost::asio::any_io_executor ex_;
  const ClientConfig& config_;
  std::optional<boost::asio::ssl::context> tls_;
  std::string where_;
  std::uint64_t opened_ = 0;
};

}  // namespace toysched::kube
