#include "h2_session.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <nghttp2/nghttp2.h>

#include "toysched/trace/tasks.hpp"
#include "toysched/util/scope_exit.hpp"

#include <charconv>
#include <cstring>
#include <optional>
#include <vector>

namespace toysched::kube {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// Flow control: a list of 15 000 nodes is tens of MB; the server must not
// wait for our window updates while it sends one.
constexpr std::int32_t kStreamWindow = 16 << 20;
constexpr std::int32_t kConnectionWindow = 64 << 20;
constexpr std::size_t kWriteChunk = 64 << 10;

Error fail(errc code, std::string message) { return {make_error_code(code), std::move(message)}; }

nghttp2_nv header(std::string_view name, std::string_view value) {
  // nghttp2 copies names and values when the request is submitted.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}
}  // namespace

std::optional<std::chrono::seconds> parse_retry_after(std::string_view v) {
  int secs = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (ec != std::errc{} || ptr != v.data() + v.size() || secs < 0) return std::nullopt;
  return std::chrono::seconds(secs);
}

H2Request h2_request_for(const HttpRequest& r, std::string path, std::string authority, std::string user_agent,
                         std::string authorization) {
  namespace http = boost::beast::http;
  H2Request q{std::string(http::to_string(r.verb)),
              std::move(path),
              std::move(authority),
              std::move(user_agent),
              std::move(authorization),
              content_type_of(r),
              r.body};
  return q;
}

std::string content_type_of(const HttpRequest& r) {
  namespace http = boost::beast::http;
  if (r.body.empty() && r.verb != http::verb::post && r.verb != http::verb::put && r.verb != http::verb::patch)
    return {};
  return r.content_type.empty() ? "application/json" : r.content_type;
}

// One request in flight: lives in its exchange's frame; the session finds it
// by stream id until the exchange ends.
struct H2Session::Pending {
  explicit Pending(asio::any_io_executor ex) : timer(ex) {}
  const std::string* body = nullptr;
  std::size_t offset = 0;
  HttpResponse res;
  bool sent = false, done = false, too_large = false;
  std::uint32_t reset_code = 0;  // the stream ended with this HTTP/2 error
  std::optional<Error> lost;     // the connection ended first
  asio::steady_timer timer;      // the exchange sleeps here; cancelled when done
};

struct H2Session::Callbacks {
  static H2Session& of(void* user) { return *static_cast<H2Session*>(user); }
  static Pending* find(H2Session& s, std::int32_t id) {
    auto it = s.pending_.find(id);
    return it == s.pending_.end() ? nullptr : it->second;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t namelen,
                       const std::uint8_t* value, std::size_t valuelen, std::uint8_t, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    Pending* p = find(of(user), frame->hd.stream_id);
    if (p == nullptr) return 0;
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":status") {
      std::from_chars(v.data(), v.data() + v.size(), p->res.status);
    } else if (n == "content-type") {
      p->res.content_type = std::string(v);
    } else if (n == "retry-after") {
      p->res.retry_after = parse_retry_after(v);
    }
    return 0;
  }

  static int on_data(nghttp2_session* session, std::uint8_t, std::int32_t id, const std::uint8_t* data, std::size_t len,
                     void* user) {
    H2Session& s = of(user);
    Pending* p = find(s, id);
    if (p == nullptr || p->too_large) return 0;
    if (p->res.body.size() + len > s.max_body_) {
      p->too_large = true;
      p->res.body.clear();
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
      return 0;
    }
    p->res.body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }

