#include <doctest/doctest.h>

#include "toysched/lease/elector.hpp"

using namespace toysched;
using namespace std::chrono_literals;
using lease::LeaseState;

namespace {
const lease::steady::time_point t0 = lease::steady::time_point{} + 1h;
const lease::wall::time_point w0 = lease::wall::time_point{} + std::chrono::hours(24 * 365 * 56);

kube::Lease held_by(std::string who, std::int32_t transitions, lease::wall::time_point renew) {
  kube::Lease l;
  l.ns = "kube-system";
  l.name = "toy-scheduler";
  l.resource_version = "7";
  l.holder_identity = std::move(who);
  l.lease_duration_seconds = 15;
  l.acquire_time = renew - 60s;
  l.renew_time = renew;
  l.lease_transitions = transitions;
  return l;
}
}  // namespace

TEST_CASE("a live holder's lease is taken only after it stayed unchanged for the duration, on our clock") {
  LeaseState me("b", 15s);
  // Their renewTime is hours in the future by our wall clock: irrelevant,
  // only how long the record stays the same counts.
  auto theirs = held_by("a", 3, w0 + 3h);
  me.observe(theirs, t0);
  CHECK_FALSE(me.may_take(t0));
  CHECK_FALSE(me.may_take(t0 + 14s));
  CHECK(me.may_take(t0 + 15s));
  // A renew (the record changed) restarts the wait.
  auto renewed = theirs;
  renewed.renew_time = *theirs.renew_time + 2s;
  me.observe(renewed, t0 + 10s);
  CHECK_FALSE(me.may_take(t0 + 15s));
  CHECK(me.may_take(t0 + 25s));
  // The same record seen again does not.
  me.observe(renewed, t0 + 20s);
  CHECK(me.may_take(t0 + 25s));
}

TEST_CASE("a takeover counts one transition and sets acquireTime; a renew counts none") {
  LeaseState me("b", 15s);
  auto theirs = held_by("a", 3, w0);
  auto taken = me.next(theirs, w0 + 20s);
  CHECK(taken.holder_identity == "b");
  CHECK(taken.lease_transitions == 4);
  CHECK(taken.acquire_time == w0 + 20s);
  CHECK(taken.renew_time == w0 + 20s);
  CHECK(taken.resource_version == "7");  // the write is conditional on what we read
  auto renewed = me.next(taken, w0 + 22s);
  CHECK(renewed.lease_transitions == 4);
  CHECK(renewed.acquire_time == w0 + 20s);
  CHECK(renewed.renew_time == w0 + 22s);
}

TEST_CASE("an empty holder (a graceful release) may be taken at once, and counts") {
  LeaseState me("b", 15s);
  LeaseState old("a", 15s);
  auto released = old.release(held_by("a", 5, w0), w0 + 1s);
  CHECK(released.holder_identity.empty());
  CHECK(released.lease_duration_seconds == 1);
  CHECK(released.lease_transitions == 5);
  me.observe(released, t0);
  CHECK(me.may_take(t0));
  CHECK(me.next(released, w0 + 2s).lease_transitions == 6);
}

TEST_CASE("the released record's own 1 s duration is what a standby waits, if it saw a holder") {
  LeaseState me("b", 15s);
  auto short_lease = held_by("a", 1, w0);
  short_lease.lease_duration_seconds = 1;
  me.observe(short_lease, t0);
  CHECK_FALSE(me.may_take(t0 + 500ms));
  CHECK(me.may_take(t0 + 1s));
}

TEST_CASE("a fresh lease starts at zero transitions, held by us") {
  LeaseState me("b", 15s);
  auto l = me.fresh("ns", "name", w0);
  CHECK(l.holder_identity == "b");
  CHECK(l.lease_transitions == 0);
  CHECK(l.lease_duration_seconds == 15);
  CHECK(l.resource_version.empty());
}

TEST_CASE("identity: the flag, else POD_NAME, else hostname_random") {
  CHECK(lease::default_identity("me") == "me");
  setenv("POD_NAME", "toy-scheduler-7d9f-abcde", 1);
  CHECK(lease::default_identity("") == "toy-scheduler-7d9f-abcde");
  unsetenv("POD_NAME");
  auto id = lease::default_identity("");
  CHECK(id.find('_') != std::string::npos);
  CHECK(id != lease::default_identity(""));
}

TEST_CASE("held_until: when the holder's lease runs out, ours too (the page's countdown); expires_at only for others") {
  LeaseState me("a", 15s);
  CHECK_FALSE(me.held_until());  // nothing observed yet
  me.observe(held_by("a", 2, w0), t0);
  CHECK(me.held_until() == t0 + 15s);
  CHECK_FALSE(me.expires_at());  // ours: nothing to wait out
  CHECK(me.transitions() == 2);
  me.observe(held_by("b", 3, w0 + 1s), t0 + 20s);
  CHECK(me.held_until() == t0 + 35s);
  CHECK(me.expires_at() == t0 + 35s);
  me.observe(held_by("", 3, w0 + 2s), t0 + 21s);  // released
  CHECK_FALSE(me.held_until());
}
