// Which container images the nodes report (status.images), cluster-wide:
// for each image name, its size and on how many nodes it is. kube-scheduler's
// cache keeps the same (cache.go imageStates) for ImageLocality, which
// prefers nodes that already have a pod's images, more so for images few
// nodes have.
#pragma once

#include "toysched/kube/objects.hpp"
#include "toysched/sched/hash.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace toysched::sched {

struct ImageSummary {
  std::int64_t size = 0;  // from the first node that reported the name, as upstream
  int nodes = 0;          // nodes that report the name
};

class ImageStates {
 public:
  // A node's images, counted once per name even if listed twice.
  void add_node(const kube::Node& n);
  void remove_node(const kube::Node& n);
  // nullptr when no node reports `name`.
  const ImageSummary* find(std::string_view name) const;
  std::size_t size() const noexcept { return by_name_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, ImageSummary, Hash, std::equal_to<>> by_name_;
};

// An image name as ImageLocality compares them: ":latest" appended when
// the name has no tag (no ':' after its last '/').
std::string normalized_image_name(std::string_view name);

// 64-bit hash of an image name; NodeInfo keeps its node's names as sorted
// hashes (a node reports up to 50 images), so a lookup is a binary search
// of integers. A collision could only misplace a score, never a pod.
std::uint64_t image_name_hash(std::string_view name) noexcept;

// The sorted, unique hashes of the names a node reports.
std::vector<std::uint64_t> image_hashes(const kube::Node& n);

}  // namespace toysched::sched
