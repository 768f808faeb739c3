// The reflector's end-of-watch decisions, as pure functions: what a watch
// that ended this way leads to (re-watch, relist now, back off).
#include <doctest/doctest.h>

#include <chrono>

#include "toysched/kube/reflector.hpp"

using namespace std::chrono_literals;
using toysched::kube::decide_error_event;
using toysched::kube::decide_watch_end;
using toysched::kube::Status;
using toysched::kube::StreamEnd;
using toysched::kube::WatchEnd;
using How = StreamEnd::How;

TEST_CASE("a watch the server ended after a while, or after events, re-watches at once") {
  CHECK(decide_watch_end({How::response_complete, 0, 5min}) == WatchEnd::clean);
  CHECK(decide_watch_end({How::response_complete, 3, 10ms}) == WatchEnd::clean);
}

TEST_CASE("a very short watch with no event is a failing server: back off") {
  CHECK(decide_watch_end({How::response_complete, 0, 200ms}) == WatchEnd::failed);
}

TEST_CASE("a connection that broke is a failure, however long it lasted") {
  for (auto how : {How::closed_early, How::cut_inside_event, How::connection_lost}) {
    CHECK(decide_watch_end({how, 0, 10min}) == WatchEnd::failed);
    CHECK(decide_watch_end({how, 100, 10min}) == WatchEnd::failed);
  }
}

TEST_CASE("stop() is a clean end") { CHECK(decide_watch_end({How::stopped, 0, 0s}) == WatchEnd::clean); }

TEST_CASE("an ERROR event: 410 relists at once, anything else after a backoff") {
  Status gone;
  gone.code = 410;
  gone.reason = "Expired";
  CHECK(decide_error_event(gone) == WatchEnd::expired);
  Status gone_no_reason;
  gone_no_reason.code = 410;
  CHECK(decide_error_event(gone_no_reason) == WatchEnd::expired);
  Status internal;
  internal.code = 500;
  internal.reason = "InternalError";
  CHECK(decide_error_event(internal) == WatchEnd::error_event);
}
