// Running coroutines from a test: one to completion (run_async), or the
// loop pumped from the test thread until a condition holds (pump_until), so
// that kubectl and lab restarts run between pumps while sockets just wait.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>

namespace toysched::testing {

template <class T>
T run_async(boost::asio::io_context& io, boost::asio::awaitable<T> aw,
            std::chrono::seconds timeout = std::chrono::seconds(60)) {
  std::optional<T> out;
  std::exception_ptr error;
  // Stops the loop when done: a transport's HTTP/2 connection keeps a read
  // open, so the loop would otherwise run until the timeout.
  boost::asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, T v) {
    error = e;
    if (!e) out.emplace(std::move(v));
    io.stop();
  });
  io.restart();
  io.run_for(timeout);
  if (error) std::rethrow_exception(error);
  if (!out) throw std::runtime_error("coroutine did not finish in time");
  return std::move(*out);
}

// Runs the loop until pred() holds or the deadline passes; true if it held.
inline bool pump_until(boost::asio::io_context& io, const std::function<bool()>& pred, std::chrono::seconds timeout) {
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    io.run_for(50ms);
  }
  return true;
}

}  // namespace toysched::testing
