// HttpTransport's state, shared by http_transport.cpp (which connection a
// request takes) and request_policy.cpp (the rate limit, retries and
// deadlines around each try). Private to src/kube.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "connector.hpp"
#include "exec_auth.hpp"
#include "h2_session.hpp"
#include "http1.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/kube/rate_limiter.hpp"

namespace toysched::kube {

struct HttpTransport::impl {
  boost::asio::any_io_executor ex;
  ClientConfig config;
  TransportOptions opts;
  TokenSource tokens;
  std::shared_ptr<ExecAuthenticator> exec;  // the exec plugin, if the user has one
  ExecAuthenticator::Credential exec_cred;  // what requests send now
  RateLimiter limiter;
  Connector connector;  // refers to `config`: declared after it
  Http1Pool pool;
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts;
  // HTTP/2 for the unary requests, as client-go: when the server is TLS,
  // offers "h2", and DISABLE_HTTP2 (client-go's switch) is not set.
  std::shared_ptr<H2Session> h2;
  bool h2_off = false, h2_opening = false;
  std::shared_ptr<boost::asio::steady_timer> h2_opened;  // waited on while h2_opening
  std::optional<Error> h2_open_failed;                   // how the last opening ended, if badly

  impl(boost::asio::any_io_executor e, ClientConfig c, TransportOptions o,
       std::optional<boost::asio::ssl::context> tls);
  ~impl();

  // "Bearer TOKEN", or empty.
  std::string authorization();
  // With an exec plugin: the credential to send, the plugin run when it is
  // due; a new client certificate makes new connections (the HTTP/2
  // session and idle connections are let go). Without one: nullptr.
  boost::asio::awaitable<expected<ExecAuthenticator::Credential>> credentials();
  Http1Request build(const HttpRequest& r);
  H2Request h2_request(const HttpRequest& r);

  // The HTTP/2 session, opened when there is none; nullptr: use HTTP/1.1.
  boost::asio::awaitable<expected<std::shared_ptr<H2Session>>> h2_session(std::chrono::milliseconds budget,
                                                                          bool& fresh);

  // How one try of a request ended, beyond its result.
  struct Try {
    bool resend = false;  // not seen by the server: send it again as if new
    bool replay = false;  // lost in a way that allows one replay
  };
  // One try: on the HTTP/2 session if there is one, else a pooled
  // HTTP/1.1 connection (a fresh one when `replayed`).
  boost::asio::awaitable<expected<HttpResponse>> attempt(const HttpRequest& r, bool replayed, Try& t);
};

// What is left of a request's time: the transport's own timeout, cut to
// the request's deadline. Zero or less: the deadline has passed.
std::chrono::milliseconds request_budget(std::chrono::milliseconds own, const RequestLimits& l);
// errc::request_timeout: "VERB target: not done by its deadline".
Error out_of_time(const HttpRequest& r);

}  // namespace toysched::kube
