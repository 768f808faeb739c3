#include "toysched/log/log.hpp"

#include "toysched/json/writer.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <sstream>

namespace toysched::log {
namespace {

std::atomic<int> g_verbosity{0};

// klog's header: severity letter, mmdd hh:mm:ss.uuuuuu, pid, file:line].
constexpr const char* kPattern = "%L%m%d %H:%M:%S.%f %7P %s:%#] %v";

std::shared_ptr<spdlog::logger> make_stderr_logger() {
  auto l = std::make_shared<spdlog::logger>("toysched", std::make_shared<spdlog::sinks::stderr_sink_st>());
  l->set_pattern(kPattern);
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

void capture_to(std::string* sink) {
  if (sink == nullptr) {
    logger() = make_stderr_logger();
    return;
  }
  auto l = std::make_shared<spdlog::logger>("toysched", std::make_shared<string_sink>(sink));
  l->set_pattern(kPattern);
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

void write(severity s, std::source_location where, std::string_view msg, std::initializer_list<field> fields) {
  std::string body = format_body(msg, fields);
  logger()->log(spdlog::source_loc{where.file_name(), static_cast<int>(where.line()), where.function_name()},
                to_spdlog(s), "{}", body);
}

}  // namespace toysched::log
