// Filters and the matching rules they share. Behaviour follows
// kube-scheduler's plugins (framework/plugins/{nodeunschedulable,nodename,
// tainttoleration,nodeaffinity,nodeports,noderesources}) and
// component-helpers' nodeaffinity; see plugins.hpp for the rules.
#include "toysched/sched/plugins.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace toysched::sched {
namespace {

constexpr std::string_view kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";
constexpr std::string_view kObjectNameField = "metadata.name";
constexpr std::string_view kAllAddresses = "0.0.0.0";

FilterStatus reject(Plugin p, Code c, Reason r) {
  FilterStatus s;
  s.code = c;
  s.plugin = p;
  s.add(r);
  return s;
}

bool contains(const std::vector<std::string>& values, std::string_view v) noexcept {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// strconv.ParseInt(s, 10, 64): optional sign, at least one digit, nothing
// else, no overflow.
bool parse_int64(std::string_view s, std::int64_t& out) noexcept {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;  // "+-1"
  }
  if (s.empty()) return false;
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out, 10);
  return ec == std::errc{} && ptr == end;
}

bool is_no_schedule_or_execute(kube::TaintEffect e) noexcept {
  return e == kube::TaintEffect::no_schedule || e == kube::TaintEffect::no_execute;
}

std::string_view or_default(std::string_view v, std::string_view dflt) noexcept { return v.empty() ? dflt : v; }

}  // namespace

std::string_view plugin_name(Plugin p) noexcept {
  switch (p) {
    case Plugin::none:
      return "";
    case Plugin::node_unschedulable:
      return "NodeUnschedulable";
    case Plugin::node_name:
      return "NodeName";
    case Plugin::taint_toleration:
      return "TaintToleration";
    case Plugin::node_affinity:
      return "NodeAffinity";
    case Plugin::node_ports:
      return "NodePorts";
    case Plugin::node_resources_fit:
      return "NodeResourcesFit";
    case Plugin::balanced_allocation:
      return "NodeResourcesBalancedAllocation";
  }
  return "";
}

std::string_view reason_text(Reason r) noexcept {
  switch (r) {
    case Reason::node_unschedulable:
      return "node(s) were unschedulable";
    case Reason::node_name:
      return "node(s) didn't match the requested node name";
    case Reason::untolerated_taint:
      return "";
    case Reason::node_affinity:
      return "node(s) didn't match Pod's node affinity/selector";
    case Reason::node_ports:
      return "node(s) didn't have free ports for the requested pod ports";
    case Reason::too_many_pods:
      return "Too many pods";
    case Reason::insufficient_cpu:
      return "Insufficient cpu";
    case Reason::insufficient_memory:
      return "Insufficient memory";
    case Reason::insufficient_ephemeral_storage:
      return "Insufficient ephemeral-storage";
    case Reason::insufficient_extended:
      return "";
    // The plugin list upstream prints is the set of PreFilter plugins that
    // narrowed the node list; NodeAffinity is the only one we have.
    case Reason::node_affinity_prefilter:
      return "node(s) didn't satisfy plugin(s) [NodeAffinity]";
  }
  return "";
}

std::string untolerated_taint_text(const kube::Taint& t) {
  std::string s = "node(s) had untolerated taint {";
  s += t.key;
  s += ": ";
  s += t.value;
  s += '}';
  return s;
}

std::string insufficient_text(std::string_view resource) {
  std::string s = "Insufficient ";
  s += resource;
  return s;
}

std::vector<std::string> FilterStatus::reason_strings(const kube::Pod& pod) const {
  std::vector<std::string> out;
  for (int i = 0; i < kReasonCount; ++i) {
    const auto r = static_cast<Reason>(i);
    if (!has(r)) continue;
    if (r == Reason::untolerated_taint) {
      if (taint != nullptr) out.push_back(untolerated_taint_text(*taint));
    } else if (r == Reason::insufficient_extended) {
      const auto& ext = pod.requests.extended;
      for (std::size_t j = 0; j < ext.size() && j < 64; ++j) {
        if ((extended >> j) & 1U) out.push_back(insufficient_text(ext[j].first));
      }
      for (auto j : extended_overflow) out.push_back(insufficient_text(ext[j].first));
    } else {
      out.emplace_back(reason_text(r));
    }
  }
  return out;
}

