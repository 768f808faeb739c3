#include "toysched/sched/explain.hpp"

#include "toysched/json/writer.hpp"
#include "toysched/sched/algorithm.hpp"

#include <algorithm>

namespace toysched::sched {

void DecisionTrace::clear() {
  pre_filter_rejected_by = PluginId::none;
  pre_filter_reason.clear();
  rejected.clear();
  left_out = 0;
  feasible.clear();
  scorers.clear();
  weights.clear();
  raw_columns.clear();
  normalized_columns.clear();
  values.clear();
}

DecisionTrace::Column DecisionTrace::add_column(std::span<const std::int64_t> column) {
  Column c;
  if (column.empty()) return c;
  c.constant = column.front();
  // Reading a column the decision just wrote is cheap; writing it to a
  // trace (cold memory, most of the time) is not.
  if (std::all_of(column.begin(), column.end(), [v = c.constant](std::int64_t x) { return x == v; })) return c;
  c.at = static_cast<std::uint32_t>(values.size());
  values.insert(values.end(), column.begin(), column.end());
  return c;
}

void DecisionTrace::add_normalized(std::span<const std::int64_t> column) {
  const std::size_t k = normalized_columns.size();
  if (k < raw_columns.size() && raw_columns[k].at != Column::kConstant) {
    const auto raw = values.begin() + raw_columns[k].at;
    if (std::equal(column.begin(), column.end(), raw, raw + static_cast<std::ptrdiff_t>(column.size()))) {
      normalized_columns.push_back(raw_columns[k]);
      return;
    }
  }
  normalized_columns.push_back(add_column(column));
}

DecisionTrace* ExplainRecorder::begin(const kube::Pod& pod, int attempt, int nodes) {
  if (spare_) {
    current_ = std::move(*spare_);
    spare_.reset();
  }
  current_.pod.assign(pod.ns).append("/").append(pod.name);
  current_.uid = pod.uid;
  current_.profile = pod.scheduler_name;
  current_.attempt = attempt;
  current_.at = std::chrono::system_clock::now();
  current_.nodes = nodes;
  current_.trace.clear();
  return &current_.trace;
}

namespace {

const char* result_name(const Decision& d, bool dry_run) {
  switch (d.status) {
    case Decision::Status::scheduled:
      return dry_run ? "dry-run" : "scheduled";
    case Decision::Status::unschedulable:
      return "unschedulable";
    case Decision::Status::unresolvable:
      return "unresolvable";
    case Decision::Status::error:
      break;
  }
  return "error";
}

}  // namespace

void ExplainRecorder::finish(const Decision& d, bool dry_run) {
  current_.result = result_name(d, dry_run);
  current_.node = d.node;
  current_.message = d.message;
  current_.evaluated = d.evaluated_nodes;
  if (!keeps()) return;
  forget(current_.pod);
  rows_ += current_.trace.rows();
  order_.push_back(std::move(current_));
  current_ = Explanation{};
  by_pod_.emplace(order_.back().pod, std::prev(order_.end()));
  evict();
}

void ExplainRecorder::evict() {
  // The newest stays whatever its size: it is the one most likely asked for.
  while (rows_ > budget_ && order_.size() > 1) {
    by_pod_.erase(order_.front().pod);
    rows_ -= order_.front().trace.rows();
    if (!spare_) spare_ = std::move(order_.front());
    order_.pop_front();
  }
}

const Explanation* ExplainRecorder::find(std::string_view pod) const {
  auto it = by_pod_.find(pod);
  return it == by_pod_.end() ? nullptr : &*it->second;
}

void ExplainRecorder::forget(std::string_view pod) {
  auto it = by_pod_.find(pod);
  if (it == by_pod_.end()) return;
  auto entry = it->second;
  by_pod_.erase(it);  // before the string its key views goes
  rows_ -= entry->trace.rows();
  order_.erase(entry);
}

std::string explain_json(const Explanation& e) {
  const DecisionTrace& t = e.trace;
  json::Writer w;
  w.object().field("pod", e.pod).field("uid", e.uid).field("profile", e.profile).field("attempt", e.attempt);
  w.field("time", kube::format_micro_time(e.at)).field("result", e.result);
  if (!e.node.empty()) w.field("node", e.node);
  if (!e.message.empty()) w.field("message", e.message);
  w.field("nodes", e.nodes).field("evaluated", e.evaluated);
  w.field("feasible", static_cast<std::int64_t>(t.feasible.size()));
  if (t.pre_filter_rejected_by != PluginId::none) {
    w.field("preFilterRejectedBy", plugin_name(t.pre_filter_rejected_by));
    w.field("preFilterReason", t.pre_filter_reason);
  }
  if (t.left_out != 0) w.field("leftOutByPreFilter", t.left_out);
  w.key("rejected").array();
  for (const auto& r : t.rejected) {
    w.object().field("node", r.node()).field("plugin", plugin_name(r.plugin)).field("code", code_name(r.code));
    w.field("reason", r.reason).end();
  }
  w.end();
  w.key("scores").array();
  for (std::size_t i = 0; i < t.feasible.size(); ++i) {
    w.object().field("node", t.feasible[i]);
    if (t.scored()) {
      w.key("plugins").array();
      for (std::size_t k = 0; k < t.scorers.size(); ++k) {
        w.object().field("plugin", plugin_name(t.scorers[k])).field("raw", t.raw(i, k));
        w.field("normalized", t.normalized(i, k)).field("weight", t.weights[k]).field("weighted", t.weighted(i, k));
        w.end();
      }
      w.end().field("total", t.total(i));
    }
    w.end();
  }
  w.end();
  w.end();
  return std::move(w).str();
}

namespace {

// Rows of cells, each column padded to its widest cell, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string explain_text(const Explanation& e) {
  const DecisionTrace& t = e.trace;
  std::string out = "Pod " + e.pod + " (profile " + e.profile + "), attempt " + std::to_string(e.attempt) + " at " +
                    kube::format_micro_time(e.at) + ": " + e.result;
  if (!e.node.empty()) out += " on " + e.node;
  out += "\n";
  if (!e.message.empty()) out += e.message + "\n";
  out += std::to_string(e.nodes) + " nodes, " + std::to_string(e.evaluated) + " filtered, " +
         std::to_string(t.feasible.size()) + " feasible";
  if (t.left_out != 0) out += ", " + std::to_string(t.left_out) + " left out by a PreFilter";
  out += "\n";
  if (t.pre_filter_rejected_by != PluginId::none) {
    out += "PreFilter " + std::string(plugin_name(t.pre_filter_rejected_by)) +
           " rejected every node: " + t.pre_filter_reason + "\n";
  }
  if (!t.rejected.empty()) {
    std::vector<std::vector<std::string>> rows{{"NODE", "FILTER", "REASON"}};
    for (const auto& r : t.rejected)
      rows.push_back({std::string(r.node()), std::string(plugin_name(r.plugin)), r.reason});
    out += "\n" + table(rows);
  }
  if (t.feasible.size() == 1) {
    out += "\nOne feasible node: " + std::string(t.feasible.front()) + ", chosen without scoring.\n";
  }
  if (!t.scored()) return out;
  std::vector<std::vector<std::string>> rows{{"NODE"}};
  for (std::size_t k = 0; k < t.scorers.size(); ++k) {
    rows[0].push_back(std::string(plugin_name(t.scorers[k])) + " x" + std::to_string(t.weights[k]));
  }
  rows[0].push_back("TOTAL");
  for (std::size_t i = 0; i < t.feasible.size(); ++i) {
    std::vector<std::string> row{(t.feasible[i] == e.node ? "* " : "  ") + std::string(t.feasible[i])};
    for (std::size_t k = 0; k < t.scorers.size(); ++k) {
      row.push_back(std::to_string(t.weighted(i, k)) + " (" + std::to_string(t.raw(i, k)) + " -> " +
                    std::to_string(t.normalized(i, k)) + ")");
    }
    row.push_back(std::to_string(t.total(i)));
    rows.push_back(std::move(row));
  }
  out += "\nScores: weighted (raw -> normalized); * chosen\n" + table(rows);
  return out;
}

}  // namespace toysched::sched
