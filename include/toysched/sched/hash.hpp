// The one string hash the scheduler's caches key by.
#pragma once

#include <cstdint>
#include <string_view>

namespace toysched::sched {

// FNV-1a, 64 bits, continuing from `h`: image names (image_states), pod groups in
// NodeInfo. Fast on short strings; nothing here needs resistance to chosen
// collisions (a collision costs a string compare, or at worst a score).
inline constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t fnv1a(std::string_view s, std::uint64_t h = kFnvOffset) noexcept {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace toysched::sched
