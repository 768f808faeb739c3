// The client's transport to the API server: requests and watch streams, on
// the caller's executor (one thread, no locks). This header is the interface
// (Transport) and its vocabulary; HttpTransport (http_transport.hpp) is the
// real one:
//
// - Requests share one HTTP/2 connection when the server offers h2 by ALPN
//   (kube-apiserver does; DISABLE_HTTP2 set in the environment turns it off,
//   as in client-go), else a pool of HTTP/1.1 keep-alive connections. Each
//   stream (a watch) gets an HTTP/1.1 connection of its own, closed when the
//   stream ends.
// - Every request waits for the client-side rate limiter first.
// - 429 and 5xx responses carrying Retry-After are retried (at most
//   max_retries times, sleeping what the header says, capped); a 401 re-reads
//   the token file once and retries (bound tokens rotate).
// - Connect and request timeouts fail with their own codes
//   (errc::connect_timeout, errc::request_timeout); TLS failures with
//   errc::tls_failed, the OpenSSL reason kept in the message.
//
// Any HTTP status that arrives is a successful exchange: callers decide what
// a 404 or a 409 means. Only transport failures are errors here.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"

namespace toysched::kube {

class WatchFramer;

// Bounds on one request, beyond the transport's own timeouts.
struct RequestLimits {
  // The whole exchange, rate-limiter wait and retries included, ends by
  // then (errc::request_timeout): a lease renew must not outlive its renew
  // deadline (client-go cuts it with a context).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Asked right before the request is written, after any wait: false drops
  // it unsent (errc::cancelled). A leader that lost its lease sends no bind,
  // not even one that was waiting for a rate-limit token.
  std::function<bool()> may_send;
};

// When a request passed each gate, for callers that report latency by stage
// (the bind path's per-pod line and histograms). Filled by request().
struct RequestTrace {
  std::chrono::steady_clock::time_point admitted;   // the rate limiter let it go
  std::chrono::steady_clock::time_point connected;  // a connection in hand: the write starts
  bool fresh_connection = false;                    // that connection was opened for it (TCP + TLS)
};

struct HttpRequest {
  boost::beast::http::verb verb = boost::beast::http::verb::get;
  std::string target;  // path and query, e.g. /api/v1/pods?limit=500
  std::string body;
  std::string content_type;  // default application/json when there is a body
  RequestLimits limits;
  RequestTrace* trace = nullptr;  // optional; must outlive the request
};

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  std::optional<std::chrono::seconds> retry_after;
  // The request was sent again after its first connection died without an
  // answer: the server may have seen it twice (a POST's replay can 409).
  bool replayed = false;
};

// One open streaming response (a watch) on a connection of its own.
class Stream {
 public:
  virtual ~Stream() = default;
  // Reads what has arrived into the framer. False at the end of the
  // connection. idle_timeout bounds the wait for the next bytes.
  virtual boost::asio::awaitable<expected<bool>> read_into(WatchFramer& framer,
                                                           std::chrono::milliseconds idle_timeout) = 0;
  virtual void close() = 0;
};

// The client's one seam: everything above it (Api, the reflectors, the
// binds, the elector) talks to the API server through this interface, and
// unit tests put a scripted fake in its place (test/unit/support). The real
// one is HttpTransport (http_transport.hpp).
class Transport {
 public:
  virtual ~Transport() = default;

  // One request, with the transport's own retries and limits (see
  // HttpTransport): a response with any status, or a transport failure.
  virtual boost::asio::awaitable<expected<HttpResponse>> request(HttpRequest req) = 0;

  // Sends a GET and returns once the response status and headers are in (they
  // are fed into the framer). Not rate-limited per event, only per open.
  virtual boost::asio::awaitable<expected<std::unique_ptr<Stream>>> open_stream(std::string target,
                                                                                WatchFramer& framer) = 0;

  // Opens the connections a burst of n requests would need now, so that the
  // burst (a race for binds) pays no TCP and TLS handshakes.
  virtual boost::asio::awaitable<void> warm_up(std::size_t n) = 0;

  // Keeps n connections warm: drops idle ones the server closed or is about
  // to close (idle for max_idle; kube-apiserver closes connections idle for
  // 90 s), then opens new ones up to n. Run now and then, so a burst after
  // a quiet spell finds its connections open.
  virtual boost::asio::awaitable<void> keep_warm(std::size_t n, std::chrono::milliseconds max_idle) = 0;

  // Whether the server answers at all (GET /readyz → 200 within a second or
  // two), outside the rate limit: a reflector whose request got no answer
  // probes instead of sleeping out a long backoff, so a restarted API server
  // is used the moment it is back.
  virtual boost::asio::awaitable<bool> probe() = 0;

  virtual const ClientConfig& config() const noexcept = 0;
  virtual boost::asio::any_io_executor executor() const noexcept = 0;
  // Unary requests go over one HTTP/2 connection (the server chose h2).
  virtual bool http2() const noexcept = 0;
  // HTTP/1.1 connections open, waiting in the pool.
  virtual std::size_t idle_connections() const noexcept = 0;
  // At shutdown: the HTTP/2 connection ends once its requests are answered,
  // and later requests (the lease's release, the last events) use HTTP/1.1.
  // An idle HTTP/2 connection is a read that never ends: left open, it
  // would keep the event loop from running dry.
  virtual void close_when_idle() = 0;
  // Requests sent, by verb and HTTP status ("error" when none came back),
  // for /metrics. Retries count as requests.
  virtual const std::map<std::pair<std::string, std::string>, std::uint64_t>& request_counts() const noexcept = 0;
};

}  // namespace toysched::kube
