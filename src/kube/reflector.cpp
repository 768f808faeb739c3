#include "toysched/kube/reflector.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/kube/watch_framer.hpp"
#include "toysched/log/log.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::chrono::milliseconds Backoff::next() {
  auto base = step_;
  step_ = std::min<std::chrono::milliseconds>(step_ * 2, max_);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(base.count() * (1.0 + jitter(rng_))));
}

WatchEnd decide_watch_end(const StreamEnd& end) noexcept {
  switch (end.how) {
    case StreamEnd::How::stopped:
      return WatchEnd::clean;
    case StreamEnd::How::response_complete:
      // The response ended but the connection may stay open: the API server
      // ends a watch it finds too slow this way and keeps the socket for its
      // idle timeout, so the end of the response, not EOF, ends the watch.
      return end.events == 0 && end.lasted < 1s ? WatchEnd::failed : WatchEnd::clean;
    case StreamEnd::How::closed_early:
    case StreamEnd::How::cut_inside_event:
    case StreamEnd::How::connection_lost:
      return WatchEnd::failed;
  }
  return WatchEnd::failed;
}

WatchEnd decide_error_event(const Status& status) noexcept {
  return is_expired(status) ? WatchEnd::expired : WatchEnd::error_event;
}

template <class T>
Reflector<T>::Reflector(Api& api, Handler<T>& handler, ListOptions opts)
    : api_(api), handler_(handler), opts_(std::move(opts)) {}

template <class T>
void Reflector<T>::set_timing(const ReflectorTiming& t) {
  timing_ = t;
  backoff_ = Backoff(std::random_device{}(), t.backoff_initial, t.backoff_max);
}

template <class T>
void Reflector<T>::stop() {
  wakeup_.stop();
  if (stream_) stream_->close();
}

template <class T>
asio::awaitable<bool> Reflector<T>::list() {
  ++stats_.lists;
  auto r = co_await trace::traced(*task_, trace::points::watch_list, api_.list<T>(opts_));
  last_read_ = std::chrono::steady_clock::now();
  unreachable_ = !r && r.error().http_status == 0;
  if (!r) {
    if (novel_error(r.error().message))
      TS_ERROR("Failed to list", {"resource", resource()}, {"err", r.error().message});
    else
      TS_LOG(4, "Failed to list", {"resource", resource()}, {"err", r.error().message});
    co_return false;
  }
  TS_LOG(4, "Listed", {"resource", resource()}, {"items", r->items.size()}, {"undecodable", r->undecodable.size()},
         {"resourceVersion", r->resource_version});
  for (const auto& u : r->undecodable) log_undecodable(u);
  store_.replace(std::move(r->items), r->undecodable, handler_);
  last_error_.clear();
  rv_ = r->resource_version;
  synced_ = true;
  handler_.on_listed();
  co_return true;
}

template <class T>
std::string Reflector<T>::watch_target() {
  // A random timeout spreads the re-watches of many clients (client-go: 5–10 min).
  std::uniform_int_distribution<int> secs(300, 599);
  static thread_local std::mt19937 rng(std::random_device{}());
  std::string target = kind_path<T>(opts_.ns) + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(rv_) +
                       "&timeoutSeconds=" + std::to_string(secs(rng));
  if (!opts_.field_selector.empty()) target += "&fieldSelector=" + url_encode(opts_.field_selector);
  if (!opts_.label_selector.empty()) target += "&labelSelector=" + url_encode(opts_.label_selector);
  return target;
}

