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

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "toysched/async/wakeup.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::kube {

class WatchFramer;

// How a reflector keys and versions a kind of object.
template <class T>
struct ResourceTraits {
  static std::string key(const T& o) {
    if constexpr (requires { o.ns; })
      return o.ns.empty() ? o.name : o.ns + "/" + o.name;
    else
      return o.name;
  }
  static const std::string& rv(const T& o) { return o.resource_version; }
  static const std::string& uid(const T& o) { return o.uid; }
  // The same key for an object the decoder could not read ("" if nameless).
  static std::string key(const Undecodable& u) { return u.ns.empty() || u.name.empty() ? u.name : u.ns + "/" + u.name; }
};

template <class T>
struct Handler {
  virtual ~Handler() = default;
  virtual void on_add(const T& obj) = 0;
  virtual void on_update(const T& old, const T& now) = 0;
  virtual void on_delete(const T& last) = 0;
  // An object the decoder could not read, new or at a new resourceVersion.
  // The store goes on with the last copy it could read, `last` (nullptr:
  // none), as if the change had not happened. `deleted`: a DELETED event
  // for an object never read (one with a copy arrives as on_delete(copy)).
  virtual void on_undecodable(const Undecodable& u, const T* last, bool deleted) { (void)u, (void)last, (void)deleted; }
  // Asked after each event of a watch read: true lets the rest of the loop
  // run before the next event of the same read is handled (the scheduler:
  // a pod just queued is decided and its bind sent before the remaining
  // events are decoded). Taking the turn resets the handler's wish.
  virtual bool take_turn() { return false; }
  // After each list has been applied: the informer is synced. The
  // scheduler waits on this to start (and to open its bind connections)
  // the moment the last informer syncs, not at the first pod.
  virtual void on_listed() {}
};

// The local copy, keyed like the API (ns/name), with the deltas each change
// makes. Same-RV updates are dropped (a relist re-delivers everything).
//
// A key is a name, not an identity: an object deleted and created again under
// the same name while we were not watching (a StatefulSet pod across a
// relist, or a watch that missed the DELETED) arrives as one change of the
// key. When its UID differs it is another object, so the handler gets a
// delete of the old and an add of the new, never an update from one to the
// other: an update would keep the old one's resources counted and never
// queue the new one.
//
// An object that cannot be decoded is skipped, never a failed list or watch
// (one pod must not wedge an informer): its last readable copy stays, so a
// bound pod's resources stay counted and a relist does not read it as
// deleted; the handler hears of it once per resourceVersion.
template <class T>
class Store {
 public:
  using Traits = ResourceTraits<T>;

  // A fresh list: every object new or changed is an add/update, every object
  // held but not listed is a delete (deleted while we were not watching).
  // `skipped` are listed objects that could not be read: see skip().
  void replace(std::vector<T> items, const std::vector<Undecodable>& skipped, Handler<T>& h) {
    std::unordered_map<std::string, T> next;
    next.reserve(items.size() + skipped.size());
    for (auto& item : items) {
      auto key = Traits::key(item);
      auto it = objects_.find(key);
      if (it == objects_.end())
        h.on_add(item);
      else
        changed(it->second, item, h);
      next.emplace(std::move(key), std::move(item));
    }
    std::unordered_map<std::string, std::string> still_undecodable;
    for (const auto& u : skipped) {
      auto key = Traits::key(u);
      auto it = objects_.find(key);
      const T* last = it == objects_.end() ? nullptr : &it->second;
      if (!key.empty() && is_news(key, u)) h.on_undecodable(u, last, false);
      if (last && !next.count(key)) next.emplace(key, *last);
      still_undecodable[std::move(key)] = u.resource_version;
    }
    for (auto& [key, old] : objects_)
      if (!next.count(key)) h.on_delete(old);
    objects_ = std::move(next);
    undecodable_ = std::move(still_undecodable);
  }
  void replace(std::vector<T> items, Handler<T>& h) { replace(std::move(items), {}, h); }

  // An ADDED or MODIFIED object that could not be read: the store keeps
  // what it had (see the class comment).
  void skip(const Undecodable& u, Handler<T>& h) {
    auto key = Traits::key(u);
    if (!is_news(key, u)) return;
    undecodable_[key] = u.resource_version;
    if (key.empty()) return;  // nothing to key it by: nothing to tell
    auto it = objects_.find(key);
    h.on_undecodable(u, it == objects_.end() ? nullptr : &it->second, false);
  }

