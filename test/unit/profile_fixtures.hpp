// What the tests that run the whole algorithm share: kube-scheduler's
// default profile (with the plugins this build has), made once, and the
// node pointers schedule_pod takes.
#pragma once

#include "toysched/sched/node_info.hpp"
#include "toysched/sched/profile.hpp"

#include <vector>

namespace toysched::test {

inline const sched::Profile& default_profile() {
  static const sched::Profile p = sched::Profile::make_default();
  return p;
}

inline std::vector<const sched::NodeInfo*> node_ptrs(const std::vector<sched::NodeInfo>& nodes) {
  std::vector<const sched::NodeInfo*> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(&n);
  return out;
}

}  // namespace toysched::test
