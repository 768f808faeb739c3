// The storage objects a volume plugin's test sets up (claims, volumes,
// classes, CSINodes, VolumeAttachments), looked up as ClusterObjectIndex
// looks them up.
#pragma once

#include "toysched/sched/framework.hpp"
#include "toysched/sched/volume_assumptions.hpp"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::test {

class Storage final : public sched::ClusterObjects {
 public:
  std::map<std::string, kube::PersistentVolumeClaim, std::less<>> claims;  // "ns/name"
  std::map<std::string, kube::PersistentVolume, std::less<>> volumes;
  std::map<std::string, kube::StorageClass, std::less<>> classes;
  std::map<std::string, kube::CSINode, std::less<>> csi_nodes;
  std::map<std::string, std::vector<kube::VolumeAttachment>, std::less<>> attachments_by_node;
  std::map<std::string, kube::CSIDriver, std::less<>> drivers;
  std::vector<kube::CSIStorageCapacity> capacities;

  const kube::StringPairs* namespace_labels(std::string_view) const override { return nullptr; }
  kube::LabelSelector default_selector(const kube::Pod&) const override { return {}; }
  const kube::PersistentVolumeClaim* claim(std::string_view ns, std::string_view name) const override {
    auto it = claims.find(std::string(ns) + "/" + std::string(name));
    return it == claims.end() ? nullptr : &it->second;
  }
  const kube::PersistentVolume* volume(std::string_view name) const override {
    auto it = volumes.find(name);
    return it == volumes.end() ? nullptr : &it->second;
  }
  std::vector<const kube::PersistentVolume*> volumes_of_class(std::string_view name) const override {
    std::vector<const kube::PersistentVolume*> out;
    for (const auto& [_, pv] : volumes)
      if (pv.storage_class_name == name) out.push_back(&pv);
    return out;
  }
  sched::VolumeAssumptions* volume_assumptions() const override { return &assumed; }
  const kube::CSIDriver* csi_driver(std::string_view name) const override {
    auto it = drivers.find(name);
    return it == drivers.end() ? nullptr : &it->second;
  }
  std::vector<const kube::CSIStorageCapacity*> storage_capacities(std::string_view class_name) const override {
    std::vector<const kube::CSIStorageCapacity*> out;
    for (const auto& c : capacities)
      if (c.storage_class_name == class_name) out.push_back(&c);
    return out;
  }
  mutable sched::VolumeAssumptions assumed;
  const kube::StorageClass* storage_class(std::string_view name) const override {
    auto it = classes.find(name);
    return it == classes.end() ? nullptr : &it->second;
  }

  const kube::CSINode* csi_node(std::string_view node) const override {
    auto it = csi_nodes.find(node);
    return it == csi_nodes.end() ? nullptr : &it->second;
  }
  std::span<const kube::VolumeAttachment> attachments(std::string_view node) const override {
    auto it = attachments_by_node.find(node);
    return it == attachments_by_node.end() ? std::span<const kube::VolumeAttachment>() : it->second;
  }

  // A claim in "default", bound (annotated bind-completed) when `volume` is set.
  kube::PersistentVolumeClaim& add_claim(std::string name, std::string volume = {}) {
    kube::PersistentVolumeClaim& c = claims["default/" + name];
    c.ns = "default";
    c.name = std::move(name);
    c.bind_completed = !volume.empty();
    c.volume_name = std::move(volume);
    return c;
  }
  // A volume with node affinity (a `required` with these terms).
  kube::PersistentVolume& add_volume(std::string name, std::vector<kube::NodeSelectorTerm> affinity) {
    kube::PersistentVolume& v = volumes[name];
    v.name = std::move(name);
    v.has_node_affinity = true;
    v.node_affinity = std::move(affinity);
    return v;
  }
  // A volume without node affinity, with these labels.
  kube::PersistentVolume& add_labelled_volume(std::string name, kube::StringPairs labels) {
    kube::PersistentVolume& v = volumes[name];
    v.name = std::move(name);
    v.labels = std::move(labels);
    return v;
  }
  kube::StorageClass& add_class(std::string name, bool wait_for_first_consumer) {
    kube::StorageClass& sc = classes[name];
    sc.name = std::move(name);
    sc.wait_for_first_consumer = wait_for_first_consumer;
    return sc;
  }
};

}  // namespace toysched::test
