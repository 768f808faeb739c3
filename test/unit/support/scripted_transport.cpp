#include "scripted_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <utility>

#include "toysched/json/writer.hpp"
#include "toysched/kube/watch_framer.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using kube::errc;

namespace {

kube::Error lost(errc code, const std::string& what) { return {kube::make_error_code(code), "scripted: " + what}; }

const char* reason_for(int code) {
  switch (code) {
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    default:
      return "InternalError";
  }
}

std::string chunk(const std::string& line) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", line.size() + 1);
  return size + line + "\n\r\n";
}

void feed(kube::WatchFramer& framer, const std::string& bytes) {
  if (auto r = framer.feed(bytes); !r) throw std::logic_error("scripted stream: bad bytes: " + r.error().message());
}

std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

// Whether `path` matches `pattern`, segment by segment; "*" is any one segment.
bool matches(std::string_view pattern, std::string_view path) {
  for (;;) {
    const auto pe = pattern.find('/'), e = path.find('/');
    const auto pseg = pattern.substr(0, pe), seg = path.substr(0, e);
    if (pseg != "*" && pseg != seg) return false;
    if (pe == std::string_view::npos || e == std::string_view::npos) return pe == e;
    pattern.remove_prefix(pe + 1);
    path.remove_prefix(e + 1);
  }
}

}  // namespace

std::string describe(const FaultSpec& f) {
  switch (f.kind) {
    case Fault::reset_before_send:
      return "reset before send";
    case Fault::reset_after_send:
      return "reset after send";
    case Fault::replay:
      return "reset after send, replayed";
    case Fault::timeout:
      return "timeout";
    case Fault::status:
      return "HTTP " + std::to_string(f.status);
  }
  return "?";
}

std::string status_body(int code, const std::string& reason, const std::string& message) {
  json::Writer w;
  w.object().field("kind", "Status").field("apiVersion", "v1").key("metadata").object().end();
  w.field("status", "Failure").field("message", message).field("reason", reason).field("code", code).end();
  return std::move(w).str();
}

Reply status_reply(int code, const std::string& reason, const std::string& message) {
  return Reply{code, status_body(code, reason, message)};
}

// One watch response: its script, one event per read, then its end.
class ScriptedTransport::FakeStream final : public kube::Stream {
 public:
  FakeStream(ScriptedTransport& t, StreamScript script)
      : t_(t), script_(std::move(script)), timer_(t.ex_, asio::steady_timer::time_point::max()) {
    ++t_.open_streams_;
  }
  ~FakeStream() override { --t_.open_streams_; }

  asio::awaitable<kube::expected<bool>> read_into(kube::WatchFramer& framer, std::chrono::milliseconds) override {
    auto fault = t_.arrive("READ");
    co_await t_.turn();
    if (closed_) co_return lost(errc::connection_lost, "watch stream closed");
    if (fault && fault->kind == Fault::timeout) co_return lost(errc::request_timeout, "watch stream idle");
    if (fault && fault->kind == Fault::status) {
      feed(framer, chunk(R"({"type":"ERROR","object":)" +
                         status_body(fault->status, reason_for(fault->status), "scripted watch error") + "}"));
      co_return true;
    }
    if (fault) {
      closed_ = true;
      co_return lost(errc::connection_lost, "watch connection reset");
    }
    if (next_ < script_.events.size()) {
      feed(framer, chunk(script_.events[next_++]));
      co_return true;
    }
    switch (script_.end) {
      case StreamScript::End::end:
        if (ended_) co_return false;
        ended_ = true;
        feed(framer, "0\r\n\r\n");
        co_return true;
      case StreamScript::End::reset:
        closed_ = true;
        co_return lost(errc::connection_lost, "watch connection reset");
      case StreamScript::End::park:
        break;
    }
    if (t_.on_park_) t_.on_park_();
    if (!closed_) co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return lost(errc::connection_lost, "watch stream closed");
  }

  void close() override {
    closed_ = true;
    timer_.cancel();
  }

 private:
  ScriptedTransport& t_;
  StreamScript script_;
  std::size_t next_ = 0;
  bool closed_ = false, ended_ = false;
  asio::steady_timer timer_;  // a parked read waits here for close()
};

ScriptedTransport::ScriptedTransport(asio::any_io_executor ex) : ex_(ex) {
  config_.server.host = "scripted.invalid";
  config_.server.port = 443;
}

ScriptedTransport::~ScriptedTransport() = default;

void ScriptedTransport::on(http::verb verb, std::string path, Handler h) {
  routes_.push_back({verb, std::move(path), std::move(h), {}});
}

void ScriptedTransport::on_watch(std::string path, WatchHandler h) {
  routes_.push_back({http::verb::get, std::move(path), {}, std::move(h)});
}

void ScriptedTransport::fail_at(std::size_t n, FaultSpec f) { faults_[n] = f; }

void ScriptedTransport::let_go() {
  hold_ = nullptr;
  for (auto* t : std::exchange(held_, {})) t->cancel();
}
void ScriptedTransport::at(std::size_t n, std::function<void()> f) { hooks_[n] = std::move(f); }

std::optional<FaultSpec> ScriptedTransport::arrive(std::string what) {
  const std::size_t n = ++points_;
  point_log_.push_back(std::move(what));
  if (auto h = hooks_.find(n); h != hooks_.end()) {
    auto f = std::move(h->second);
    hooks_.erase(h);
    f();
  }
  auto it = faults_.find(n);
  if (it == faults_.end()) return std::nullopt;
  fired_ = true;
  return it->second;
}

asio::awaitable<void> ScriptedTransport::turn() { co_await asio::post(ex_, asio::use_awaitable); }

