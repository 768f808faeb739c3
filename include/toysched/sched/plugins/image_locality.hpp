// ImageLocality (framework/plugins/imagelocality): a node that already has
// the pod's images scores higher, by their size, scaled down for images
// that many nodes have (the spread factor: pulling is saved on any of them,
// so no reason to crowd one). Image volumes are not read (not decoded).
#pragma once

#include "toysched/sched/framework.hpp"

#include <vector>

namespace toysched::sched {

// calculatePriority: the sum clamped to [23 MiB, 1000 MiB × containers],
// scaled to 0..100.
std::int64_t image_locality_score(std::int64_t sum_of_scaled_sizes, std::size_t containers) noexcept;

class ImageLocality final : public Plugin {
 public:
  PluginId id() const noexcept override { return PluginId::image_locality; }
  bool pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, const Cluster& cluster) override;
  void score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) override;

 private:
  struct Wanted {
    std::uint64_t hash = 0;
    std::int64_t scaled_size = 0;  // size × nodes with it / all nodes
  };
  std::vector<Wanted> wanted_;  // this cycle: one per container whose image some node has
  std::size_t containers_ = 0;
};

}  // namespace toysched::sched
