#include "toysched/lease/elector.hpp"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>

#include "toysched/kube/decode.hpp"
#include "toysched/log/log.hpp"
#include "toysched/util/scope_exit.hpp"

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
  if (observed_.holder_identity == identity_) return std::nullopt;
  return held_until();
}

std::optional<steady::time_point> LeaseState::held_until() const {
  if (!observed_at_ || observed_.holder_identity.empty()) return std::nullopt;
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

// The standby's view of the Lease, fed by its watch: every change observed
// on our clock, and a release (or a deletion) wakes the acquire loop now.
// While we lead, our own renews are what we observe, so events are ignored
// then: an event older than our last write must not make us think the lease
// changed hands.
struct Elector::LeaseEvents final : kube::Handler<kube::Lease> {
  Elector& e;
  explicit LeaseEvents(Elector& el) : e(el) {}
  void seen(const kube::Lease& l) {
    if (e.stats_.leading) return;
    e.state_.observe(l, steady::now());
    e.last_ = l;
    if (l.holder_identity.empty()) e.wakeup_.wake();  // released: try now
  }
  void on_add(const kube::Lease& l) override { seen(l); }
  void on_update(const kube::Lease&, const kube::Lease& l) override { seen(l); }
  void on_delete(const kube::Lease&) override {
    if (!e.stats_.leading) e.wakeup_.wake();
  }
};

Elector::Elector(kube::Api& api, const LeaderElectionOptions& opts, async::Supervisor& supervisor)
    : api_(api),
      opts_(opts),
      supervisor_(supervisor),
      state_(default_identity(opts.identity), opts.lease_duration),
      lease_events_(std::make_unique<LeaseEvents>(*this)) {
  kube::ListOptions lo;
  lo.ns = opts_.resource_namespace;
  lo.field_selector = "metadata.name=" + opts_.resource_name;
  lease_watch_ = std::make_unique<kube::Reflector<kube::Lease>>(api_, *lease_events_, std::move(lo));
  lease_watch_->set_quiet();  // acquire()'s GET logs the same 403 or outage
}

Elector::~Elector() = default;

asio::awaitable<bool> Elector::try_acquire_or_renew(kube::RequestLimits limits) {
  const auto& ns = opts_.resource_namespace;
  const auto& name = opts_.resource_name;
  const std::string lease = ns + "/" + name;
  auto got = co_await trace::traced(*task_, trace::points::lease_get, api_.get_lease(ns, name, limits));
  if (!got) {
    if (!got.error().is_not_found()) {
      fail("error retrieving resource lock", got.error());
      co_return false;
    }
    auto created = co_await trace::traced(*task_, trace::points::lease_create,
                                          api_.create_lease(state_.fresh(ns, name, wall::now()), limits));
    if (!created) {
      if (created.error().is_conflict())
        TS_LOG(4, "failed to acquire lease", {"lease", lease}, {"err", created.error().message});
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
    TS_LOG(4, "lock is held by another and has not yet expired", {"lease", lease}, {"holder", state_.holder()});
    co_return false;
  }
  auto wrote = co_await trace::traced(*task_, trace::points::lease_update,
                                      api_.update_lease(state_.next(*got, wall::now()), limits));
  if (!wrote) {
    // 409: someone wrote since we read; the next attempt re-reads.
    if (wrote.error().is_conflict())
      TS_LOG(4, "failed to acquire lease", {"lease", lease}, {"err", wrote.error().message});
    else
      fail("error updating resource lock", wrote.error());
    co_return false;
  }
  state_.observe(*wrote, steady::now());
  last_ = *wrote;
  co_return true;
}

// Until we hold the lease (true) or release() is asked (false): every retry
// period plus up to 1.2 x jitter, so that replicas started together do not
// collide every time; or just after the holder's lease runs out on our clock,
// if that comes first; or at once when the watch sees it released.
asio::awaitable<bool> Elector::acquire() {
  bool standing_by = false;
  for (;;) {
    if (wakeup_.stopped()) co_return false;
    const auto sent = steady::now();
    if (co_await attempt()) {
      stats_.last_renew = sent;  // the write happened after this: deadlines count from here
      co_return true;
    }
    if (!standing_by) {
      // A release seen while waiting would have woken a sleep we no longer
      // take: look again at once instead.
      if (!co_await wait_for_lease_watch()) co_return false;
      standing_by = true;
      continue;
    }
    std::uniform_real_distribution<double> jitter(0, 1.2);
    auto wait = opts_.retry_period + milliseconds(static_cast<std::int64_t>(opts_.retry_period.count() * jitter(rng_)));
    if (auto expiry = state_.expires_at()) {
      auto until = std::chrono::duration_cast<milliseconds>(*expiry - steady::now()) + milliseconds(20);
      if (until > milliseconds(0) && until < wait) wait = until;
    }
    if (!co_await wakeup_.sleep_for(*task_, trace::points::lease_retry_wait, wait)) co_return false;
  }
}

// Before the first retry sleep: a holder that lets go while we sleep must
// be seen at once, so the watch on the Lease must be open by then (at most
// a retry period: a watch that cannot open leaves only the retries). Says
// so once, the line a handover waits for before stopping the holder.
asio::awaitable<bool> Elector::wait_for_lease_watch() {
  const auto until = steady::now() + opts_.retry_period;
  while (!lease_watch_->watching() && steady::now() < until)
    if (!co_await wakeup_.sleep_for(*task_, trace::points::lease_retry_wait, milliseconds(10))) co_return false;
  TS_LOG(2, "standing by: watching the lease for its release",
         {"lease", opts_.resource_namespace + "/" + opts_.resource_name}, {"holder", state_.holder()},
         {"watching", lease_watch_->watching()});
  co_return true;
}

// Renew every retry period, each attempt cut off at the renew deadline
// counted from the last renew that went through; lost (false) when the
// deadline passes or someone else holds the lease; true on release().
asio::awaitable<bool> Elector::renew_until_lost() {
  const std::string lease = opts_.resource_namespace + "/" + opts_.resource_name;
  for (;;) {
    if (!co_await wakeup_.sleep_for(*task_, trace::points::lease_retry_wait, opts_.retry_period)) co_return true;
    const auto sent = steady::now();
    kube::RequestLimits limits;
    limits.deadline = stats_.last_renew + opts_.renew_deadline;
    if (co_await attempt(limits) && state_.held_by_me()) {
      stats_.last_renew = sent;
      TS_LOG(5, "successfully renewed lease", {"lease", lease});
      continue;
    }
    if (wakeup_.stopped()) co_return true;
    if (steady::now() - stats_.last_renew >= opts_.renew_deadline || (last_ && !state_.held_by_me())) {
      stats_.leading = false;
      TS_ERROR("leaderelection lost", {"lease", lease}, {"identity", state_.identity()}, {"holder", state_.holder()});
      co_return false;
    }
  }
}

asio::awaitable<bool> Elector::run(std::function<void()> on_leading) {
  trace::TaskScope task("lease/renew");
  task_ = &task;
  util::scope_exit clear_task([this] { task_ = nullptr; });
  const std::string lease = opts_.resource_namespace + "/" + opts_.resource_name;
  TS_LOG(0, "attempting to acquire leader lease...", {"lease", lease}, {"identity", state_.identity()});
  // The watch starts before the first attempt, so a holder that lets go
  // while we wait is seen at once.
  asio::co_spawn(co_await asio::this_coro::executor, lease_watch_->run(),
                 supervisor_.handler("watch/leases", async::Criticality::expendable));
  util::scope_exit stop_watch([&watch = *lease_watch_] { watch.stop(); });
  if (!co_await acquire()) co_return true;
  // Stopped (or released) while the acquiring write was on its way: we do
  // not lead; release() hands back what that write took.
  if (wakeup_.stopped()) co_return true;
  stats_.leading = true;
  ++stats_.transitions_seen;
  TS_LOG(0, "successfully acquired lease", {"lease", lease}, {"identity", state_.identity()});
  on_leading();
  co_return co_await renew_until_lost();
}

void Elector::stop() {
  wakeup_.stop();
  lease_watch_->stop();
  stats_.leading = false;
}

// An attempt marked in flight from its GET to its PUT's answer, for
// release() to wait on (attempt_settled).
asio::awaitable<bool> Elector::attempt(kube::RequestLimits limits) {
  attempting_ = true;
  util::scope_exit in_flight([this] {
    attempting_ = false;
    if (release_waiting_) release_waiting_->cancel();
  });
  co_return co_await try_acquire_or_renew(std::move(limits));
}

// An attempt on its way when the release is asked: its answer is the record
// to hand back. Written over the version before it, the release would be
// refused (409) and left to one re-read; an acquire that then went through
// would leave us holding a lease nobody renews.
asio::awaitable<void> Elector::attempt_settled(trace::TaskScope& task) {
  while (attempting_) {
    asio::steady_timer timer(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    release_waiting_ = &timer;
    util::scope_exit leave([this] { release_waiting_ = nullptr; });
    co_await trace::traced(task, trace::points::lease_release_wait,
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  }
}

asio::awaitable<void> Elector::release() {
  trace::TaskScope task("lease/release");
  const bool leading = stats_.leading, attempting = attempting_;
  stop();
  if (!leading && !attempting) co_return;
  co_await attempt_settled(task);
  if (!last_ || !state_.held_by_me()) co_return;  // another holds it now: not ours to hand back
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

bool Elector::may_act(steady::time_point now) const noexcept {
  return stats_.leading && now - stats_.last_renew < opts_.renew_deadline;
}

bool Elector::healthy(steady::time_point now) const {
  if (!stats_.leading) return true;
  return now - stats_.last_renew < opts_.renew_deadline + opts_.retry_period;
}

}  // namespace toysched::lease
