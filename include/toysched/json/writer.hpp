// Every JSON body toy-scheduler sends or serves is written with this one
// writer: bindings, events, the Lease, the PodScheduled patch, /debug/*.
// It appends to a std::string and keeps the commas itself, so a body reads
// as its structure:
//
//   json::Writer w;
//   w.object().field("kind", "Binding").key("metadata").object().field("name", pod).end().end();
//   std::string body = std::move(w).str();
//
// Strings are escaped per RFC 8259 (UTF-8 passes through unchanged). It
// never validates the nesting (end() must match object()/array()); misuse is
// a bug in our code, caught by the unit test that parses every body back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace toysched::json {

// How control characters are written: JSON's \u00XX, or Go's \xXX (what
// klog's strconv.Quote shows in a log line; DEL is escaped too).
enum class ControlEscape { json, go };

// `s` as a quoted string literal, quotes included, appended to `out`: a JSON
// string, or with ControlEscape::go a klog value.
void append_string(std::string& out, std::string_view s, ControlEscape control = ControlEscape::json);

class Writer {
 public:
  Writer() { out_.reserve(256); }

  Writer& object() { return open('{'); }
  Writer& array() { return open('['); }
  Writer& end();  // closes the innermost object or array

  Writer& key(std::string_view k);
  Writer& value(std::string_view s);
  Writer& value(const char* s) { return value(std::string_view(s)); }
  Writer& value(const std::string& s) { return value(std::string_view(s)); }
  Writer& value(std::int64_t n);
  Writer& value(int n) { return value(static_cast<std::int64_t>(n)); }
  Writer& value(std::uint64_t n);
  Writer& value(bool b);
  Writer& null();
  // Already-encoded JSON (a nested body built elsewhere), inserted as is.
  Writer& raw(std::string_view json);

  template <class V>
  Writer& field(std::string_view k, V&& v) {
    key(k);
    return value(std::forward<V>(v));
  }

  const std::string& view() const noexcept { return out_; }
  std::string str() && { return std::move(out_); }

 private:
  Writer& open(char c);
  void before_value();

  std::string out_;
  // One bit per open level: set once the level holds an element, so the
  // next one needs a comma; and whether the level is an array. 64 levels
  // are far more than any body we write.
  std::uint64_t has_element_ = 0;
  std::uint64_t is_array_ = 0;
  int depth_ = 0;
  bool after_key_ = false;
};

}  // namespace toysched::json
