// Run one coroutine to completion on a fresh loop, bounded in time.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>

namespace toysched::testing {

template <class T>
T run_async(boost::asio::io_context& io, boost::asio::awaitable<T> aw,
            std::chrono::seconds timeout = std::chrono::seconds(60)) {
  std::optional<T> out;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, T v) {
    error = e;
    if (!e) out.emplace(std::move(v));
  });
  io.restart();
  io.run_for(timeout);
  if (error) std::rethrow_exception(error);
  if (!out) throw std::runtime_error("coroutine did not finish in time");
  return std::move(*out);
}

}  // namespace toysched::testing
