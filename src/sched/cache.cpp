#include "toysched/sched/cache.hpp"

#include "toysched/sched/node_names.hpp"

namespace toysched::sched {

NodeInfo& Cache::info_for(const std::string& node) {
  auto& slot = nodes_[node].info;
  if (!slot) {
    slot = std::make_unique<NodeInfo>();
    slot->node.name = node;
    slot->name_id = NodeNames::intern(node);  // the key: a NodeInfo is never renamed
  }
  return *slot;
}

void Cache::count(const kube::Pod& p) {
  NodeInfo& info = info_for(p.node_name);
  const std::size_t aff = info.pods_with_affinity.size();
  const std::size_t anti = info.pods_with_required_anti_affinity.size();
  info.add_pod(p);
  affinity_pods_ += static_cast<std::int64_t>(info.pods_with_affinity.size() - aff);
  anti_affinity_pods_ += static_cast<std::int64_t>(info.pods_with_required_anti_affinity.size() - anti);
}

void Cache::uncount(const kube::Pod& p) {
  auto it = nodes_.find(p.node_name);
  if (it == nodes_.end()) return;
  // By what the NodeInfo actually dropped, so the sums stay exact.
  NodeInfo& info = *it->second.info;
  const std::size_t aff = info.pods_with_affinity.size();
  const std::size_t anti = info.pods_with_required_anti_affinity.size();
  info.remove_pod(p);
  affinity_pods_ -= static_cast<std::int64_t>(aff - info.pods_with_affinity.size());
  anti_affinity_pods_ -= static_cast<std::int64_t>(anti - info.pods_with_required_anti_affinity.size());
  // A placeholder with no pods left is dropped.
  if (!it->second.known && it->second.info->pod_count == 0) nodes_.erase(it);
}

void Cache::tally(const kube::Node& n, int sign) {
  if (!n.taints.empty()) tainted_nodes_ += sign;
  if (n.unschedulable) unschedulable_nodes_ += sign;
  if (n.images.empty()) return;
  if (sign > 0) {
    images_.add_node(n);
  } else {
    images_.remove_node(n);
  }
}

void Cache::add_node(const kube::Node& n) {
  auto& info = info_for(n.name);
  auto& entry = nodes_[n.name];
  if (entry.known) tally(info.node, -1);
  info.node = n;
  info.image_hashes = image_hashes(info.node);
  tally(info.node, +1);
  if (!entry.known) list_dirty_ = true;
  entry.known = true;
}

void Cache::update_node(const kube::Node& n) { add_node(n); }

void Cache::remove_node(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  if (it->second.known) tally(it->second.info->node, -1);
  it->second.known = false;
  list_dirty_ = true;
  if (it->second.info->pod_count == 0) nodes_.erase(it);
}

void Cache::add_pod(const kube::Pod& p) {
  auto it = pods_.find(p.uid);
  if (it != pods_.end()) {
    // The watch confirms our assumption (or repeats what we have): swap in
    // the server's copy, moving the accounting if the node differs.
    uncount(it->second.pod);
    if (it->second.assumed) {
      --assumed_count_;
      // Bound where we sent it: ours (or a rival chose the same node, which
      // the 409 tells: lost_race).
      it->second.by = it->second.pod.node_name == p.node_name ? BoundBy::us : BoundBy::other;
    }
    it->second.pod = p;
    it->second.assumed = false;
    count(it->second.pod);  // the cache's copy: NodeInfo keeps pointers to it
    return;
  }
  auto [at, _] = pods_.emplace(
      p.uid, PodState{p, false, std::chrono::steady_clock::now(), listed_ ? BoundBy::other : BoundBy::unknown});
  count(at->second.pod);
}

void Cache::update_pod(const kube::Pod& old, const kube::Pod& now) {
  (void)old;
  add_pod(now);  // requests may change (in-place resize); re-count from the new copy
}

void Cache::remove_pod(const kube::Pod& p) {
  auto it = pods_.find(p.uid);
  if (it == pods_.end()) return;
  uncount(it->second.pod);
  if (it->second.assumed) --assumed_count_;
  pods_.erase(it);
}

bool Cache::assume(const kube::Pod& p, const std::string& node) {
  if (pods_.count(p.uid)) return false;
  auto known = nodes_.find(node);
  if (known == nodes_.end() || !known->second.known) return false;
  kube::Pod copy = p;
  copy.node_name = node;
  auto [at, _] = pods_.emplace(p.uid, PodState{std::move(copy), true, std::chrono::steady_clock::now(), BoundBy::us});
  count(at->second.pod);
  ++assumed_count_;
  return true;
}

void Cache::forget(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.assumed) return;
  uncount(it->second.pod);
  --assumed_count_;
  pods_.erase(it);
}

void Cache::lost_race(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it != pods_.end() && !it->second.assumed) it->second.by = BoundBy::other;
}

bool Cache::is_assumed(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() && it->second.assumed;
}

const std::vector<const NodeInfo*>& Cache::nodes() {
  if (list_dirty_) {
    list_.clear();
    for (auto& [name, entry] : nodes_)
      if (entry.known) list_.push_back(entry.info.get());
    list_dirty_ = false;
  }
  return list_;
}

const NodeInfo* Cache::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.info.get();
}

std::vector<Cache::AssumedPod> Cache::assumed() const {
  std::vector<AssumedPod> out;
  for (auto& [uid, st] : pods_)
    if (st.assumed) out.push_back({st.pod.ns + "/" + st.pod.name, st.pod.node_name, st.since});
  return out;
}

}  // namespace toysched::sched