template <class T>
asio::awaitable<std::optional<WatchEnd>> Reflector<T>::open_watch(WatchFramer& framer) {
  auto opened =
      co_await trace::traced(*task_, trace::points::watch_open, api_.transport().open_stream(watch_target(), framer));
  unreachable_ = !opened;  // a refusal with a status comes back as a stream
  if (!opened) {
    if (novel_error(opened.error().message))
      TS_ERROR("Failed to watch", {"resource", resource()}, {"err", opened.error().message});
    else
      TS_LOG(4, "Failed to watch", {"resource", resource()}, {"err", opened.error().message});
    co_return WatchEnd::failed;
  }
  stream_ = std::move(*opened);
  if (framer.status() == 200) co_return std::nullopt;
  // Refused before the stream started: drain the error body for its Status.
  while (!framer.done()) {
    auto more = co_await trace::traced(*task_, trace::points::watch_read, stream_->read_into(framer, 10s));
    if (!more || !*more) break;
  }
  HttpResponse r;
  r.status = framer.status();
  r.content_type = framer.header("Content-Type");
  r.body = framer.error_body();
  auto err = api_error_from(r, std::string("watch ") + resource());
  TS_ERROR("Watch refused", {"resource", resource()}, {"err", err.message});
  co_return err.is_expired() ? WatchEnd::expired : WatchEnd::failed;
}

template <class T>
void Reflector<T>::log_undecodable(const Undecodable& u) const {
  const auto key = ResourceTraits<T>::key(u);
  if (!store_.is_undecodable(key))
    TS_ERROR("Skipping an object that cannot be decoded", {"resource", resource()}, {"object", key},
             {"resourceVersion", u.resource_version}, {"err", u.error});
  else
    TS_LOG(4, "Skipping an object that cannot be decoded", {"resource", resource()}, {"object", key},
           {"resourceVersion", u.resource_version}, {"err", u.error});
}

template <class T>
std::optional<WatchEnd> Reflector<T>::apply_events(WatchFramer& framer, bool& turn) {
  std::string line;
  while (framer.next_line(line)) {
    auto ev = decoder_.event<T>(line);
    if (!ev) {
      // The event itself is broken (not its object: that is skipped below),
      // so the stream cannot be trusted past it.
      TS_ERROR("Undecodable watch event; re-watching", {"resource", resource()}, {"err", ev.error().message()});
      return WatchEnd::failed;
    }
    ++stats_.events;
    if (const auto& u = ev->undecodable) {
      // The event happened: resume after it, without the object.
      if (!u->resource_version.empty()) rv_ = u->resource_version;
      log_undecodable(*u);
      if (ev->type == EventType::deleted)
        store_.remove(*u, handler_);
      else
        store_.skip(*u, handler_);
      continue;
    }
    switch (ev->type) {
      case EventType::added:
      case EventType::modified:
        rv_ = ResourceTraits<T>::rv(ev->object);
        store_.add_or_update(std::move(ev->object), handler_);
        if (handler_.take_turn()) {
          turn = true;  // the rest of this read after the loop has had its turn
          return std::nullopt;
        }
        break;
      case EventType::deleted:
        rv_ = ResourceTraits<T>::rv(ev->object);
        store_.remove(ev->object, handler_);
        break;
      case EventType::bookmark:
        rv_ = ResourceTraits<T>::rv(ev->object);
        break;
      case EventType::error:
        TS_ERROR("Watch error event", {"resource", resource()}, {"code", ev->status.code},
                 {"reason", ev->status.reason}, {"message", ev->status.message});
        return decide_error_event(ev->status);
    }
  }
  return std::nullopt;
}

template <class T>
asio::awaitable<WatchEnd> Reflector<T>::read_events(WatchFramer& framer) {
  StreamEnd end{StreamEnd::How::stopped};
  const auto started = std::chrono::steady_clock::now();
  const auto events_before = stats_.events;
  for (;;) {
    bool turn = false;
    if (auto decided = apply_events(framer, turn)) co_return *decided;
    if (wakeup_.stopped()) break;
    if (turn) {
      co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
      continue;
    }
    if (framer.done()) {
      end.how = StreamEnd::How::response_complete;
      break;
    }
    // The server sends a bookmark about every minute; twice that with no byte
    // at all means the connection is dead without having said so.
    auto more = co_await trace::traced(*task_, trace::points::watch_read, stream_->read_into(framer, 150s));
    last_read_ = std::chrono::steady_clock::now();
    if (!more) {
      if (wakeup_.stopped()) break;
      TS_LOG(2, "Watch connection lost", {"resource", resource()}, {"err", more.error().message});
      end.how = StreamEnd::How::connection_lost;
      break;
    }
    if (!*more) {
      // The connection ended: deliver what the last read brought, then
      // decide by how much of the response had arrived.
      for (bool turn = true; turn;) {
        turn = false;
        if (auto decided = apply_events(framer, turn)) co_return *decided;
      }
      end.how = !framer.finish() ? StreamEnd::How::cut_inside_event
                : framer.done()  ? StreamEnd::How::response_complete
                                 : StreamEnd::How::closed_early;
      break;
    }
  }
  end.events = stats_.events - events_before;
  end.lasted = std::chrono::steady_clock::now() - started;
  auto decided = decide_watch_end(end);
  if (decided == WatchEnd::failed && end.how != StreamEnd::How::connection_lost)
    TS_LOG(2, "Watch ended abnormally; re-watching after a backoff", {"resource", resource()}, {"events", end.events});
  co_return decided;
}