// --- matching ---------------------------------------------------------------

bool tolerates(const kube::Toleration& tol, const kube::Taint& taint) noexcept {
  if (tol.effect != kube::TaintEffect::all && tol.effect != taint.effect) return false;
  if (!tol.key.empty() && tol.key != taint.key) return false;
  switch (tol.op) {
    case kube::TolerationOp::equal:
      return tol.value == taint.value;
    case kube::TolerationOp::exists:
      return true;
    case kube::TolerationOp::unknown:
      return false;
  }
  return false;
}

bool tolerates_any(std::span<const kube::Toleration> tols, const kube::Taint& taint) noexcept {
  return std::any_of(tols.begin(), tols.end(), [&](const kube::Toleration& t) { return tolerates(t, taint); });
}

bool label_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::StringPairs& labels) noexcept {
  const std::string* v = kube::find_value(labels, r.key);
  switch (r.op) {
    case kube::SelectorOp::in:
      return !r.values.empty() && v != nullptr && contains(r.values, *v);
    case kube::SelectorOp::not_in:
      return !r.values.empty() && (v == nullptr || !contains(r.values, *v));
    case kube::SelectorOp::exists:
      return r.values.empty() && v != nullptr;
    case kube::SelectorOp::does_not_exist:
      return r.values.empty() && v == nullptr;
    case kube::SelectorOp::gt:
    case kube::SelectorOp::lt: {
      std::int64_t want = 0;
      std::int64_t have = 0;
      if (r.values.size() != 1 || !parse_int64(r.values.front(), want)) return false;
      if (v == nullptr || !parse_int64(*v, have)) return false;
      return r.op == kube::SelectorOp::gt ? have > want : have < want;
    }
    case kube::SelectorOp::unknown:
      return false;
  }
  return false;
}

bool field_requirement_matches(const kube::NodeSelectorRequirement& r, const kube::Node& node) noexcept {
  if (r.key != kObjectNameField || r.values.size() != 1) return false;
  switch (r.op) {
    case kube::SelectorOp::in:
      return node.name == r.values.front();
    case kube::SelectorOp::not_in:
      return node.name != r.values.front();
    default:
      return false;
  }
}

bool term_matches(const kube::NodeSelectorTerm& t, const kube::Node& node) noexcept {
  if (t.match_expressions.empty() && t.match_fields.empty()) return false;
  for (const auto& r : t.match_expressions) {
    if (!label_requirement_matches(r, node.labels)) return false;
  }
  for (const auto& r : t.match_fields) {
    if (!field_requirement_matches(r, node)) return false;
  }
  return true;
}

bool required_affinity_matches(const kube::Pod& pod, const kube::Node& node) noexcept {
  for (const auto& [k, v] : pod.node_selector) {
    const std::string* have = kube::find_value(node.labels, k);
    if (have == nullptr || *have != v) return false;
  }
  if (pod.required_affinity.empty()) return true;
  return std::any_of(pod.required_affinity.begin(), pod.required_affinity.end(),
                     [&](const kube::NodeSelectorTerm& t) { return term_matches(t, node); });
}

bool host_ports_conflict(const kube::HostPort& want, const kube::HostPort& used) noexcept {
  if (want.port <= 0 || want.port != used.port) return false;
  if (or_default(want.protocol, "TCP") != or_default(used.protocol, "TCP")) return false;
  const auto a = or_default(want.host_ip, kAllAddresses);
  const auto b = or_default(used.host_ip, kAllAddresses);
  return a == b || a == kAllAddresses || b == kAllAddresses;
}

// --- PreFilter ----------------------------------------------------------------

