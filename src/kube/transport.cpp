#include "toysched/kube/transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/throw_exception.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string_view>
#include <variant>

#include "h2_session.hpp"
#include "toysched/kube/rate_limiter.hpp"
#include "toysched/kube/watch_framer.hpp"
#include "toysched/log/log.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Why a CA, certificate or key did not load. OpenSSL's "no start line" does
// not tell bytes that are no PEM at all from a PEM block of the wrong kind
// (a key where a certificate belongs), so name what was found.
std::string pem_problem(std::string_view pem, std::string_view want, const boost::system::error_code& ec) {
  constexpr std::string_view begin_tag = "-----BEGIN ";
  const auto begin = pem.find(begin_tag);
  const auto label = begin == std::string_view::npos ? begin : begin + begin_tag.size();
  const auto end = label == std::string_view::npos ? label : pem.find("-----", label);
  if (end == std::string_view::npos || end - label > 64) return "it is not PEM (no \"-----BEGIN\" line)";
  const std::string_view found = pem.substr(label, end - label);
  if (found.find(want) == std::string_view::npos)
    return ec.message() + " (it holds a PEM " + std::string(found) + " block, not a " + std::string(want) + ")";
  return ec.message();
}

struct Connection {
  std::variant<beast::tcp_stream, tls_stream> stream;
  beast::flat_buffer buffer;
  bool reused = false;
  std::chrono::steady_clock::time_point idle_since;  // put back in the pool

  explicit Connection(asio::any_io_executor ex) : stream(std::in_place_type<beast::tcp_stream>, ex) {}
  Connection(asio::any_io_executor ex, ssl::context& ctx) : stream(std::in_place_type<tls_stream>, ex, ctx) {}

  beast::tcp_stream& lowest() {
    if (auto* t = std::get_if<tls_stream>(&stream)) return beast::get_lowest_layer(*t);
    return std::get<beast::tcp_stream>(stream);
  }
};

Error fail(errc code, std::string message) { return {make_error_code(code), std::move(message)}; }

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// The reason OpenSSL gave for refusing the peer, in words.
std::string tls_reason(tls_stream& s, const boost::system::error_code& ec) {
  long verify = SSL_get_verify_result(s.native_handle());
  if (verify != X509_V_OK) return std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
  return ec.message();
}

}  // namespace

struct Transport::impl {
  asio::any_io_executor ex;
  ClientConfig config;
  TransportOptions opts;
  std::optional<ssl::context> tls;
  TokenSource tokens;
  RateLimiter limiter;
  std::deque<std::unique_ptr<Connection>> idle;
  std::uint64_t opened = 0;
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts;
  std::string where;  // "https://host:port" for messages
  // HTTP/2 for the unary requests, as client-go: when the server is TLS,
  // offers "h2", and DISABLE_HTTP2 (client-go's switch) is not set.
  std::shared_ptr<H2Session> h2;
  bool h2_off = false, h2_opening = false;
  std::shared_ptr<asio::steady_timer> h2_opened;  // waited on while h2_opening
  std::optional<Error> h2_open_failed;            // how the last opening ended, if badly

  impl(asio::any_io_executor e, ClientConfig c, TransportOptions o)
      : ex(e),
        config(std::move(c)),
        opts(std::move(o)),
        tokens(TokenSource::for_config(config)),
        limiter(e, opts.qps, opts.burst),
        where(config.server.to_string()) {
    const char* off = std::getenv("DISABLE_HTTP2");
    h2_off = !config.server.tls() || (off != nullptr && *off != '\0');
  }

  ~impl() {
    if (h2) h2->close();
  }

  std::string verify_name() const {
    return config.tls_server_name.empty() ? config.server.host : config.tls_server_name;
  }

