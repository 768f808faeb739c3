// Keeps a local copy of one kind of object in step with the API server, as
// client-go's reflector does, and tells a handler about every change:
//
//        ┌──────────── relist (410 Expired, ERROR event, first start) ◄─────┐
//        ▼                                                                  │
//   LIST (pages) ──► Store::replace ──► deltas (incl. deletes missed while  │
//        │                               disconnected)                      │
//        ▼                                                                  │
//   WATCH from the list's RV ──► events ──► Store::apply ──► deltas ────────┤
//        │  (bookmarks advance the RV)                                      │
//        ├─ stream ended cleanly (timeoutSeconds) ──► re-watch from last RV │
//        ├─ connection lost / 429 / 5xx / a watch that ended at once with   │
//        │  no events ──► backoff 0.8 s ×2 … 30 s, jitter, re-watch         │
//        │                (reset after a watch that lasted 2 min) ──────────┤
//        └─ ERROR event other than 410 ──► backoff, then relist ────────────┘
//
// The Store is pure (no I/O) and unit-tested; Reflector::run is the loop.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "toysched/kube/api.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::kube {

// What a reflector does with a kind of object.
template <class T>
struct ResourceTraits;

template <>
struct ResourceTraits<Pod> {
  static constexpr const char* path = "/api/v1/pods";
  static constexpr const char* name = "pods";
  static std::string key(const Pod& p) { return p.ns + "/" + p.name; }
  static const std::string& rv(const Pod& p) { return p.resource_version; }
};
template <>
struct ResourceTraits<Node> {
  static constexpr const char* path = "/api/v1/nodes";
  static constexpr const char* name = "nodes";
  static std::string key(const Node& n) { return n.name; }
  static const std::string& rv(const Node& n) { return n.resource_version; }
};

template <class T>
struct Handler {
  virtual ~Handler() = default;
  virtual void on_add(const T& obj) = 0;
  virtual void on_update(const T& old, const T& now) = 0;
  virtual void on_delete(const T& last) = 0;
  // Called after each complete list has been applied (the first one means
  // the cache has synced).
  virtual void on_synced() {}
};

// The local copy, keyed like the API (ns/name), with the deltas each change
// makes. Same-RV updates are dropped (a relist re-delivers everything).
template <class T>
class Store {
 public:
  using Traits = ResourceTraits<T>;

  // A fresh list: every object new or changed is an add/update, every object
  // held but not listed is a delete (deleted while we were not watching).
  void replace(std::vector<T> items, Handler<T>& h) {
    std::unordered_map<std::string, T> next;
    next.reserve(items.size());
    for (auto& item : items) {
      auto key = Traits::key(item);
      auto it = objects_.find(key);
      if (it == objects_.end())
        h.on_add(item);
      else if (Traits::rv(it->second) != Traits::rv(item))
        h.on_update(it->second, item);
      next.emplace(std::move(key), std::move(item));
    }
    for (auto& [key, old] : objects_)
      if (!next.count(key)) h.on_delete(old);
    objects_ = std::move(next);
  }

  void add_or_update(T obj, Handler<T>& h) {
    auto key = Traits::key(obj);
    auto it = objects_.find(key);
    if (it == objects_.end()) {
      h.on_add(obj);
      objects_.emplace(std::move(key), std::move(obj));
    } else if (Traits::rv(it->second) != Traits::rv(obj)) {
      h.on_update(it->second, obj);
      it->second = std::move(obj);
    }
  }

  void remove(const T& obj, Handler<T>& h) {
    auto it = objects_.find(Traits::key(obj));
    if (it == objects_.end()) return;
    h.on_delete(obj);  // the final state the server sent
    objects_.erase(it);
  }

  const std::unordered_map<std::string, T>& objects() const noexcept { return objects_; }
  std::size_t size() const noexcept { return objects_.size(); }

 private:
  std::unordered_map<std::string, T> objects_;
};

// Exponential backoff with jitter, client-go's numbers: 0.8 s doubling to
// 30 s, jitter up to 100 %, back to the start after a healthy stretch.
class Backoff {
 public:
  explicit Backoff(std::uint64_t seed = std::random_device{}()) : rng_(seed) {}
  std::chrono::milliseconds next();
  void reset() noexcept { step_ = std::chrono::milliseconds{800}; }

 private:
  std::chrono::milliseconds step_{800};
  std::mt19937_64 rng_;
};

struct ReflectorStats {
  std::uint64_t lists = 0;
  std::uint64_t watches = 0;
  std::uint64_t relists_expired = 0;  // 410: resourceVersion too old
  std::uint64_t rewatch_clean = 0;    // stream ended normally
  std::uint64_t rewatch_error = 0;    // connection lost, truncated, server error, ERROR event
  std::uint64_t events = 0;
};

template <class T>
class Reflector {
 public:
  Reflector(Api& api, Handler<T>& handler, ListOptions opts);

  // Runs until stop(). Errors are logged and retried, never thrown.
  boost::asio::awaitable<void> run();
  void stop();

  const Store<T>& store() const noexcept { return store_; }
  bool synced() const noexcept { return synced_; }
  const ReflectorStats& stats() const noexcept { return stats_; }
  const std::string& resource_version() const noexcept { return rv_; }

 private:
  // clean: re-watch now; expired (410): relist now; failed: re-watch after
  // a backoff; error_event (any other ERROR event): relist after a backoff.
  enum class WatchEnd { clean, expired, failed, error_event };
  boost::asio::awaitable<bool> list();
  boost::asio::awaitable<WatchEnd> watch();
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds d);

  Api& api_;
  Handler<T>& handler_;
  ListOptions opts_;
  Store<T> store_;
  Decoder decoder_;
  Backoff backoff_;
  std::string rv_;
  bool synced_ = false;
  bool stopping_ = false;
  ReflectorStats stats_;
  std::unique_ptr<Stream> stream_;    // the open watch, so stop() can close it
  trace::TaskScope* task_ = nullptr;  // `watch/<resource>`, alive while run() is
  std::unique_ptr<boost::asio::steady_timer> timer_;
};

extern template class Reflector<Pod>;
extern template class Reflector<Node>;

}  // namespace toysched::kube
