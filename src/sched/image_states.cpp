#include "toysched/sched/image_states.hpp"

#include <algorithm>

namespace toysched::sched {
namespace {

// Each name once per node, as upstream's per-image node sets count them.
template <class F>
void for_each_unique_name(const kube::Node& n, F&& f) {
  std::vector<std::pair<std::string_view, std::int64_t>> names;
  for (const auto& img : n.images) {
    for (const auto& name : img.names) names.emplace_back(name, img.size_bytes);
  }
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0 && names[i].first == names[i - 1].first) continue;
    f(names[i].first, names[i].second);
  }
}

}  // namespace

void ImageStates::add_node(const kube::Node& n) {
  for_each_unique_name(n, [&](std::string_view name, std::int64_t size) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) it = by_name_.emplace(std::string(name), ImageSummary{size, 0}).first;
    ++it->second.nodes;
  });
}

void ImageStates::remove_node(const kube::Node& n) {
  for_each_unique_name(n, [&](std::string_view name, std::int64_t /*size*/) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return;
    if (--it->second.nodes <= 0) by_name_.erase(it);
  });
}

const ImageSummary* ImageStates::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

std::string normalized_image_name(std::string_view name) {
  std::string out(name);
  const auto colon = name.rfind(':');
  const auto slash = name.rfind('/');
  // Go's LastIndex gives -1 when absent; npos is the largest value instead.
  const long c = colon == std::string_view::npos ? -1 : static_cast<long>(colon);
  const long s = slash == std::string_view::npos ? -1 : static_cast<long>(slash);
  if (c <= s) out += ":latest";
  return out;
}

std::uint64_t image_name_hash(std::string_view name) noexcept { return fnv1a(name); }

std::vector<std::uint64_t> image_hashes(const kube::Node& n) {
  std::vector<std::uint64_t> out;
  for (const auto& img : n.images) {
    for (const auto& name : img.names) out.push_back(image_name_hash(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace toysched::sched
