// Leader election on a coordination.k8s.io/v1 Lease, with client-go's
// semantics, so a toy-scheduler and anything built on client-go agree on
// who leads:
//
//   standby ──(lease empty, or unchanged for leaseDuration on OUR clock)──► take it
//     ▲                                                  (transitions + 1) │
//     │                                                                    ▼
//   (exit 1: "leaderelection lost") ◄── no renew for renewDeadline ── leader: renew every retryPeriod
//                                                                          │ SIGTERM
//                                                                          ▼
//                                        release: holder "", leaseDurationSeconds 1
//
// Time on the lease is never compared across machines: a standby only
// trusts how long the record has stayed the same as seen by its own
// monotonic clock (client-go's observedTime). Writes carry the
// resourceVersion they read; a 409 means someone else wrote first: re-read.
//
// LeaseState is the pure part (what to write, whether we may take it);
// Elector runs it on the loop as the `lease/renew` task.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "toysched/async/supervisor.hpp"
#include "toysched/async/wakeup.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/objects.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/options.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::lease {

using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

class LeaseState {
 public:
  LeaseState(std::string identity, std::chrono::milliseconds lease_duration)
      : identity_(std::move(identity)), lease_duration_(lease_duration) {}

  // Record what the server holds; the observed time moves only when the
  // record changed.
  void observe(const kube::Lease& current, steady::time_point now);
  // May we write ourselves in as holder now?
  bool may_take(steady::time_point now) const;
  // When another holder's lease runs out on our clock, if it is held.
  std::optional<steady::time_point> expires_at() const;
  // When the holder's lease runs out on our clock, ours included (the page).
  std::optional<steady::time_point> held_until() const;
  // The record to write: a renew if we hold it, else a takeover.
  kube::Lease next(const kube::Lease& current, wall::time_point now) const;
  // The record that hands the lease back (SIGTERM).
  kube::Lease release(const kube::Lease& current, wall::time_point now) const;
  // A lease to create when there is none.
  kube::Lease fresh(const std::string& ns, const std::string& name, wall::time_point now) const;

  const std::string& identity() const noexcept { return identity_; }
  const std::string& holder() const noexcept { return observed_.holder_identity; }
  std::int32_t transitions() const noexcept { return observed_.lease_transitions.value_or(0); }
  bool held_by_me() const noexcept { return observed_.holder_identity == identity_; }

 private:
  static bool same_record(const kube::Lease& a, const kube::Lease& b);
  std::string identity_;
  std::chrono::milliseconds lease_duration_;
  kube::Lease observed_;
  std::optional<steady::time_point> observed_at_;
};

struct ElectorStats {
  bool leading = false;
  std::uint64_t transitions_seen = 0;  // holder changes this process observed
  // When the last successful renew was *sent*: the server wrote it later,
  // so a deadline counted from here ends before anyone else can take over.
  steady::time_point last_renew{};
};

class Elector {
 public:
  Elector(kube::Api& api, const LeaderElectionOptions& opts, async::Supervisor& supervisor);
  ~Elector();

  // Acquire (retrying with jitter), call on_leading, then renew until the
  // lease is lost (returns false) or release() was asked (returns true).
  // Each renew is cut off at the renew deadline, as client-go's context
  // cuts it, however slow the server or its 429s.
  boost::asio::awaitable<bool> run(std::function<void()> on_leading);
  // Stop renewing and hand the lease back, if we hold it: after the answer
  // to an attempt on its way, if one is, so that the release writes over
  // the version that attempt left, and only if it found the lease ours.
  boost::asio::awaitable<void> release();
  // Stop renewing and leave the lease as it is: held until it expires
  // (--leader-elect-release-on-cancel=false). run() returns true.
  void stop();

  // The lease watch's backoff and probe interval (before run(); tests).
  void set_watch_timing(const kube::ReflectorTiming& t) { lease_watch_->set_timing(t); }

  const ElectorStats& stats() const noexcept { return stats_; }
  const std::string& identity() const noexcept { return state_.identity(); }
  // The lease as this replica last read or wrote it (holder, expiry).
  const LeaseState& state() const noexcept { return state_; }
  // Whether we lead with a renew recent enough that nobody else can hold the
  // lease: leading and within the renew deadline of the last renew. Binds
  // ask this right before they are sent.
  bool may_act(steady::time_point now) const noexcept;
  // Healthy (/livez): not leading, or leading and renewed within the renew
  // deadline.
  bool healthy(steady::time_point now) const;
  // Why the lease cannot be worked with (/readyz), e.g. a 403 on leases:
  // set when the last attempt failed for a reason other than the lease being
  // held by someone else; nullopt once an attempt goes through.
  const std::optional<std::string>& failing() const noexcept { return failing_; }

 private:
  struct LeaseEvents;
  // One attempt: true when we hold the lease after it.
  boost::asio::awaitable<bool> try_acquire_or_renew(kube::RequestLimits limits = {});
  boost::asio::awaitable<bool> acquire();
  boost::asio::awaitable<bool> wait_for_lease_watch();
  boost::asio::awaitable<bool> renew_until_lost();
  // try_acquire_or_renew, marked in flight until it ends.
  boost::asio::awaitable<bool> attempt(kube::RequestLimits limits = {});
  // Until no attempt is on its way (release() waits for its answer).
  boost::asio::awaitable<void> attempt_settled(trace::TaskScope& task);
  // Records a failed attempt; logs it at level 0 once per distinct reason, so a
  // missing permission is one clear line, not one every retry period.
  void fail(const char* what, const kube::ApiError& e);

  kube::Api& api_;
  LeaderElectionOptions opts_;
  async::Supervisor& supervisor_;
  LeaseState state_;
  std::optional<kube::Lease> last_;  // the last record read or written
  ElectorStats stats_;
  std::mt19937_64 rng_{std::random_device{}()};
  async::Wakeup wakeup_;  // retry sleeps: woken when the lease is released, stopped by release()
  // While waiting to acquire, the Lease is watched (one object, by name), so
  // a graceful handover takes a round trip rather than a retry period
  // (client-go only polls), and every renew of the holder is seen as it
  // happens, so a forced one takes the lease duration to the millisecond.
  std::unique_ptr<LeaseEvents> lease_events_;
  std::unique_ptr<kube::Reflector<kube::Lease>> lease_watch_;
  trace::TaskScope* task_ = nullptr;  // `lease/renew`, alive while run() is
  std::optional<std::string> failing_;
  bool attempting_ = false;                               // an acquire's or renew's GET or PUT is on its way
  boost::asio::steady_timer* release_waiting_ = nullptr;  // release() waiting for it, in its frame
};

// --leader-elect-identity, else $POD_NAME, else hostname_<random>.
std::string default_identity(const std::string& flag);

}  // namespace toysched::lease
