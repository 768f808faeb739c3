// HTTP/1.1 to the API server: one request and its response on a
// connection, the pool of keep-alive connections the unary requests reuse
// when there is no HTTP/2 connection, and watch streams, each on a
// connection of its own. Private to src/kube (HttpTransport).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <deque>
#include <memory>

#include "connector.hpp"
#include "toysched/kube/transport.hpp"

namespace toysched::kube {

using Http1Request = boost::beast::http::request<boost::beast::http::string_body>;

class Http1Pool {
 public:
  Http1Pool(Connector& connector, std::size_t max_idle, std::size_t max_body_bytes)
      : connector_(connector), max_idle_(max_idle), max_body_(max_body_bytes) {}

  // One request/response on one connection. `answered` tells whether any
  // byte of a response arrived (if not, the request may be replayed);
  // `keep` whether the connection may go back to the pool.
  boost::asio::awaitable<expected<HttpResponse>> once(Connection& c, const Http1Request& req,
                                                      std::chrono::milliseconds budget, bool& answered, bool& keep);

  // An idle connection the server has not closed, else a new one.
  boost::asio::awaitable<expected<std::unique_ptr<Connection>>> take(std::chrono::milliseconds budget);
  void give_back(std::unique_ptr<Connection> c);
  // Every idle connection dates from before a failure that says the server
  // went away: none of them is worth a try.
  void drop_idle() { idle_.clear(); }
  // Drops the idle connections the server closed or that have been idle
  // for max_idle (before its own idle timeout closes them under a request).
  void drop_stale(std::chrono::steady_clock::time_point now, std::chrono::milliseconds max_idle);
  // Opens connections until n (at most the pool's size) are idle; stops at
  // the first that fails (the requests will say what is wrong).
  boost::asio::awaitable<void> fill(std::size_t n, std::chrono::milliseconds budget);
  std::size_t idle() const noexcept { return idle_.size(); }

 private:
  Connector& connector_;
  std::size_t max_idle_;
  std::size_t max_body_;
  std::deque<std::unique_ptr<Connection>> idle_;
};

// A watch stream on its own connection: writes the GET, then reads until
// the status line and headers are in the framer.
boost::asio::awaitable<expected<std::unique_ptr<Stream>>> open_http1_stream(std::unique_ptr<Connection> c,
                                                                            const Http1Request& req,
                                                                            WatchFramer& framer,
                                                                            std::chrono::milliseconds budget);

}  // namespace toysched::kube
