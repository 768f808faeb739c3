#include "toysched/serve/metrics.hpp"

#include "toysched/trace/tasks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace toysched::serve {
namespace {

// [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; label names without ':' and
// not starting with "__" (reserved for Prometheus itself).
bool valid_name(std::string_view s, bool label) {
  if (s.empty() || (label && s.starts_with("__"))) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Label values: backslash, double quote and newline are escaped.
void append_label_value(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

// HELP text: backslash and newline only (quotes are literal there).
void append_help(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

}  // namespace

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 32 bytes always hold a shortest double
  return std::string(buf, end);
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  if (count < 1 || start <= 0 || factor <= 1)
    throw std::invalid_argument("exponential_buckets: need count >= 1, start > 0, factor > 1");
  std::vector<double> b;
  b.reserve(std::size_t(count));
  for (int i = 0; i < count; ++i, start *= factor) b.push_back(start);
  return b;
}

std::vector<double> attempt_duration_buckets() { return exponential_buckets(0.001, 2, 15); }
std::vector<double> sli_duration_buckets() { return exponential_buckets(0.01, 2, 20); }
std::vector<double> plugin_duration_buckets() { return exponential_buckets(0.00001, 1.5, 20); }
std::vector<double> stage_duration_buckets() { return exponential_buckets(0.00001, 2, 20); }  // 10 µs to 5 s

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  for (std::size_t i = 0; i < bounds_.size(); ++i)
    if (std::isnan(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
      throw std::invalid_argument("histogram buckets must be strictly increasing");
  // An explicit +Inf bound would duplicate the implicit one.
  if (!bounds_.empty() && std::isinf(bounds_.back())) bounds_.pop_back(), counts_.pop_back();
}

void Histogram::observe(double v) noexcept {
  // Bucket `le` counts v <= le: the first bound not less than v.
  auto i = std::size_t(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  ++counts_[i];
  sum_ += v;
  ++count_;
}

namespace detail {

FamilyBase::FamilyBase(std::string name, std::string help, const char* type, std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), type_(type), labels_(std::move(labels)) {
  if (!valid_name(name_, false)) throw std::invalid_argument("invalid metric name \"" + name_ + "\"");
  for (const auto& l : labels_)
    if (!valid_name(l, true) || l == "le" || l == "quantile")
      throw std::invalid_argument("invalid label name \"" + l + "\" on " + name_);
}

std::vector<std::string> FamilyBase::key(std::initializer_list<std::string_view> values) const {
  if (values.size() != labels_.size())
    throw std::invalid_argument(name_ + ": expected " + std::to_string(labels_.size()) + " label values, got " +
                                std::to_string(values.size()));
  return {values.begin(), values.end()};
}

void FamilyBase::render_header(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  append_help(out, help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_;
  out += '\n';
}

void FamilyBase::render_labels(std::string& out, const std::vector<std::string>& values, std::string_view extra) const {
  if (values.empty() && extra.empty()) return;
  out += '{';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += labels_[i];
    out += "=\"";
    append_label_value(out, values[i]);
    out += '"';
  }
  if (!extra.empty()) {
    if (!values.empty()) out += ',';
    out += extra;
  }
  out += '}';
}

}  // namespace detail

template <>
void Family<Counter>::render(std::string& out) const {
  if (children_.empty()) return;
  render_header(out);
  for (const auto& [values, c] : children_) {
    out += name_;
    render_labels(out, values);
    out += ' ' + format_value(c.value()) + '\n';
  }
}

template <>
void Family<Gauge>::render(std::string& out) const {
  if (children_.empty()) return;
  render_header(out);
  for (const auto& [values, g] : children_) {
    out += name_;
    render_labels(out, values);
    out += ' ' + format_value(g.value()) + '\n';
  }
}

template <>
void Family<Histogram>::render(std::string& out) const {
  if (children_.empty()) return;
  render_header(out);
  for (const auto& [values, h] : children_) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      std::string le = "le=\"" + (i < h.bounds().size() ? format_value(h.bounds()[i]) : "+Inf") + '"';
      out += name_ + "_bucket";
      render_labels(out, values, le);
      out += ' ' + std::to_string(cumulative) + '\n';
    }
    out += name_ + "_sum";
    render_labels(out, values);
    out += ' ' + format_value(h.sum()) + '\n';
    out += name_ + "_count";
    render_labels(out, values);
    out += ' ' + std::to_string(h.count()) + '\n';
  }
}

void Registry::check_new(const std::string& name) const {
  for (const auto& f : families_)
    if (f->name() == name) throw std::invalid_argument("metric \"" + name + "\" registered twice");
}

CounterFamily& Registry::counter(std::string name, std::string help, std::vector<std::string> labels) {
  check_new(name);
  auto f = std::make_unique<CounterFamily>(std::move(name), std::move(help), "counter", std::move(labels), Counter{});
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

GaugeFamily& Registry::gauge(std::string name, std::string help, std::vector<std::string> labels) {
  check_new(name);
  auto f = std::make_unique<GaugeFamily>(std::move(name), std::move(help), "gauge", std::move(labels), Gauge{});
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

HistogramFamily& Registry::histogram(std::string name, std::string help, std::vector<double> buckets,
                                     std::vector<std::string> labels) {
  check_new(name);
  auto f = std::make_unique<HistogramFamily>(std::move(name), std::move(help), "histogram", std::move(labels),
                                             Histogram(std::move(buckets)));
  auto& ref = *f;
  families_.push_back(std::move(f));
  return ref;
}

void Registry::on_collect(std::function<void()> hook) { hooks_.push_back(std::move(hook)); }

std::string Registry::render() {
  for (auto& h : hooks_) h();
  std::string out;
  for (const auto& f : families_) f->render(out);
  return out;
}

void add_task_metrics(Registry& reg) {
  auto& waiting = reg.gauge("toysched_tasks_waiting", "Tasks parked at each await point now.", {"point"});
  auto& arrivals =
      reg.counter("toysched_await_arrivals_total", "Waits begun at each await point since start.", {"point"});
  // Every point from the start, so a rate() over a point that was never
  // reached reads 0 rather than "no data".
  std::vector<std::pair<Gauge*, Counter*>> series;
  for (const trace::Point& p : trace::known_points())
    series.emplace_back(&waiting.with({p.name}), &arrivals.with({p.name}));
  reg.on_collect([series = std::move(series)] {
    for (const trace::PointStats& s : trace::point_stats()) {
      auto [g, c] = series[s.point.id];
      g->set(s.waiting);
      c->inc(double(s.arrivals) - c->value());
    }
  });
}

}  // namespace toysched::serve
