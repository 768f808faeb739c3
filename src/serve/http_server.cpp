#include "toysched/serve/http_server.hpp"

#include "toysched/log/log.hpp"
#include "toysched/serve/metrics.hpp"
#include "toysched/trace/tasks.hpp"
#include "toysched/util/scope_exit.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <charconv>
#include <list>

namespace toysched::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

class category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "toysched.serve"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
      case errc::ok:
        return "ok";
      case errc::bind_address_invalid:
        return "bind address must be IP:PORT (e.g. 127.0.0.1:10251)";
    }
    return "unknown serve error";
  }
};

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

}  // namespace

const boost::system::error_category& error_category() noexcept {
  static const category c;
  return c;
}

// --- addresses and requests ------------------------------------------------

boost::system::result<BindAddress> parse_bind_address(std::string_view s) {
  std::string_view host, port;
  if (s.starts_with('[')) {  // [v6]:port
    auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return errc::bind_address_invalid;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos || s.find(':') != colon) return errc::bind_address_invalid;
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  unsigned p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || p > 65535)
    return errc::bind_address_invalid;
  std::string h = host == "localhost" ? "127.0.0.1" : std::string(host);
  boost::system::error_code aec;
  asio::ip::make_address(h, aec);
  if (aec) return errc::bind_address_invalid;
  return BindAddress{std::move(h), static_cast<std::uint16_t>(p)};
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
      continue;
    }
    const int hi = s[i] == '%' && i + 2 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
    if (lo < 0) {  // not an escape: kept as sent
      out += s[i];
      continue;
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<std::string> Request::param(std::string_view name) const {
  std::string_view q = query;
  while (!q.empty()) {
    auto amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    auto eq = kv.find('=');
    if (percent_decode(kv.substr(0, eq)) != name) continue;
    return eq == std::string_view::npos ? std::string{} : percent_decode(kv.substr(eq + 1));
  }
  return std::nullopt;
}

void Routes::add(std::string method, std::string path, Handler h) {
  by_path_[std::move(path)][std::move(method)] = std::move(h);
}

Response Routes::dispatch(const Request& r) const {
  auto p = by_path_.find(r.path);
  if (p == by_path_.end()) return {404, "text/plain; charset=utf-8", "404 page not found\n", {}};
  const auto& methods = p->second;
  auto m = methods.find(std::string(r.method));
  if (m == methods.end()) m = methods.find("*");
  if (m == methods.end()) {
    std::string allow;
    for (const auto& [name, h] : methods) allow += (allow.empty() ? "" : ", ") + name;
    return {405, "text/plain; charset=utf-8", "405 method not allowed\n", {{"Allow", allow}}};
  }
  return m->second(r);
}

// --- the server ------------------------------------------------------------

struct HttpServer::Impl {
  Impl(asio::any_io_executor ex, const Routes& r, ServerSecurity s, ServerLimits l)
      : acceptor(ex), routes(r), security(std::move(s)), limits(l) {}
  tcp::acceptor acceptor;
  const Routes& routes;
  ServerSecurity security;
  ServerLimits limits;
  std::list<beast::tcp_stream*> conns;  // open connections, for stop()
  bool stopped = false;
};

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::HttpServer(HttpServer&&) noexcept = default;
HttpServer& HttpServer::operator=(HttpServer&&) noexcept = default;
HttpServer::~HttpServer() = default;

boost::system::result<HttpServer> HttpServer::listen(asio::any_io_executor ex, const BindAddress& addr,
                                                     const Routes& routes, ServerSecurity security,
                                                     ServerLimits limits) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(addr.host, ec);
  if (ec) return errc::bind_address_invalid;
  auto impl = std::make_shared<Impl>(ex, routes, std::move(security), limits);
  tcp::endpoint ep(ip, addr.port);
  auto& a = impl->acceptor;
  if (a.open(ep.protocol(), ec); ec) return ec;
  // A restarted scheduler must get its port back while the old connections
  // sit in TIME_WAIT.
  if (a.set_option(tcp::acceptor::reuse_address(true), ec); ec) return ec;
  if (a.bind(ep, ec); ec) return ec;
  if (a.listen(asio::socket_base::max_listen_connections, ec); ec) return ec;
  return HttpServer(std::move(impl));
}

