// Where a pod's time goes between the watch event that brought it and the
// 201 of its binding, stage by stage. Each bound pod's timeline becomes one
// line at -v=5 and one observation per stage in
// toysched_pod_scheduling_stage_duration_seconds, so a lost race can be
// traced to the stage that was slow (docs/seeing-inside.md, "Where a pod's time goes").
//
//   arrived ─decode─► queued ─queue─► popped ─decide─► decided ─slot─► slotted
//     ─limiter─► admitted ─connect─► connected ─post─► answered
//   total = answered − arrived
#pragma once

#include <array>
#include <chrono>
#include <string_view>

namespace toysched::sched {

struct PodTimeline {
  using time_point = std::chrono::steady_clock::time_point;
  time_point arrived;             // the watch read (or list) that carried the pod returned
  time_point queued;              // the event handler put it in the queue (or it came back from an attempt)
  time_point popped;              // the scheduling loop took it
  time_point decided;             // filtered, scored and assumed; its bind coroutine spawned
  time_point slotted;             // a bind slot (--bind-parallelism) was free
  time_point admitted;            // the client's rate limiter let the POST go
  time_point connected;           // a connection in hand, the request being written
  time_point answered;            // the server's answer read
  bool fresh_connection = false;  // the connection was opened for this POST (TCP + TLS)
};

inline constexpr std::array<std::string_view, 8> stage_names{"decode",  "queue",   "decide", "slot",
                                                             "limiter", "connect", "post",   "total"};

// Seconds per stage, in stage_names' order. A stage whose end precedes its
// start (a pod queued again before its first event was read) counts 0.
inline std::array<double, stage_names.size()> stage_seconds(const PodTimeline& t) {
  auto s = [](PodTimeline::time_point a, PodTimeline::time_point b) {
    return b > a ? std::chrono::duration<double>(b - a).count() : 0.0;
  };
  return {s(t.arrived, t.queued),   s(t.queued, t.popped),      s(t.popped, t.decided),     s(t.decided, t.slotted),
          s(t.slotted, t.admitted), s(t.admitted, t.connected), s(t.connected, t.answered), s(t.arrived, t.answered)};
}

}  // namespace toysched::sched