  // A DELETED object that could not be read: removed by its key.
  void remove(const Undecodable& u, Handler<T>& h) {
    auto key = Traits::key(u);
    undecodable_.erase(key);
    if (key.empty()) return;
    auto it = objects_.find(key);
    if (it == objects_.end()) {
      h.on_undecodable(u, nullptr, true);
      return;
    }
    h.on_delete(it->second);
    objects_.erase(it);
  }

  // Whether the object under `key` was last seen undecodable.
  bool is_undecodable(const std::string& key) const { return undecodable_.count(key) > 0; }

  void add_or_update(T obj, Handler<T>& h) {
    auto key = Traits::key(obj);
    undecodable_.erase(key);
    auto it = objects_.find(key);
    if (it == objects_.end()) {
      h.on_add(obj);
      objects_.emplace(std::move(key), std::move(obj));
    } else if (Traits::rv(it->second) != Traits::rv(obj)) {
      changed(it->second, obj, h);
      it->second = std::move(obj);
    }
  }

  void remove(const T& obj, Handler<T>& h) {
    auto key = Traits::key(obj);
    undecodable_.erase(key);
    auto it = objects_.find(key);
    if (it == objects_.end()) return;
    // The final state the server sent; but if the name had meanwhile passed
    // to another object we never saw, the one to forget is the one we hold.
    h.on_delete(Traits::uid(it->second) == Traits::uid(obj) ? obj : it->second);
    objects_.erase(it);
  }

  const std::unordered_map<std::string, T>& objects() const noexcept { return objects_; }
  // The object held under `key` (ns/name, or name), or nullptr.
  const T* find(const std::string& key) const {
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : &it->second;
  }
  std::size_t size() const noexcept { return objects_.size(); }

 private:
  // `old` is held under the key `now` arrives with.
  static void changed(const T& old, const T& now, Handler<T>& h) {
    if (Traits::uid(old) != Traits::uid(now)) {
      h.on_delete(old);
      h.on_add(now);
    } else if (Traits::rv(old) != Traits::rv(now)) {
      h.on_update(old, now);
    }
  }

  // New, or at another resourceVersion than when last seen undecodable.
  bool is_news(const std::string& key, const Undecodable& u) const {
    auto it = undecodable_.find(key);
    return it == undecodable_.end() || it->second != u.resource_version;
  }

  std::unordered_map<std::string, T> objects_;
  std::unordered_map<std::string, std::string> undecodable_;  // key → resourceVersion last seen
};

