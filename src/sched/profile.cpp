#include "toysched/sched/profile.hpp"

#include <algorithm>

#include "toysched/sched/pre_bind.hpp"

namespace toysched::sched {
Plugin& Profile::add(std::unique_ptr<Plugin> p) {
  owned_.push_back(std::move(p));
  return *owned_.back();
}

Plugin* Profile::find(PluginId id) const noexcept {
  auto it = std::find_if(owned_.begin(), owned_.end(), [&](const auto& p) { return p->id() == id; });
  return it == owned_.end() ? nullptr : it->get();
}

std::vector<std::unique_ptr<PreBind>> Profile::reserve(const kube::Pod& pod, const NodeInfo& ni,
                                                       const Cluster& cluster) const {
  std::vector<std::unique_ptr<PreBind>> work;
  for (Plugin* p : filters_)
    if (auto w = p->reserve(pod, ni, cluster)) work.push_back(std::move(w));
  return work;
}

Plugin& Profile::instance(PluginId id, const PluginArgs& args) {
  if (Plugin* existing = find(id)) return *existing;
  return add(registry_entry(id).make(args));
}

Profile Profile::make_default(const PluginArgs& args) {
  Profile p;
  for (const RegistryEntry& e : kRegistry) {
    if (e.kind != PluginKind::ours || !e.in_default) continue;
    if (e.implements(Point::filter)) p.enable_filter(p.instance(e.id, args));
    // A Score plugin without a weight of its own weighs 1, as upstream's.
    if (e.implements(Point::score))
      p.enable_score(p.instance(e.id, args), e.default_weight == 0 ? 1 : e.default_weight);
  }
  p.set_preemption(args.preemption);
  return p;
}

FilterStatus Profile::filter_one(const kube::Pod& pod, const NodeInfo& ni) const {
  const NodeInfo* one[] = {&ni};
  const Cluster cluster{std::span<const NodeInfo* const>(one)};
  std::vector<Plugin*> run;
  for (Plugin* f : filters_) {
    const PreFilterResult pre = f->pre_filter(pod, cluster);
    if (pre.kind == PreFilterResult::Kind::skip) continue;
    if (pre.kind == PreFilterResult::Kind::reject) {
      FilterStatus s;  // the whole pod fails: no per-node reason (upstream's PreFilter message says why)
      s.code = Code::unresolvable;
      s.plugin = f->id();
      return s;
    }
    if (pre.names != nullptr && !pre.names->contains(ni.node.name)) {
      return reject(f->id(), Code::unresolvable, Reason::node_affinity_prefilter);
    }
    run.push_back(f);
  }
  return sched::filter_one(run, pod, ni);
}

}  // namespace toysched::sched
