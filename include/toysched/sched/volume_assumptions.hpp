// VolumeBinding's assume cache (upstream's AssumeCache of volumes and
// claims): between a pod's Reserve and the informers seeing the writes of
// its PreBind, the decisions that follow must see the volume it chose as
// taken, and its claims as promised to its node, or they would choose them
// again.
//
// An assumption holds while the informer still has the very version of the
// object it was made on (same resourceVersion): once the informer delivers
// a newer one, that is the truth, assumption or not. It ends with the
// PreBind that made it (Unreserve, or once the claims are bound); a claim
// assumed by two pods (a shared claim) ends with the last of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toysched/kube/objects.hpp"

namespace toysched::sched {

class VolumeAssumptions {
 public:
  // `pv` (as the informer has it) is promised to `claim`.
  void assume_volume(const kube::PersistentVolume& pv, const kube::ClaimRef& claim);
  // `c` (as the informer has it) is to be provisioned on `node`.
  void assume_claim(const kube::PersistentVolumeClaim& c, const std::string& node);
  void forget_volume(std::string_view pv_name) noexcept;
  void forget_claim(std::string_view ns, std::string_view name) noexcept;

  // What the decisions see: the assumed claimRef or selected node while
  // the assumption holds, else the informer's.
  const std::optional<kube::ClaimRef>& claim_ref(const kube::PersistentVolume& pv) const noexcept;
  const std::optional<std::string>& selected_node(const kube::PersistentVolumeClaim& c) const noexcept;

  std::size_t size() const noexcept { return volumes_.size() + claims_.size(); }

 private:
  struct Volume {
    std::string resource_version;
    std::optional<kube::ClaimRef> claim;
    int holders = 0;
  };
  struct Claim {
    std::string resource_version;
    std::optional<std::string> node;
    int holders = 0;
  };
  std::unordered_map<std::string, Volume> volumes_;  // by volume name
  std::unordered_map<std::string, Claim> claims_;    // by "ns/name"
};

}  // namespace toysched::sched