bool NodeNameSet::contains(std::string_view n) const noexcept {
  return all || std::binary_search(names.begin(), names.end(), n);
}

NodeNameSet prefilter_node_names(const kube::Pod& pod) {
  NodeNameSet out;
  if (pod.required_affinity.empty()) return out;
  std::vector<std::string_view> all_terms;
  for (const auto& term : pod.required_affinity) {
    bool pinned = false;
    std::vector<std::string_view> term_names;
    for (const auto& r : term.match_fields) {
      if (r.key != kObjectNameField || r.op != kube::SelectorOp::in) continue;
      std::vector<std::string_view> these(r.values.begin(), r.values.end());
      std::sort(these.begin(), these.end());
      these.erase(std::unique(these.begin(), these.end()), these.end());
      if (!pinned) {
        term_names = std::move(these);
        pinned = true;
      } else {
        std::vector<std::string_view> both;
        std::set_intersection(term_names.begin(), term_names.end(), these.begin(), these.end(),
                              std::back_inserter(both));
        term_names = std::move(both);
      }
    }
    // Terms are ORed: one term that does not pin a name lets every node in.
    if (!pinned) return out;
    all_terms.insert(all_terms.end(), term_names.begin(), term_names.end());
  }
  std::sort(all_terms.begin(), all_terms.end());
  all_terms.erase(std::unique(all_terms.begin(), all_terms.end()), all_terms.end());
  out.all = false;
  out.conflict = all_terms.empty();
  out.names = std::move(all_terms);
  return out;
}

// --- filters ------------------------------------------------------------------

FilterStatus filter_node_unschedulable(const kube::Pod& pod, const NodeInfo& ni) {
  if (!ni.node.unschedulable) return {};
  // The taint the node lifecycle controller puts on cordoned nodes; a pod
  // tolerating it (DaemonSets do) may land on a cordoned node.
  static const kube::Taint kCordon{std::string(kUnschedulableTaintKey), "", kube::TaintEffect::no_schedule};
  if (tolerates_any(pod.tolerations, kCordon)) return {};
  return reject(Plugin::node_unschedulable, Code::unresolvable, Reason::node_unschedulable);
}

FilterStatus filter_node_name(const kube::Pod& pod, const NodeInfo& ni) {
  if (pod.node_name.empty() || pod.node_name == ni.node.name) return {};
  return reject(Plugin::node_name, Code::unresolvable, Reason::node_name);
}

FilterStatus filter_taint_toleration(const kube::Pod& pod, const NodeInfo& ni) {
  for (const auto& taint : ni.node.taints) {
    if (!is_no_schedule_or_execute(taint.effect)) continue;
    if (tolerates_any(pod.tolerations, taint)) continue;
    auto s = reject(Plugin::taint_toleration, Code::unresolvable, Reason::untolerated_taint);
    s.taint = &taint;
    return s;
  }
  return {};
}

FilterStatus filter_node_affinity(const kube::Pod& pod, const NodeInfo& ni) {
  if (required_affinity_matches(pod, ni.node)) return {};
  return reject(Plugin::node_affinity, Code::unresolvable, Reason::node_affinity);
}

FilterStatus filter_node_ports(const kube::Pod& pod, const NodeInfo& ni) {
  for (const auto& want : pod.host_ports) {
    for (const auto& used : ni.used_ports) {
      // Evicting the pod holding the port frees it: resolvable.
      if (host_ports_conflict(want, used)) {
        return reject(Plugin::node_ports, Code::unschedulable, Reason::node_ports);
      }
    }
  }
  return {};
}

