// HttpTransport: which connection each request takes (the HTTP/2 session,
// or a pooled HTTP/1.1 connection), warming connections up, watch streams
// and probes. The rate limit and retries around each request are in
// request_policy.cpp.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

#include <cstdlib>

#include "http_transport_impl.hpp"
#include "toysched/kube/watch_framer.hpp"
#include "toysched/log/log.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;

HttpTransport::impl::impl(asio::any_io_executor e, ClientConfig c, TransportOptions o,
                          std::optional<asio::ssl::context> tls)
    : ex(e),
      config(std::move(c)),
      opts(std::move(o)),
      tokens(TokenSource::for_config(config)),
      limiter(e, opts.qps, opts.burst),
      connector(e, config, std::move(tls)),
      pool(connector, opts.max_idle_connections, opts.max_body_bytes) {
  const char* off = std::getenv("DISABLE_HTTP2");
  h2_off = !config.server.tls() || (off != nullptr && *off != '\0');
  if (config.exec) exec = ExecAuthenticator::shared(e, config, opts.exec_timeout);
}

HttpTransport::impl::~impl() {
  if (h2) h2->close();
}

// A token file that could not be re-read: the last good token is used;
// said once per run of failures (never the token itself).
std::string HttpTransport::impl::authorization() {
  if (exec) return exec_cred && !exec_cred->token.empty() ? "Bearer " + exec_cred->token : std::string();
  const std::string& token = tokens.current();
  if (auto err = tokens.take_error())
    TS_ERROR("Cannot read the token file; using the last token", {"err", err->message});
  return token.empty() ? std::string() : "Bearer " + token;
}

asio::awaitable<expected<ExecAuthenticator::Credential>> HttpTransport::impl::credentials() {
  if (!exec) co_return ExecAuthenticator::Credential{};
  auto got = co_await exec->get();
  if (!got || *got == exec_cred) co_return got;
  const auto& now = **got;
  const bool new_cert =
      exec_cred ? now.client_cert_pem != exec_cred->client_cert_pem || now.client_key_pem != exec_cred->client_key_pem
                : !now.client_cert_pem.empty();
  if (new_cert && config.server.tls()) {
    ClientConfig with = config;
    with.client_cert_pem = now.client_cert_pem;
    with.client_key_pem = now.client_key_pem;
    auto tls = Connector::tls_context(with);
    if (!tls) co_return tls.error();  // the authenticator checked it: not expected
    connector.set_tls(std::move(**tls));
    // As client-go closes its connections on a new certificate: what is
    // sent from now on goes on connections that present it.
    pool.drop_idle();
    if (h2) h2->close_when_idle();
    h2.reset();
    TS_LOG(2, "New client certificate from the exec plugin; new connections use it", {"server", connector.where()});
  }
  exec_cred = *got;
  co_return got;
}

Http1Request HttpTransport::impl::build(const HttpRequest& r) {
  Http1Request req{r.verb, config.server.base_path + r.target, 11};
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

H2Request HttpTransport::impl::h2_request(const HttpRequest& r) {
  return h2_request_for(r, config.server.base_path + r.target, config.server.authority(), opts.user_agent,
                        authorization());
}

// Requests that come while the session is being opened wait for it rather
// than open connections of their own. A request that waited for an opening
// that failed gets its error: the waiters do not each try again in turn
// (behind a silent server, one connect timeout after another).
asio::awaitable<expected<std::shared_ptr<H2Session>>> HttpTransport::impl::h2_session(milliseconds budget,
                                                                                      bool& fresh) {
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
  auto c = co_await connector.connect(budget, true);
  h2_opening = false;
  h2_opened->cancel();
  if (!c) {
    h2_open_failed = c.error();
    co_return c.error();
  }
  if (!Connector::chose_h2(**c)) {
    h2_off = true;
    TS_LOG(2, "The API server did not choose HTTP/2; requests use HTTP/1.1 connections", {"server", connector.where()});
    pool.give_back(std::move(*c));
    co_return std::shared_ptr<H2Session>{};
  }
  auto& t = std::get<tls_stream>((*c)->stream);
  auto session =
      std::make_shared<H2Session>(std::make_unique<tls_stream>(std::move(t)), connector.where(), opts.max_body_bytes);
  if (auto started = session->start(); !started) co_return started.error();
  h2 = session;
  fresh = true;
  co_return session;
}

asio::awaitable<expected<HttpResponse>> HttpTransport::impl::attempt(const HttpRequest& r, bool replayed, Try& t) {
  const RequestLimits& limits = r.limits;
  auto connect_budget = request_budget(opts.connect_timeout, limits);
  if (connect_budget <= milliseconds(0)) co_return out_of_time(r);
  bool fresh = false;
  auto session = co_await h2_session(connect_budget, fresh);
  if (!session) co_return session.error();
  if (*session) {
    if (r.trace) {
      r.trace->connected = std::chrono::steady_clock::now();
      r.trace->fresh_connection = fresh;
    }
    auto budget = request_budget(opts.request_timeout, limits);
    if (budget <= milliseconds(0)) co_return out_of_time(r);
    bool may_have_acted = false;
    const H2Request request = h2_request(r);  // named: the exchange points into its body
    auto res = co_await (*session)->exchange(request, budget, may_have_acted);
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
    conn = co_await connector.connect(connect_budget);
  else
    conn = co_await pool.take(connect_budget);
  if (!conn) co_return conn.error();
  if (r.trace) {
    r.trace->connected = std::chrono::steady_clock::now();
    r.trace->fresh_connection = !(*conn)->reused;
  }
  auto budget = request_budget(opts.request_timeout, limits);
  if (budget <= milliseconds(0)) co_return out_of_time(r);
  bool answered = false, keep = false;
  const Http1Request req = build(r);  // named: GCC 12 and temporaries across a co_await
  auto res = co_await pool.once(**conn, req, budget, answered, keep);
  if (!res) {
    // A kept-alive connection the server had already closed: nothing was
    // answered, so it may be sent once more, on a fresh connection.
    if ((*conn)->reused && !answered && res.error().code == errc::connection_lost) {
      t.replay = true;
      pool.drop_idle();
    }
    co_return res;
  }
  if (keep) pool.give_back(std::move(*conn));
  co_return res;
}

HttpTransport::HttpTransport(std::unique_ptr<impl> p) : p_(std::move(p)) {}
HttpTransport::~HttpTransport() = default;

expected<std::unique_ptr<HttpTransport>> HttpTransport::create(asio::any_io_executor ex, ClientConfig config,
                                                               TransportOptions options) {
  auto tls = Connector::tls_context(config);
  if (!tls) return tls.error();
  auto p = std::make_unique<impl>(ex, std::move(config), std::move(options), std::move(*tls));
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(p)));
}

