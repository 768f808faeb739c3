// The framework's shared vocabulary: reason texts, the FitError message, and the
// normalization most score plugins use. Texts are upstream's, word for
// word: users grep for them and `kubectl describe pod` shows them.
#include "toysched/sched/framework.hpp"
#include "toysched/sched/pre_bind.hpp"

namespace toysched::sched {

std::string_view code_name(Code c) noexcept {
  switch (c) {
    case Code::success:
      return "Success";
    case Code::unschedulable:
      return "Unschedulable";
    case Code::unresolvable:
      break;
  }
  return "UnschedulableAndUnresolvable";
}

std::string_view reason_text(Reason r) noexcept {
  switch (r) {
#define TOYSCHED_REASON(id, text) \
  case Reason::id:                \
    return text;
    TOYSCHED_REASONS(TOYSCHED_REASON)
#undef TOYSCHED_REASON
  }
  return "";
}

std::string nodes_unavailable_text(std::size_t total_nodes, const ReasonHistogram& reasons) {
  std::vector<std::string> lines;
  lines.reserve(reasons.size());
  for (const auto& [text, n] : reasons) lines.push_back(std::to_string(n) + " " + text);
  std::sort(lines.begin(), lines.end());
  std::string out = "0/" + std::to_string(total_nodes) + " nodes are available:";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += i == 0 ? " " : ", ";
    out += lines[i];
  }
  out += '.';
  return out;
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
    if (r == Reason::insufficient_extended) {
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

namespace {
// Keeps the one rejection of the one node filter_one asks about.
class OneRejection final : public FilterSink {
 public:
  void rejected(const NodeInfo& /*ni*/, const FilterStatus& s) override { status = s; }
  FilterStatus status;
};
}  // namespace

std::unique_ptr<PreBind> Plugin::reserve(const kube::Pod& /*pod*/, const NodeInfo& /*ni*/, const Cluster& /*cluster*/) {
  return nullptr;
}

FilterStatus filter_one(std::span<Plugin* const> filters, const kube::Pod& pod, const NodeInfo& ni) {
  const NodeInfo* one[] = {&ni};
  OneRejection sink;
  for (Plugin* p : filters) {
    if (p->filter(pod, std::span<const NodeInfo*>(one), sink) == 0) return sink.status;
  }
  return {};
}

FilterStatus reject(PluginId p, Code c, Reason r) {
  FilterStatus s;
  s.code = c;
  s.plugin = p;
  s.add(r);
  return s;
}

bool NodeNameSet::contains(std::string_view n) const noexcept {
  return all || std::binary_search(names.begin(), names.end(), n);
}

void default_normalize_score(std::span<std::int64_t> scores, std::int64_t max_score, bool reverse) noexcept {
  std::int64_t max_count = 0;
  for (auto s : scores) max_count = std::max(max_count, s);
  if (max_count == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), max_score);
    return;
  }
  for (auto& s : scores) {
    s = max_score * s / max_count;
    if (reverse) s = max_score - s;
  }
}

}  // namespace toysched::sched
