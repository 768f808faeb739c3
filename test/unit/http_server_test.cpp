// The HTTP server on a real loopback socket (port 0), with a Beast client
// on the same loop.
#include <doctest/doctest.h>

#include "toysched/log/log.hpp"
#include "toysched/serve/http_server.hpp"
#include "toysched/serve/metrics.hpp"
#include "toysched/serve/tls.hpp"
#include "toysched/trace/tasks.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <functional>
#include <optional>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace serve = toysched::serve;
namespace trace = toysched::trace;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

using Res = http::response<http::string_body>;

asio::awaitable<beast::tcp_stream> connect(std::uint16_t port) {
  beast::tcp_stream s(co_await asio::this_coro::executor);
  co_await s.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), asio::use_awaitable);
  co_return s;
}

asio::awaitable<Res> request(beast::tcp_stream& s, http::verb verb, std::string target, std::string body = {}) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.body() = std::move(body);
  req.prepare_payload();
  co_await http::async_write(s, req, asio::use_awaitable);
  beast::flat_buffer buf;
  Res res;
  co_await http::async_read(s, buf, res, asio::use_awaitable);
  co_return res;
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

// Starts a server on 127.0.0.1:0 with `routes`, runs `body(port)` as a
// coroutine, stops the server and checks the accept loop returned.
void with_server(serve::Routes& routes, serve::ServerLimits limits,
                 std::function<asio::awaitable<void>(std::uint16_t)> body, serve::ServerSecurity security = {}) {
  asio::io_context ioc;
  auto server = serve::HttpServer::listen(ioc.get_executor(), {"127.0.0.1", 0}, routes, security, limits);
  REQUIRE(server.has_value());
  REQUIRE(server->port() != 0);
  bool run_returned = false;
  std::exception_ptr failed;
  asio::co_spawn(ioc, server->run(), [&](std::exception_ptr e) { run_returned = true, failed = e; });
  asio::co_spawn(ioc, body(server->port()), [&](std::exception_ptr e) {
    if (e) failed = e;
    server->stop();
  });
  ioc.run_for(10s);
  if (failed) std::rethrow_exception(failed);
  CHECK(run_returned);
}

serve::Routes standard_routes(serve::Registry& reg, std::optional<std::string>& informers) {
  serve::Routes routes;
  serve::add_health_route(routes, "/healthz", {});
  serve::add_health_route(routes, "/readyz", {{"informer-sync", [&] { return informers; }}});
  serve::add_metrics_route(routes, reg);
  serve::add_debug_tasks_route(routes);
  serve::add_debug_flags_v_route(routes);
  serve::add_json_route(routes, "/debug/cache", [] { return std::string(R"({"nodes":[]})"); });
  return routes;
}

}  // namespace

TEST_CASE("bind addresses") {
  auto a = serve::parse_bind_address("127.0.0.1:10251");
  REQUIRE(a.has_value());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 10251);
  CHECK(serve::parse_bind_address("[::1]:0")->host == "::1");
  CHECK(serve::parse_bind_address("localhost:0")->host == "127.0.0.1");
  CHECK(serve::parse_bind_address("0.0.0.0:10251").has_value());
  for (auto bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "::1:80", "myhost:80", "[::1]"})
    CHECK_MESSAGE(serve::parse_bind_address(bad).error() == serve::errc::bind_address_invalid, bad);
}

TEST_CASE("query parameters are percent-decoded, for every route") {
  serve::Request r;
  r.query = "pod=sched-lab%2Fweb-1&format=text&flag&sp=a+b%20c&bad=100%&Half=%4&v%3D=x";
  CHECK(r.param("pod") == "sched-lab/web-1");
  CHECK(r.param("format") == "text");
  CHECK(r.param("flag") == "");
  CHECK(r.param("sp") == "a b c");
  CHECK(r.param("bad") == "100%");  // not an escape: kept as sent
  CHECK(r.param("Half") == "%4");
  CHECK(r.param("v=") == "x");  // names are decoded too
  CHECK_FALSE(r.param("missing"));
  CHECK(serve::percent_decode("%2f%2F") == "//");
}

