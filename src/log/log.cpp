#include "toysched/log/log.hpp"

#include "toysched/json/writer.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

namespace toysched::log {
namespace {

std::atomic<int> g_verbosity{0};
// --vmodule: set once at start-up, before any task runs.
std::vector<std::pair<std::string, int>> g_vmodule;
std::atomic<int> g_vmodule_max{-1};  // the highest level a pattern gives; -1: no --vmodule
format g_format = format::text;

// klog's header: severity letter, mmdd hh:mm:ss.uuuuuu, pid, file:line].
constexpr const char* kPattern = "%L%m%d %H:%M:%S.%f %7P %s:%#] %v";
// JSON lines are whole in the message.
constexpr const char* kJsonPattern = "%v";
const char* pattern() { return g_format == format::json ? kJsonPattern : kPattern; }

std::shared_ptr<spdlog::logger> make_stderr_logger() {
  auto l = std::make_shared<spdlog::logger>("toysched", std::make_shared<spdlog::sinks::stderr_sink_st>());
  l->set_pattern(pattern());
  l->set_level(spdlog::level::trace);
  l->flush_on(spdlog::level::trace);  // lines must survive a crash dump right after them
  return l;
}

std::shared_ptr<spdlog::logger>& logger() {
  static std::shared_ptr<spdlog::logger> l = make_stderr_logger();
  return l;
}

// A sink appending to a caller's string (tests).
class string_sink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit string_sink(std::string* out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    out_->append(buf.data(), buf.size());
  }
  void flush_() override {}

 private:
  std::string* out_;
};

// Go's strconv.Quote for the characters that matter in logs.
void append_quoted(std::string& out, std::string_view s) { json::append_string(out, s, json::ControlEscape::go); }

spdlog::level::level_enum to_spdlog(severity s) {
  switch (s) {
    case severity::info:
      return spdlog::level::info;
    case severity::warning:
      return spdlog::level::warn;
    case severity::error:
      return spdlog::level::err;
    case severity::fatal:
      return spdlog::level::critical;
  }
  return spdlog::level::info;
}

}  // namespace

void set_verbosity(int v) noexcept { g_verbosity.store(v, std::memory_order_relaxed); }
int verbosity() noexcept { return g_verbosity.load(std::memory_order_relaxed); }
bool enabled(int v) noexcept { return v <= g_verbosity.load(std::memory_order_relaxed); }

bool enabled(int v, const char* file) noexcept {
  if (v <= g_verbosity.load(std::memory_order_relaxed)) return true;
  if (v > g_vmodule_max.load(std::memory_order_relaxed)) return false;
  // The file without its extension; patterns with a '/' match the path's
  // tail, the others the name alone (klog's rule).
  std::string_view path(file);
  if (auto dot = path.rfind('.'); dot != std::string_view::npos && dot > path.rfind('/')) path = path.substr(0, dot);
  const std::string full(path);
  const std::string name(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  for (const auto& [pat, level] : g_vmodule) {
    const bool match = pat.find('/') == std::string::npos ? fnmatch(pat.c_str(), name.c_str(), 0) == 0
                                                          : fnmatch(("*/" + pat).c_str(), full.c_str(), 0) == 0 ||
                                                                fnmatch(pat.c_str(), full.c_str(), 0) == 0;
    if (match) return v <= level;  // the first matching pattern decides
  }
  return false;
}

std::string set_vmodule(std::string_view spec, bool apply) {
  std::vector<std::pair<std::string, int>> parsed;
  int max = -1;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    int level = -1;
    if (eq == std::string_view::npos || eq == 0) return "\"" + std::string(item) + "\" is not pattern=N";
    const std::string_view n = item.substr(eq + 1);
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), level);
    if (ec != std::errc{} || end != n.data() + n.size() || level < 0)
      return "\"" + std::string(item) + "\": N must be a non-negative integer";
    parsed.emplace_back(std::string(item.substr(0, eq)), level);
    max = std::max(max, level);
  }
  if (!apply) return {};
  g_vmodule = std::move(parsed);
  g_vmodule_max.store(max, std::memory_order_relaxed);
  return {};
}

void set_format(format f) {
  g_format = f;
  logger()->set_pattern(pattern());
}

void capture_to(std::string* sink) {
  if (sink == nullptr) {
    logger() = make_stderr_logger();
    return;
  }
  auto l = std::make_shared<spdlog::logger>("toysched", std::make_shared<string_sink>(sink));
  l->set_pattern(pattern());
  l->set_level(spdlog::level::trace);
  logger() = l;
}

std::string format_body(std::string_view msg, std::initializer_list<field> fields) {
  std::string out;
  out.reserve(msg.size() + 16 * fields.size() + 2);
  append_quoted(out, msg);
  for (const auto& f : fields) {
    out += ' ';
    out += f.key;
    out += '=';
    std::visit(
        [&out](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string_view>)
            append_quoted(out, v);
          else if constexpr (std::is_same_v<V, bool>)
            out += v ? "true" : "false";
          else if constexpr (std::is_same_v<V, double>) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g", v);
            out += buf;
          } else
            out += std::to_string(v);
        },
        f.value);
  }
  return out;
}

namespace {

// "sched/scheduler.cpp:42": the file's directory and name, as zap's short caller.
void append_caller(std::string& out, std::source_location where) {
  std::string_view path(where.file_name());
  auto last = path.rfind('/');
  if (last != std::string_view::npos && last > 0) {
    auto prev = path.rfind('/', last - 1);
    path = path.substr(prev == std::string_view::npos ? 0 : prev + 1);
  }
  out += path;
  out += ':';
  out += std::to_string(where.line());
}

std::string json_line(severity s, std::source_location where, std::string_view msg, std::initializer_list<field> fields,
                      int v) {
  std::string out = "{\"ts\":";
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  char ts[32];
  std::snprintf(ts, sizeof ts, "%.3f", std::chrono::duration<double, std::milli>(now).count());
  out += ts;
  out += ",\"caller\":";
  std::string caller;
  append_caller(caller, where);
  json::append_string(out, caller);
  out += ",\"msg\":";
  json::append_string(out, msg);
  if (s == severity::info || s == severity::warning) out += ",\"v\":" + std::to_string(v);
  for (const auto& f : fields) {
    out += ',';
    json::append_string(out, f.key);
    out += ':';
    std::visit(
        [&out](const auto& val) {
          using V = std::decay_t<decltype(val)>;
          if constexpr (std::is_same_v<V, std::string_view>) {
            json::append_string(out, val);
          } else if constexpr (std::is_same_v<V, bool>) {
            out += val ? "true" : "false";
          } else if constexpr (std::is_same_v<V, double>) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", val);
            out += std::isfinite(val) ? buf : "null";
          } else {
            out += std::to_string(val);
          }
        },
        f.value);
  }
  out += '}';
  return out;
}

}  // namespace

void write(severity s, std::source_location where, std::string_view msg, std::initializer_list<field> fields, int v) {
  std::string body = g_format == format::json ? json_line(s, where, msg, fields, v) : format_body(msg, fields);
  logger()->log(spdlog::source_loc{where.file_name(), static_cast<int>(where.line()), where.function_name()},
                to_spdlog(s), "{}", body);
}

}  // namespace toysched::log
