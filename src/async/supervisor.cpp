#include "toysched/async/supervisor.hpp"

#include "toysched/log/log.hpp"

namespace toysched::async {

std::string describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

void Supervisor::failed(const std::string& family, const std::string& task, Criticality c, std::exception_ptr e) {
  const std::string what = describe(e);
  ++failures_[family];
  if (c == Criticality::expendable) {
    TS_ERROR("Task failed", {"task", task}, {"err", what});
    return;
  }
  TS_ERROR("Critical task failed; the scheduler cannot go on", {"task", task}, {"err", what});
  if (dead_) return;  // the first death decides; the process is already on its way out
  dead_ = task + ": " + what;
  if (on_fatal_) on_fatal_(task, what);
}

}  // namespace toysched::async
