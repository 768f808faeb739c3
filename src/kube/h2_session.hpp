// One HTTP/2 connection to the API server (nghttp2 over our TLS stream),
// many requests on it at once. Private to src/kube: the transport sends its
// unary requests here when the server chose "h2" by ALPN.
//
// Why: kube-apiserver is a Go server. With HTTP/1.1 each request in flight
// needs a connection of its own, and each connection is a goroutine that the
// Go runtime wakes from its network poller; under load the woken goroutines
// queue behind the busy ones, and a burst of them is taken newest first. On
// one HTTP/2 connection one goroutine reads every frame and starts each
// request's handler at once, in the order sent. The race drill's audit log
// showed the difference (issue 20): binds sent together on HTTP/1.1 reached
// the server reversed and up to 20 ms apart; kube-scheduler's, on HTTP/2, in
// order and within a millisecond or two.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "toysched/kube/errors.hpp"
#include "toysched/kube/transport.hpp"

struct nghttp2_session;

namespace toysched::kube {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

struct H2Request {
  std::string method, path, authority, user_agent, authorization, content_type, body;
};
// The Content-Type a request is sent with, in either protocol; empty when it
// carries no body (a GET, or a DELETE without options).
std::string content_type_of(const HttpRequest& r);
// The HTTP/2 form of a transport request, with the headers the transport
// sets on every request; a body (and its Content-Type) as in HTTP/1.1.
H2Request h2_request_for(const HttpRequest& r, std::string path, std::string authority, std::string user_agent,
                         std::string authorization);

// Retry-After's delta-seconds form (the API server never sends a date).
std::optional<std::chrono::seconds> parse_retry_after(std::string_view v);

class H2Session : public std::enable_shared_from_this<H2Session> {
 public:
  // The stream has done its TLS handshake and negotiated "h2".
  H2Session(std::unique_ptr<tls_stream> stream, std::string where, std::size_t max_body_bytes);
  ~H2Session();
  H2Session(const H2Session&) = delete;
  H2Session& operator=(const H2Session&) = delete;

  // Sets up the session (our SETTINGS) and starts reading. Call once.
  expected<void> start();

  // Open, and not told by the server (GOAWAY) to take new requests elsewhere.
  bool usable() const noexcept { return session_ != nullptr && !closed_ && !goaway_; }
  std::chrono::steady_clock::time_point last_active() const noexcept { return last_active_; }

  // One request. On a failure `may_have_acted` says whether the server may
  // have seen it: false only when it was never sent, or the server refused
  // the stream (REFUSED_STREAM, or above the last stream of its GOAWAY), so
  // that sending it again cannot be a second send.
  boost::asio::awaitable<expected<HttpResponse>> exchange(const H2Request& req, std::chrono::milliseconds budget,
                                                          bool& may_have_acted);

  // Ends the connection; requests in flight fail as connection_lost.
  void close();
  // Ends it once no request is in flight (now, if none is): its reader must
  // not keep the event loop from running dry at shutdown.
  void close_when_idle();
  bool idle() const noexcept { return pending_.empty(); }

 private:
  struct Pending;
  boost::asio::awaitable<void> read_loop(std::shared_ptr<H2Session> self);
  boost::asio::awaitable<void> flush();
  void kick();  // a flush from outside any exchange (after reading)
  void fail_all(const std::string& why);
  void finish(Pending& p);

  struct Callbacks;  // nghttp2's, in the .cpp (they need its types)
  friend struct Callbacks;

  std::unique_ptr<tls_stream> stream_;
  std::string where_;
  std::size_t max_body_;
  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, Pending*> pending_;
  bool writing_ = false, closed_ = false, goaway_ = false, closing_ = false;
  std::int32_t goaway_last_stream_ = 0;
  std::string close_reason_;
  std::chrono::steady_clock::time_point last_active_;
};

}  // namespace toysched::kube
