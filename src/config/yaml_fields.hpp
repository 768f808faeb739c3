// Strict reading of a YAML mapping, as kube-scheduler's strict decoder:
// every key must be one the caller takes, values must have the field's
// type and range. Errors name the field by its path
// ("profiles[0].plugins.score.enabled[1].weight").
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::config::detail {

// The one line a bad config gets.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// "a.b" + "c" → "a.b.c"; "" + "c" → "c".
std::string at(std::string_view path, std::string_view key);
// "a.b" + 3 → "a.b[3]".
std::string at(std::string_view path, std::size_t index);

// A node that holds nothing: absent, or an explicit null ("key:" / "~").
bool is_unset(const YAML::Node& n);

class Fields {
 public:
  // `node` must be a mapping (or unset: then it has no keys).
  Fields(const YAML::Node& node, std::string path);
  // The value under `key`, marked as known; unset when absent.
  YAML::Node take(std::string_view key);
  // Throws on the first key no one took: upstream's strict decoding error.
  void finish() const;
  const std::string& path() const noexcept { return path_; }

 private:
  YAML::Node node_;
  std::string path_;
  std::vector<std::string> taken_;
};

std::string read_string(const YAML::Node& n, std::string_view path);
bool read_bool(const YAML::Node& n, std::string_view path);
std::int64_t read_int(const YAML::Node& n, std::string_view path, std::int64_t min, std::int64_t max);
double read_number(const YAML::Node& n, std::string_view path);
// metav1.Duration: a Go duration string ("15s").
std::chrono::milliseconds read_duration(const YAML::Node& n, std::string_view path);
// A sequence (unset: empty); each element is handed to `each(node, path)`.
template <class Each>
void read_list(const YAML::Node& n, std::string_view path, Each&& each) {
  if (is_unset(n)) return;
  if (!n.IsSequence()) throw ConfigError(std::string(path) + ": expected a list");
  for (std::size_t i = 0; i < n.size(); ++i) each(n[i], at(path, i));
}

}  // namespace toysched::config::detail