  static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t error_code, void* user) {
    H2Session& s = of(user);
    if (Pending* p = find(s, id)) {
      p->reset_code = error_code;
      s.finish(*p);
    }
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    H2Session& s = of(user);
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      s.goaway_ = true;  // no new requests here; those above last_stream_id were not seen
      s.goaway_last_stream_ = frame->goaway.last_stream_id;
    }
    return 0;
  }

  static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    if (Pending* p = find(of(user), frame->hd.stream_id)) p->sent = true;
    return 0;
  }

  // Found by stream id, not through the data source: an exchange that ran
  // out of time is gone, and its stream is being reset.
  static ssize_t read_body(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) {
    Pending* p = find(of(user), id);
    if (p == nullptr) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    std::size_t n = std::min(length, p->body->size() - p->offset);
    std::memcpy(buf, p->body->data() + p->offset, n);
    p->offset += n;
    if (p->offset == p->body->size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

H2Session::H2Session(std::unique_ptr<tls_stream> stream, std::string where, std::size_t max_body_bytes)
    : stream_(std::move(stream)),
      where_(std::move(where)),
      max_body_(max_body_bytes),
      last_active_(std::chrono::steady_clock::now()) {}

H2Session::~H2Session() {
  if (session_ != nullptr) nghttp2_session_del(session_);
}

expected<void> H2Session::start() {
  nghttp2_session_callbacks* cbs = nullptr;
  if (nghttp2_session_callbacks_new(&cbs) != 0) return fail(errc::connect_failed, "HTTP/2: out of memory");
  nghttp2_session_callbacks_set_on_header_callback(cbs, &Callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, &Callbacks::on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, &Callbacks::on_stream_close);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, &Callbacks::on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(cbs, &Callbacks::on_frame_send);
  int rv = nghttp2_session_client_new(&session_, cbs, this);
  nghttp2_session_callbacks_del(cbs);
  if (rv != 0) {
    session_ = nullptr;
    return fail(errc::connect_failed, std::string("HTTP/2 session: ") + nghttp2_strerror(rv));
  }
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
  asio::co_spawn(stream_->get_executor(), read_loop(shared_from_this()), asio::detached);
  kick();  // the connection preface and our SETTINGS, before any request
  return {};
}

asio::awaitable<expected<HttpResponse>> H2Session::exchange(const H2Request& req, milliseconds budget,
                                                            bool& may_have_acted) {
  auto self = shared_from_this();
  may_have_acted = false;
  if (!usable())
    co_return fail(errc::connection_lost, "HTTP/2 connection to " + where_ + " is closed" +
                                              (close_reason_.empty() ? "" : ": " + close_reason_));
  Pending p(stream_->get_executor());
  std::vector<nghttp2_nv> nv{header(":method", req.method),        header(":scheme", "https"),
                             header(":authority", req.authority),  header(":path", req.path),
                             header("user-agent", req.user_agent), header("accept", "application/json")};
  if (!req.authorization.empty()) nv.push_back(header("authorization", req.authorization));
  const bool with_body = !req.content_type.empty();
  const std::string length = std::to_string(req.body.size());
  if (with_body) {
    nv.push_back(header("content-type", req.content_type));
    nv.push_back(header("content-length", length));
  }
  p.body = &req.body;
  nghttp2_data_provider body{};
  body.read_callback = &Callbacks::read_body;
  const std::int32_t id =
      nghttp2_submit_request(session_, nullptr, nv.data(), nv.size(), with_body ? &body : nullptr, &p);
  if (id < 0) co_return fail(errc::connection_lost, std::string("HTTP/2 request: ") + nghttp2_strerror(id));
  pending_[id] = &p;
  util::scope_exit forget([this, id] {
    pending_.erase(id);
    if (closing_ && pending_.empty()) close();
  });
  last_active_ = std::chrono::steady_clock::now();
  p.timer.expires_after(budget);
  co_await flush();
  if (!p.done) co_await p.timer.async_wait(nothrow);
  last_active_ = std::chrono::steady_clock::now();
  const std::string what = req.method + " " + req.path;
  if (!p.done) {  // the budget ran out: the server may still act on it
    may_have_acted = p.sent;
    if (!closed_) {
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
      kick();
    }
    co_return fail(errc::request_timeout, what + ": no response within " + std::to_string(budget.count()) + "ms");
  }
  // Refused: the server says it did not start on it (RFC 9113 8.7).
  const bool refused = p.reset_code == NGHTTP2_REFUSED_STREAM || (goaway_ && id > goaway_last_stream_);
  may_have_acted = p.sent && !refused;
  if (p.lost) co_return *p.lost;
  if (p.too_large) co_return fail(errc::object_too_large, req.path + ": response body over the limit");
  if (p.reset_code != NGHTTP2_NO_ERROR || p.res.status == 0)
    co_return fail(errc::connection_lost,
                   what + ": HTTP/2 stream reset by " + where_ + " (" + nghttp2_http2_strerror(p.reset_code) + ")");
  co_return std::move(p.res);
}

void H2Session::finish(Pending& p) {
  p.done = true;
  p.timer.cancel();
}

asio::awaitable<void> H2Session::flush() {
  if (writing_ || closed_) co_return;  // the writer at work sends what was just submitted too
  writing_ = true;
  std::string out;
  for (;;) {
    out.clear();
    while (out.size() < kWriteChunk) {
      const std::uint8_t* data = nullptr;
      ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) {
        writing_ = false;
        fail_all(std::string("HTTP/2: ") + nghttp2_strerror(static_cast<int>(n)));
        co_return;
      }
      if (n == 0) break;
      out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    if (out.empty()) break;
    auto [ec, written] = co_await asio::async_write(*stream_, asio::buffer(out), nothrow);
    (void)written;
    if (ec) {
      writing_ = false;
      fail_all("write to " + where_ + ": " + ec.message());
      co_return;
    }
  }
  writing_ = false;
}

void H2Session::kick() {
  if (writing_ || closed_ || nghttp2_session_want_write(session_) == 0) return;
  asio::co_spawn(
      stream_->get_executor(), [self = shared_from_this()]() -> asio::awaitable<void> { co_await self->flush(); },
      asio::detached);
}

asio::awaitable<void> H2Session::read_loop(std::shared_ptr<H2Session> self) {
  (void)self;  // held, so the session lives while it reads
  // A task of its own in /debug/tasks and the SIGQUIT dump: the responses
  // of every request in flight come through here. Numbered: each client
  // (binds, events, lease, ...) has a connection, and task names are unique.
  static std::uint64_t connections = 0;
  const std::string number = std::to_string(++connections);
  trace::TaskScope task{"http2/read/", number};
  std::vector<std::uint8_t> buf(64 << 10);
  while (!closed_) {
    auto [ec, n] =
        co_await trace::traced(task, trace::points::http_read, stream_->async_read_some(asio::buffer(buf), nothrow));
    if (n > 0 && !closed_) {
      last_active_ = std::chrono::steady_clock::now();
      ssize_t rv = nghttp2_session_mem_recv(session_, buf.data(), n);
      if (rv < 0) {
        fail_all(std::string("HTTP/2 from ") + where_ + ": " + nghttp2_strerror(static_cast<int>(rv)));
        break;
      }
      kick();  // SETTINGS and PING acknowledgements, window updates
    }
    if (ec) {
      fail_all(ec == asio::error::eof ? "closed by " + where_ : "read from " + where_ + ": " + ec.message());
      break;
    }
    if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) {
      fail_all("HTTP/2 connection ended by " + where_);
      break;
    }
  }
}

void H2Session::fail_all(const std::string& why) {
  if (!closed_) {
    closed_ = true;
    close_reason_ = why;
    boost::system::error_code ignored;
    boost::beast::get_lowest_layer(*stream_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    boost::beast::get_lowest_layer(*stream_).close();
  }
  for (auto& [id, p] : pending_) {
    if (p->done) continue;
    p->lost = fail(errc::connection_lost, why);
    finish(*p);
  }
}

void H2Session::close() { fail_all("closed by us"); }

void H2Session::close_when_idle() {
  closing_ = true;
  if (pending_.empty()) close();
}

}  // namespace toysched::kube
