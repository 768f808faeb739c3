#include "toysched/kube/reflector.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "toysched/kube/watch_framer.hpp"
#include "toysched/log/log.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::chrono::milliseconds Backoff::next() {
  auto base = step_;
  step_ = std::min<std::chrono::milliseconds>(step_ * 2, 30s);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(base.count() * (1.0 + jitter(rng_))));
}

template <class T>
Reflector<T>::Reflector(Api& api, Handler<T>& handler, ListOptions opts)
    : api_(api), handler_(handler), opts_(std::move(opts)) {}

template <class T>
void Reflector<T>::stop() {
  stopping_ = true;
  if (stream_) stream_->close();
  if (timer_) timer_->cancel();
}

template <class T>
asio::awaitable<void> Reflector<T>::sleep(std::chrono::milliseconds d) {
  timer_ = std::make_unique<asio::steady_timer>(co_await asio::this_coro::executor, d);
  co_await trace::traced(*task_, trace::points::watch_backoff, timer_->async_wait(asio::as_tuple(asio::use_awaitable)));
  timer_.reset();
}

namespace {
template <class T>
auto list_of(Api& api, ListOptions opts) {
  if constexpr (std::is_same_v<T, Pod>)
    return api.list_pods(std::move(opts));
  else
    return api.list_nodes(std::move(opts));
}
template <class T>
result<WatchEvent<T>> decode_event(Decoder& d, std::string_view line) {
  if constexpr (std::is_same_v<T, Pod>)
    return d.pod_event(line);
  else
    return d.node_event(line);
}
}  // namespace

template <class T>
asio::awaitable<bool> Reflector<T>::list() {
  ++stats_.lists;
  auto r = co_await trace::traced(*task_, trace::points::watch_list, list_of<T>(api_, opts_));
  if (!r) {
    TS_ERROR("Failed to list", {"resource", ResourceTraits<T>::name}, {"err", r.error().message});
    co_return false;
  }
  TS_LOG(4, "Listed", {"resource", ResourceTraits<T>::name}, {"items", r->items.size()},
         {"resourceVersion", r->resource_version});
  store_.replace(std::move(r->items), handler_);
  rv_ = r->resource_version;
  synced_ = true;
  handler_.on_synced();
  co_return true;
}

