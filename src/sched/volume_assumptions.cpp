#include "toysched/sched/volume_assumptions.hpp"

namespace toysched::sched {
namespace {
std::string claim_key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k.append(ns).append("/").append(name);
  return k;
}
}  // namespace

void VolumeAssumptions::assume_volume(const kube::PersistentVolume& pv, const kube::ClaimRef& claim) {
  Volume& v = volumes_[pv.name];
  v.resource_version = pv.resource_version;
  v.claim = claim;
  ++v.holders;
}

void VolumeAssumptions::assume_claim(const kube::PersistentVolumeClaim& c, const std::string& node) {
  Claim& a = claims_[claim_key(c.ns, c.name)];
  a.resource_version = c.resource_version;
  a.node = node;
  ++a.holders;
}

void VolumeAssumptions::forget_volume(std::string_view pv_name) noexcept {
  auto it = volumes_.find(std::string(pv_name));
  if (it != volumes_.end() && --it->second.holders <= 0) volumes_.erase(it);
}

void VolumeAssumptions::forget_claim(std::string_view ns, std::string_view name) noexcept {
  auto it = claims_.find(claim_key(ns, name));
  if (it != claims_.end() && --it->second.holders <= 0) claims_.erase(it);
}

const std::optional<kube::ClaimRef>& VolumeAssumptions::claim_ref(const kube::PersistentVolume& pv) const noexcept {
  if (volumes_.empty()) return pv.claim_ref;
  auto it = volumes_.find(pv.name);
  if (it == volumes_.end() || it->second.resource_version != pv.resource_version) return pv.claim_ref;
  return it->second.claim;
}

const std::optional<std::string>& VolumeAssumptions::selected_node(
    const kube::PersistentVolumeClaim& c) const noexcept {
  if (claims_.empty()) return c.selected_node;
  auto it = claims_.find(claim_key(c.ns, c.name));
  if (it == claims_.end() || it->second.resource_version != c.resource_version) return c.selected_node;
  return it->second.node;
}

}  // namespace toysched::sched
