// The live page's data: /ui (the page, compiled in) and /debug/events-stream
// (Server-Sent Events of what changed). docs/ui.md is the protocol.
//
//   ui::Feed feed({*scheduler, elector.get(), "kube-system/kube-scheduler"});
//   ui::add_routes(routes, feed);   // beside /debug/*, under the same guard
//
// Each connected page gets its own stream task. Every 250 ms it takes a
// snapshot (every key of docs/ui.md with its JSON value), compares it with
// the one it sent last, and sends only the difference. The snapshot is a
// sorted vector, so the comparison is one merge walk. With no page open
// nothing runs: no task, and the outcome hook returns at once.
#pragma once

#include "toysched/serve/http_server.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace toysched::sched {
class Scheduler;
struct Outcome;
}  // namespace toysched::sched
namespace toysched::lease {
class Elector;
}

namespace toysched::ui {

// Key → JSON value, sorted by key.
using Snapshot = std::vector<std::pair<std::string, std::string>>;

// One line of the page's ticker.
struct Tick {
  std::uint64_t seq = 0;
  std::int64_t unix_ms = 0;
  std::string kind;  // bound, lost, failed
  std::string pod;   // ns/name
  std::string node;
  std::string message;
};

// The `delta` message's JSON: what turns `sent` into `now`, and the ticks.
// Empty when there is nothing to send (no change, no tick, not a reset).
std::string delta_json(const Snapshot& sent, const Snapshot& now, std::span<const Tick> ticks, bool reset);

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

  Snapshot snapshot() const;
  // One page's stream: a reset, then deltas until the client goes.
  boost::asio::awaitable<void> stream(serve::StreamSink& sink);
  int clients() const noexcept { return shared_->clients; }

  static constexpr std::size_t kTicksKept = 200;

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
