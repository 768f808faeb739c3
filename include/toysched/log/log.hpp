// klog-style structured logging, as kube-scheduler writes it, so the same
// greps work on both:
//
//   I1130 09:21:05.123456   12345 bind.cpp:42] "Successfully bound pod to node" pod="ns/p" node="n1"
//
// Verbosity is klog's -v: TS_LOG(2, ...) prints only at -v=2 or above. The
// arguments are not evaluated when the level is off. The level can change at
// run time (PUT /debug/flags/v). Never pass a token or key material.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace toysched::log {

enum class severity { info, warning, error, fatal };

// One key=value pair. Strings are printed quoted and escaped, numbers and
// booleans bare, exactly as klog's text format does.
struct field {
  std::string_view key;
  std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool> value;

  field(std::string_view k, std::string_view v) : key(k), value(v) {}
  field(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  field(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  field(std::string_view k, bool v) : key(k), value(v) {}
  field(std::string_view k, double v) : key(k), value(v) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) field(std::string_view k, T v) : key(k) {
    if constexpr (std::is_signed_v<T>)
      value = static_cast<std::int64_t>(v);
    else
      value = static_cast<std::uint64_t>(v);
  }
};

// Where lines go: stderr by default; tests capture into a string.
void set_verbosity(int v) noexcept;
int verbosity() noexcept;
bool enabled(int v) noexcept;
// As enabled(v), or a --vmodule pattern gives the source file `file` a
// level of v or more.
bool enabled(int v, const char* file) noexcept;
void capture_to(std::string* sink);  // nullptr: back to stderr

// --vmodule: klog's "pattern=N,..." (a pattern is a glob on the source
// file's name without its extension, or on its path when it has a '/').
// Returns "" or why the text is not valid; apply=false only checks it.
std::string set_vmodule(std::string_view spec, bool apply = true);

// --logging-format: klog's text (the default) or its JSON lines:
//   {"ts":1700000000123.456,"caller":"sched/scheduler.cpp:42","msg":"...","v":2,"pod":"ns/p"}
// (ts in milliseconds since the epoch; "v" on info lines; errors carry their
// fields, "err" among them, as component-base/logs/json writes them).
enum class format { text, json };
void set_format(format f);

// `v`: the TS_LOG level of the line (info lines; JSON shows it).
void write(severity s, std::source_location where, std::string_view msg, std::initializer_list<field> fields,
           int v = 0);

// The text after the klog header, e.g. `"msg" pod="a/b" n=3`. Exposed for tests.
std::string format_body(std::string_view msg, std::initializer_list<field> fields);

}  // namespace toysched::log

#define TS_LOG(level, msg, ...)                                                                                    \
  do {                                                                                                             \
    if (::toysched::log::enabled(level, std::source_location::current().file_name()))                              \
      ::toysched::log::write(::toysched::log::severity::info, std::source_location::current(), msg, {__VA_ARGS__}, \
                             level);                                                                               \
  } while (0)
#define TS_WARN(msg, ...) \
  ::toysched::log::write(::toysched::log::severity::warning, std::source_location::current(), msg, {__VA_ARGS__})
#define TS_ERROR(msg, ...) \
  ::toysched::log::write(::toysched::log::severity::error, std::source_location::current(), msg, {__VA_ARGS__})