std::uint16_t HttpServer::port() const noexcept {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

void HttpServer::stop() {
  impl_->stopped = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  // Cutting is enough: these are debugging and scrape requests, retried by
  // their clients; the scheduler's own shutdown grace is for binds.
  for (auto* s : impl_->conns) s->socket().close(ec);
}

namespace {

http::response<http::string_body> to_beast(Response r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::content_type, r.content_type);
  res.set(http::field::server, "toy-scheduler");
  for (auto& [k, v] : r.headers) res.set(k, v);
  res.keep_alive(keep_alive);
  res.body() = std::move(r.body);
  res.prepare_payload();
  return res;
}

std::string peer_name(const tcp::socket& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "?";
  auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}

// While a connection is open, stop() can cut it: listed until the guard
// this returns goes.
auto registered(std::list<beast::tcp_stream*>& conns, beast::tcp_stream& s) {
  auto it = conns.insert(conns.end(), &s);
  return util::scope_exit([&conns, it] { conns.erase(it); });
}

Request to_request(const http::request<http::string_body>& req) {
  std::string_view target(req.target().data(), req.target().size());
  auto qmark = target.find('?');
  auto auth = req[http::field::authorization];
  return Request{std::string_view(req.method_string().data(), req.method_string().size()), target.substr(0, qmark),
                 qmark == std::string_view::npos ? std::string_view{} : target.substr(qmark + 1), req.body(),
                 std::string_view(auth.data(), auth.size())};
}

// The guard first (it may wait on the API server), then the handler.
asio::awaitable<Response> answer(const HttpServer::Impl& impl, const Request& r) {
  try {
    if (impl.security.guard) {
      auto refused = co_await impl.security.guard->admit(r);
      if (refused) co_return std::move(*refused);
    }
    co_return impl.routes.dispatch(r);
  } catch (const std::exception& e) {
    // A handler bug must not take the scheduler down with it.
    TS_ERROR("HTTP handler failed", {"path", r.path}, {"err", e.what()});
  }
  co_return Response{500, "text/plain; charset=utf-8", "internal error\n", {}};
}

// A response without a length, written as it is produced, then the end of
// the connection (the only way to end a body of unknown length in HTTP/1.x
// without chunking, which EventSource does not need).
template <class Stream>
class Sink final : public StreamSink {
 public:
  Sink(const HttpServer::Impl& impl, Stream& stream, trace::TaskScope& task)
      : impl_(impl), stream_(stream), task_(task) {}
  asio::awaitable<bool> write(std::string chunk) override {
    if (impl_.stopped) co_return false;
    beast::get_lowest_layer(stream_).expires_after(impl_.limits.write_timeout);
    auto [ec, n] = co_await trace::traced(task_, trace::points::serve_write,
                                          asio::async_write(stream_, asio::buffer(chunk), nothrow));
    co_return !ec && !impl_.stopped;
  }
  asio::awaitable<bool> pause(std::chrono::milliseconds d) override {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await trace::traced(task_, trace::points::ui_tick, t.async_wait(nothrow));
    co_return !impl_.stopped;
  }

 private:
  const HttpServer::Impl& impl_;
  Stream& stream_;
  trace::TaskScope& task_;
};

template <class Stream>
asio::awaitable<void> stream_response(const HttpServer::Impl& impl, Stream& stream, trace::TaskScope& task,
                                      const Response& out, unsigned version) {
  std::string head = "HTTP/" + std::to_string(version / 10) + "." + std::to_string(version % 10) + " " +
                     std::to_string(out.status) + " " +
                     std::string(http::obsolete_reason(static_cast<http::status>(out.status))) +
                     "\r\nContent-Type: " + out.content_type +
                     "\r\nServer: toy-scheduler\r\nCache-Control: no-cache\r\nConnection: close\r\n";
  for (const auto& [k, v] : out.headers) head += k + ": " + v + "\r\n";
  head += "\r\n";
  Sink<Stream> sink(impl, stream, task);
  if (!co_await sink.write(std::move(head))) co_return;
  try {
    co_await out.stream(sink);
  } catch (const std::exception& e) {
    TS_ERROR("HTTP stream failed", {"err", e.what()});
  }
}

// Requests on one connection, plain or TLS, until it closes.
template <class Stream>
asio::awaitable<void> serve_requests(std::shared_ptr<HttpServer::Impl> impl, Stream& stream, trace::TaskScope& task,
                                     const std::string& peer) {
  beast::flat_buffer buffer;
  const ServerLimits& lim = impl->limits;
  auto& tcp_layer = beast::get_lowest_layer(stream);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(lim.header_limit);
    parser.body_limit(lim.body_limit);
    // The deadline covers the whole request, so a client trickling bytes is
    // cut as surely as a silent one (and an idle keep-alive connection too).
    tcp_layer.expires_after(lim.read_timeout);
    auto [ec, n] =
        co_await trace::traced(task, trace::points::serve_read, http::async_read(stream, buffer, parser, nothrow));
    if (ec) {
      unsigned status = ec == http::error::body_limit ? 413 : ec == http::error::header_limit ? 431 : 0;
      if (status) {  // say why before closing: the client can act on it
        tcp_layer.expires_after(lim.write_timeout);
        auto res = to_beast({status, "text/plain; charset=utf-8", "request too large\n", {}}, 11, false);
        co_await trace::traced(task, trace::points::serve_write, http::async_write(stream, res, nothrow));
      } else if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
                 ec != asio::error::operation_aborted && ec != asio::error::connection_reset) {
        TS_LOG(4, "HTTP read failed", {"peer", peer}, {"err", ec.message()});
      }
      break;
    }
    const auto& req = parser.get();
    Request r = to_request(req);
    Response out = co_await answer(*impl, r);
    if (out.stream) {
      const unsigned version = req.version();
      co_await stream_response(*impl, stream, task, out, version);
      break;
    }
    bool keep = req.keep_alive() && !impl->stopped;
    auto res = to_beast(std::move(out), req.version(), keep);
    tcp_layer.expires_after(lim.write_timeout);
    auto [wec, wn] = co_await trace::traced(task, trace::points::serve_write, http::async_write(stream, res, nothrow));
    if (wec || !keep) break;
  }
  boost::system::error_code ignored;
  tcp_layer.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> session(std::shared_ptr<HttpServer::Impl> impl, tcp::socket socket) {
  auto peer = peer_name(socket);
  auto task = trace::TaskScope{"serve/conn/", peer};
  if (!impl->security.tls) {
    beast::tcp_stream stream(std::move(socket));
    auto listed = registered(impl->conns, stream);
    co_await serve_requests(impl, stream, task, peer);
    co_return;
  }
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *impl->security.tls);
  auto listed = registered(impl->conns, beast::get_lowest_layer(stream));
  // The handshake is part of reading the first request: same deadline.
  beast::get_lowest_layer(stream).expires_after(impl->limits.read_timeout);
  auto [ec] = co_await trace::traced(task, trace::points::serve_read,
                                     stream.async_handshake(asio::ssl::stream_base::server, nothrow));
  if (ec) {
    TS_LOG(4, "TLS handshake failed", {"peer", peer}, {"err", ec.message()});
    co_return;
  }
  co_await serve_requests(impl, stream, task, peer);
}

}  // namespace