FilterStatus filter_node_resources_fit(const kube::Pod& pod, const NodeInfo& ni) {
  FilterStatus s;
  const auto& alloc = ni.node.allocatable;
  const auto& used = ni.requested;
  const auto& want = pod.requests;
  if (ni.pod_count + 1 > alloc.pods) s.add(Reason::too_many_pods);
  if (!want.empty()) {
    if (want.milli_cpu > 0 && want.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
      s.add(Reason::insufficient_cpu);
    }
    if (want.memory > 0 && want.memory > alloc.memory - used.memory) {
      s.add(Reason::insufficient_memory);
    }
    if (want.ephemeral_storage > 0 && want.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
      s.add(Reason::insufficient_ephemeral_storage);
    }
    for (std::size_t i = 0; i < want.extended.size(); ++i) {
      const auto& [name, q] = want.extended[i];
      if (q == 0) continue;
      // A resource the node does not advertise at all is allocatable 0.
      if (q <= alloc.extended_value(name) - used.extended_value(name)) continue;
      s.add(Reason::insufficient_extended);
      if (i < 64) {
        s.extended |= std::uint64_t{1} << i;
      } else {
        s.extended_overflow.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  if (s.reasons != 0) {
    s.code = Code::unschedulable;
    s.plugin = Plugin::node_resources_fit;
  }
  return s;
}

FilterStatus run_filters(const kube::Pod& pod, const NodeInfo& ni) {
  // Cheap early-outs keep the common case (no taints, no selector, no
  // ports) to a few loads per node.
  if (ni.node.unschedulable) {
    if (auto s = filter_node_unschedulable(pod, ni); !s.ok()) return s;
  }
  if (!pod.node_name.empty()) {
    if (auto s = filter_node_name(pod, ni); !s.ok()) return s;
  }
  if (!ni.node.taints.empty()) {
    if (auto s = filter_taint_toleration(pod, ni); !s.ok()) return s;
  }
  if (!pod.node_selector.empty() || !pod.required_affinity.empty()) {
    if (auto s = filter_node_affinity(pod, ni); !s.ok()) return s;
  }
  if (!pod.host_ports.empty() && !ni.used_ports.empty()) {
    if (auto s = filter_node_ports(pod, ni); !s.ok()) return s;
  }
  return filter_node_resources_fit(pod, ni);
}

FilterOutcome filter_nodes(const kube::Pod& pod, std::span<const NodeInfo* const> nodes, const NodeNameSet& allowed,
                           std::vector<const NodeInfo*>& feasible, FilterSink& sink) {
  FilterOutcome out;
  feasible.resize(nodes.size());
  const NodeInfo** const kept = feasible.data();
  std::size_t n_kept = 0;

  // Hoisted: stores through `kept` could otherwise alias these for the
  // compiler and force a reload per node.
  const bool simple_pod = pod.node_name.empty() && pod.node_selector.empty() && pod.required_affinity.empty() &&
                          pod.host_ports.empty() && pod.requests.extended.empty();
  const std::int64_t cpu = pod.requests.milli_cpu;
  const std::int64_t mem = pod.requests.memory;
  const std::int64_t eph = pod.requests.ephemeral_storage;

  for (const NodeInfo* ni : nodes) {
    if (ni == nullptr) {
      out.null_node = true;
      break;
    }
    if (!allowed.all && !allowed.contains(ni->node.name)) {
      ++out.absent;
      continue;
    }
    ++out.evaluated;
    if (simple_pod && !ni->node.unschedulable && ni->node.taints.empty()) {
      // NodeResourcesFit alone, as filter_node_resources_fit computes it.
      const auto& a = ni->node.allocatable;
      const auto& u = ni->requested;
      if (ni->pod_count + 1 <= a.pods && (cpu == 0 || cpu <= a.milli_cpu - u.milli_cpu) &&
          (mem == 0 || mem <= a.memory - u.memory) && (eph == 0 || eph <= a.ephemeral_storage - u.ephemeral_storage)) {
        kept[n_kept++] = ni;
        continue;
      }
    }
    const FilterStatus st = run_filters(pod, *ni);
    if (st.ok()) {
      kept[n_kept++] = ni;
    } else {
      sink.rejected(*ni, st);
    }
  }
  feasible.resize(n_kept);
  return out;
}

}  // namespace toysched::sched