template <class T>
asio::awaitable<WatchEnd> Reflector<T>::watch() {
  ++stats_.watches;
  WatchFramer framer;
  util::scope_exit closer([this] {
    if (stream_) stream_->close();
    stream_.reset();
    watching_ = false;
  });
  if (auto refused = co_await open_watch(framer)) co_return *refused;
  watching_ = true;
  co_return co_await read_events(framer);
}

// client-go's backoff (800 ms doubling to 30 s, jittered, reset after 2 min
// of health), with one difference: while the server is unreachable (no
// response at all: refused, reset, timed out) we ask it every probe interval
// whether it is back, and retry as soon as it answers. A restarted API
// server is then used within a second of being ready, instead of after a
// backoff step that grew while it was down (76 s at 966effa). A server that
// answers with an error (403, 500, 429) gets the full backoff: probing
// would not tell us it has changed its mind.
template <class T>
asio::awaitable<void> Reflector<T>::back_off() {
  const auto probe_interval = timing_.probe_interval;
  const auto until = std::chrono::steady_clock::now() + backoff_.next();
  if (!unreachable_) {
    co_await wakeup_.sleep_until(*task_, trace::points::watch_backoff, until);
    co_return;
  }
  for (;;) {
    const auto next = std::min(until, std::chrono::steady_clock::now() + probe_interval);
    if (!co_await wakeup_.sleep_until(*task_, trace::points::watch_backoff, next)) co_return;
    if (std::chrono::steady_clock::now() >= until) co_return;
    if (co_await trace::traced(*task_, trace::points::watch_probe, api_.transport().probe())) {
      TS_LOG(2, "API server answers again; retrying at once", {"resource", resource()});
      co_return;
    }
  }
}

template <class T>
asio::awaitable<void> Reflector<T>::run() {
  trace::TaskScope task{"watch/", resource()};
  task_ = &task;
  util::scope_exit clear_task([this] { task_ = nullptr; });
  bool need_list = true;
  while (!wakeup_.stopped()) {
    if (need_list) {
      if (!co_await list()) {
        co_await back_off();
        continue;
      }
      need_list = false;
      if (wakeup_.stopped()) break;  // stopped while listing: no watch to open
    }
    const auto started = std::chrono::steady_clock::now();
    auto end = co_await watch();
    if (wakeup_.stopped()) break;
    // A healthy stretch forgets earlier trouble, however the watch ended.
    if (std::chrono::steady_clock::now() - started > 2min) backoff_.reset();
    switch (end) {
      case WatchEnd::clean:
        ++stats_.rewatch_clean;
        break;
      case WatchEnd::expired:
        ++stats_.relists_expired;
        need_list = true;
        break;
      case WatchEnd::failed:
        ++stats_.rewatch_error;
        co_await back_off();
        break;
      case WatchEnd::error_event:
        ++stats_.rewatch_error;
        need_list = true;
        co_await back_off();
        break;
    }
  }
}

#define TOYSCHED_REFLECTOR(Type, ...) template class Reflector<Type>;
TOYSCHED_KINDS(TOYSCHED_REFLECTOR)
#undef TOYSCHED_REFLECTOR

}  // namespace toysched::kube