  asio::awaitable<expected<std::unique_ptr<Connection>>> connect(milliseconds budget, bool offer_h2 = false) {
    std::unique_ptr<Connection> c = tls ? std::make_unique<Connection>(ex, *tls) : std::make_unique<Connection>(ex);
    tcp::resolver resolver(ex);
    auto [rec, endpoints] =
        co_await resolver.async_resolve(config.server.host, std::to_string(config.server.port), nothrow);
    if (rec) co_return fail(errc::connect_failed, "resolve " + config.server.host + ": " + rec.message());
    c->lowest().expires_after(budget);
    auto [cec, ep] = co_await c->lowest().async_connect(endpoints, nothrow);
    if (cec == beast::error::timeout)
      co_return fail(errc::connect_timeout,
                     "connect to " + where + ": timed out after " + std::to_string(budget.count()) + "ms");
    if (cec) co_return fail(errc::connect_failed, "connect to " + where + ": " + cec.message());
    c->lowest().socket().set_option(tcp::no_delay(true));
    if (auto* t = std::get_if<tls_stream>(&c->stream)) {
      std::string name = verify_name();
      SSL* ssl_handle = t->native_handle();
      if (!is_ip_address(name)) SSL_set_tlsext_host_name(ssl_handle, name.c_str());  // SNI is for names only
      if (!config.insecure_skip_tls_verify) {
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
        int ok = is_ip_address(name) ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                                     : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
        if (ok != 1) co_return fail(errc::tls_failed, "cannot verify server name \"" + name + "\"");
      }
      // Offered per connection, never on the context: a connection that
      // did not offer h2 is sure to speak HTTP/1.1.
      static constexpr unsigned char protos[] = "\x02h2\x08http/1.1";
      if (offer_h2) SSL_set_alpn_protos(ssl_handle, protos, sizeof protos - 1);
      auto [hec] = co_await t->async_handshake(ssl::stream_base::client, nothrow);
      if (hec == beast::error::timeout)
        co_return fail(errc::connect_timeout, "TLS handshake with " + where + ": timed out");
      if (hec) co_return fail(errc::tls_failed, "TLS handshake with " + where + ": " + tls_reason(*t, hec));
    }
    c->lowest().expires_never();
    ++opened;
    co_return c;
  }

  // "Bearer TOKEN", or empty. A token file that could not be re-read: the
  // last good token is used; said once per run of failures (never the
  // token itself).
  std::string authorization() {
    const std::string& token = tokens.current();
    if (auto err = tokens.take_error())
      TS_ERROR("Cannot read the token file; using the last token", {"err", err->message});
    return token.empty() ? std::string() : "Bearer " + token;
  }