asio::awaitable<void> HttpServer::run() {
  auto impl = impl_;  // the server object may be moved while we run
  auto task = trace::TaskScope(impl->security.tls ? "serve/https" : "serve/http");
  auto ex = co_await asio::this_coro::executor;
  while (!impl->stopped) {
    auto [ec, socket] = co_await trace::traced(task, trace::points::serve_accept, impl->acceptor.async_accept(nothrow));
    if (impl->stopped) break;
    if (ec) {
      // EMFILE and friends: wait a moment rather than spin on the error.
      TS_WARN("HTTP accept failed", {"err", ec.message()});
      asio::steady_timer t(ex, 100ms);
      co_await trace::traced(task, trace::points::serve_accept, t.async_wait(nothrow));
      continue;
    }
    if (impl->conns.size() >= impl->limits.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    asio::co_spawn(ex, session(impl, std::move(socket)), [](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        TS_ERROR("HTTP connection failed", {"err", x.what()});
      }
    });
  }
}

// --- standard endpoints ----------------------------------------------------

void add_health_route(Routes& routes, std::string path, std::vector<HealthCheck> checks) {
  std::string what = path.substr(path.rfind('/') + 1);  // "readyz"
  checks.insert(checks.begin(), HealthCheck{"ping", [] { return std::optional<std::string>(); }});
  routes.get(std::move(path), [what, checks = std::move(checks)](const Request& r) {
    std::string lines;
    bool ok = true;
    for (const auto& c : checks) {
      auto reason = c.check();
      if (reason)
        lines += "[-]" + c.name + " failed: " + *reason + "\n";
      else
        lines += "[+]" + c.name + " ok\n";
      ok = ok && !reason;
    }
    if (ok && !r.param("verbose")) return Response{200, "text/plain; charset=utf-8", "ok", {}};
    lines += what + (ok ? " check passed\n" : " check failed\n");
    return Response{ok ? 200u : 500u, "text/plain; charset=utf-8", std::move(lines), {}};
  });
}

void add_metrics_route(Routes& routes, Registry& registry) {
  routes.get("/metrics", [&registry](const Request&) {
    return Response{200, std::string(Registry::content_type), registry.render(), {}};
  });
}

void add_debug_tasks_route(Routes& routes) {
  routes.get("/debug/tasks", [](const Request& r) {
    if (r.param("format") == "json") return Response{200, "application/json", trace::dump_json(), {}};
    return Response{200, "text/plain; charset=utf-8", trace::dump_text(), {}};
  });
}

void add_debug_flags_v_route(Routes& routes) {
  routes.any("/debug/flags/v", [](const Request& r) {
    if (r.method != "PUT") return Response{406, "text/plain", "unsupported http method\n", {}};
    std::string_view v = r.body;
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.remove_suffix(1);
    int level = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), level);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || level < 0)
      return Response{400,
                      "text/plain",
                      "failed set klog.logging.verbosity " + std::string(v) + ": strconv.ParseInt: parsing \"" +
                          std::string(v) + "\": invalid syntax\n",
                      {}};
    log::set_verbosity(level);
    TS_LOG(0, "Set verbosity", {"v", level});
    return Response{200, "text/plain", "successfully set klog.logging.verbosity to " + std::string(v) + "\n", {}};
  });
}

void add_json_route(Routes& routes, std::string path, std::function<std::string()> json) {
  routes.get(std::move(path), [json = std::move(json)](const Request&) {
    return Response{200, "application/json", json(), {}};
  });
}

}  // namespace toysched::serve
