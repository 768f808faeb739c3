#include "toysched/lease/elector.hpp"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/watch_framer.hpp"
#include "toysched/log/log.hpp"

namespace toysched::lease {

namespace asio = boost::asio;
using std::chrono::milliseconds;

std::string default_identity(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* pod = std::getenv("POD_NAME"); pod && *pod) return pod;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
  return std::string(host) + "_" + suffix;
}

bool LeaseState::same_record(const kube::Lease& a, const kube::Lease& b) {
  return a.holder_identity == b.holder_identity && a.lease_duration_seconds == b.lease_duration_seconds &&
         a.acquire_time == b.acquire_time && a.renew_time == b.renew_time && a.lease_transitions == b.lease_transitions;
}

void LeaseState::observe(const kube::Lease& current, steady::time_point now) {
  if (!observed_at_ || !same_record(observed_, current)) observed_at_ = now;
  observed_ = current;
}

std::optional<steady::time_point> LeaseState::expires_at() const {
  if (!observed_at_ || observed_.holder_identity.empty() || observed_.holder_identity == identity_) return std::nullopt;
  // The record's own duration, as client-go uses it: a releasing leader
  // writes 1 s so that others need not wait a whole lease.
  auto duration = std::chrono::seconds(observed_.lease_duration_seconds.value_or(
      static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(lease_duration_).count())));
  return *observed_at_ + duration;
}

bool LeaseState::may_take(steady::time_point now) const {
  if (!observed_at_) return false;
  if (observed_.holder_identity.empty() || observed_.holder_identity == identity_) return true;
  return *expires_at() <= now;
}

kube::Lease LeaseState::next(const kube::Lease& current, wall::time_point now) const {
  kube::Lease l = current;
  l.lease_duration_seconds =
      static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(lease_duration_).count());
  l.renew_time = now;
  if (current.holder_identity != identity_) {
    // A change of holder: a takeover, counted.
    l.holder_identity = identity_;
    l.acquire_time = now;
    l.lease_transitions = current.lease_transitions.value_or(0) + 1;
  }
  return l;
}

kube::Lease LeaseState::release(const kube::Lease& current, wall::time_point now) const {
  kube::Lease l = current;
  l.holder_identity.clear();
  l.lease_duration_seconds = 1;
  l.acquire_time = now;
  l.renew_time = now;
  return l;
}

kube::Lease LeaseState::fresh(const std::string& ns, const std::string& name, wall::time_point now) const {
  kube::Lease l;
  l.ns = ns;
  l.name = name;
  l.holder_identity = identity_;
  l.lease_duration_seconds =
      static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(lease_duration_).count());
  l.acquire_time = now;
  l.renew_time = now;
  l.lease_transitions = 0;
  return l;
}

Elector::Elector(kube::Api& api, const LeaderElectionOptions& opts)
    : api_(api), opts_(opts), state_(default_identity(opts.identity), opts.lease_duration) {}

asio::awaitable<void> Elector::sleep(milliseconds d) {
  timer_ = std::make_unique<asio::steady_timer>(co_await asio::this_coro::executor, d);
  co_await trace::traced(*task_, trace::points::lease_retry_wait,
                         timer_->async_wait(asio::as_tuple(asio::use_awaitable)));
  timer_.reset();
}

asio::awaitable<bool> Elector::try_acquire_or_renew() {
  const auto& ns = opts_.resource_namespace;
  const auto& name = opts_.resource_name;
  auto got = co_await trace::traced(*task_, trace::points::lease_get, api_.get_lease(ns, name));
  if (!got) {
    if (!got.error().is_not_found()) {
      fail("error retrieving resource lock", got.error());
      co_return false;
    }
    auto created = co_await trace::traced(*task_, trace::points::lease_create,
                                          api_.create_lease(state_.fresh(ns, name, wall::now())));
    if (!created) {
      if (created.error().is_conflict())
        TS_LOG(4, "failed to acquire lease", {"lease", ns + "/" + name}, {"err", created.error().message});
      else
        fail("error creating resource lock", created.error());
      co_return false;
    }
    state_.observe(*created, steady::now());
    last_ = *created;
    failing_.reset();
    co_return true;
  }
  failing_.reset();
  std::string before = state_.holder();
  state_.observe(*got, steady::now());
  if (state_.holder() != before && !before.empty()) ++stats_.transitions_seen;
  last_ = *got;
  if (!state_.may_take(steady::now())) {
    TS_LOG(4, "lock is held by another and has not yet expired", {"lease", ns + "/" + name},
           {"holder", state_.holder()});
    co_return false;
  }
  auto wrote =
      co_await trace::traced(*task_, trace::points::lease_update, api_.update_lease(state_.next(*got, wall::now())));
  if (!wrote) {
    // 409: someone wrote since we read; the next attempt re-reads.
    if (wrote.error().is_conflict())
      TS_LOG(4, "failed to acquire lease", {"lease", ns + "/" + name}, {"err", wrote.error().message});
    else
      fail("error updating resource lock", wrote.error());
    co_return false;
  }
  state_.observe(*wrote, steady::now());
  last_ = *wrote;
  co_return true;
}