  http::request<http::string_body> build(const HttpRequest& r) {
    http::request<http::string_body> req{r.verb, config.server.base_path + r.target, 11};
    req.set(http::field::host, config.server.authority());
    req.set(http::field::user_agent, opts.user_agent);
    req.set(http::field::accept, "application/json");
    if (auto auth = authorization(); !auth.empty()) req.set(http::field::authorization, auth);
    if (auto type = content_type_of(r); !type.empty()) {
      req.set(http::field::content_type, type);
      req.body() = r.body;
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  // One request/response on one connection. `answered` tells whether any
  // byte of a response arrived (if not, the request may be replayed).
  template <class S>
  asio::awaitable<expected<HttpResponse>> exchange(S& s, Connection& c, const http::request<http::string_body>& req,
                                                   milliseconds budget, bool& answered, bool& keep) {
    c.lowest().expires_after(budget);
    auto [wec, wn] = co_await http::async_write(s, req, nothrow);
    (void)wn;
    if (wec == beast::error::timeout) co_return fail(errc::request_timeout, "write to " + where + ": timed out");
    if (wec) co_return fail(errc::connection_lost, "write to " + where + ": " + wec.message());
    http::response_parser<http::string_body> parser;
    parser.body_limit(opts.max_body_bytes);
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

  asio::awaitable<expected<HttpResponse>> once(Connection& c, const HttpRequest& r, milliseconds budget, bool& answered,
                                               bool& keep) {
    auto req = build(r);
    if (auto* t = std::get_if<tls_stream>(&c.stream)) co_return co_await exchange(*t, c, req, budget, answered, keep);
    co_return co_await exchange(std::get<beast::tcp_stream>(c.stream), c, req, budget, answered, keep);
  }

  // An idle connection the server has closed (it restarted, or its idle
  // timeout ran out) reads as EOF without blocking; one still open has
  // nothing to read, or a TLS record such as a session ticket. Checked
  // before each reuse, so a restarted server does not cost one failed
  // request per pooled connection.
  static bool peer_closed(Connection& c) {
    auto& sock = c.lowest().socket();
    if (!sock.is_open()) return true;
    char byte;
    ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return false;
    return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }

  asio::awaitable<expected<std::unique_ptr<Connection>>> take(milliseconds budget) {
    while (!idle.empty()) {
      auto c = std::move(idle.front());
      idle.pop_front();
      if (!peer_closed(*c)) {
        c->reused = true;
        co_return c;
      }
    }
    co_return co_await connect(budget);
  }

  // Every idle connection dates from before a failure that says the server
  // went away: none of them is worth a try.
  void drop_idle() { idle.clear(); }

  // What is left of a request's time: the transport's own timeout, cut to
  // the request's deadline. Zero or less: the deadline has passed.
  static milliseconds budget(milliseconds own, const RequestLimits& l) {
    if (!l.deadline) return own;
    auto left = std::chrono::duration_cast<milliseconds>(*l.deadline - std::chrono::steady_clock::now());
    return std::min(own, left);
  }

  void give_back(std::unique_ptr<Connection> c) {
    c->idle_since = std::chrono::steady_clock::now();
    if (idle.size() < opts.max_idle_connections) idle.push_back(std::move(c));
  }

  // The HTTP/2 session, opened when there is none; requests that come
  // while it is being opened wait for it rather than open connections of
  // their own. nullptr: use HTTP/1.1 (the server did not choose h2).
  // A request that waited for an opening that failed gets its error: the
  // waiters do not each try again in turn (behind a silent server, one
  // connect timeout after another).
  asio::awaitable<expected<std::shared_ptr<H2Session>>> h2_session(milliseconds budget, bool& fresh) {
    bool waited = false;
    while (h2_opening) {
      waited = true;
      auto opened = h2_opened;  // the opener cancels it when done, well or not
      co_await opened->async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (h2 && h2->usable()) co_return h2;
    if (h2_off) co_return std::shared_ptr<H2Session>{};
    if (waited && h2_open_failed) co_return *h2_open_failed;
    h2.reset();
    h2_opening = true;
    h2_open_failed.reset();
    h2_opened = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
    auto c = co_await connect(budget, true);
    h2_opening = false;
    h2_opened->cancel();
    if (!c) {
      h2_open_failed = c.error();
      co_return c.error();
    }
    auto& t = std::get<tls_stream>((*c)->stream);
    const unsigned char* proto = nullptr;
    unsigned len = 0;
    SSL_get0_alpn_selected(t.native_handle(), &proto, &len);
    if (len != 2 || std::memcmp(proto, "h2", 2) != 0) {
      h2_off = true;
      TS_LOG(2, "The API server did not choose HTTP/2; requests use HTTP/1.1 connections", {"server", where});
      give_back(std::move(*c));
      co_return std::shared_ptr<H2Session>{};
    }
    auto session = std::make_shared<H2Session>(std::make_unique<tls_stream>(std::move(t)), where, opts.max_body_bytes);
    if (auto started = session->start(); !started) co_return started.error();
    h2 = session;
    fresh = true;
    co_return session;
  }

  H2Request h2_request(const HttpRequest& r) {
    return h2_request_for(r, config.server.base_path + r.target, config.server.authority(), opts.user_agent,
                          authorization());
  }

  static Error out_of_time(const HttpRequest& r) {
    return fail(errc::request_timeout,
                std::string(http::to_string(r.verb)) + " " + r.target + ": not done by its deadline");
  }

  // How one try of a request ended, beyond its result.
  struct Try {
    bool resend = false;  // not seen by the server: send it again as if new
    bool replay = false;  // lost in a way that allows one replay
  };

  // One try: on the HTTP/2 session if there is one, else a pooled
  // HTTP/1.1 connection (a fresh one when `replayed`).
  asio::awaitable<expected<HttpResponse>> attempt(const HttpRequest& r, const RequestLimits& limits, bool replayed,
                                                  Try& t) {
    auto connect_budget = budget(opts.connect_timeout, limits);
    if (connect_budget <= milliseconds(0)) co_return out_of_time(r);
    bool fresh = false;
    auto session = co_await h2_session(connect_budget, fresh);
    if (!session) co_return session.error();
    if (*session) {
      if (r.trace) {
        r.trace->connected = std::chrono::steady_clock::now();
        r.trace->fresh_connection = fresh;
      }
      auto request_budget = budget(opts.request_timeout, limits);
      if (request_budget <= milliseconds(0)) co_return out_of_time(r);
      bool may_have_acted = false;
      const H2Request request = h2_request(r);  // named: the exchange points into its body
      auto res = co_await (*session)->exchange(request, request_budget, may_have_acted);
      if (!res && res.error().code == errc::connection_lost) {
        t.resend = !may_have_acted;
        t.replay = may_have_acted;
      }
      co_return res;
    }
    // A replay never reuses a pooled connection: the one that just died
    // says the others are likely dead too.
    // (Not a ?: of two co_awaits: GCC 12 destroys such a temporary twice.)
    expected<std::unique_ptr<Connection>> conn = fail(errc::connect_failed, "");
    if (replayed)
      conn = co_await connect(connect_budget);
    else
      conn = co_await take(connect_budget);
    if (!conn) co_return conn.error();
    if (r.trace) {
      r.trace->connected = std::chrono::steady_clock::now();
      r.trace->fresh_connection = !(*conn)->reused;
    }
    auto request_budget = budget(opts.request_timeout, limits);
    if (request_budget <= milliseconds(0)) co_return out_of_time(r);
    bool answered = false, keep = false;
    auto res = co_await once(**conn, r, request_budget, answered, keep);
    if (!res) {
      // A kept-alive connection the server had already closed: nothing was
      // answered, so it may be sent once more, on a fresh connection.
      if ((*conn)->reused && !answered && res.error().code == errc::connection_lost) {
        t.replay = true;
        drop_idle();
      }
      co_return res;
    }
    if (keep) give_back(std::move(*conn));
    co_return res;
  }
};

Transport::Transport(std::unique_ptr<impl> p) : p_(std::move(p)) {}
Transport::~Transport() = default;

expected<std::unique_ptr<Transport>> Transport::create(asio::any_io_executor ex, ClientConfig config,
                                                       TransportOptions options) {
  auto p = std::make_unique<impl>(ex, std::move(config), std::move(options));
  auto bad = [](std::string what) { return Error{make_error_code(errc::config_invalid), std::move(what)}; };
  if (p->config.server.tls()) {
    ssl::context ctx(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    boost::system::error_code ec;
    const auto& cfg = p->config;
    if (!cfg.ca_pem.empty()) {
      ctx.add_certificate_authority(asio::buffer(cfg.ca_pem), ec);
      if (ec)
        return bad("certificate authority of " + cfg.origin.describe() +
                   " does not load: " + pem_problem(cfg.ca_pem, "CERTIFICATE", ec));
    } else {
      ctx.set_default_verify_paths(ec);
    }
    if (!cfg.client_cert_pem.empty()) {
      ctx.use_certificate_chain(asio::buffer(cfg.client_cert_pem), ec);
      if (ec)
        return bad("client certificate of " + cfg.origin.describe() +
                   " does not load: " + pem_problem(cfg.client_cert_pem, "CERTIFICATE", ec));
      ctx.use_private_key(asio::buffer(cfg.client_key_pem), ssl::context::pem, ec);
      if (ec)
        return bad("client key of " + cfg.origin.describe() +
                   " does not load: " + pem_problem(cfg.client_key_pem, "PRIVATE KEY", ec));
      if (SSL_CTX_check_private_key(ctx.native_handle()) != 1)
        return bad("client key of " + cfg.origin.describe() + " does not match its certificate");
    }
    ctx.set_verify_mode(cfg.insecure_skip_tls_verify ? ssl::verify_none : ssl::verify_peer);
    p->tls.emplace(std::move(ctx));
  }
  return std::unique_ptr<Transport>(new Transport(std::move(p)));
}

asio::awaitable<void> Transport::warm_up(std::size_t n) {
  auto& s = *p_;
  bool fresh = false;
  auto session = co_await s.h2_session(s.opts.connect_timeout, fresh);
  if (session && *session) co_return;  // one connection carries every request
  n = std::min(n, s.opts.max_idle_connections);
  while (s.idle.size() < n) {
    auto c = co_await s.connect(s.opts.connect_timeout);
    if (!c) co_return;  // the requests will say what is wrong
    s.give_back(std::move(*c));
  }
}

asio::awaitable<void> Transport::keep_warm(std::size_t n, std::chrono::milliseconds max_idle) {
  auto& s = *p_;
  auto now = std::chrono::steady_clock::now();
  // A session quiet for max_idle is replaced before the server's idle
  // timeout ends it under a request.
  if (s.h2 && s.h2->usable() && s.h2->idle() && now - s.h2->last_active() >= max_idle) {
    s.h2->close();
    s.h2.reset();
  }
  std::erase_if(s.idle, [&](const std::unique_ptr<Connection>& c) {
    return now - c->idle_since >= max_idle || impl::peer_closed(*c);
  });
  co_await warm_up(n);
}

const ClientConfig& Transport::config() const noexcept { return p_->config; }
asio::any_io_executor Transport::executor() const noexcept { return p_->ex; }
std::uint64_t Transport::connections_opened() const noexcept { return p_->opened; }
std::size_t Transport::idle_connections() const noexcept { return p_->idle.size(); }
bool Transport::http2() const noexcept { return p_->h2 && p_->h2->usable(); }

void Transport::close_when_idle() {
  p_->h2_off = true;  // what is sent from now on takes HTTP/1.1 connections
  if (p_->h2) p_->h2->close_when_idle();
}
const std::map<std::pair<std::string, std::string>, std::uint64_t>& Transport::request_counts() const noexcept {
  return p_->counts;
}

asio::awaitable<expected<HttpResponse>> Transport::request(HttpRequest r) {
  auto& s = *p_;
  bool replayed = false, reauthenticated = false;
  int retries = 0, resends = 0;
  constexpr int kMaxResends = 3;
  const auto& limits = r.limits;
  for (;;) {
    if (!co_await s.limiter.acquire(limits.deadline)) co_return impl::out_of_time(r);
    if (r.trace) r.trace->admitted = std::chrono::steady_clock::now();
    if (limits.may_send && !limits.may_send())
      co_return fail(errc::cancelled, std::string(http::to_string(r.verb)) + " " + r.target + ": no longer wanted");
    // The moment a request leaves, as client-go's -v=6 request log: the
    // slow-leader test compares these with the Lease's holder history.
    TS_LOG(6, "Sending request", {"verb", std::string_view(http::to_string(r.verb))}, {"url", r.target});
    impl::Try tried;
    auto res = co_await s.attempt(r, limits, replayed, tried);
    ++s.counts[{std::string(http::to_string(r.verb)), res ? std::to_string(res->status) : std::string("error")}];
    if (!res) {
      if (tried.resend && resends < kMaxResends) {  // refused unseen (a GOAWAY, a restart): not a replay
        ++resends;
        continue;
      }
      if (tried.replay && !replayed) {
        replayed = true;
        continue;
      }
      co_return res.error();
    }
    res->replayed = replayed;
    if (res->status == 401 && s.tokens.uses_file() && !reauthenticated) {
      s.tokens.invalidate();  // a rotated token: read the file again, once
      reauthenticated = true;
      continue;
    }
    bool retryable = (res->status == 429 || res->status >= 500) && res->retry_after.has_value();
    if (!retryable || retries >= s.opts.max_retries) co_return std::move(*res);
    auto wait = std::chrono::duration_cast<milliseconds>(std::min(*res->retry_after, s.opts.max_retry_after));
    if (wait.count() == 0) wait = std::chrono::seconds(1);
    // No time left for the wait the server asked for: its answer is ours.
    if (impl::budget(wait + milliseconds(1), limits) <= wait) co_return std::move(*res);
    ++retries;
    asio::steady_timer t(s.ex, wait);
    co_await t.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<bool> Transport::probe() {
  auto& s = *p_;
  auto conn = co_await s.connect(milliseconds(1000));
  if (!conn) co_return false;
  HttpRequest r;
  r.target = "/readyz";
  bool answered = false, keep = false;
  auto res = co_await s.once(**conn, r, milliseconds(2000), answered, keep);
  if (!res) co_return false;
  if (keep) s.give_back(std::move(*conn));
  co_return res->status == 200;
}

namespace {

class StreamImpl final : public Stream {
 public:
  explicit StreamImpl(std::unique_ptr<Connection> c) : c_(std::move(c)) {}

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

asio::awaitable<expected<std::unique_ptr<Stream>>> Transport::open_stream(std::string target, WatchFramer& framer) {
  auto& s = *p_;
  co_await s.limiter.acquire();
  auto conn = co_await s.connect(s.opts.connect_timeout);  // a stream never shares its connection
  if (!conn) co_return conn.error();
  auto& c = **conn;
  HttpRequest r;
  r.target = std::move(target);
  auto req = s.build(r);
  c.lowest().expires_after(s.opts.request_timeout);
  boost::system::error_code wec;
  if (auto* t = std::get_if<tls_stream>(&c.stream)) {
    std::tie(wec, std::ignore) = co_await http::async_write(*t, req, nothrow);
  } else {
    std::tie(wec, std::ignore) = co_await http::async_write(std::get<beast::tcp_stream>(c.stream), req, nothrow);
  }
  if (wec) co_return fail(errc::connection_lost, "watch " + std::string(req.target()) + ": " + wec.message());
  auto stream = std::make_unique<StreamImpl>(std::move(*conn));
  // Read until the status line and headers are in.
  while (!framer.header_done()) {
    auto more = co_await stream->read_into(framer, s.opts.request_timeout);
    if (!more) co_return more.error();
    if (!*more)
      co_return fail(errc::connection_lost, "watch " + std::string(req.target()) + ": closed before the headers");
  }
  ++s.counts[{"WATCH", std::to_string(framer.status())}];
  if (framer.status() == 401 && s.tokens.uses_file()) s.tokens.invalidate();
  co_return std::unique_ptr<Stream>(std::move(stream));
}

}  // namespace toysched::kube
