#include "toysched/sched/plugins/image_locality.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>

namespace toysched::sched {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kMinThreshold = 23 * kMiB;
constexpr std::int64_t kMaxContainerThreshold = 1000 * kMiB;

}  // namespace

std::int64_t image_locality_score(std::int64_t sum, std::size_t containers) noexcept {
  const std::int64_t max_threshold = kMaxContainerThreshold * static_cast<std::int64_t>(containers);
  if (max_threshold <= kMinThreshold) return 0;  // no container: nothing to pull
  sum = std::clamp(sum, kMinThreshold, max_threshold);
  return kMaxNodeScore * (sum - kMinThreshold) / (max_threshold - kMinThreshold);
}

bool ImageLocality::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> /*feasible*/,
                              const Cluster& cluster) {
  wanted_.clear();
  containers_ = pod.images.size();
  if (cluster.images == nullptr || cluster.images->size() == 0 || cluster.nodes.empty()) return false;
  const double all_nodes = static_cast<double>(cluster.nodes.size());
  for (const auto& image : pod.images) {
    const std::string name = normalized_image_name(image);
    const ImageSummary* s = cluster.images->find(name);
    if (s == nullptr) continue;
    const double spread = static_cast<double>(s->nodes) / all_nodes;
    wanted_.push_back({image_name_hash(name), static_cast<std::int64_t>(static_cast<double>(s->size) * spread)});
  }
  // No node has any of the images: every node would score 0.
  return !wanted_.empty();
}

void ImageLocality::score(const kube::Pod& /*pod*/, std::span<const NodeInfo* const> feasible,
                          std::span<std::int64_t> out) {
  for (std::size_t i = 0; i < feasible.size(); ++i) {
    const auto& have = feasible[i]->image_hashes;
    std::int64_t sum = 0;
    for (const Wanted& w : wanted_) {
      if (std::binary_search(have.begin(), have.end(), w.hash)) sum += w.scaled_size;
    }
    out[i] = image_locality_score(sum, containers_);
  }
}

std::unique_ptr<Plugin> make_image_locality(const PluginArgs& /*args*/) { return std::make_unique<ImageLocality>(); }

}  // namespace toysched::sched