TEST_CASE("a streamed response: header without a length, chunks as written, the task parked at ui.tick") {
  serve::Routes routes;
  int pauses = 0;
  bool ended = false;
  routes.get("/stream", [&](const serve::Request&) {
    serve::Response r{200, "text/event-stream", "ignored"};
    r.stream = [&](serve::StreamSink& sink) -> asio::awaitable<void> {
      for (int i = 0; i < 3; ++i) {
        if (!co_await sink.write("data: " + std::to_string(i) + "\n\n")) break;
        if (co_await sink.pause(20ms)) ++pauses;
      }
      ended = true;
    };
    return r;
  });
  std::string got;
  bool parked_seen = false;
  with_server(routes, {}, [&](std::uint16_t port) -> asio::awaitable<void> {
    auto s = co_await connect(port);
    http::request<http::string_body> req{http::verb::get, "/stream", 11};
    req.set(http::field::host, "127.0.0.1");
    co_await http::async_write(s, req, asio::use_awaitable);
    char buf[256];
    for (;;) {
      auto [ec, n] = co_await s.socket().async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
      got.append(buf, n);
      for (const auto& t : trace::snapshot())
        if (t.point != nullptr && std::string_view(t.point->name) == "ui.tick") parked_seen = true;
      if (ec) break;  // the server closes the connection when the stream ends
    }
  });
  CHECK(got.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(got.find("Content-Type: text/event-stream\r\n") != std::string::npos);
  CHECK(got.find("Connection: close\r\n") != std::string::npos);
  CHECK(got.find("Content-Length") == std::string::npos);
  CHECK(got.find("ignored") == std::string::npos);
  CHECK(got.ends_with("\r\n\r\ndata: 0\n\ndata: 1\n\ndata: 2\n\n"));
  CHECK(pauses == 3);
  CHECK(ended);
  CHECK(parked_seen);
}

TEST_CASE("an address in use is an error returned to the caller") {
  asio::io_context ioc;
  serve::Routes routes;
  auto first = serve::HttpServer::listen(ioc.get_executor(), {"127.0.0.1", 0}, routes);
  REQUIRE(first.has_value());
  auto second = serve::HttpServer::listen(ioc.get_executor(), {"127.0.0.1", first->port()}, routes);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error() == boost::system::errc::address_in_use);
  CHECK(second.error().message() == "Address already in use");
}