template <class T>
asio::awaitable<typename Reflector<T>::WatchEnd> Reflector<T>::watch() {
  ++stats_.watches;
  // A random timeout spreads the re-watches of many clients (client-go: 5–10 min).
  std::uniform_int_distribution<int> secs(300, 599);
  static thread_local std::mt19937 rng(std::random_device{}());
  std::string target = std::string(ResourceTraits<T>::path) +
                       "?watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(rv_) +
                       "&timeoutSeconds=" + std::to_string(secs(rng));
  if (!opts_.field_selector.empty()) target += "&fieldSelector=" + url_encode(opts_.field_selector);
  if (!opts_.label_selector.empty()) target += "&labelSelector=" + url_encode(opts_.label_selector);
  WatchFramer framer;
  auto opened = co_await trace::traced(*task_, trace::points::watch_open, api_.transport().open_stream(target, framer));
  if (!opened) {
    TS_ERROR("Failed to watch", {"resource", ResourceTraits<T>::name}, {"err", opened.error().message});
    co_return WatchEnd::failed;
  }
  stream_ = std::move(*opened);
  struct closer {
    std::unique_ptr<Stream>& s;
    ~closer() {
      if (s) s->close();
      s.reset();
    }
  } close_at_end{stream_};
  if (framer.status() != 200) {
    // Refused before the stream started: drain the error body for its Status.
    while (!framer.done()) {
      auto more = co_await trace::traced(*task_, trace::points::watch_read, stream_->read_into(framer, 10s));
      if (!more || !*more) break;
    }
    HttpResponse r;
    r.status = framer.status();
    r.content_type = framer.header("Content-Type");
    r.body = framer.error_body();
    auto err = api_error_from(r, std::string("watch ") + ResourceTraits<T>::name);
    TS_ERROR("Watch refused", {"resource", ResourceTraits<T>::name}, {"err", err.message});
    co_return err.is_expired() ? WatchEnd::expired : WatchEnd::failed;
  }
  const auto started = std::chrono::steady_clock::now();
  const auto events_before = stats_.events;
  std::string line;
  for (;;) {
    while (framer.next_line(line)) {
      auto ev = decode_event<T>(decoder_, line);
      if (!ev) {
        TS_ERROR("Undecodable watch event; re-watching", {"resource", ResourceTraits<T>::name},
                 {"err", ev.error().message()});
        co_return WatchEnd::failed;
      }
      ++stats_.events;
      switch (ev->type) {
        case EventType::added:
        case EventType::modified:
          rv_ = ResourceTraits<T>::rv(ev->object);
          store_.add_or_update(std::move(ev->object), handler_);
          break;
        case EventType::deleted:
          rv_ = ResourceTraits<T>::rv(ev->object);
          store_.remove(ev->object, handler_);
          break;
        case EventType::bookmark:
          rv_ = ResourceTraits<T>::rv(ev->object);
          break;
        case EventType::error:
          if (is_expired(ev->status)) {
            TS_LOG(2, "Watch expired; relisting", {"resource", ResourceTraits<T>::name},
                   {"message", ev->status.message});
            co_return WatchEnd::expired;
          }
          // client-go relists on any ERROR, but after a backoff: a server
          // that keeps failing must not get a full list per failure.
          TS_ERROR("Watch error event; relisting after a backoff", {"resource", ResourceTraits<T>::name},
                   {"code", ev->status.code}, {"message", ev->status.message});
          co_return WatchEnd::error_event;
      }
    }
    if (stopping_) co_return WatchEnd::clean;
    if (framer.done()) {
      // The response ended (the final chunk) but the connection may stay
      // open: the API server ends a watch it finds too slow this way and
      // keeps the socket for its idle timeout. Waiting for EOF would stall
      // us for 90 s; the watch is over now.
      // client-go's "very short watch": a server that ends every watch at
      // once, saying nothing, would otherwise get a tight re-watch loop.
      if (stats_.events == events_before && std::chrono::steady_clock::now() - started < 1s) {
        TS_LOG(2, "Very short watch with no events; backing off", {"resource", ResourceTraits<T>::name});
        co_return WatchEnd::failed;
      }
      co_return WatchEnd::clean;
    }
    // The server sends a bookmark about every minute; twice that with no byte
    // at all means the connection is dead without having said so.
    auto more = co_await trace::traced(*task_, trace::points::watch_read, stream_->read_into(framer, 150s));
    if (!more) {
      if (stopping_) co_return WatchEnd::clean;
      TS_LOG(2, "Watch connection lost", {"resource", ResourceTraits<T>::name}, {"err", more.error().message});
      co_return WatchEnd::failed;
    }
    if (!*more) {
      if (auto fin = framer.finish(); !fin) {
        TS_LOG(2, "Watch stream cut inside an event; re-watching", {"resource", ResourceTraits<T>::name});
        co_return WatchEnd::failed;
      }
      if (!framer.done()) {
        TS_LOG(2, "Watch connection closed before the stream's end; re-watching",
               {"resource", ResourceTraits<T>::name});
        co_return WatchEnd::failed;
      }
      // The stream ended with this read: deliver its last events, then the
      // framer.done() branch above ends the watch.
    }
  }
}

template <class T>
asio::awaitable<void> Reflector<T>::run() {
  trace::TaskScope task{"watch/", ResourceTraits<T>::name};
  task_ = &task;
  struct clear_task {
    trace::TaskScope*& t;
    ~clear_task() { t = nullptr; }
  } clear{task_};
  bool need_list = true;
  while (!stopping_) {
    if (need_list) {
      if (!co_await list()) {
        co_await sleep(backoff_.next());
        continue;
      }
      need_list = false;
      if (stopping_) break;  // stopped while listing: no watch to open
    }
    const auto started = std::chrono::steady_clock::now();
    auto end = co_await watch();
    if (stopping_) break;
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
        co_await sleep(backoff_.next());
        break;
      case WatchEnd::error_event:
        ++stats_.rewatch_error;
        need_list = true;
        co_await sleep(backoff_.next());
        break;
    }
  }
}

template class Reflector<Pod>;
template class Reflector<Node>;

}  // namespace toysched::kube
