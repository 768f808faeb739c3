#include "toysched/async/cpu_slice.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace toysched::async {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h). glibc
// 2.36 has no wrapper for sched_setattr, so the syscall is made directly.
struct SchedAttr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime;  // SCHED_OTHER under EEVDF: the requested slice, ns
  std::uint64_t sched_deadline;
  std::uint64_t sched_period;
  std::uint32_t sched_util_min;
  std::uint32_t sched_util_max;
};

}  // namespace

std::string request_cpu_slice(std::chrono::microseconds slice) {
  SchedAttr now{};
  if (syscall(SYS_sched_getattr, 0, &now, sizeof now, 0) != 0)
    return std::string("sched_getattr: ") + std::strerror(errno);
  if (now.sched_policy != SCHED_OTHER) return "the thread's policy is not SCHED_OTHER: left as it is";
  SchedAttr want = now;
  want.size = sizeof want;
  want.sched_flags = 0;
  want.sched_runtime = static_cast<std::uint64_t>(std::chrono::nanoseconds(slice).count());
  if (syscall(SYS_sched_setattr, 0, &want, 0) != 0) return std::string("sched_setattr: ") + std::strerror(errno);
  // Kernels before EEVDF's custom slices accept the call and ignore the
  // runtime: read it back to know.
  if (cpu_slice() != std::chrono::nanoseconds(slice))
    return "the kernel ignores a requested slice (EEVDF custom slices came with Linux 6.12)";
  return {};
}

std::chrono::nanoseconds cpu_slice() {
  SchedAttr a{};
  if (syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) != 0) return {};
  return std::chrono::nanoseconds(a.sched_runtime);
}

}  // namespace toysched::async