asio::awaitable<void> HttpTransport::warm_up(std::size_t n) {
  auto& s = *p_;
  if (auto cred = co_await s.credentials(); !cred) co_return;  // no use connecting with no certificate yet
  bool fresh = false;
  auto session = co_await s.h2_session(s.opts.connect_timeout, fresh);
  if (session && *session) co_return;  // one connection carries every request
  co_await s.pool.fill(n, s.opts.connect_timeout);
}

asio::awaitable<void> HttpTransport::keep_warm(std::size_t n, std::chrono::milliseconds max_idle) {
  auto& s = *p_;
  auto now = std::chrono::steady_clock::now();
  // A session quiet for max_idle is replaced before the server's idle
  // timeout ends it under a request.
  if (s.h2 && s.h2->usable() && s.h2->idle() && now - s.h2->last_active() >= max_idle) {
    s.h2->close();
    s.h2.reset();
  }
  s.pool.drop_stale(now, max_idle);
  co_await warm_up(n);
}

asio::awaitable<bool> HttpTransport::probe() {
  auto& s = *p_;
  if (auto cred = co_await s.credentials(); !cred) co_return false;
  auto conn = co_await s.connector.connect(milliseconds(1000));
  if (!conn) co_return false;
  HttpRequest r;
  r.target = "/readyz";
  bool answered = false, keep = false;
  const Http1Request req = s.build(r);
  auto res = co_await s.pool.once(**conn, req, milliseconds(2000), answered, keep);
  if (!res) co_return false;
  if (keep) s.pool.give_back(std::move(*conn));
  co_return res->status == 200;
}

asio::awaitable<expected<std::unique_ptr<Stream>>> HttpTransport::open_stream(std::string target, WatchFramer& framer) {
  auto& s = *p_;
  co_await s.limiter.acquire();
  ExecAuthenticator::Credential cred;
  if (s.exec) {
    auto got = co_await s.credentials();
    if (!got) co_return got.error();
    cred = std::move(*got);
  }
  auto conn = co_await s.connector.connect(s.opts.connect_timeout);  // a stream never shares its connection
  if (!conn) co_return conn.error();
  HttpRequest r;
  r.target = std::move(target);
  const Http1Request req = s.build(r);
  auto stream = co_await open_http1_stream(std::move(*conn), req, framer, s.opts.request_timeout);
  if (!stream) co_return stream.error();
  ++s.counts[{"WATCH", std::to_string(framer.status())}];
  if (framer.status() == 401 && s.exec) s.exec->rejected(cred);
  if (framer.status() == 401 && s.tokens.uses_file()) s.tokens.invalidate();
  co_return std::move(*stream);
}

const ClientConfig& HttpTransport::config() const noexcept { return p_->config; }
asio::any_io_executor HttpTransport::executor() const noexcept { return p_->ex; }
std::uint64_t HttpTransport::connections_opened() const noexcept { return p_->connector.opened(); }
std::size_t HttpTransport::idle_connections() const noexcept { return p_->pool.idle(); }
bool HttpTransport::http2() const noexcept { return p_->h2 && p_->h2->usable(); }

void HttpTransport::close_when_idle() {
  p_->h2_off = true;  // what is sent from now on takes HTTP/1.1 connections
  if (p_->h2) p_->h2->close_when_idle();
}

const std::map<std::pair<std::string, std::string>, std::uint64_t>& HttpTransport::request_counts() const noexcept {
  return p_->counts;
}

}  // namespace toysched::kube
