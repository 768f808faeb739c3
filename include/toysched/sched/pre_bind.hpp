// What a plugin's Reserve leaves for the binding cycle (upstream's Reserve,
// PreBind and Unreserve points, for the one plugin that has them here,
// VolumeBinding):
//
//   schedule_one: the pod assumed on its node ─► Profile::reserve: each
//     plugin records what it assumes (VolumeBinding: the volumes chosen, the
//     claims to provision) and hands back a PreBind, or nothing to do
//   bind/<ns>/<pod>: each PreBind's run() ─► the POST binding
//     a run() that fails, or any later failure ─► unreserve() each, then
//     as a failed bind (forget, backoff, FailedScheduling)
//
// run() may wait long (VolumeBinding waits for the volume controller, up
// to bindTimeoutSeconds): it runs before the bind takes a slot, so other
// pods' binds go on meanwhile.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <string>

#include "toysched/sched/registry.hpp"

namespace toysched::kube {
class Api;
}
namespace toysched::trace {
class TaskScope;
}

namespace toysched::sched {

struct PreBindContext {
  kube::Api& api;
  trace::TaskScope& task;
  // Whether the pod (ns/name, same uid) is still there: a PreBind stops
  // waiting for a pod deleted meanwhile.
  std::function<bool()> pod_exists;
  // Asked right before each write is sent (the leader's bind gate).
  std::function<bool()> may_send;
};

class PreBind {
 public:
  virtual ~PreBind() = default;
  virtual PluginId plugin() const noexcept = 0;
  // The writes and the wait; "" when done, else why not (the pod is then
  // tried again after its backoff).
  virtual boost::asio::awaitable<std::string> run(PreBindContext ctx) = 0;
  // Undoes what Reserve assumed. Called once, whatever failed; never after
  // a binding that succeeded.
  virtual void unreserve() noexcept = 0;
};

}  // namespace toysched::sched
