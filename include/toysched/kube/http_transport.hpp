// The real Transport: HTTP/2 or HTTP/1.1 over TCP and TLS to the API server
// (Beast, OpenSSL, nghttp2), on the caller's executor. What it does is said
// in transport.hpp; how, in these files under src/kube/:
//
//   connector.cpp       DNS, TCP, TLS (certificates, server name), ALPN
//   http1.cpp           one HTTP/1.1 exchange, the keep-alive pool, watch streams
//   h2_session.cpp      the HTTP/2 connection the unary requests share
//   request_policy.cpp  the rate limiter, deadlines, 429/5xx retries after
//                       Retry-After, the 401 token re-read or exec re-run, replays
//   exec_auth.cpp       the exec plugin's credential, cached and refreshed
//   http_transport.cpp  this class: which connection a request takes
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"
#include "toysched/kube/transport.hpp"

namespace toysched::kube {

struct TransportOptions {
  double qps = 50;  // negative: no client-side limit
  int burst = 100;
  std::chrono::milliseconds connect_timeout{10'000};  // DNS + TCP + TLS
  std::chrono::milliseconds request_timeout{60'000};  // write + whole response
  int max_retries = 10;                               // client-go's 429/5xx budget
  std::chrono::seconds max_retry_after{30};           // never sleep longer than this per retry
  std::size_t max_idle_connections = 32;
  std::size_t max_body_bytes = 256u << 20;  // one response (a page of a list)
  std::string user_agent = "toy-scheduler";
  // An exec credential plugin running longer is killed (client-go has no
  // limit; a hung plugin would stall every request here).
  std::chrono::milliseconds exec_timeout{30'000};
};

class HttpTransport final : public Transport {
 public:
  // Fails on TLS material that does not load (bad CA, key not matching cert).
  static expected<std::unique_ptr<HttpTransport>> create(boost::asio::any_io_executor ex, ClientConfig config,
                                                         TransportOptions options = {});
  ~HttpTransport() override;

  boost::asio::awaitable<expected<HttpResponse>> request(HttpRequest req) override;
  boost::asio::awaitable<expected<std::unique_ptr<Stream>>> open_stream(std::string target,
                                                                        WatchFramer& framer) override;
  // The HTTP/2 connection, or else HTTP/1.1 connections until n are idle.
  boost::asio::awaitable<void> warm_up(std::size_t n) override;
  boost::asio::awaitable<void> keep_warm(std::size_t n, std::chrono::milliseconds max_idle) override;
  boost::asio::awaitable<bool> probe() override;

  const ClientConfig& config() const noexcept override;
  boost::asio::any_io_executor executor() const noexcept override;
  bool http2() const noexcept override;
  std::size_t idle_connections() const noexcept override;
  void close_when_idle() override;
  const std::map<std::pair<std::string, std::string>, std::uint64_t>& request_counts() const noexcept override;
  // Connections opened so far (tests check keep-alive reuse).
  std::uint64_t connections_opened() const noexcept;

  struct impl;

 private:
  explicit HttpTransport(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

}  // namespace toysched::kube
