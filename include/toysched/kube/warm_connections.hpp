// Connections opened before a burst of requests needs them, and kept open
// through quiet spells: the binds' (a race for binds must not wait for TCP
// and TLS handshakes), on their own transport.
//
//   run(): warm_up(n) ──► open(), on_open() ──► sleep 15 s ──► keep_warm(n, 60 s) ─┐
//                                                   ▲                              │
//                                                   └──────────────────────────────┘
//                                                   stop(): the sleep ends, and run()
//
// kube-apiserver closes a connection idle for 90 s; each is replaced after
// 60 s idle, ahead of need, so a burst after a quiet spell finds its
// connections open rather than dying under its first requests.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <functional>

#include "toysched/async/wakeup.hpp"
#include "toysched/kube/transport.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::kube {

class WarmConnections {
 public:
  // Keeps the HTTP/2 connection, or else n HTTP/1.1 connections, open.
  WarmConnections(Transport& transport, std::size_t n) : transport_(transport), n_(n) {}

  // Opens them, logs "Bind connections open", calls on_open(), then looks
  // after them until stop(); sleeps at `point` of `task` in between.
  boost::asio::awaitable<void> run(trace::TaskScope& task, trace::Point point, std::function<void()> on_open);
  void stop() noexcept { wakeup_.stop(); }
  // The first warm-up is done (whether or not every connection opened: the
  // requests will say what is wrong).
  bool open() const noexcept { return open_; }

  static constexpr std::chrono::seconds kEvery{15};
  static constexpr std::chrono::seconds kMaxIdle{60};

 private:
  Transport& transport_;
  std::size_t n_;
  bool open_ = false;
  async::Wakeup wakeup_;
};

}  // namespace toysched::kube