const ScriptedTransport::Route* ScriptedTransport::route(http::verb verb, const std::string& target, bool watch) const {
  const std::string path = path_of(target);
  for (const Route& r : routes_)
    if (r.verb == verb && static_cast<bool>(r.watch) == watch && matches(r.path, path)) return &r;
  return nullptr;
}

Reply ScriptedTransport::serve(const kube::HttpRequest& req, std::size_t point) {
  sent_.push_back({req.verb, req.target, req.body, point, ++seq_, 0, 0, 0});
  const Route* r = route(req.verb, req.target, false);
  Reply reply;
  if (r == nullptr) {
    unexpected_.push_back(std::string(http::to_string(req.verb)) + " " + req.target);
    reply = status_reply(404, "NotFound", "no route in the script");
  } else {
    reply = r->handler(req);
  }
  sent_.back().status = reply.status;
  return reply;
}

asio::awaitable<kube::expected<kube::HttpResponse>> ScriptedTransport::request(kube::HttpRequest req) {
  const std::string verb(http::to_string(req.verb));
  auto fault = arrive(verb + " " + req.target);
  const std::size_t point = points_;
  co_await turn();  // the rate limiter's turn
  if (req.limits.deadline && std::chrono::steady_clock::now() >= *req.limits.deadline)
    co_return lost(errc::request_timeout, verb + " " + req.target + ": not done by its deadline");
  if (req.limits.may_send && !req.limits.may_send())
    co_return lost(errc::cancelled, verb + " " + req.target + ": no longer wanted");
  if (req.trace) req.trace->admitted = req.trace->connected = std::chrono::steady_clock::now();
  if (fault && fault->kind == Fault::reset_before_send) {
    co_await turn();
    ++counts_[{verb, "error"}];
    co_return lost(errc::connection_lost, verb + " " + req.target + ": connection reset before the request left");
  }
  Reply reply;
  if (fault && fault->kind == Fault::status) {
    sent_.push_back({req.verb, req.target, req.body, point, ++seq_, 0, 0, fault->status});
    reply = status_reply(fault->status, reason_for(fault->status));
  } else {
    reply = serve(req, point);
  }
  const bool replayed = fault && fault->kind == Fault::replay;
  if (replayed) reply = serve(req, point);  // the first send's answer was lost; the replay's arrives
  const std::size_t entry = sent_.size() - 1;
  if (hold_ && hold_(req)) {
    asio::steady_timer held(ex_, asio::steady_timer::time_point::max());
    held_.push_back(&held);
    // However the wait ends, no pointer into this frame stays behind.
    util::scope_exit leave([this, &held] { std::erase(held_, &held); });
    co_await held.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_await turn();  // in flight
  sent_[entry].done_seq = ++seq_;
  if (replayed) sent_[entry - 1].done_seq = sent_[entry].done_seq;
  if (fault && (fault->kind == Fault::reset_after_send || fault->kind == Fault::timeout)) {
    ++counts_[{verb, "error"}];
    if (fault->kind == Fault::timeout) co_return lost(errc::request_timeout, verb + " " + req.target + ": no answer");
    co_return lost(errc::connection_lost, verb + " " + req.target + ": connection reset after the request left");
  }
  sent_[entry].answered_seq = sent_[entry].done_seq;
  ++counts_[{verb, std::to_string(reply.status)}];
  kube::HttpResponse res;
  res.status = reply.status;
  res.content_type = reply.content_type;
  res.body = std::move(reply.body);
  res.replayed = replayed;
  co_return res;
}

asio::awaitable<kube::expected<std::unique_ptr<kube::Stream>>> ScriptedTransport::open_stream(
    std::string target, kube::WatchFramer& framer) {
  auto fault = arrive("WATCH " + target);
  co_await turn();
  if (fault && fault->kind == Fault::timeout) co_return lost(errc::request_timeout, "watch " + target + ": no answer");
  if (fault && fault->kind != Fault::status) co_return lost(errc::connection_lost, "watch " + target + ": reset");
  sent_.push_back({http::verb::get, target, {}, points_, ++seq_, 0, 0, 200});
  const Route* r = route(http::verb::get, target, true);
  int refused = fault ? fault->status : r == nullptr ? 404 : 0;
  if (r == nullptr) unexpected_.push_back("WATCH " + target);
  if (refused != 0) {
    sent_.back().status = refused;
    const std::string body = status_body(refused, reason_for(refused), "scripted watch refusal");
    feed(framer, "HTTP/1.1 " + std::to_string(refused) + " " + reason_for(refused) +
                     "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n" + body);
    ++counts_[{"WATCH", std::to_string(refused)}];
    co_return std::unique_ptr<kube::Stream>(
        std::make_unique<FakeStream>(*this, StreamScript{{}, StreamScript::End::end}));
  }
  feed(framer, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  ++counts_[{"WATCH", "200"}];
  sent_.back().answered_seq = sent_.back().done_seq = ++seq_;
  co_return std::unique_ptr<kube::Stream>(std::make_unique<FakeStream>(*this, r->watch(target)));
}

asio::awaitable<bool> ScriptedTransport::probe() {
  auto fault = arrive("PROBE");
  co_await turn();
  co_return !fault;
}

std::vector<ScriptedTransport::Sent> ScriptedTransport::sent_matching(http::verb verb,
                                                                      const std::string& needle) const {
  std::vector<Sent> out;
  for (const Sent& s : sent_)
    if (s.verb == verb && s.target.find(needle) != std::string::npos) out.push_back(s);
  return out;
}

}  // namespace toysched::testing
