// The exec plugin's credential, cached and refreshed; see exec_auth.hpp.
#include "exec_auth.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>

#include "connector.hpp"
#include "exec_plugin.hpp"
#include "toysched/kube/objects.hpp"
#include "toysched/log/log.hpp"
#include "toysched/util/scope_exit.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// What makes two exec users the same plugin run, as client-go's cacheKey.
std::string key_of(const asio::any_io_executor& ex, const ExecConfig& c) {
  std::string k = std::to_string(reinterpret_cast<std::uintptr_t>(&asio::query(ex, asio::execution::context)));
  for (const std::string* s : {&c.command, &c.api_version, &c.cluster_json}) k += '\0' + *s;
  for (const auto& a : c.args) k += "\0a" + a;
  for (const auto& [n, v] : c.env) k += "\0e" + n + '=' + v;
  return k;
}

// A client certificate the TLS layer refuses fails the run, as client-go's
// tls.X509KeyPair does, instead of failing every connection later.
ExecAuthenticator::Check tls_check(const ClientConfig& config) {
  return [config](const ExecCredential& cred) -> std::optional<Error> {
    if (cred.client_cert_pem.empty() || !config.server.tls()) return std::nullopt;
    ClientConfig with = config;
    with.client_cert_pem = cred.client_cert_pem;
    with.client_key_pem = cred.client_key_pem;
    if (auto tls = Connector::tls_context(with); !tls)
      return Error{make_error_code(errc::exec_failed), tls.error().message};
    return std::nullopt;
  };
}

}  // namespace

ExecAuthenticator::ExecAuthenticator(asio::any_io_executor ex, ExecConfig config, std::string user, Runner run,
                                     Check check, std::function<Clock::time_point()> now)
    : ex_(ex),
      config_(std::move(config)),
      user_(std::move(user)),
      run_(std::move(run)),
      check_(std::move(check)),
      now_(std::move(now)) {}

std::shared_ptr<ExecAuthenticator> ExecAuthenticator::shared(asio::any_io_executor ex, const ClientConfig& config,
                                                             milliseconds timeout) {
  static std::map<std::string, std::weak_ptr<ExecAuthenticator>> made;
  const std::string key = key_of(ex, *config.exec);
  if (auto found = made[key].lock()) return found;
  auto run = [ex, timeout](const ExecConfig& c) { return run_exec_plugin(ex, c, timeout); };
  auto a = std::make_shared<ExecAuthenticator>(ex, *config.exec, "user \"" + config.origin.user + "\"", run,
                                               tls_check(config));
  made[key] = a;
  return a;
}

bool ExecAuthenticator::due(Clock::time_point now) const { return !cred_ || stale_ || now >= refresh_at_; }

asio::awaitable<expected<ExecAuthenticator::Credential>> ExecAuthenticator::get() {
  while (running_) {
    auto ran = ran_;  // the runner cancels it when done, well or not
    co_await ran->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  auto now = now_();
  if (!due(now)) co_return cred_;
  // Due but not expired: still good if a new one cannot be had.
  const bool usable = cred_ && !stale_ && (!cred_->expiry || now < *cred_->expiry);
  if (now < next_try_ && last_error_) {
    if (usable) co_return cred_;
    co_return *last_error_;
  }
  co_await refresh();
  if (!last_error_ || usable) co_return cred_;
  co_return *last_error_;
}

asio::awaitable<void> ExecAuthenticator::refresh() {
  running_ = true;
  ran_ = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
  // Waiters wake even when this coroutine is destroyed mid-run (shutdown).
  util::scope_exit wake([this, ran = ran_] {
    running_ = false;
    ran->cancel();
  });
  ++runs_;
  auto out = co_await run_(config_);
  expected<ExecCredential> got = out ? parse_exec_credential(*out, config_.api_version) : out.error();
  if (got && check_)
    if (auto bad = check_(*got)) got = *bad;
  if (!got && out) got = Error{got.error().code, "executable " + config_.command + ": " + got.error().message};
  const auto now = now_();
  if (got) {
    auto life = got->expiry ? *got->expiry - now : Clock::duration::zero();
    auto early = std::min<Clock::duration>(max_early, life / 5);
    // Expired on arrival: used for a second (the server judges it), so a
    // broken plugin is not run before every request.
    refresh_at_ = !got->expiry                      ? Clock::time_point::max()
                  : life <= Clock::duration::zero() ? now + first_backoff
                                                    : *got->expiry - early;
    cred_ = std::make_shared<const ExecCredential>(std::move(*got));
    stale_ = false;
    last_error_.reset();
    backoff_ = first_backoff;
    TS_LOG(2, "Got a credential from the exec plugin", {"command", config_.command}, {"user", user_},
           {"token", !cred_->token.empty()}, {"clientCertificate", !cred_->client_cert_pem.empty()},
           {"expires", cred_->expiry ? format_micro_time(*cred_->expiry) : std::string("never")});
  } else {
    last_error_ =
        Error{make_error_code(errc::exec_failed), "exec credentials of " + user_ + ": " + got.error().message};
    next_try_ = now + backoff_;
    TS_ERROR("The exec credential plugin failed", {"err", last_error_->message},
             {"retryInSeconds", std::chrono::duration<double>(backoff_).count()});
    backoff_ = std::min<milliseconds>(backoff_ * 2, max_backoff);
  }
}

void ExecAuthenticator::rejected(const Credential& used) {
  if (used && used == cred_) stale_ = true;
}

}  // namespace toysched::kube
