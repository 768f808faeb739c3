// What the client configuration's tests share: a scratch directory for
// the files they write, and the check of a one-line error.
#pragma once

#include "toysched/kube/config.hpp"
#include "toysched/kube/errors.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>

namespace toysched::test::config {

// A fresh directory per test, removed afterwards.
struct TempDir {
  std::filesystem::path root;
  TempDir() {
    static std::atomic<int> n{0};
    root = std::filesystem::temp_directory_path() /
           ("toysched-config-" + std::to_string(std::random_device{}()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(root);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::filesystem::path write(const std::filesystem::path& rel, std::string_view text) const {
    const std::filesystem::path p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

// Expects a failure with this code whose one-line message contains every needle.
template <class T>
void require_error(const kube::expected<T>& r, kube::errc code, std::initializer_list<std::string_view> needles) {
  REQUIRE_FALSE(r.has_value());
  INFO(r.error().message);
  CHECK(r.error().code == make_error_code(code));
  CHECK(r.error().message.find('\n') == std::string::npos);
  for (auto n : needles) CHECK(r.error().message.find(n) != std::string::npos);
}

}  // namespace toysched::test::config