// Exponential backoff with jitter, client-go's numbers by default: 0.8 s
// doubling to 30 s, jitter up to 100 %, back to the start after a healthy
// stretch.
class Backoff {
 public:
  explicit Backoff(std::uint64_t seed = std::random_device{}(),
                   std::chrono::milliseconds initial = std::chrono::milliseconds{800},
                   std::chrono::milliseconds max = std::chrono::milliseconds{30'000})
      : initial_(initial), max_(max), step_(initial), rng_(seed) {}
  std::chrono::milliseconds next();
  void reset() noexcept { step_ = initial_; }

 private:
  std::chrono::milliseconds initial_, max_;
  std::chrono::milliseconds step_;
  std::mt19937_64 rng_;
};

// A reflector's waits. The defaults are client-go's backoff and our probe
// interval (back_off() in reflector.cpp); unit tests shrink them so that a
// loop over every failure runs in milliseconds.
struct ReflectorTiming {
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{30'000};
  // While the server is unreachable: how often to ask whether it is back.
  std::chrono::milliseconds probe_interval{500};
};

struct ReflectorStats {
  std::uint64_t lists = 0;
  std::uint64_t watches = 0;
  std::uint64_t relists_expired = 0;  // 410: resourceVersion too old
  std::uint64_t rewatch_clean = 0;    // stream ended normally
  std::uint64_t rewatch_error = 0;    // connection lost, truncated, server error, ERROR event
  std::uint64_t events = 0;
};

// What to do after a watch: clean: re-watch now; expired (410): relist now;
// failed: re-watch after a backoff; error_event (any other ERROR event):
// relist after a backoff.
enum class WatchEnd { clean, expired, failed, error_event };

// How a watch's stream ended, as the event loop saw it.
struct StreamEnd {
  enum class How {
    response_complete,  // the chunked response ended (timeoutSeconds, or the server let go)
    closed_early,       // the connection closed before the response's end
    cut_inside_event,   // the connection closed in the middle of an event
    connection_lost,    // a read failed or timed out
    stopped,            // stop() was called
  } how;
  std::uint64_t events = 0;                      // events delivered on this watch
  std::chrono::steady_clock::duration lasted{};  // from the watch's 200 to its end
};
// The end-of-stream decision, pure: client-go's rules, including its "very
// short watch" (a response that ends within a second with no event is a
// server ending every watch at once: back off rather than loop).
WatchEnd decide_watch_end(const StreamEnd& end) noexcept;
// An ERROR event: 410 Expired/Gone relists at once; anything else relists
// after a backoff (client-go relists on every ERROR; a failing server must
// not get a full list per failure).
WatchEnd decide_error_event(const Status& status) noexcept;

template <class T>
class Reflector {
 public:
  // opts.ns names the namespace for namespaced kinds (Lease); its field and
  // label selectors apply to both the list and the watch.
  Reflector(Api& api, Handler<T>& handler, ListOptions opts);

  // Runs until stop(). Errors are logged and retried, never thrown.
  boost::asio::awaitable<void> run();
  void stop();

  const Store<T>& store() const noexcept { return store_; }
  // The kind's resource (kinds.hpp): "pods", "nodes", ...
  const char* resource() const noexcept { return KindTraits<T>::name; }
  bool synced() const noexcept { return synced_; }
  // A watch is open (the server answered 200): changes reach the handler as
  // they happen. False while listing, backing off or re-opening.
  bool watching() const noexcept { return watching_; }
  // List and watch failures only at -v=4: for an owner that reports the
  // same failure itself (the elector's GET of the same Lease).
  void set_quiet() noexcept { quiet_ = true; }
  // Before run().
  void set_timing(const ReflectorTiming& t);
  const ReflectorStats& stats() const noexcept { return stats_; }
  const std::string& resource_version() const noexcept { return rv_; }
  // When the read (or list) whose objects are being handed to the handler
  // returned: the handler's "arrived" for the latency by stage.
  std::chrono::steady_clock::time_point last_read() const noexcept { return last_read_; }

 private:
  boost::asio::awaitable<bool> list();
  boost::asio::awaitable<WatchEnd> watch();
  // The watch request: opens stream_, or says why it could not.
  boost::asio::awaitable<std::optional<WatchEnd>> open_watch(WatchFramer& framer);
  // Delivers the events of an open stream until it ends.
  boost::asio::awaitable<WatchEnd> read_events(WatchFramer& framer);
  // The events the framer holds: nullopt to go on, else how the watch ends.
  // Stops early with `turn` set when the handler asks for the loop's turn.
  std::optional<WatchEnd> apply_events(WatchFramer& framer, bool& turn);
  // An object that could not be decoded: logged at error level when its
  // key turns undecodable, at -v=4 while it stays so (relists, new RVs).
  void log_undecodable(const Undecodable& u) const;
  std::string watch_target();
  // Waits out the next backoff step; see back_off() in reflector.cpp.
  boost::asio::awaitable<void> back_off();
  // True the first time in a row `err` is seen: a failure that repeats on
  // every retry (a 403, a server that is down) is logged once at error
  // level, its repeats at -v=4. A successful list forgets it.
  bool novel_error(const std::string& err) {
    if (quiet_ || err == last_error_) return false;
    last_error_ = err;
    return true;
  }

  Api& api_;
  Handler<T>& handler_;
  ListOptions opts_;
  Store<T> store_;
  Decoder decoder_;
  ReflectorTiming timing_;
  Backoff backoff_;
  std::string rv_;
  std::string last_error_;
  bool unreachable_ = false;  // the last list or watch request got no response at all
  bool quiet_ = false;
  bool synced_ = false;
  std::chrono::steady_clock::time_point last_read_{};
  bool watching_ = false;
  ReflectorStats stats_;
  std::unique_ptr<Stream> stream_;    // the open watch, so stop() can close it
  trace::TaskScope* task_ = nullptr;  // `watch/<resource>`, alive while run() is
  async::Wakeup wakeup_;              // backoff sleeps; stop() ends them
};

// One Reflector per kind of kinds.hpp, compiled once in reflector.cpp.
#define TOYSCHED_EXTERN_REFLECTOR(Type, ...) extern template class Reflector<Type>;
TOYSCHED_KINDS(TOYSCHED_EXTERN_REFLECTOR)
#undef TOYSCHED_EXTERN_REFLECTOR

}  // namespace toysched::kube
