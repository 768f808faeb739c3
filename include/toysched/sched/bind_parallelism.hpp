// The default of --bind-parallelism, in a header of its own: the command
// line (options.hpp) and the scheduler (SchedulerOptions) start from this
// one value, and the flags need not know the scheduler to use it.
#pragma once

namespace toysched::sched {

// Binds in flight at once; the scheduling cycle never waits on them. Each
// needs a connection of its own (HTTP/1.1), opened at sync and kept warm.
// 32: the ReplicaSet controller creates a 60-pod Deployment in batches of
// up to 29 pods; with 16, the 17th pod of a batch waited for a 201 (25-100
// ms under the burst) and lost its race to kube-scheduler (race drill).
inline constexpr int kDefaultBindParallelism = 32;

}  // namespace toysched::sched
