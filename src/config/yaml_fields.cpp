#include "yaml_fields.hpp"

#include "toysched/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace toysched::config::detail {

std::string at(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string at(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

bool is_unset(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

Fields::Fields(const YAML::Node& node, std::string path) : node_(node), path_(std::move(path)) {
  if (!is_unset(node_) && !node_.IsMap())
    throw ConfigError((path_.empty() ? std::string("the document") : path_) + ": expected a mapping");
}

YAML::Node Fields::take(std::string_view key) {
  taken_.emplace_back(key);
  if (is_unset(node_)) return YAML::Node(YAML::NodeType::Undefined);
  // Look the key up without operator[] on a non-const node, which would
  // insert it.
  const YAML::Node& map = node_;
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

void Fields::finish() const {
  if (is_unset(node_)) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<non-scalar key>");
    if (std::find(taken_.begin(), taken_.end(), key) == taken_.end())
      throw ConfigError("strict decoding error: unknown field \"" + at(path_, key) + "\"");
  }
}

namespace {

// A scalar written as YAML's plain style (16, true), not quoted ("16"):
// JSON decoding, as upstream's, does not take a string for a number.
const std::string& plain_scalar(const YAML::Node& n, std::string_view path, std::string_view want) {
  if (!n.IsScalar() || n.Tag() == "!") throw ConfigError(std::string(path) + ": expected " + std::string(want));
  return n.Scalar();
}

}  // namespace

std::string read_string(const YAML::Node& n, std::string_view path) {
  if (is_unset(n)) return {};
  if (!n.IsScalar()) throw ConfigError(std::string(path) + ": expected a string");
  return n.Scalar();
}

bool read_bool(const YAML::Node& n, std::string_view path) {
  if (is_unset(n)) return false;
  const std::string& s = plain_scalar(n, path, "true or false");
  if (s == "true") return true;
  if (s == "false") return false;
  throw ConfigError(std::string(path) + ": expected true or false, got \"" + s + "\"");
}

std::int64_t read_int(const YAML::Node& n, std::string_view path, std::int64_t min, std::int64_t max) {
  const std::string& s = plain_scalar(n, path, "an integer");
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc{} && end == s.data() + s.size() && (v < min || v > max)))
    throw ConfigError(std::string(path) + ": " + s + " is out of range [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
  if (ec != std::errc{} || end != s.data() + s.size())
    throw ConfigError(std::string(path) + ": expected an integer, got \"" + s + "\"");
  return v;
}

double read_number(const YAML::Node& n, std::string_view path) {
  const std::string& s = plain_scalar(n, path, "a number");
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v))
    throw ConfigError(std::string(path) + ": expected a number, got \"" + s + "\"");
  return v;
}

std::chrono::milliseconds read_duration(const YAML::Node& n, std::string_view path) {
  const std::string s = read_string(n, path);
  auto d = parse_duration(s);
  if (!d) throw ConfigError(std::string(path) + ": invalid duration \"" + s + "\"");
  return *d;
}

}  // namespace toysched::config::detail
