#include "toysched/kube/warm_connections.hpp"

#include "toysched/log/log.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

asio::awaitable<void> WarmConnections::run(trace::TaskScope& task, trace::Point point, std::function<void()> on_open) {
  const auto began = clock::now();
  co_await transport_.warm_up(n_);
  open_ = true;
  TS_LOG(2, "Bind connections open", {"protocol", transport_.http2() ? "HTTP/2" : "HTTP/1.1"},
         {"connections", transport_.http2() ? std::size_t{1} : transport_.idle_connections()},
         {"milliseconds", std::chrono::duration<double, std::milli>(clock::now() - began).count()});
  if (on_open) on_open();
  while (co_await wakeup_.sleep_for(task, point, kEvery)) co_await transport_.keep_warm(n_, kMaxIdle);
}

}  // namespace toysched::kube
