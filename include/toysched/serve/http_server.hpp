// A small HTTP/1.1 server on the loop (Beast): /healthz, /livez, /readyz,
// /metrics, /debug/*, over plain HTTP or TLS. One coroutine per connection, keep-alive, size limits
// and a read deadline, so a slow or idle client never holds up another.
//
//   serve::Routes routes;
//   serve::add_health_route(routes, "/readyz", {{"informer-sync", [&] { ... }}});
//   serve::add_metrics_route(routes, registry);
//   auto server = serve::HttpServer::listen(ex, *addr, routes);   // binds now
//   if (!server) { print one line; exit 1; }
//   asio::co_spawn(ex, server->run(), asio::detached);          // task serve/http
//   ...  server->stop();                                         // on SIGTERM
//
// Handlers are plain functions run on the loop: they must not block. Beast
// stays out of this header (it compiles slowly).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace toysched::serve {

class Registry;

enum class errc {
  ok = 0,
  bind_address_invalid = 1,  // --metrics-bind-address is not IP:PORT
};
const boost::system::error_category& error_category() noexcept;
inline boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

struct BindAddress {
  std::string host;        // an IP literal ("127.0.0.1", "::1", "0.0.0.0")
  std::uint16_t port = 0;  // 0: any free port (tests); HttpServer::port() says which
};
// "127.0.0.1:10251", "[::1]:10251", "localhost:0". No DNS: a listen
// address that depends on a resolver is a surprise waiting to happen.
boost::system::result<BindAddress> parse_bind_address(std::string_view s);

struct Request {
  std::string_view method;  // "GET"
  std::string_view path;    // "/debug/tasks"
  std::string_view query;   // "format=json" (no '?')
  std::string_view body;
  std::string_view authorization;  // the Authorization header ("Bearer ..."), for a Guard only
  // The value of a query parameter, percent-decoded ("" when given without
  // '='), or nullopt. The first one wins when a name repeats.
  std::optional<std::string> param(std::string_view name) const;
};

// "%2F" -> "/", "+" -> " "; a '%' not followed by two hex digits is kept as is.
std::string percent_decode(std::string_view s);

// Where a streamed response writes (Server-Sent Events): each write is sent
// at once, under the server's write deadline.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // False once the client is gone, too slow, or the server is stopping: the
  // stream should end then.
  virtual boost::asio::awaitable<bool> write(std::string chunk) = 0;
  // Waits `d`, parked at await point ui.tick; false if the server is stopping.
  virtual boost::asio::awaitable<bool> pause(std::chrono::milliseconds d) = 0;
};
using StreamBody = std::function<boost::asio::awaitable<void>(StreamSink&)>;

struct Response {
  Response() = default;
  Response(unsigned s, std::string type, std::string b, std::vector<std::pair<std::string, std::string>> h = {})
      : status(s), content_type(std::move(type)), body(std::move(b)), headers(std::move(h)) {}

  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones (Allow, ...)
  // Set: `body` is ignored; the status and headers go out without a length,
  // then `stream` writes until it returns, then the connection closes.
  StreamBody stream;
};

using Handler = std::function<Response(const Request&)>;

// Path + method -> handler. Exact paths only (no patterns: the set of
// endpoints is small and fixed). A path with no route is 404; a known path
// with another method is 405 with an Allow header.
class Routes {
 public:
  void add(std::string method, std::string path, Handler h);
  void get(std::string path, Handler h) { add("GET", std::move(path), std::move(h)); }
  void put(std::string path, Handler h) { add("PUT", std::move(path), std::move(h)); }
  // Any method: the handler answers the others itself (/debug/flags/v does,
  // to answer as kube-scheduler does).
  void any(std::string path, Handler h) { add("*", std::move(path), std::move(h)); }

  Response dispatch(const Request& r) const;

 private:
  std::map<std::string, std::map<std::string, Handler>, std::less<>> by_path_;
};

// Decides, before a handler runs, whether the request may have it (the
// secure port's delegated authentication and authorization, serve/auth).
// It may wait on the network: it is a coroutine on the loop.
class Guard {
 public:
  virtual ~Guard() = default;
  // nullopt: go on to the handler; else the refusal to send (401, 403, 500).
  virtual boost::asio::awaitable<std::optional<Response>> admit(const Request& r) = 0;
};

// How a server talks: plain HTTP (both null), or HTTPS with `tls`, and who
// may ask what (`guard`, which must outlive the server).
struct ServerSecurity {
  std::shared_ptr<boost::asio::ssl::context> tls;
  Guard* guard = nullptr;
};

struct ServerLimits {
  // How long a connection may take to send a request, and how long an idle
  // keep-alive connection stays open. Protects the connection slots from
  // clients that stop talking.
  std::chrono::milliseconds read_timeout{30'000};
  // How long writing a response may take before the connection is cut.
  std::chrono::milliseconds write_timeout{30'000};
  // Requests here are tiny (a verbosity level at most): anything larger is a
  // mistake or abuse and is refused with 431 / 413.
  std::uint32_t header_limit = 8 * 1024;
  std::uint32_t body_limit = 64 * 1024;
  // Beyond this, new connections are closed at once: bounded memory.
  std::size_t max_connections = 64;
};

class HttpServer {
 public:
  // Opens, binds and listens now, so "address already in use" reaches main
  // as an error before the loop runs. `routes` must outlive the server.
  static boost::system::result<HttpServer> listen(boost::asio::any_io_executor ex, const BindAddress& addr,
                                                  const Routes& routes, ServerSecurity security = {},
                                                  ServerLimits limits = {});
  HttpServer(HttpServer&&) noexcept;
  HttpServer& operator=(HttpServer&&) noexcept;
  ~HttpServer();

  // The bound port (the chosen one when asked for port 0).
  std::uint16_t port() const noexcept;
  // The accept loop, as task `serve/http`: each connection is its own task
  // `serve/conn/<peer>`. Returns once stop() is called.
  boost::asio::awaitable<void> run();
  // Closes the listener and every open connection.
  void stop();

  struct Impl;  // opaque; public only so the connection coroutines can hold it

 private:
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;  // shared with the connection coroutines
};

// --- the standard endpoints (the lead supplies the state) --------------------

// A health check returns nullopt when healthy, or the reason it is not.
struct HealthCheck {
  std::string name;  // "informer-sync", "leader-election"
  std::function<std::optional<std::string>()> check;
};
// /healthz, /livez or /readyz as Kubernetes answers them: 200 "ok" when all
// pass; else 500 listing every check, `[+]ping ok` / `[-]informer-sync
// failed: <reason>`, then "readyz check failed". `?verbose` lists them on
// success too. A "ping" check that always passes comes first.
void add_health_route(Routes& routes, std::string path, std::vector<HealthCheck> checks);
// GET /metrics: registry.render() in the Prometheus text format.
void add_metrics_route(Routes& routes, Registry& registry);
// GET /debug/tasks: the task dump (trace::dump_text); ?format=json for JSON.
void add_debug_tasks_route(Routes& routes);
// PUT /debug/flags/v: body = new -v level, as kube-scheduler answers it:
// 200 "successfully set klog.logging.verbosity to 4", 400 on a bad level,
// 406 "unsupported http method" for anything but PUT.
void add_debug_flags_v_route(Routes& routes);
// A GET route answering `json()` as application/json (/debug/cache).
void add_json_route(Routes& routes, std::string path, std::function<std::string()> json);

}  // namespace toysched::serve

template <>
struct boost::system::is_error_code_enum<toysched::serve::errc> : std::true_type {};
