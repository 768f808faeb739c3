// Named tasks and their await points: the C++ stand-in for a goroutine dump.
//
// A suspended coroutine has no stack to print, so each long-lived coroutine
// (and each bind) keeps a slot in a fixed table of plain memory saying who it
// is and where it is parked. The table is read by the SIGQUIT handler, by
// --crash-at, by /debug/tasks and by /metrics.
//
//   asio::awaitable<void> Scheduler::bind(kube::Pod pod, std::string node, ...) {
//     auto task = trace::TaskScope{"bind/", pod.ns, "/", pod.name};
//     auto r = co_await trace::traced(task, trace::points::bind_post,
//                                     api_.bind(pod.ns, pod.name, pod.uid, node));
//     ...
//
// A slot's life (one per TaskScope; `done` slots are free for reuse):
//
//            TaskScope()             traced(): before co_await
//   done ──────────────► running ─────────────────────────────► waiting
//     ▲                   │   ▲        op completes or throws       │
//     └───────────────────┘   └─────────────────────────────────────┘
//          ~TaskScope()
//
// Invariants and why:
// - Slots are claimed and released only on the loop thread (the program has
//   one), so the table needs no locks. The fields the signal handler reads
//   are relaxed atomics: this keeps the compiler from eliding or tearing the
//   stores, and costs the same as plain stores on x86 and ARM.
// - The task is passed explicitly to traced(), never taken from a "current
//   task" global: coroutines interleave on one thread, so any global would
//   name whichever task ran last, not the one that is suspending.
// - traced() restores what was there before, so nested waits compose: a
//   helper may trace its own inner wait on the caller's task and the caller
//   shows its own point again afterwards.
// - A running task keeps its last point (shown as "last at"), so a task that
//   hogs the loop can be told apart from one that never waited.
// - The table is process-global (not an object owned by main, as the style
//   asks of everything else) because a signal handler can reach nothing else.
#pragma once

#include "toysched/trace/points.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::trace {

// Binds come and go (at most --bind-parallelism at once); the rest are a
// handful of loops and HTTP connections. A task beyond this runs untracked
// and the dump says how many there are.
inline constexpr std::size_t max_tasks = 4096;
// Longer names are truncated: `bind/<ns>/<pod>` fits for ordinary names.
inline constexpr std::size_t max_name = 64;

enum class State : std::uint8_t { done = 0, running, waiting };
std::string_view to_string(State s) noexcept;

namespace detail {
inline constexpr std::uint16_t no_point = 0xffff;

struct Slot {
  std::atomic<std::uint8_t> state{0};
  std::atomic<std::uint16_t> point{no_point};  // current (waiting) or last (running) point
  std::atomic<std::uint32_t> line{0};
  std::atomic<const char*> file{nullptr};  // source_location's literal: stable
  std::atomic<std::int64_t> since_ns{0};   // CLOCK_MONOTONIC when the wait began
  std::atomic<std::uint64_t> id{0};
  char name[max_name]{};  // published before state becomes running
  std::uint32_t gen = 0;  // bumped on release; loop thread only
};

// What a wait overwrote, to put back when it ends (nesting).
struct Saved {
  std::uint8_t state;
  std::uint16_t point;
  std::uint32_t line;
  const char* file;
  std::int64_t since_ns;
};
}  // namespace detail

// Registers a task for the lifetime of the object: declare it first in the
// coroutine body so it outlives every traced() wait of that coroutine.
// The name is copied into the slot.
class TaskScope {
 public:
  explicit TaskScope(std::string_view name, std::source_location where = std::source_location::current()) noexcept;
  // Joins the parts without allocating: TaskScope{"bind/", ns, "/", name}.
  TaskScope(std::initializer_list<std::string_view> parts,
            std::source_location where = std::source_location::current()) noexcept;
  ~TaskScope();
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;

  // 0 when the table was full and this task is not tracked.
  std::uint64_t id() const noexcept;

 private:
  friend class WaitGuard;
  detail::Slot* slot_;
  std::uint32_t gen_;
};

// --throw-at's point (no_point when off) and its trigger; see set_throw_at.
namespace detail {
extern constinit std::uint16_t g_throw_point;
void throw_injected(Point point);  // counts the arrival; throws on the nth
}  // namespace detail

