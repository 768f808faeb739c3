// The live page's data: /ui (the page, compiled in) and /debug/events-stream
// (Server-Sent Events of what changed). docs/ui.md is the protocol.
//
//   ui::Feed feed({*scheduler, elector.get(), "kube-system/kube-scheduler"});
//   ui::add_routes(routes, feed);   // beside /debug/*, under the same guard
//
// Each connected page gets its own stream task. Every 250 ms it walks what
// the scheduler holds (every key of docs/ui.md) and offers each key with a
// 64-bit digest of the fields its value is made of; the value's JSON is
// written only when the digest differs from the one this client was sent.
// So a tick over 5 000 nodes and 10 000 pods where little changed costs a
// hash lookup per key, not a JSON document. With no page open nothing runs:
// no task, and the outcome hook returns at once.
#pragma once

#include "toysched/json/writer.hpp"
#include "toysched/sched/cluster_objects.hpp"  // sched::StringMap
#include "toysched/serve/http_server.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace toysched::sched {
class Scheduler;
struct Outcome;
}  // namespace toysched::sched
namespace toysched::lease {
class Elector;
}

namespace toysched::ui {

// FNV-1a over the fields a value is made of.
class Digest {
 public:
  Digest& add(std::string_view s) noexcept;
  Digest& add(std::int64_t v) noexcept;
  std::uint64_t value() const noexcept { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ull;
};

// One line of the page's ticker.
struct Tick {
  std::uint64_t seq = 0;
  std::int64_t unix_ms = 0;
  std::string kind;  // bound, lost, failed
  std::string pod;   // ns/name
  std::string node;
  std::string message;
};

// What one client was sent: each key's digest, and the round it was last offered.
class ClientView {
 public:
  struct Sent {
    std::uint64_t digest;
    std::uint64_t round;
  };
  sched::StringMap<Sent> sent;
  std::uint64_t round = 0;
};

// One `delta` message being built for one client:
//
//   Delta d(view, reset);
//   d.offer("node/n1", digest, [&](json::Writer& w) { w.object()...end(); });
//   ...
//   std::string body = std::move(d).finish(ticks);   // "" when nothing to send
class Delta {
 public:
  Delta(ClientView& view, bool reset);
  // Writes the value (`write(json::Writer&)` appends exactly one JSON value)
  // if this client has no such key or had another digest for it.
  template <class Write>
  void offer(std::string_view key, std::uint64_t digest, Write&& write) {
    if (!record(key, digest)) return;
    w_.key(key);
    write(w_);
    changed_ = true;
  }
  // The keys not offered this round go out as deleted; then the ticks.
  std::string finish(std::span<const Tick> ticks) &&;

 private:
  // Notes the key as offered this round; true if its value must be sent.
  bool record(std::string_view key, std::uint64_t digest);

  ClientView& view_;
  bool changed_;
  json::Writer w_;
};

struct FeedSources {
  sched::Scheduler& scheduler;
  const lease::Elector* elector = nullptr;  // with --leader-elect
  std::string lease_name;                   // ns/name
};

class Feed {
 public:
  explicit Feed(FeedSources src);
  ~Feed();
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // One round for one client: everything offered, the changes written.
  std::string delta(ClientView& view, std::span<const Tick> ticks, bool reset) const;
  // One page's stream: a reset, then deltas until the client goes.
  boost::asio::awaitable<void> stream(serve::StreamSink& sink);
  int clients() const noexcept { return shared_->clients; }

  static constexpr std::size_t kTicksKept = 200;
  static constexpr std::size_t kQueueHead = 10;  // pending pods shown per queue

 private:
  void record(const sched::Outcome& o);

  // Shared with the stream coroutines: a frame the loop destroys after the
  // Feed (a shutdown that does not run it to the end) still finds it.
  struct Shared {
    std::deque<Tick> ticks;  // the last kTicksKept, while a page is open
    std::uint64_t next_seq = 1;
    int clients = 0;
  };
  FeedSources src_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

// GET /ui (the page) and GET /debug/events-stream.
void add_routes(serve::Routes& routes, Feed& feed);

// The page, compiled in from src/ui/page/index.html.
extern const std::string_view page_html;

}  // namespace toysched::ui
