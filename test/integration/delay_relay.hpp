// A TCP relay in front of the lab's API server that holds every byte a
// client sends for a fixed delay before passing it on (answers come back at
// once). It slows one client's requests, and only its: the server stays the
// real one, and TLS passes through untouched (the lab's certificate names
// 127.0.0.1, where the relay listens). Runs on the test's io_context.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace toysched::testing {

class DelayRelay {
 public:
  using tcp = boost::asio::ip::tcp;

  DelayRelay(boost::asio::io_context& io, std::string upstream_host, std::uint16_t upstream_port,
             std::chrono::milliseconds delay)
      : io_(io),
        acceptor_(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        upstream_(boost::asio::ip::make_address(upstream_host), upstream_port),
        delay_(delay) {
    boost::asio::co_spawn(io_, accept(), boost::asio::detached);
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Bytes the clients have sent so far, and how many of them are still held.
  std::uint64_t received() const { return received_; }
  std::uint64_t held() const { return received_ - passed_; }

 private:
  using socket_ptr = std::shared_ptr<tcp::socket>;

  boost::asio::awaitable<void> accept() {
    for (;;) {
      auto [ec, client] = co_await acceptor_.async_accept(boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) co_return;
      auto server = std::make_shared<tcp::socket>(io_);
      auto [cec] = co_await server->async_connect(upstream_, boost::asio::as_tuple(boost::asio::use_awaitable));
      if (cec) continue;
      auto c = std::make_shared<tcp::socket>(std::move(client));
      boost::asio::co_spawn(io_, pipe(c, server, true), boost::asio::detached);
      boost::asio::co_spawn(io_, pipe(server, c, false), boost::asio::detached);
    }
  }

  // Chunks go out in the order they came, each `delay_` after it was read.
  boost::asio::awaitable<void> pipe(socket_ptr from, socket_ptr to, bool held) {
    std::array<char, 16 * 1024> buf;
    for (;;) {
      auto [ec, n] =
          co_await from->async_read_some(boost::asio::buffer(buf), boost::asio::as_tuple(boost::asio::use_awaitable));
      if (ec) break;
      if (held) {
        received_ += n;
        boost::asio::steady_timer t(io_, delay_);
        co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      }
      auto [wec, w] = co_await boost::asio::async_write(*to, boost::asio::buffer(buf.data(), n),
                                                        boost::asio::as_tuple(boost::asio::use_awaitable));
      if (held) passed_ += n;
      if (wec) break;
    }
    boost::system::error_code ignored;
    to->shutdown(tcp::socket::shutdown_send, ignored);
  }

  boost::asio::io_context& io_;
  tcp::acceptor acceptor_;
  tcp::endpoint upstream_;
  std::chrono::milliseconds delay_;
  std::uint64_t received_ = 0, passed_ = 0;
};

}  // namespace toysched::testing
