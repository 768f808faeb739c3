#include "toysched/sched/nominator.hpp"

#include <algorithm>

namespace toysched::sched {

void Nominator::unlink(const std::string& uid, const Entry& e) {
  auto at = by_node_.find(e.node);
  if (at == by_node_.end()) return;
  std::erase_if(at->second, [&](const kube::Pod* p) { return p->uid == uid; });
  if (at->second.empty()) by_node_.erase(at);
}

void Nominator::nominate(const kube::Pod& pod, const std::string& node) {
  if (node.empty()) {
    remove(pod.uid);
    return;
  }
  auto [it, added] = by_uid_.try_emplace(pod.uid);
  if (!added) unlink(pod.uid, it->second);
  it->second.pod = pod;
  it->second.node = node;
  by_node_[node].push_back(&it->second.pod);
}

void Nominator::remove(const std::string& uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  unlink(uid, it->second);
  by_uid_.erase(it);
}

std::string_view Nominator::node_of(const std::string& uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? std::string_view{} : std::string_view(it->second.node);
}

std::vector<const kube::Pod*> Nominator::counted_on(const kube::Pod& pod, const std::string& node) const {
  std::vector<const kube::Pod*> out;
  if (by_node_.empty()) return out;
  auto at = by_node_.find(node);
  if (at == by_node_.end()) return out;
  for (const kube::Pod* p : at->second) {
    if (p->uid != pod.uid && p->priority >= pod.priority) out.push_back(p);
  }
  return out;
}

std::vector<const kube::Pod*> Nominator::outranked_on(const std::string& node, std::int32_t priority) const {
  std::vector<const kube::Pod*> out;
  auto at = by_node_.find(node);
  if (at == by_node_.end()) return out;
  for (const kube::Pod* p : at->second) {
    if (p->priority < priority) out.push_back(p);
  }
  return out;
}

}  // namespace toysched::sched
