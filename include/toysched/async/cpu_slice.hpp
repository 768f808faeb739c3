// The loop's time slice on the CPU. toy-scheduler is one thread that sleeps
// until a watch event or a response arrives, then works for tens of
// microseconds. On a busy control-plane node it shares the run queue with
// the API server's and other components' threads, and with the kernel's
// default slice (1.4 ms each on the lab's kernel) a woken loop can wait tens of milliseconds
// before it runs: measured on the lab during the race drill, up to 50 ms,
// while kube-scheduler's goroutines, spread over threads, were picked sooner.
//
// Linux's EEVDF scheduler (6.12 and later) lets a task ask for a shorter
// slice (sched_setattr, sched_runtime on SCHED_OTHER; no privilege needed).
// A shorter slice gives the task an earlier virtual deadline when it wakes,
// so it is picked sooner; it does not give it more CPU than its fair share.
#pragma once

#include <chrono>
#include <string>

namespace toysched::async {

// Ask the kernel for this slice for the calling thread and the threads it
// starts later. "" when done; otherwise why not (an older kernel, a seccomp
// filter): the scheduler runs on with the kernel's default.
std::string request_cpu_slice(std::chrono::microseconds slice);

// The calling thread's slice as the kernel reports it (its default, about
// 1-3 ms, unless one was asked for); zero when it cannot say.
std::chrono::nanoseconds cpu_slice();

}  // namespace toysched::async
