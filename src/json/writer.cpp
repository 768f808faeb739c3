#include "toysched/json/writer.hpp"

#include <charconv>

namespace toysched::json {

void append_string(std::string& out, std::string_view s, ControlEscape control) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (control == ControlEscape::go && (c < 0x20 || c == 0x7f)) {
          out += "\\x";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else if (control == ControlEscape::json && c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(ch);  // UTF-8 passes through as is
        }
    }
  }
  out.push_back('"');
}

void Writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  const std::uint64_t bit = std::uint64_t{1} << (depth_ - 1);
  if (has_element_ & bit) out_.push_back(',');
  has_element_ |= bit;
}

Writer& Writer::open(char c) {
  before_value();
  out_.push_back(c);
  const std::uint64_t bit = std::uint64_t{1} << depth_;
  ++depth_;
  has_element_ &= ~bit;
  if (c == '[')
    is_array_ |= bit;
  else
    is_array_ &= ~bit;
  return *this;
}

Writer& Writer::end() {
  if (depth_ == 0) return *this;
  --depth_;
  out_.push_back((is_array_ >> depth_) & 1 ? ']' : '}');
  return *this;
}

Writer& Writer::key(std::string_view k) {
  before_value();
  append_string(out_, k);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

Writer& Writer::value(std::string_view s) {
  before_value();
  append_string(out_, s);
  return *this;
}

Writer& Writer::value(std::int64_t n) {
  before_value();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out_.append(buf, end);
  return *this;
}

Writer& Writer::value(std::uint64_t n) {
  before_value();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out_.append(buf, end);
  return *this;
}

Writer& Writer::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

Writer& Writer::null() {
  before_value();
  out_ += "null";
  return *this;
}

Writer& Writer::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace toysched::json
