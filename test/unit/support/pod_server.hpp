// A model of the API server's pods for the scripted transport: objects with
// resourceVersions, the history a watch replays from a resourceVersion (410
// below the compaction point), and the writes the scheduler makes: the
// binding subresource (409 when already bound or another UID), status
// patches (422 on another UID; status.nominatedNodeName set or cleared),
// deletes with a UID precondition.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scripted_transport.hpp"

namespace toysched::testing {

// The string value that follows `key` ("\"uid\":") in a compact JSON body
// the scheduler wrote, from `from` on; "" when absent.
std::string string_after(const std::string& body, const std::string& key, std::size_t from = 0);

struct ServerPod {
  std::string ns, name, uid, node;
  std::uint64_t rv = 0;
  int bindings = 0;         // POST binding accepted
  int patches = 0;          // status patches applied
  bool disrupted = false;   // a DisruptionTarget condition was patched in
  std::string nominated{};  // status.nominatedNodeName
};

class PodServer {
 public:
  // The pod's JSON as a watch or list carries it.
  static std::string pod_json(const ServerPod& p);

  ServerPod& add(const std::string& ns, const std::string& name, const std::string& uid, const std::string& node = "");
  void modify(const std::string& key);  // a new resourceVersion, nothing else
  void remove(const std::string& key);
  // Watches from below the current resourceVersion are answered 410 from now.
  void compact() { compacted_ = rv_; }

  const std::map<std::string, ServerPod>& pods() const noexcept { return pods_; }
  ServerPod* find(const std::string& key);
  std::uint64_t rv() const noexcept { return rv_; }
  // PodScheduled=False patches that reached a pod already bound: stale
  // writes that would mark it unschedulable.
  int stale_false_patches() const noexcept { return stale_false_patches_; }
  // Pods deleted without a DisruptionTarget condition patched in first.
  int deleted_undisrupted() const noexcept { return deleted_undisrupted_; }

  // GET /api/v1/pods (one page) and watches of it.
  Reply list() const;
  StreamScript watch(const std::string& target, StreamScript::End end) const;

  // The scheduler's writes, as the API server answers them.
  Reply bind(const kube::HttpRequest& req);
  Reply get(const kube::HttpRequest& req) const;
  Reply patch_status(const kube::HttpRequest& req);
  Reply remove_with_precondition(const kube::HttpRequest& req);

  // Routes every verb above on `t`.
  void serve_on(ScriptedTransport& t);

 private:
  struct Event {
    std::uint64_t rv;
    std::string type;
    std::string object;
  };
  void record(const std::string& type, const ServerPod& p);
  // ns/name from /api/v1/namespaces/NS/pods/NAME[/sub].
  static std::string key_of(const std::string& target);

  std::map<std::string, ServerPod> pods_;  // by ns/name
  std::vector<Event> history_;
  std::uint64_t rv_ = 100;
  std::uint64_t compacted_ = 0;
  int stale_false_patches_ = 0;
  int deleted_undisrupted_ = 0;
};

}  // namespace toysched::testing
