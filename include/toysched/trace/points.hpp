// Every await-point name, in one list. A point is named at the call site as
// `trace::points::bind_post`, never as a string, so a typo fails to compile
// and `--crash-at=list` (which prints this list) is complete by construction.
//
// Names are stable: drills, tests and users grep dumps and pass them to
// --crash-at, so renaming one is a breaking change. To add one, add a line
// to TOYSCHED_TRACE_POINTS: name, dotted string, what the task waits for.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

// X(identifier, "dotted.name", "what the task is waiting for")
#define TOYSCHED_TRACE_POINTS(X)                                                                           \
  X(schedule_pop, "schedule.pop", "scheduling loop idle: no pod ready")                                    \
  X(schedule_yield, "schedule.yield", "scheduling loop letting watches and binds run")                     \
  X(bind_slot, "bind.slot", "decided; waiting for a bind slot (--bind-parallelism)")                       \
  X(bind_delay, "bind.delay", "--bind-delay: a bind waiting before its POST (debug)")                      \
  X(bind_status_patch, "bind.status_patch", "waiting for the pod's status patch, sent, to be answered")    \
  X(bind_volume_write, "bind.volume_write", "PreBind: PATCH a volume or claim the pod's binding needs")    \
  X(bind_volume_wait, "bind.volume_wait", "PreBind: waiting for the volume controller to bind the claims") \
  X(bind_post, "bind.post", "POST pods/binding in flight")                                                 \
  X(bind_check, "bind.check", "GET the pod: was a replayed bind's 409 our own bind?")                      \
  X(bind_keep_warm, "bind.keep_warm", "bind connections open; looked after every 15 s")                    \
  X(preempt_patch, "preempt.patch", "PATCH a victim's status: DisruptionTarget")                           \
  X(preempt_clear, "preempt.clear", "PATCH an outranked pod's status: nominatedNodeName cleared")          \
  X(preempt_delete, "preempt.delete", "DELETE a victim of a preemption")                                   \
  X(watch_list, "watch.list", "LIST (initial or relist) in flight")                                        \
  X(watch_open, "watch.open", "opening a watch stream")                                                    \
  X(watch_read, "watch.read", "waiting for the next watch event")                                          \
  X(watch_backoff, "watch.backoff", "backing off before a relist or rewatch")                              \
  X(watch_probe, "watch.probe", "asking an unreachable API server whether it is back")                     \
  X(http_read, "http.read", "the HTTP/2 connection to the API server waiting for frames")                  \
  X(events_wait, "events.wait", "event recorder idle")                                                     \
  X(events_post, "events.post", "POST events in flight")                                                   \
  X(lease_get, "lease.get", "GET lease in flight")                                                         \
  X(lease_create, "lease.create", "POST lease in flight")                                                  \
  X(lease_update, "lease.update", "PUT lease (acquire or renew) in flight")                                \
  X(lease_retry_wait, "lease.retry_wait", "waiting out the retry period")                                  \
  X(lease_release_wait, "lease.release_wait", "release waiting for an acquire or renew in flight")         \
  X(serve_accept, "serve.accept", "HTTP server waiting for a connection")                                  \
  X(serve_read, "serve.read", "HTTP connection waiting for a request")                                     \
  X(serve_write, "serve.write", "HTTP connection writing a response")                                      \
  X(ui_tick, "ui.tick", "live page stream waiting for its next delta")                                     \
  X(shutdown_drain, "shutdown.drain", "SIGTERM: waiting for binds in flight to finish")                    \
  X(main_signal, "main.signal", "main waiting for SIGTERM or SIGINT")

namespace toysched::trace {

// A point is its index in the list (cheap to compare and count) and its name.
struct Point {
  std::uint16_t id;
  const char* name;  // a string literal: stable for the life of the process
  const char* help;
};

namespace detail {
enum class point_id : std::uint16_t {
#define TOYSCHED_X(ident, str, help) ident,
  TOYSCHED_TRACE_POINTS(TOYSCHED_X)
#undef TOYSCHED_X
      count_
};
}  // namespace detail

inline constexpr std::size_t point_count = static_cast<std::size_t>(detail::point_id::count_);

namespace points {
#define TOYSCHED_X(ident, str, help) \
  inline constexpr Point ident{static_cast<std::uint16_t>(detail::point_id::ident), str, help};
TOYSCHED_TRACE_POINTS(TOYSCHED_X)
#undef TOYSCHED_X
}  // namespace points

namespace detail {
inline constexpr std::array<Point, point_count> all_points{{
#define TOYSCHED_X(ident, str, help) points::ident,
    TOYSCHED_TRACE_POINTS(TOYSCHED_X)
#undef TOYSCHED_X
}};
}  // namespace detail

// Every point, in declaration order (what `--crash-at=list` prints).
constexpr std::span<const Point> known_points() noexcept { return detail::all_points; }

// The point named `name` ("bind.post"), or nullptr: parses --crash-at.
constexpr const Point* find_point(std::string_view name) noexcept {
  for (const Point& p : detail::all_points)
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace toysched::trace
