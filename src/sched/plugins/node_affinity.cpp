#include "toysched/sched/plugins/node_affinity.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string>

namespace toysched::sched {
namespace {

constexpr std::string_view kObjectNameField = "metadata.name";

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

}  // namespace

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

FilterStatus filter_node_affinity(const kube::Pod& pod, const NodeInfo& ni) {
  if (required_affinity_matches(pod, ni.node)) return {};
  return reject(PluginId::node_affinity, Code::unresolvable, Reason::node_affinity);
}

std::int64_t preferred_affinity_sum(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  std::int64_t sum = 0;
  for (const auto& p : pod.preferred_affinity) {
    if (p.weight != 0 && term_matches(p.term, ni.node)) sum += p.weight;
  }
  return sum;
}

PreFilterResult NodeAffinity::pre_filter(const kube::Pod& pod, const Cluster& /*cluster*/) {
  if (pod.node_selector.empty() && pod.required_affinity.empty()) return {PreFilterResult::Kind::skip, {}, nullptr};
  names_ = prefilter_node_names(pod);
  if (names_.conflict) return {PreFilterResult::Kind::reject, kPodAffinityTermsConflict, nullptr};
  return {PreFilterResult::Kind::run, {}, names_.all ? nullptr : &names_};
}

std::size_t NodeAffinity::filter(const kube::Pod& pod, std::span<const NodeInfo*> nodes, FilterSink& sink) {
  return filter_each(nodes, sink, [&](const NodeInfo& ni) { return filter_node_affinity(pod, ni); });
}

bool NodeAffinity::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> /*feasible*/,
                             const Cluster& /*cluster*/) {
  return !pod.preferred_affinity.empty();
}

void NodeAffinity::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible, std::span<std::int64_t> out) {
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = preferred_affinity_sum(pod, *feasible[i]);
}

void NodeAffinity::normalize(std::span<std::int64_t> scores) {
  default_normalize_score(scores, kMaxNodeScore, /*reverse=*/false);
}

std::unique_ptr<Plugin> make_node_affinity(const PluginArgs& /*args*/) { return std::make_unique<NodeAffinity>(); }

}  // namespace toysched::sched