TEST_CASE("routes, 404, 405, health, metrics, debug endpoints on one keep-alive connection") {
  serve::Registry reg;
  reg.counter("toysched_demo_total", "A demo counter.").with({}).inc(3);
  std::optional<std::string> informers = "pods not synced";
  auto routes = standard_routes(reg, informers);
  with_server(routes, {}, [&](std::uint16_t port) -> asio::awaitable<void> {
    auto s = co_await connect(port);
    auto r = co_await request(s, http::verb::get, "/healthz");
    CHECK(r.result_int() == 200);
    CHECK(r.body() == "ok");
    CHECK(r.keep_alive());

    r = co_await request(s, http::verb::get, "/readyz");
    CHECK(r.result_int() == 500);
    CHECK(r.body() == "[+]ping ok\n[-]informer-sync failed: pods not synced\nreadyz check failed\n");
    informers.reset();
    r = co_await request(s, http::verb::get, "/readyz");
    CHECK(r.body() == "ok");
    r = co_await request(s, http::verb::get, "/readyz?verbose");
    CHECK(r.body() == "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n");

    r = co_await request(s, http::verb::get, "/nope");
    CHECK(r.result_int() == 404);
    r = co_await request(s, http::verb::post, "/metrics");
    CHECK(r.result_int() == 405);
    CHECK(r[http::field::allow] == "GET");

    r = co_await request(s, http::verb::get, "/metrics");
    CHECK(r.result_int() == 200);
    CHECK(r[http::field::content_type] == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(r.body().find("\ntoysched_demo_total 3\n") != std::string::npos);

    r = co_await request(s, http::verb::get, "/debug/cache");
    CHECK(r[http::field::content_type] == "application/json");
    CHECK(r.body() == R"({"nodes":[]})");

    // The server's own tasks, seen through its own endpoint.
    r = co_await request(s, http::verb::get, "/debug/tasks");
    INFO(r.body());
    CHECK(r.body().find("] serve/http at serve.accept (src/serve/http_server.cpp:") != std::string::npos);
    CHECK(r.body().find("] serve/conn/127.0.0.1:") != std::string::npos);
    r = co_await request(s, http::verb::get, "/debug/tasks?format=json");
    CHECK(r[http::field::content_type] == "application/json");
    CHECK(r.body().find(R"("name":"serve/http","state":"waiting","point":"serve.accept")") != std::string::npos);

    // Every request above went over this one connection.
    int conns = 0;
    for (auto& t : trace::snapshot()) conns += t.name.starts_with("serve/conn/");
    CHECK(conns == 1);
  });
}

TEST_CASE("PUT /debug/flags/v answers as kube-scheduler does and changes -v") {
  serve::Registry reg;
  std::optional<std::string> ok;
  auto routes = standard_routes(reg, ok);
  int before = toysched::log::verbosity();
  with_server(routes, {}, [&](std::uint16_t port) -> asio::awaitable<void> {
    auto s = co_await connect(port);
    auto r = co_await request(s, http::verb::put, "/debug/flags/v", "4");
    CHECK(r.result_int() == 200);
    CHECK(r.body() == "successfully set klog.logging.verbosity to 4\n");
    CHECK(toysched::log::verbosity() == 4);
    CHECK(toysched::log::enabled(4));
    CHECK_FALSE(toysched::log::enabled(5));
    r = co_await request(s, http::verb::put, "/debug/flags/v", "x");
    CHECK(r.result_int() == 400);
    CHECK(r.body().starts_with("failed set klog.logging.verbosity x: "));
    r = co_await request(s, http::verb::get, "/debug/flags/v");
    CHECK(r.result_int() == 406);
    CHECK(r.body() == "unsupported http method\n");
  });
  toysched::log::set_verbosity(before);
}

TEST_CASE("a slow client holds up nobody, and is cut at the read deadline") {
  serve::Registry reg;
  std::optional<std::string> ok;
  auto routes = standard_routes(reg, ok);
  serve::ServerLimits limits;
  limits.read_timeout = 1s;
  with_server(routes, limits, [&](std::uint16_t port) -> asio::awaitable<void> {
    // A: half a request, then silence. Its deadline starts after t0.
    auto t0 = std::chrono::steady_clock::now();
    auto slow = co_await connect(port);
    std::string half = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    co_await asio::async_write(slow, asio::buffer(half), asio::use_awaitable);
    co_await sleep_for(20ms);
    // B: served while A is still waiting out its deadline.
    auto fast = co_await connect(port);
    auto r = co_await request(fast, http::verb::get, "/healthz");
    CHECK(r.body() == "ok");
    CHECK(std::chrono::steady_clock::now() - t0 < limits.read_timeout);
    // A is closed by the server once its deadline passes, not before.
    char c;
    auto [ec, n] = co_await slow.async_read_some(asio::buffer(&c, 1), asio::as_tuple(asio::use_awaitable));
    CHECK(ec == asio::error::eof);
    CHECK(std::chrono::steady_clock::now() - t0 >= limits.read_timeout);
  });
}

TEST_CASE("oversized requests are refused with 413") {
  serve::Routes routes;
  serve::add_debug_flags_v_route(routes);
  with_server(routes, {}, [&](std::uint16_t port) -> asio::awaitable<void> {
    auto s = co_await connect(port);
    auto r = co_await request(s, http::verb::put, "/debug/flags/v", std::string(100'000, '4'));
    CHECK(r.result_int() == 413);
    CHECK_FALSE(r.keep_alive());
  });
}

namespace {

// Refuses requests without an Authorization header, after a wait (as a
// review on the network would), and counts what it saw.
class SlowGuard final : public serve::Guard {
 public:
  int seen = 0;
  asio::awaitable<std::optional<serve::Response>> admit(const serve::Request& r) override {
    ++seen;
    co_await sleep_for(30ms);
    if (r.authorization.empty()) co_return serve::Response{401, "text/plain", "no\n", {}};
    co_return std::nullopt;
  }
};

}  // namespace

TEST_CASE("a guard decides before the handler runs, and may wait") {
  serve::Routes routes;
  int handled = 0;
  routes.get("/x", [&](const serve::Request&) {
    ++handled;
    return serve::Response{200, "text/plain", "x\n", {}};
  });
  SlowGuard guard;
  with_server(routes, {},
              [&](std::uint16_t port) -> asio::awaitable<void> {
                auto s = co_await connect(port);
                auto refused = co_await request(s, http::verb::get, "/x");
                CHECK(refused.result_int() == 401);
                CHECK(handled == 0);
                http::request<http::string_body> req{http::verb::get, "/x", 11};
                req.set(http::field::authorization, "Bearer t");
                co_await http::async_write(s, req, asio::use_awaitable);
                beast::flat_buffer buf;
                Res ok;
                co_await http::async_read(s, buf, ok, asio::use_awaitable);
                CHECK(ok.result_int() == 200);
                CHECK(handled == 1);
              },
              {nullptr, &guard});
  CHECK(guard.seen == 2);
}

TEST_CASE("HTTPS with a self-signed certificate") {
  serve::Routes routes;
  serve::add_health_route(routes, "/healthz", {});
  auto tls = serve::make_server_tls({}, "localhost");
  REQUIRE(std::holds_alternative<std::shared_ptr<asio::ssl::context>>(tls));
  with_server(routes, {},
              [&](std::uint16_t port) -> asio::awaitable<void> {
                asio::ssl::context client(asio::ssl::context::tls_client);
                client.set_verify_mode(asio::ssl::verify_none);
                beast::ssl_stream<beast::tcp_stream> s(co_await connect(port), client);
                co_await s.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
                http::request<http::string_body> req{http::verb::get, "/healthz", 11};
                co_await http::async_write(s, req, asio::use_awaitable);
                beast::flat_buffer buf;
                Res res;
                co_await http::async_read(s, buf, res, asio::use_awaitable);
                CHECK(res.result_int() == 200);
                CHECK(res.body() == "ok");
                // Plain HTTP on the TLS port is not answered.
                auto plain = co_await connect(port);
                http::request<http::string_body> preq{http::verb::get, "/healthz", 11};
                co_await http::async_write(plain, preq, asio::use_awaitable);
                Res pres;
                beast::flat_buffer pbuf;
                auto [ec, n] = co_await http::async_read(plain, pbuf, pres, asio::as_tuple(asio::use_awaitable));
                CHECK(ec);
              },
              {std::get<std::shared_ptr<asio::ssl::context>>(tls), nullptr});
}
