// Metrics in the Prometheus text format (version 0.0.4), the small part of
// client_golang the scheduler needs: counters and gauges with labels, and
// histograms with fixed buckets.
//
//   serve::Registry reg;                       // owned by main, passed down
//   auto& attempts = reg.counter("scheduler_schedule_attempts_total",
//       "Number of attempts to schedule pods, by the result.", {"result", "profile"});
//   serve::Counter& scheduled = attempts.with({"scheduled", "toy-scheduler"});
//   scheduled.inc();                           // hot path: a double add
//
// Single-threaded like the rest of the program: values are plain doubles.
// with() looks the child up by its label values (allocating a key): call it
// once and keep the reference, which stays valid for the registry's life.
// Values computed from live state (queue lengths, tasks per await point) are
// set from an on_collect() hook, run at the start of every render().
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace toysched::serve {

// client_golang's ExponentialBuckets: start, start*factor, ... (count bounds).
std::vector<double> exponential_buckets(double start, double factor, int count);
// kube-scheduler's: scheduler_scheduling_attempt_duration_seconds (1 ms x2, 15)
// scheduler_pod_scheduling_sli_duration_seconds (10 ms x2, 20) and
// scheduler_plugin_execution_duration_seconds (10 µs x1.5, 20).
std::vector<double> attempt_duration_buckets();
std::vector<double> sli_duration_buckets();
std::vector<double> plugin_duration_buckets();
std::vector<double> stage_duration_buckets();

class Counter {
 public:
  // Counters only go up; a negative increment is a bug and is ignored.
  void inc(double v = 1) noexcept {
    if (v > 0) value_ += v;
  }
  double value() const noexcept { return value_; }

 private:
  double value_ = 0;
};

class Gauge {
 public:
  void set(double v) noexcept { value_ = v; }
  void inc(double v = 1) noexcept { value_ += v; }
  void dec(double v = 1) noexcept { value_ -= v; }
  double value() const noexcept { return value_; }

 private:
  double value_ = 0;
};

class Histogram {
 public:
  // `bounds`: strictly increasing upper bounds; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v) noexcept;
  const std::vector<double>& bounds() const noexcept { return bounds_; }
  // Per bucket, not cumulative; the last entry is the +Inf bucket.
  const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }
  double sum() const noexcept { return sum_; }
  std::uint64_t count() const noexcept { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

namespace detail {
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, const char* type, std::vector<std::string> labels);
  virtual ~FamilyBase() = default;
  virtual void render(std::string& out) const = 0;
  const std::string& name() const noexcept { return name_; }

 protected:
  // Checks the arity (a mismatch is a bug: throws std::invalid_argument).
  std::vector<std::string> key(std::initializer_list<std::string_view> values) const;
  void render_header(std::string& out) const;
  // `name{a="x",b="y"` plus `extra` (e.g. le="0.5") and the closing brace;
  // nothing at all without labels.
  void render_labels(std::string& out, const std::vector<std::string>& values, std::string_view extra = {}) const;

  std::string name_, help_;
  const char* type_;
  std::vector<std::string> labels_;
};
}  // namespace detail

// All the series of one metric name, one child per combination of label values.
template <class M>
class Family final : public detail::FamilyBase {
 public:
  Family(std::string name, std::string help, const char* type, std::vector<std::string> labels, M prototype)
      : FamilyBase(std::move(name), std::move(help), type, std::move(labels)), prototype_(std::move(prototype)) {
    // A family without labels has its one series from the start, so it is
    // exported as 0 before anything happens (as client_golang does).
    if (labels_.empty()) children_.emplace(std::vector<std::string>{}, prototype_);
  }
  // The child with these label values, created at zero on first use.
  M& with(std::initializer_list<std::string_view> values) {
    auto k = key(values);
    auto it = children_.find(k);
    if (it == children_.end()) it = children_.emplace(std::move(k), prototype_).first;
    return it->second;
  }
  void render(std::string& out) const override;

 private:
  M prototype_;
  std::map<std::vector<std::string>, M> children_;  // map nodes never move: references stay valid
};

// Defined in metrics.cpp, one per kind of metric.
template <>
void Family<Counter>::render(std::string& out) const;
template <>
void Family<Gauge>::render(std::string& out) const;
template <>
void Family<Histogram>::render(std::string& out) const;

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

class Registry {
 public:
  static constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

  // Names and label names must be valid Prometheus names and a name may be
  // registered once: mistakes are bugs and throw std::invalid_argument.
  CounterFamily& counter(std::string name, std::string help, std::vector<std::string> labels = {});
  GaugeFamily& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  HistogramFamily& histogram(std::string name, std::string help, std::vector<double> buckets,
                             std::vector<std::string> labels = {});

  // Runs at the start of every render(), to refresh gauges from live state.
  void on_collect(std::function<void()> hook);

  // Every family in registration order, its series sorted by label values.
  std::string render();

 private:
  void check_new(const std::string& name) const;
  std::vector<std::unique_ptr<detail::FamilyBase>> families_;
  std::vector<std::function<void()>> hooks_;
};

// Exports the task table (src/trace): toysched_tasks_waiting{point} (tasks
// parked at each await point now) and toysched_await_arrivals_total{point}
// (waits begun there), refreshed at every render.
void add_task_metrics(Registry& reg);

// process_cpu_seconds_total, process_open_fds, process_max_fds,
// process_{resident,virtual}_memory_bytes, process_virtual_memory_max_bytes,
// process_start_time_seconds, process_network_{receive,transmit}_bytes_total:
// client_golang's names, from /proc at each render.
void add_process_metrics(Registry& reg);

// Prometheus text-format number: shortest round-trip, +Inf, -Inf, NaN.
std::string format_value(double v);

}  // namespace toysched::serve