// Marks `task` waiting at `point` for the guard's lifetime. traced() is the
// usual way in; use this directly around a co_await that is not an
// awaitable<T> (construct it immediately before the co_await).
// On construction, counts the arrival and, if it is the --crash-at one,
// dumps and exits before the operation starts.
class WaitGuard {
 public:
  WaitGuard(TaskScope& task, Point point, std::source_location where = std::source_location::current()) noexcept;
  ~WaitGuard();
  WaitGuard(const WaitGuard&) = delete;
  WaitGuard& operator=(const WaitGuard&) = delete;

 private:
  detail::Slot* slot_;
  std::uint32_t gen_;  // the slot may have been released if the task ended first
  detail::Saved saved_;
};

// co_await traced(task, points::bind_post, api.bind(...)): waits for `op`
// with the task marked waiting at `point`; running again afterwards, also
// when `op` throws. Costs one coroutine frame (Asio recycles them) and a few
// stores; bench/trace_bench.cpp measures it.
template <class T>
boost::asio::awaitable<T> traced(TaskScope& task, Point point, boost::asio::awaitable<T> op,
                                 std::source_location where = std::source_location::current()) {
  WaitGuard wait(task, point, where);
  if (point.id == detail::g_throw_point) [[unlikely]]
    detail::throw_injected(point);
  co_return co_await std::move(op);
}

inline boost::asio::awaitable<void> traced(TaskScope& task, Point point, boost::asio::awaitable<void> op,
                                           std::source_location where = std::source_location::current()) {
  WaitGuard wait(task, point, where);
  if (point.id == detail::g_throw_point) [[unlikely]]
    detail::throw_injected(point);
  co_await std::move(op);
}

// --- crash-at ---------------------------------------------------------------

struct CrashAt {
  Point point;
  std::uint32_t nth = 1;
};
// "bind.post" or "bind.post:10". Throws std::invalid_argument with a
// one-line message on an unknown point or a bad count (start-up config).
CrashAt parse_crash_at(std::string_view spec);
// On the nth arrival at the point (by any task, counted from this call),
// dump and exit(2) exactly as SIGQUIT does.
void set_crash_at(CrashAt c) noexcept;
void clear_crash_at() noexcept;
// --throw-at: on the nth arrival at the point, traced() throws
// InjectedFault in the arriving task instead of waiting (the tests of what
// a task's exception does). parse_crash_at() parses it.
void set_throw_at(CrashAt c) noexcept;
struct InjectedFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// `--crash-at=list`: one line per point, "bind.post  POST pods/binding in flight".
std::string known_points_text();

// --- dumps ------------------------------------------------------------------

// SIGQUIT -> dump every task and a native backtrace to stderr, then _exit(2).
// Call once at start-up, on the loop thread.
void install_sigquit_handler();
// The SIGQUIT and --crash-at dumps are also written to this file
// (truncated), after stderr; "" turns that off. False if the path is too long.
bool set_dump_file(std::string_view path) noexcept;

// The SIGQUIT dump without the backtrace and without dying (GET /debug/tasks).
std::string dump_text();
// The same as JSON: {"tasks":[{"id":7,"name":"...","state":"waiting",
// "point":"bind.post","file":"src/...","line":161,"waited_ms":1520},...],
// "untracked":0}. `point` is the last one for running tasks (null if none).
std::string dump_json();

// --- introspection (metrics, tests) ----------------------------------------

struct TaskInfo {
  std::uint64_t id;
  std::string name;
  State state;
  const Point* point;  // nullptr: has not waited yet
  std::string file;    // trimmed: "src/sched/scheduler.cpp"
  std::uint32_t line;
  std::int64_t waited_ms;  // waiting: how long; running: 0
};
// Live tasks in id order.
std::vector<TaskInfo> snapshot();

struct PointStats {
  Point point;
  std::uint32_t waiting;   // tasks parked there now (gauge)
  std::uint64_t arrivals;  // waits begun there since start (counter)
};
// One entry per known point, in known_points() order.
std::vector<PointStats> point_stats();
// Tasks refused a slot because the table was full (live count).
std::uint32_t untracked_tasks() noexcept;

}  // namespace toysched::trace
