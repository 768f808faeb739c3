// The credential an exec plugin gave, cached and refreshed (client-go's
// exec Authenticator). Private to src/kube: HttpTransport asks it before
// each request and tells it about a 401.
//
//   get() ──(cached, not due)──────────────────────────► the cached one
//     │ (none, due, or refused by a 401)
//     ├─(another get() is running the plugin)─► waits for that run
//     ├─(inside the backoff after a failure)──► the cached one while it
//     │                                          has not expired, else the error
//     └─ runs the plugin ──(ok)──► the new one; backoff reset
//                         └(fail)─► as in the backoff; the next try waits
//                                   1 s, doubling to 30 s
//
// "Due" is a little before the expiry (a fifth of the credential's life,
// at most 30 s), so a request rarely carries a token that expires on its
// way; client-go runs the plugin only once the credential has expired. A
// credential without expirationTimestamp is kept until a 401. One plugin
// runs at a time per authenticator, and transports built from the same
// kubeconfig user share one (shared()), as client-go's cache does.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"
#include "toysched/kube/exec_credential.hpp"

namespace toysched::kube {

class ExecAuthenticator {
 public:
  using Clock = std::chrono::system_clock;
  using Credential = std::shared_ptr<const ExecCredential>;
  // Runs the plugin and gives its stdout (run_exec_plugin; tests script it).
  using Runner = std::function<boost::asio::awaitable<expected<std::string>>(const ExecConfig&)>;
  // A credential the transport cannot use (a certificate that does not load).
  using Check = std::function<std::optional<Error>(const ExecCredential&)>;

  static constexpr std::chrono::seconds first_backoff{1}, max_backoff{30}, max_early{30};

  ExecAuthenticator(boost::asio::any_io_executor ex, ExecConfig config, std::string user, Runner run, Check check = {},
                    std::function<Clock::time_point()> now = &Clock::now);

  // The one authenticator of this executor for the config's exec user,
  // running the real plugin with `timeout`.
  static std::shared_ptr<ExecAuthenticator> shared(boost::asio::any_io_executor ex, const ClientConfig& config,
                                                   std::chrono::milliseconds timeout);

  // A credential to send (see the diagram), or why there is none.
  boost::asio::awaitable<expected<Credential>> get();
  // The server answered 401 to `used`: the next get() runs the plugin,
  // unless a newer credential came meanwhile.
  void rejected(const Credential& used);

  std::uint64_t runs() const noexcept { return runs_; }
  const ExecConfig& config() const noexcept { return config_; }

 private:
  boost::asio::awaitable<void> refresh();
  bool due(Clock::time_point now) const;

  boost::asio::any_io_executor ex_;
  ExecConfig config_;
  std::string user_;  // `user "u" in /path`, for messages
  Runner run_;
  Check check_;
  std::function<Clock::time_point()> now_;
  Credential cred_;
  Clock::time_point refresh_at_;  // when cred_ is due
  bool stale_ = false;            // cred_ got a 401
  bool running_ = false;
  std::shared_ptr<boost::asio::steady_timer> ran_;  // cancelled when a run ends
  std::optional<Error> last_error_;
  Clock::time_point next_try_{};
  std::chrono::milliseconds backoff_ = first_backoff;
  std::uint64_t runs_ = 0;
};

}  // namespace toysched::kube
