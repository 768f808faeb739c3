// What happens when a task ends with an exception: the one completion
// handler every co_spawn in the program uses, instead of asio::detached
// (which drops the exception) or a handler of its own.
//
//   co_spawn(ex, run_scheduling_loop(), supervisor.handler("schedule", Criticality::critical));
//
// - Every stray exception is logged with the task's name and counted
//   (toysched_task_failures_total{task}).
// - A critical task (the scheduling loop, an informer, the lease) that ends
//   with an exception is a dead scheduler, as a panicking goroutine is a dead
//   Go program: /healthz fails from then on and the `on_fatal` hook ends the
//   process with a non-zero status, so that a standby takes over. A bind or
//   an HTTP session that throws is logged and counted; the rest goes on.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace toysched::async {

enum class Criticality { critical, expendable };

class Supervisor {
 public:
  // Called once, for the first critical task that dies: what to do about it
  // (main stops the loop and exits non-zero).
  using FatalHook = std::function<void(const std::string& task, const std::string& what)>;
  void set_on_fatal(FatalHook hook) { on_fatal_ = std::move(hook); }

  // A completion handler for asio::co_spawn: (std::exception_ptr) -> void.
  auto handler(std::string task, Criticality c) {
    return [this, task = std::move(task), c](std::exception_ptr e) {
      if (e) failed(task, c, e);
    };
  }
  // The same for a task family (bind/...): counted under `family`, logged
  // with the full `task` name.
  auto handler(std::string family, std::string task, Criticality c) {
    return [this, family = std::move(family), task = std::move(task), c](std::exception_ptr e) {
      if (e) failed(family, task, c, e);
    };
  }

  // "schedule: <what>" once a critical task has died; /healthz reports it.
  const std::optional<std::string>& dead() const noexcept { return dead_; }
  // Stray exceptions by task (family) name, for /metrics.
  const std::map<std::string, std::uint64_t>& failures() const noexcept { return failures_; }

  // Records a failure of `task` (what() of the exception, or a note for a
  // non-standard one); public so that tests and non-coroutine code can use it.
  void failed(const std::string& task, Criticality c, std::exception_ptr e) { failed(task, task, c, e); }
  void failed(const std::string& family, const std::string& task, Criticality c, std::exception_ptr e);

 private:
  FatalHook on_fatal_;
  std::optional<std::string> dead_;
  std::map<std::string, std::uint64_t> failures_;
};

// what() of an exception_ptr, or a note when it is not a std::exception.
std::string describe(std::exception_ptr e);

}  // namespace toysched::async
