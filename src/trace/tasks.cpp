// The task table, the waits, and the dumps. Everything reachable from
// dump_fd() is async-signal-safe: no allocation, no locks, no stdio; output
// goes through write(2) from a stack buffer and numbers are formatted by hand.
#include "toysched/trace/tasks.hpp"

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "toysched/json/writer.hpp"

namespace toysched::trace {
namespace {

using detail::Slot;

// --- the table (loop thread writes; the signal handler reads) --------------

constinit Slot g_slots[max_tasks];
// Slots [0, high_water) have been used at least once: the dump scans only those.
constinit std::atomic<std::size_t> g_high_water{0};
// Released slots, reused LIFO (warm in cache).
constinit std::uint16_t g_free[max_tasks]{};
constinit std::size_t g_free_top = 0;
constinit std::uint64_t g_next_id = 0;
constinit std::atomic<std::uint32_t> g_untracked{0};
constinit std::uint64_t g_arrivals[point_count]{};

// --crash-at: the point's id, or no_point when off.
constinit std::uint16_t g_crash_point = detail::no_point;
constinit std::uint32_t g_crash_nth = 0;
constinit std::uint32_t g_crash_seen = 0;

// Set by whichever dump starts first, so SIGQUIT during a crash-at dump
// does not interleave a second one.
volatile sig_atomic_t g_dying = 0;
std::int64_t g_start_ns = 0;
// --dump-dir: the dying dump is also written to this file ("" = not).
constinit char g_dump_path[4096] = {};

std::int64_t now_ns() noexcept {
  timespec ts;  // CLOCK_MONOTONIC via the vDSO: async-signal-safe and cheap
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Meson compiles with paths relative to the build directory
// ("../src/sched/scheduler.cpp"): show them from the source root.
const char* trim_path(const char* f) noexcept {
  if (!f) return "?";
  for (;;) {
    if (f[0] == '.' && f[1] == '.' && f[2] == '/')
      f += 3;
    else if (f[0] == '.' && f[1] == '/')
      f += 2;
    else
      return f;
  }
}

const char* point_name(std::uint16_t id) noexcept { return id < point_count ? detail::all_points[id].name : nullptr; }

// --- async-signal-safe output ------------------------------------------------

// Appends into a stack buffer and flushes it to an fd (signal path) or to a
// string (live path), so both dumps are the same code and read the same.
class Out {
 public:
  explicit Out(int fd) noexcept : fd_(fd) {}
  explicit Out(std::string* s) noexcept : str_(s) {}
  ~Out() { flush(); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  Out& operator<<(const char* s) noexcept { return put(s, std::strlen(s)); }
  Out& operator<<(std::uint64_t v) noexcept {
    char tmp[20];
    int n = 0;
    do tmp[n++] = char('0' + v % 10);
    while ((v /= 10) != 0);
    while (n) put(&tmp[--n], 1);
    return *this;
  }
  Out& put(const char* s, std::size_t n) noexcept {
    while (n) {
      if (len_ == sizeof buf_) flush();
      std::size_t k = std::min(n, sizeof buf_ - len_);
      std::memcpy(buf_ + len_, s, k);
      len_ += k, s += k, n -= k;
    }
    return *this;
  }
  void flush() noexcept {
    if (str_)
      str_->append(buf_, len_);
    else
      for (std::size_t off = 0; off < len_;) {
        ssize_t w = ::write(fd_, buf_ + off, len_ - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;  // stderr gone: nothing better to do while dying
        off += std::size_t(w);
      }
    len_ = 0;
  }

 private:
  int fd_ = -1;
  std::string* str_ = nullptr;
  char buf_[512];
  std::size_t len_ = 0;
};

// One line per live task, in id order (goroutine dumps read top-down from
// the oldest). Selection by repeated minimum: quadratic, but without
// allocation, and the table is small.
std::size_t write_tasks(Out& out, std::int64_t now) noexcept {
  std::size_t hw = g_high_water.load(std::memory_order_relaxed), printed = 0;
  std::uint64_t last = 0;
  for (;;) {
    const Slot* next = nullptr;
    std::uint64_t best = UINT64_MAX;
    for (std::size_t i = 0; i < hw; ++i) {
      const Slot& s = g_slots[i];
      if (s.state.load(std::memory_order_relaxed) == std::uint8_t(State::done)) continue;
      std::uint64_t id = s.id.load(std::memory_order_relaxed);
      if (id > last && id < best) best = id, next = &s;
    }
    if (!next) break;
    last = best;
    std::atomic_signal_fence(std::memory_order_acquire);  // name was written before state
    auto state = State(next->state.load(std::memory_order_relaxed));
    const char* point = point_name(next->point.load(std::memory_order_relaxed));
    const char* file = trim_path(next->file.load(std::memory_order_relaxed));
    std::uint64_t line = next->line.load(std::memory_order_relaxed);
    out << "task " << best;
    if (state == State::waiting) {
      std::int64_t waited = (now - next->since_ns.load(std::memory_order_relaxed)) / 1'000'000;
      out << " [waiting " << std::uint64_t(waited < 0 ? 0 : waited) << "ms] ";
    } else {
      out << " [running] ";
    }
    out.put(next->name, strnlen(next->name, max_name));
    if (state == State::waiting && point)
      out << " at " << point << " (";
    else if (point)
      out << ", last at " << point << " (";
    else
      out << ", created at (";
    out << file << ":" << line << ")\n";
    ++printed;
  }
  return printed;
}

std::size_t live_count() noexcept {
  std::size_t hw = g_high_water.load(std::memory_order_relaxed), n = 0;
  for (std::size_t i = 0; i < hw; ++i)
    n += g_slots[i].state.load(std::memory_order_relaxed) != std::uint8_t(State::done);
  return n;
}

void write_header(Out& out, std::int64_t now) noexcept {
  out << "toy-scheduler: " << std::uint64_t(live_count()) << " tasks, pid " << std::uint64_t(::getpid()) << ", up "
      << std::uint64_t((now - g_start_ns) / 1'000'000) << "ms\n\n";
}

void write_untracked(Out& out) noexcept {
  if (auto u = g_untracked.load(std::memory_order_relaxed))
    out << "(" << std::uint64_t(u) << " more tasks not tracked: the table of " << std::uint64_t(max_tasks)
        << " is full)\n";
}

// The whole dying dump: reason line, tasks, native backtrace.
// `crash` is null for SIGQUIT; otherwise the first line names the point,
// the count and the task that arrived there (0: an untracked one).
void dump_fd(int fd, const Point* crash, std::uint32_t nth, std::uint64_t task, std::int64_t now) noexcept {
  {
    Out out(fd);
    if (crash)
      out << "crash-at: " << crash->name << ":" << std::uint64_t(nth) << " reached by task " << task << "\n";
    else
      out << "SIGQUIT: quit\n";
    write_header(out, now);
    write_tasks(out, now);
    write_untracked(out);
    out << "\nnative backtrace:\n";
  }
  // The loop thread's own stack: where the process was when the signal came
  // (usually epoll_wait), or the crash-at call chain.
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, fd);
}

// The dump to stderr, then the same to the dump file (Ctrl-\ in a terminal
// also kills the `tee` that stderr goes to), and one line saying where.
void dump_everywhere(const Point* crash, std::uint32_t nth, std::uint64_t task) noexcept {
  std::int64_t now = now_ns();  // one instant: the file says what stderr says
  dump_fd(STDERR_FILENO, crash, nth, task, now);
  if (!g_dump_path[0]) return;
  int saved = errno;
  int fd = ::open(g_dump_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    dump_fd(fd, crash, nth, task, now);
    ::close(fd);
  }
  Out out(STDERR_FILENO);
  if (fd >= 0)
    out << "toy-scheduler: dump written to " << g_dump_path << "\n";
  else
    out << "toy-scheduler: could not write the dump to " << g_dump_path << " (errno " << std::uint64_t(errno) << ")\n";
  errno = saved;
}

[[noreturn]] void die_at(const Point& p, std::uint32_t nth, std::uint64_t task) noexcept {
  if (g_dying) _exit(2);
  g_dying = 1;
  std::fflush(nullptr);  // not in a signal handler here: stdio is fine
  dump_everywhere(&p, nth, task);
  _exit(2);
}

void on_sigquit(int) {
  if (g_dying) return;  // the other dump exits
  g_dying = 1;
  dump_everywhere(nullptr, 0, 0);
  _exit(2);
}

// Runs before main: the uptime in the header counts from process start.
[[maybe_unused]] const bool g_started = (g_start_ns = now_ns(), true);

}  // namespace

std::string_view to_string(State s) noexcept {
  switch (s) {
    case State::running:
      return "running";
    case State::waiting:
      return "waiting";
    case State::done:
      break;
  }
  return "done";
}

// --- TaskScope -------------------------------------------------------------

TaskScope::TaskScope(std::string_view name, std::source_location where) noexcept : TaskScope({name}, where) {}

TaskScope::TaskScope(std::initializer_list<std::string_view> parts, std::source_location where) noexcept
    : slot_(nullptr), gen_(0) {
  std::size_t index;
  if (g_free_top) {
    index = g_free[--g_free_top];
  } else if (std::size_t hw = g_high_water.load(std::memory_order_relaxed); hw < max_tasks) {
    index = hw;
    g_high_water.store(hw + 1, std::memory_order_relaxed);
  } else {
    g_untracked.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Slot& s = g_slots[index];
  slot_ = &s;
  gen_ = s.gen;
  std::size_t n = 0;
  for (std::string_view part : parts) {
    std::size_t k = std::min(part.size(), max_name - 1 - n);
    std::memcpy(s.name + n, part.data(), k);
    n += k;
  }
  s.name[n] = '\0';
  s.id.store(++g_next_id, std::memory_order_relaxed);
  s.point.store(detail::no_point, std::memory_order_relaxed);
  s.file.store(where.file_name(), std::memory_order_relaxed);
  s.line.store(where.line(), std::memory_order_relaxed);
  s.since_ns.store(0, std::memory_order_relaxed);
  // The handler must not see the state before the name and id it labels.
  std::atomic_signal_fence(std::memory_order_release);
  s.state.store(std::uint8_t(State::running), std::memory_order_relaxed);
}

TaskScope::~TaskScope() {
  if (!slot_) {
    g_untracked.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  slot_->state.store(std::uint8_t(State::done), std::memory_order_relaxed);
  ++slot_->gen;  // waits still pending on this slot must not write to its next owner
  g_free[g_free_top++] = std::uint16_t(slot_ - g_slots);
}

std::uint64_t TaskScope::id() const noexcept { return slot_ ? slot_->id.load(std::memory_order_relaxed) : 0; }

// --- WaitGuard ---------------------------------------------------------------

WaitGuard::WaitGuard(TaskScope& task, Point point, std::source_location where) noexcept
    : slot_(task.slot_), gen_(task.gen_), saved_{} {
  ++g_arrivals[point.id];
  bool crash = point.id == g_crash_point && ++g_crash_seen == g_crash_nth;
  if (!slot_) {
    if (crash) die_at(point, g_crash_nth, 0);
    return;
  }
  Slot& s = *slot_;
  saved_ = {s.state.load(std::memory_order_relaxed), s.point.load(std::memory_order_relaxed),
            s.line.load(std::memory_order_relaxed), s.file.load(std::memory_order_relaxed),
            s.since_ns.load(std::memory_order_relaxed)};
  s.point.store(point.id, std::memory_order_relaxed);
  s.file.store(where.file_name(), std::memory_order_relaxed);
  s.line.store(where.line(), std::memory_order_relaxed);
  s.since_ns.store(now_ns(), std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_release);
  s.state.store(std::uint8_t(State::waiting), std::memory_order_relaxed);
  // Marked at the point first, so the dump shows the crashing task there.
  if (crash) die_at(point, g_crash_nth, s.id.load(std::memory_order_relaxed));
}

WaitGuard::~WaitGuard() {
  if (!slot_ || slot_->gen != gen_) return;
  Slot& s = *slot_;
  if (saved_.state == std::uint8_t(State::waiting)) {
    // Nested: the outer wait is still on; show it again.
    s.point.store(saved_.point, std::memory_order_relaxed);
    s.file.store(saved_.file, std::memory_order_relaxed);
    s.line.store(saved_.line, std::memory_order_relaxed);
    s.since_ns.store(saved_.since_ns, std::memory_order_relaxed);
    return;
  }
  // Outermost: keep point and location as "last at".
  s.state.store(std::uint8_t(State::running), std::memory_order_relaxed);
}

// --- crash-at ----------------------------------------------------------------

CrashAt parse_crash_at(std::string_view spec) {
  std::string_view name = spec, count;
  if (auto colon = spec.rfind(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    count = spec.substr(colon + 1);
  }
  const Point* p = find_point(name);
  if (!p)
    throw std::invalid_argument("--crash-at: unknown await point \"" + std::string(name) +
                                "\" (--crash-at=list prints the known ones)");
  CrashAt c{*p, 1};
  if (spec.size() != name.size()) {
    std::uint64_t n = 0;
    bool ok = !count.empty() && count.size() <= 9;
    for (char ch : count) ok = ok && ch >= '0' && ch <= '9', n = n * 10 + std::uint64_t(ch - '0');
    if (!ok || n == 0)
      throw std::invalid_argument("--crash-at: the count in \"" + std::string(spec) + "\" must be a positive integer");
    c.nth = std::uint32_t(n);
  }
  return c;
}

void set_crash_at(CrashAt c) noexcept {
  g_crash_point = c.point.id;
  g_crash_nth = c.nth;
  g_crash_seen = 0;
}

void clear_crash_at() noexcept { g_crash_point = detail::no_point; }

namespace detail {
constinit std::uint16_t g_throw_point = no_point;
}  // namespace detail
namespace {
constinit std::uint32_t g_throw_nth = 0;
constinit std::uint32_t g_throw_seen = 0;
}  // namespace

void set_throw_at(CrashAt c) noexcept {
  detail::g_throw_point = c.point.id;
  g_throw_nth = c.nth;
  g_throw_seen = 0;
}

void detail::throw_injected(Point point) {
  if (++g_throw_seen != g_throw_nth) return;
  g_throw_point = no_point;  // once
  throw InjectedFault("--throw-at: injected fault at " + std::string(point.name) + ":" + std::to_string(g_throw_nth));
}

std::string known_points_text() {
  std::size_t width = 0;
  for (const Point& p : known_points()) width = std::max(width, std::strlen(p.name));
  std::string s;
  for (const Point& p : known_points()) {
    s += p.name;
    s.append(width + 2 - std::strlen(p.name), ' ');
    s += p.help;
    s += '\n';
  }
  return s;
}

// --- dumps -------------------------------------------------------------------

void install_sigquit_handler() {
  // backtrace() loads libgcc's unwinder (which allocates) on first use:
  // do it now, not inside the handler.
  void* warm[4];
  (void)backtrace(warm, 4);
  struct sigaction sa {};
  sa.sa_handler = on_sigquit;
  sigfillset(&sa.sa_mask);  // nothing else runs while we dump
  if (sigaction(SIGQUIT, &sa, nullptr) != 0)
    throw std::runtime_error(std::string("sigaction(SIGQUIT): ") + std::strerror(errno));
}

bool set_dump_file(std::string_view path) noexcept {
  if (path.size() >= sizeof g_dump_path) return false;
  std::memcpy(g_dump_path, path.data(), path.size());
  g_dump_path[path.size()] = '\0';
  return true;
}

std::string dump_text() {
  std::string s;
  std::int64_t now = now_ns();
  {
    Out out(&s);
    write_header(out, now);
    write_tasks(out, now);
    write_untracked(out);
  }
  return s;
}

std::string dump_json() {
  json::Writer w;
  w.object().key("tasks").array();
  for (const TaskInfo& t : snapshot()) {
    w.object().field("id", t.id).field("name", t.name).field("state", to_string(t.state)).key("point");
    if (t.point)
      w.value(t.point->name);
    else
      w.null();
    w.field("file", t.file).field("line", static_cast<std::uint64_t>(t.line)).field("waited_ms", t.waited_ms).end();
  }
  w.end().field("untracked", static_cast<std::uint64_t>(untracked_tasks())).end();
  return std::move(w).str() + "\n";
}

std::vector<TaskInfo> snapshot() {
  std::vector<TaskInfo> v;
  std::int64_t now = now_ns();
  std::size_t hw = g_high_water.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < hw; ++i) {
    const Slot& s = g_slots[i];
    auto state = State(s.state.load(std::memory_order_relaxed));
    if (state == State::done) continue;
    std::uint16_t p = s.point.load(std::memory_order_relaxed);
    v.push_back({s.id.load(std::memory_order_relaxed), std::string(s.name, strnlen(s.name, max_name)), state,
                 p < point_count ? &detail::all_points[p] : nullptr, trim_path(s.file.load(std::memory_order_relaxed)),
                 s.line.load(std::memory_order_relaxed),
                 state == State::waiting ? (now - s.since_ns.load(std::memory_order_relaxed)) / 1'000'000 : 0});
  }
  std::sort(v.begin(), v.end(), [](const TaskInfo& a, const TaskInfo& b) { return a.id < b.id; });
  return v;
}

std::vector<PointStats> point_stats() {
  std::vector<PointStats> v;
  v.reserve(point_count);
  for (const Point& p : known_points()) v.push_back({p, 0, g_arrivals[p.id]});
  std::size_t hw = g_high_water.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < hw; ++i) {
    const Slot& s = g_slots[i];
    if (s.state.load(std::memory_order_relaxed) != std::uint8_t(State::waiting)) continue;
    if (auto p = s.point.load(std::memory_order_relaxed); p < point_count) ++v[p].waiting;
  }
  return v;
}

std::uint32_t untracked_tasks() noexcept { return g_untracked.load(std::memory_order_relaxed); }

}  // namespace toysched::trace
