#include "toysched/sched/node_info.hpp"

#include "toysched/sched/hash.hpp"

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

std::uint64_t group_hash(const kube::Pod& p) noexcept {
  // FNV-1a over namespace and labels, with separators: equal groups hash
  // equal (the server sends labels sorted by key), and the hash saves most
  // string compares when a node holds several groups.
  std::uint64_t h = kFnvOffset;
  auto mix = [&](std::string_view s) { h = fnv1a("\xff", fnv1a(s, h)); };
  mix(p.ns);
  for (const auto& [k, v] : p.labels) {
    mix(k);
    mix(v);
  }
  return h ^ static_cast<std::uint64_t>(p.deleting);
}

std::vector<PodGroup>::iterator find_group(std::vector<PodGroup>& groups, const kube::Pod& p, std::uint64_t h) {
  return std::find_if(groups.begin(), groups.end(), [&](const PodGroup& g) {
    return g.hash == h && g.deleting == p.deleting && g.ns == p.ns && g.labels == p.labels;
  });
}

bool has_pod_affinity(const kube::Pod& p) noexcept { return !p.pod_affinity.empty() || !p.pod_anti_affinity.empty(); }

void erase_pointer(std::vector<const kube::Pod*>& v, const kube::Pod* p) {
  auto it = std::find(v.begin(), v.end(), p);
  if (it == v.end()) return;
  *it = v.back();  // order does not matter
  v.pop_back();
}

}  // namespace

void NodeInfo::add_pod(const kube::Pod& p) {
  add_resources(requested, p.requests, +1);
  const kube::NonZeroRequests nz = nonzero_requests(p);
  nonzero_milli_cpu += nz.milli_cpu;
  nonzero_memory += nz.memory;
  ++pod_count;
  used_ports.insert(used_ports.end(), p.host_ports.begin(), p.host_ports.end());
  const std::uint64_t h = group_hash(p);
  auto g = find_group(pod_groups, p, h);
  if (g == pod_groups.end()) {
    pod_groups.push_back(PodGroup{p.ns, p.labels, p.deleting, h, 1});
  } else {
    ++g->count;
  }
  pods.push_back(&p);
  if (has_pod_affinity(p)) pods_with_affinity.push_back(&p);
  if (!p.pod_anti_affinity.required.empty()) pods_with_required_anti_affinity.push_back(&p);
}

void NodeInfo::remove_pod(const kube::Pod& p) {
  add_resources(requested, p.requests, -1);
  const kube::NonZeroRequests nz = nonzero_requests(p);
  nonzero_milli_cpu -= nz.milli_cpu;
  nonzero_memory -= nz.memory;
  --pod_count;
  // One occurrence per port of the pod, the last one first: ports of the
  // most recently added pod sit at the end, so this is usually a pop_back.
  for (const auto& hp : p.host_ports) {
    auto it = std::find(used_ports.rbegin(), used_ports.rend(), hp);
    if (it != used_ports.rend()) used_ports.erase(std::next(it).base());
  }
  auto g = find_group(pod_groups, p, group_hash(p));
  if (g != pod_groups.end() && --g->count == 0) {
    *g = std::move(pod_groups.back());
    pod_groups.pop_back();
  }
  erase_pointer(pods, &p);
  erase_pointer(pods_with_affinity, &p);
  erase_pointer(pods_with_required_anti_affinity, &p);
}

}  // namespace toysched::sched
