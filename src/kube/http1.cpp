#include "http1.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "toysched/kube/watch_framer.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

template <class S>
asio::awaitable<expected<HttpResponse>> exchange(S& s, Connection& c, const Http1Request& req, milliseconds budget,
                                                 std::size_t max_body, const std::string& where, bool& answered,
                                                 bool& keep) {
  c.lowest().expires_after(budget);
  auto [wec, wn] = co_await http::async_write(s, req, nothrow);
  (void)wn;
  if (wec == beast::error::timeout) co_return fail(errc::request_timeout, "write to " + where + ": timed out");
  if (wec) co_return fail(errc::connection_lost, "write to " + where + ": " + wec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body);
  auto [rec, rn] = co_await http::async_read(s, c.buffer, parser, nothrow);
  answered = parser.got_some() || rn > 0;
  if (rec == beast::error::timeout)
    co_return fail(errc::request_timeout, std::string(req.method_string()) + " " + std::string(req.target()) +
                                              ": no response within " + std::to_string(budget.count()) + "ms");
  if (rec == http::error::body_limit)
    co_return fail(errc::object_too_large, std::string(req.target()) + ": response body over the limit");
  if (rec) co_return fail(errc::connection_lost, "read from " + where + ": " + rec.message());
  c.lowest().expires_never();
  auto& res = parser.get();
  keep = res.keep_alive();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  if (auto it = res.find(http::field::content_type); it != res.end()) out.content_type = std::string(it->value());
  if (auto it = res.find(http::field::retry_after); it != res.end())
    out.retry_after = parse_retry_after(std::string_view(it->value()));
  out.body = std::move(res.body());
  co_return out;
}

// An idle connection the server has closed (it restarted, or its idle
// timeout ran out) reads as EOF without blocking; one still open has
// nothing to read, or a TLS record such as a session ticket. Checked
// before each reuse, so a restarted server does not cost one failed
// request per pooled connection.
bool peer_closed(Connection& c) {
  auto& sock = c.lowest().socket();
  if (!sock.is_open()) return true;
  char byte;
  ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;
  return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}

class Http1Stream final : public Stream {
 public:
  explicit Http1Stream(std::unique_ptr<Connection> c) : c_(std::move(c)) {}

  asio::awaitable<expected<bool>> read_into(WatchFramer& framer, milliseconds idle_timeout) override {
    // A stream's connection is fresh and only ever read here, straight into
    // the framer (headers included): its buffer stays empty.
    char buf[64 * 1024];
    c_->lowest().expires_after(idle_timeout);
    std::size_t n = 0;
    boost::system::error_code ec;
    if (auto* t = std::get_if<tls_stream>(&c_->stream)) {
      std::tie(ec, n) = co_await t->async_read_some(asio::buffer(buf), nothrow);
    } else {
      std::tie(ec, n) = co_await std::get<beast::tcp_stream>(c_->stream).async_read_some(asio::buffer(buf), nothrow);
    }
    if (n > 0) {
      auto fed = framer.feed(std::string_view(buf, n));
      if (!fed) co_return Error{fed.error(), "watch stream: " + fed.error().message()};
    }
    if (ec == beast::error::timeout)
      co_return Error{make_error_code(errc::request_timeout), "watch stream idle for too long"};
    if (ec == asio::error::eof || ec == ssl::error::stream_truncated || ec == asio::error::connection_reset)
      co_return false;
    if (ec) co_return Error{make_error_code(errc::connection_lost), "watch stream: " + ec.message()};
    co_return true;
  }

  void close() override {
    boost::system::error_code ec;
    c_->lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    c_->lowest().close();
  }

 private:
  std::unique_ptr<Connection> c_;
};

}  // namespace

asio::awaitable<expected<HttpResponse>> Http1Pool::once(Connection& c, const Http1Request& req, milliseconds budget,
                                                        bool& answered, bool& keep) {
  const std::string& where = connector_.where();
  if (auto* t = std::get_if<tls_stream>(&c.stream))
    co_return co_await exchange(*t, c, req, budget, max_body_, where, answered, keep);
  co_return co_await exchange(std::get<beast::tcp_stream>(c.stream), c, req, budget, max_body_, where, answered, keep);
}

asio::awaitable<expected<std::unique_ptr<Connection>>> Http1Pool::take(milliseconds budget) {
  while (!idle_.empty()) {
    auto c = std::move(idle_.front());
    idle_.pop_front();
    if (!peer_closed(*c)) {
      c->reused = true;
      co_return c;
    }
  }
  co_return co_await connector_.connect(budget);
}

void Http1Pool::give_back(std::unique_ptr<Connection> c) {
  c->idle_since = std::chrono::steady_clock::now();
  if (idle_.size() < max_idle_) idle_.push_back(std::move(c));
}

void Http1Pool::drop_stale(std::chrono::steady_clock::time_point now, milliseconds max_idle) {
  std::erase_if(
      idle_, [&](const std::unique_ptr<Connection>& c) { return now - c->idle_since >= max_idle || peer_closed(*c); });
}

asio::awaitable<void> Http1Pool::fill(std::size_t n, milliseconds budget) {
  n = std::min(n, max_idle_);
  while (idle_.size() < n) {
    auto c = co_await connector_.connect(budget);
    if (!c) co_return;
    give_back(std::move(*c));
  }
}

asio::awaitable<expected<std::unique_ptr<Stream>>> open_http1_stream(std::unique_ptr<Connection> conn,
                                                                     const Http1Request& req, WatchFramer& framer,
                                                                     milliseconds budget) {
  auto& c = *conn;
  c.lowest().expires_after(budget);
  boost::system::error_code wec;
  if (auto* t = std::get_if<tls_stream>(&c.stream)) {
    std::tie(wec, std::ignore) = co_await http::async_write(*t, req, nothrow);
  } else {
    std::tie(wec, std::ignore) = co_await http::async_write(std::get<beast::tcp_stream>(c.stream), req, nothrow);
  }
  if (wec) co_return fail(errc::connection_lost, "watch " + std::string(req.target()) + ": " + wec.message());
  auto stream = std::make_unique<Http1Stream>(std::move(conn));
  // Read until the status line and headers are in.
  while (!framer.header_done()) {
    auto more = co_await stream->read_into(framer, budget);
    if (!more) co_return more.error();
    if (!*more)
      co_return fail(errc::connection_lost, "watch " + std::string(req.target()) + ": closed before the headers");
  }
  co_return std::unique_ptr<Stream>(std::move(stream));
}

}  // namespace toysched::kube
