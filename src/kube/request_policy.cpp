// What happens around each try of a request (HttpTransport::request): the
// client-side rate limit, the request's deadline and may_send gate, and
// when a request is sent again:
//
//   refused unseen (GOAWAY, REFUSED_STREAM): resent as new, up to 3 times
//   lost after it may have reached the server: replayed once, flagged
//     (HttpResponse::replayed: a POST's replay can answer 409 to itself)
//   401 with a token file: the file re-read, the request sent once more;
//     with an exec plugin: the plugin run again, the request sent once more
//   429 or 5xx with Retry-After: retried after what the header asks
//     (capped at max_retry_after, 1 s for 0), up to max_retries times,
//     unless the deadline would pass first: then that answer is ours
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

#include "http_transport_impl.hpp"
#include "toysched/log/log.hpp"

namespace toysched::kube {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using std::chrono::milliseconds;

milliseconds request_budget(milliseconds own, const RequestLimits& l) {
  if (!l.deadline) return own;
  auto left = std::chrono::duration_cast<milliseconds>(*l.deadline - std::chrono::steady_clock::now());
  return std::min(own, left);
}

Error out_of_time(const HttpRequest& r) {
  return fail(errc::request_timeout,
              std::string(http::to_string(r.verb)) + " " + r.target + ": not done by its deadline");
}

asio::awaitable<expected<HttpResponse>> HttpTransport::request(HttpRequest r) {
  auto& s = *p_;
  bool replayed = false, reauthenticated = false;
  int retries = 0, resends = 0;
  constexpr int kMaxResends = 3;
  const auto& limits = r.limits;
  for (;;) {
    if (!co_await s.limiter.acquire(limits.deadline)) co_return out_of_time(r);
    if (r.trace) r.trace->admitted = std::chrono::steady_clock::now();
    if (limits.may_send && !limits.may_send())
      co_return fail(errc::cancelled, std::string(http::to_string(r.verb)) + " " + r.target + ": no longer wanted");
    // The moment a request leaves, as client-go's -v=6 request log: the
    // slow-leader test compares these with the Lease's holder history.
    TS_LOG(6, "Sending request", {"verb", std::string_view(http::to_string(r.verb))}, {"url", r.target});
    ExecAuthenticator::Credential cred;  // stays null without an exec plugin: no coroutine on the hot path
    if (s.exec) {
      auto got = co_await s.credentials();
      if (!got) co_return got.error();
      cred = std::move(*got);
    }
    impl::Try tried;
    auto res = co_await s.attempt(r, replayed, tried);
    ++s.counts[{std::string(http::to_string(r.verb)), res ? std::to_string(res->status) : std::string("error")}];
    if (!res) {
      if (tried.resend && resends < kMaxResends) {  // refused unseen (a GOAWAY, a restart): not a replay
        ++resends;
        continue;
      }
      if (tried.replay && !replayed) {
        replayed = true;
        continue;
      }
      co_return res.error();
    }
    res->replayed = replayed;
    if (res->status == 401 && (s.exec || s.tokens.uses_file()) && !reauthenticated) {
      if (s.exec) s.exec->rejected(cred);               // a revoked credential: run the plugin again, once
      if (s.tokens.uses_file()) s.tokens.invalidate();  // a rotated token: read the file again, once
      reauthenticated = true;
      continue;
    }
    bool retryable = (res->status == 429 || res->status >= 500) && res->retry_after.has_value();
    if (!retryable || retries >= s.opts.max_retries) co_return std::move(*res);
    auto wait = std::chrono::duration_cast<milliseconds>(std::min(*res->retry_after, s.opts.max_retry_after));
    if (wait.count() == 0) wait = std::chrono::seconds(1);
    // No time left for the wait the server asked for: its answer is ours.
    if (request_budget(wait + milliseconds(1), limits) <= wait) co_return std::move(*res);
    ++retries;
    asio::steady_timer t(s.ex, wait);
    co_await t.async_wait(asio::use_awaitable);
  }
}

}  // namespace toysched::kube
