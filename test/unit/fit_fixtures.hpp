// Fixtures of upstream's noderesources/fit_test.go that more than one test
// file transcribes cases from.
#pragma once

#include "builders.hpp"
#include "toysched/sched/node_info.hpp"

namespace toysched::test {

// TestEnoughRequests' node: makeAllocatableResources(10, 20, 32, 5, 20, 5):
// 10m cpu, 20 bytes of memory, 32 pods, example.com/aaa 5, 20 bytes of
// ephemeral storage, hugepages-2Mi 5. No pod on it.
inline sched::NodeInfo enough_requests_node() {
  return make_node()
      .cpu("10m")
      .memory("20")
      .pods(32)
      .extended("example.com/aaa", "5")
      .ephemeral_storage("20")
      .extended("hugepages-2Mi", "5")
      .info();
}

}  // namespace toysched::test
