#include "toysched/sched/node_info.hpp"

#include <algorithm>
#include <string_view>

namespace toysched::sched {
namespace {

using Extended = std::vector<std::pair<std::string, std::int64_t>>;

// Adds `delta` to the entry `name`, keeping the vector sorted and free of
// zeros: an entry that returns to 0 is erased, so the sums after
// add_pod+remove_pod compare equal to the sums before.
void add_extended(Extended& ext, std::string_view name, std::int64_t delta) {
  auto it =
      std::lower_bound(ext.begin(), ext.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != ext.end() && it->first == name) {
    it->second += delta;
    if (it->second == 0) ext.erase(it);
  } else if (delta != 0) {
    ext.emplace(it, std::string(name), delta);
  }
}

void add_resources(kube::Resources& into, const kube::Resources& r, std::int64_t sign) {
  into.milli_cpu += sign * r.milli_cpu;
  into.memory += sign * r.memory;
  into.ephemeral_storage += sign * r.ephemeral_storage;
  into.pods += sign * r.pods;
  for (const auto& [name, v] : r.extended) add_extended(into.extended, name, sign * v);
}

}  // namespace

void NodeInfo::add_pod(const kube::Pod& p) {
  add_resources(requested, p.requests, +1);
  nonzero_milli_cpu += sched::nonzero_milli_cpu(p.requests);
  nonzero_memory += sched::nonzero_memory(p.requests);
  ++pod_count;
  used_ports.insert(used_ports.end(), p.host_ports.begin(), p.host_ports.end());
}

void NodeInfo::remove_pod(const kube::Pod& p) {
  add_resources(requested, p.requests, -1);
  nonzero_milli_cpu -= sched::nonzero_milli_cpu(p.requests);
  nonzero_memory -= sched::nonzero_memory(p.requests);
  --pod_count;
  // One occurrence per port of the pod, the last one first: ports of the
  // most recently added pod sit at the end, so this is usually a pop_back.
  for (const auto& hp : p.host_ports) {
    auto it = std::find(used_ports.rbegin(), used_ports.rend(), hp);
    if (it != used_ports.rend()) used_ports.erase(std::next(it).base());
  }
}

}  // namespace toysched::sched