asio::awaitable<void> Elector::watch_for_release(std::string rv) {
  trace::TaskScope task("lease/watch");
  watching_ = true;
  std::string target = "/apis/coordination.k8s.io/v1/namespaces/" + kube::url_encode(opts_.resource_namespace) +
                       "/leases?watch=1&fieldSelector=" + kube::url_encode("metadata.name=" + opts_.resource_name) +
                       "&resourceVersion=" + kube::url_encode(rv) + "&timeoutSeconds=300";
  kube::WatchFramer framer;
  auto opened = co_await trace::traced(task, trace::points::watch_open, api_.transport().open_stream(target, framer));
  if (opened && framer.status() == 200) {
    lease_watch_ = std::move(*opened);
    kube::Decoder decoder;
    std::string line;
    while (!stats_.leading && !releasing_) {
      bool wake = false;
      while (framer.next_line(line)) {
        auto ev = decoder.lease_event(line);
        if (!ev) continue;
        if (ev->type == kube::EventType::added || ev->type == kube::EventType::modified) {
          // Every renew seen as it happens: the lease's expiry on our clock
          // is exact, not late by up to a retry period.
          state_.observe(ev->object, steady::now());
          last_ = ev->object;
          if (ev->object.holder_identity.empty()) wake = true;
        } else if (ev->type == kube::EventType::deleted) {
          wake = true;
        }
      }
      if (wake && timer_) timer_->cancel();  // try now
      if (framer.done()) break;              // the server ended this watch; the next failed try opens another
      auto more = co_await trace::traced(task, trace::points::watch_read,
                                         lease_watch_->read_into(framer, std::chrono::seconds(330)));
      if (!more || !*more) break;
    }
    lease_watch_->close();
    lease_watch_.reset();
  } else {
    // Polling every retry period goes on; only the quick handover is lost.
    TS_LOG(2, "Cannot watch the lease; a graceful handover will wait for the next retry",
           {"lease", opts_.resource_namespace + "/" + opts_.resource_name},
           {"err", opened ? "HTTP " + std::to_string(framer.status()) : opened.error().message});
  }
  watching_ = false;  // the acquire loop's polling goes on regardless; it restarts the watch
}

asio::awaitable<bool> Elector::run(std::function<void()> on_leading) {
  trace::TaskScope task("lease/renew");
  task_ = &task;
  struct clear_task {
    trace::TaskScope*& t;
    ~clear_task() { t = nullptr; }
  } clear{task_};
  const std::string lease = opts_.resource_namespace + "/" + opts_.resource_name;
  TS_LOG(0, "attempting to acquire leader lease...", {"lease", lease}, {"identity", state_.identity()});
  // Acquire: every retry period plus up to 1.2 x jitter, so that replicas
  // started together do not collide every time.
  for (;;) {
    if (releasing_) co_return true;
    if (co_await try_acquire_or_renew()) break;
    if (!watching_ && last_)
      asio::co_spawn(co_await asio::this_coro::executor, watch_for_release(last_->resource_version), asio::detached);
    std::uniform_real_distribution<double> jitter(0, 1.2);
    auto wait = opts_.retry_period + milliseconds(static_cast<std::int64_t>(opts_.retry_period.count() * jitter(rng_)));
    // Try again just after the holder's lease runs out on our clock, if that
    // comes first: a forced handover takes a lease duration, not a lease
    // duration plus up to two retry periods.
    if (auto expiry = state_.expires_at()) {
      auto until = std::chrono::duration_cast<milliseconds>(*expiry - steady::now()) + milliseconds(20);
      if (until > milliseconds(0) && until < wait) wait = until;
    }
    co_await sleep(wait);
  }
  stats_.leading = true;
  if (lease_watch_) lease_watch_->close();
  stats_.last_renew = steady::now();
  ++stats_.transitions_seen;
  TS_LOG(0, "successfully acquired lease", {"lease", lease}, {"identity", state_.identity()});
  on_leading();
  // Renew every retry period; lost when no renew succeeded within the deadline.
  for (;;) {
    co_await sleep(opts_.retry_period);
    if (releasing_) co_return true;
    if (co_await try_acquire_or_renew() && state_.held_by_me()) {
      stats_.last_renew = steady::now();
      TS_LOG(5, "successfully renewed lease", {"lease", lease});
      continue;
    }
    if (releasing_) co_return true;
    if (steady::now() - stats_.last_renew >= opts_.renew_deadline || (last_ && !state_.held_by_me())) {
      stats_.leading = false;
      TS_ERROR("leaderelection lost", {"lease", lease}, {"identity", state_.identity()}, {"holder", state_.holder()});
      co_return false;
    }
  }
}

asio::awaitable<void> Elector::release() {
  trace::TaskScope task("lease/release");
  releasing_ = true;
  if (timer_) timer_->cancel();
  if (lease_watch_) lease_watch_->close();
  if (!stats_.leading || !last_) co_return;
  stats_.leading = false;
  auto wrote =
      co_await trace::traced(task, trace::points::lease_update, api_.update_lease(state_.release(*last_, wall::now())));
  if (!wrote) {
    // Stale RV: re-read once and release that, if it is still ours.
    auto got = co_await api_.get_lease(opts_.resource_namespace, opts_.resource_name);
    if (got && got->holder_identity == state_.identity())
      wrote = co_await api_.update_lease(state_.release(*got, wall::now()));
  }
  if (wrote)
    TS_LOG(0, "released leader lease", {"lease", opts_.resource_namespace + "/" + opts_.resource_name});
  else
    TS_ERROR("failed to release lease", {"err", wrote.error().message});
}

void Elector::fail(const char* what, const kube::ApiError& e) {
  std::string reason = std::string(what) + ": " + e.message;
  if (failing_ != reason) {
    // A 403 names the verb, the resource and the namespace it lacks.
    TS_ERROR(what, {"lease", opts_.resource_namespace + "/" + opts_.resource_name}, {"err", e.message});
  } else {
    TS_LOG(4, what, {"err", e.message});
  }
  failing_ = std::move(reason);
}

bool Elector::healthy(steady::time_point now) const {
  if (!stats_.leading) return true;
  return now - stats_.last_renew < opts_.renew_deadline + opts_.retry_period;
}

}  // namespace toysched::lease
