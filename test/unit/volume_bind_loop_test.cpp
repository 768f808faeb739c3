// The binding cycle of pods with WaitForFirstConsumer claims (VolumeBinding's
// PreBind, pre_bind.hpp) against the scripted transport, every await point
// failed in turn (support/every_point.hpp), and, in a second loop, the bind
// gate closed at each point in turn, as bind_loop_test.cpp does for binds
// without volumes.
//
// Two pods are decided at once: p1 onto n1, its claim data-1 given the local
// volume pv-1 there (PATCH persistentvolumes/pv-1: the claimRef), and p2
// onto n2, its claim data-2 to be provisioned (PATCH namespaces/default/
// persistentvolumeclaims/data-2: the selected node). The server applies a
// PATCH whose resourceVersion precondition holds (else 409, as the second
// send of a replay gets) and answers the object at a new resourceVersion.
// Playing the volume controller, a few loop turns after each PATCH it
// applied (and never after one it refused or never saw), it shows the
// informers (the Storage double) the written object, then binds the claim
// (provisioning a volume for data-2) and shows them that. Whatever fails,
// each pod ends bound once (its POST binding 201) or as bind_loop_test.cpp
// says (a 409 to a POST sent once: done; else back in backoff), its
// assumption forgotten unless bound; no POST binding is sent before the
// informers show the pod's claim bound; every VolumeAssumptions entry is
// released; a pod whose PATCH failed is in backoff, never bound, and told
// `running PreBind plugin "VolumeBinding": ...`; no PATCH or POST is sent
// after the gate closed, and no FailedScheduling comes from a scheduler
// whose gate closed; nothing is left holding a slot, the gate or a frame.
// A last case: a controller that never binds, and the bind timeout.
#include <doctest/doctest.h>

#include <boost/asio/post.hpp>

#include <chrono>
#include <map>
#include <string>

#include "builders.hpp"
#include "profile_fixtures.hpp"
#include "storage_fixture.hpp"
#include "support/binder_world.hpp"
#include "support/every_point.hpp"
#include "toysched/json/writer.hpp"
#include "toysched/sched/plugins/volume_binding.hpp"
#include "toysched/trace/tasks.hpp"

using namespace toysched;
using namespace std::chrono_literals;
using testing::BinderWorld;
using testing::Injection;
using testing::Reply;
namespace http = boost::beast::http;

namespace {

constexpr std::int64_t kGi = std::int64_t{1} << 30;
constexpr int kLag = 2;  // loop turns between the controller's steps
constexpr const char* kPreBindFailed = "running PreBind plugin \"VolumeBinding\": ";

struct PodCase {
  const char* key;
  const char* claim;  // in "default"
  const char* node;
  const char* write;  // what its PATCH's path ends with
};
constexpr PodCase kPods[] = {{"default/p1", "data-1", "n1", "/persistentvolumes/pv-1"},
                             {"default/p2", "data-2", "n2", "/persistentvolumeclaims/data-2"}};

kube::NodeSelectorTerm on_host(const std::string& node) {
  return test::term().expr("kubernetes.io/hostname", "In", {node});
}

// Class "local" (no provisioner) has pv-1 on n1; class "fast" provisions.
test::Storage storage() {
  test::Storage s;
  s.add_class("local", true);
  s.add_class("fast", true).provisioner = "lab.toysched.dev/hostpath";
  for (const char* cls : {"local", "fast"}) {
    kube::PersistentVolumeClaim& c = s.add_claim(cls == std::string("local") ? "data-1" : "data-2");
    c.uid = "uid-" + c.name;
    c.resource_version = "10";
    c.storage_class_name = cls;
    c.storage_request = kGi;
    c.access_modes = kube::kReadWriteOnce;
  }
  kube::PersistentVolume& v = s.add_volume("pv-1", {on_host("n1")});
  v.uid = "uid-pv-1";
  v.resource_version = "5";
  v.storage_class_name = "local";
  v.capacity = 10 * kGi;
  v.access_modes = kube::kReadWriteOnce;
  v.available = true;
  return s;
}

std::string object_json(const char* kind, const std::string& ns, const std::string& name, const std::string& uid,
                        const std::string& rv) {
  json::Writer w;
  w.object().field("kind", kind).field("apiVersion", "v1").key("metadata").object().field("name", name);
  if (!ns.empty()) w.field("namespace", ns);
  w.field("uid", uid).field("resourceVersion", rv).end();
  return std::move(w.end()).str();
}

Reply conflict(const std::string& resource, const std::string& name) {
  return testing::status_reply(409, "Conflict",
                               "Operation cannot be fulfilled on " + resource + " \"" + name +
                                   "\": the object has been modified; please apply your changes to the latest "
                                   "version and try again");
}

// The API server's volumes and claims, and the volume controller.
class VolumeServer {
 public:
  VolumeServer(BinderWorld& w, test::Storage& informers, bool controller_binds)
      : w_(w), informers_(informers), binds_(controller_binds) {
    volumes_.insert(informers.volumes.begin(), informers.volumes.end());
    claims_.insert(informers.claims.begin(), informers.claims.end());
    w.fake.on(http::verb::patch, "/api/v1/persistentvolumes/*",
              [this](const kube::HttpRequest& r) { return patch_volume(r); });
    w.fake.on(http::verb::patch, "/api/v1/namespaces/*/persistentvolumeclaims/*",
              [this](const kube::HttpRequest& r) { return patch_claim(r); });
  }
  // The transport's sequence when the informers first showed the claim
  // ("ns/name") bound; 0: never.
  std::uint64_t bound_at(const std::string& claim) const {
    auto it = bound_at_.find(claim);
    return it == bound_at_.end() ? 0 : it->second;
  }
  int bindings() const noexcept { return static_cast<int>(bound_at_.size()); }
  bool binds() const noexcept { return binds_; }

 private:
  Reply patch_volume(const kube::HttpRequest& req) {
    const std::string name = req.target.substr(req.target.rfind('/') + 1);
    auto it = volumes_.find(name);
    if (it == volumes_.end()) return testing::status_reply(404, "NotFound", "persistentvolume not found");
    kube::PersistentVolume& pv = it->second;
    if (testing::string_after(req.body, "\"resourceVersion\":") != pv.resource_version)
      return conflict("persistentvolumes", name);
    const auto ref = req.body.find("\"claimRef\":");
    if (ref == std::string::npos) return testing::status_reply(422, "Invalid", "no claimRef in the patch");
    pv.claim_ref = kube::ClaimRef{testing::string_after(req.body, "\"namespace\":", ref),
                                  testing::string_after(req.body, "\"name\":", ref),
                                  testing::string_after(req.body, "\"uid\":", ref)};
    pv.resource_version = next_rv();
    later([this, pv] {
      informers_.volumes[pv.name] = pv;
      if (binds_) later([this, pv] { bind(pv.claim_ref->ns + "/" + pv.claim_ref->name, pv.name); });
    });
    return Reply{200, object_json("PersistentVolume", "", pv.name, pv.uid, pv.resource_version)};
  }

  Reply patch_claim(const kube::HttpRequest& req) {
    const std::string prefix = "/api/v1/namespaces/", name = req.target.substr(req.target.rfind('/') + 1);
    const std::string key =
        req.target.substr(prefix.size(), req.target.find('/', prefix.size()) - prefix.size()) + "/" + name;
    auto it = claims_.find(key);
    if (it == claims_.end()) return testing::status_reply(404, "NotFound", "persistentvolumeclaim not found");
    kube::PersistentVolumeClaim& c = it->second;
    if (testing::string_after(req.body, "\"resourceVersion\":") != c.resource_version)
      return conflict("persistentvolumeclaims", name);
    c.selected_node = testing::string_after(req.body, "\"volume.kubernetes.io/selected-node\":");
    c.resource_version = next_rv();
    later([this, key, c] {
      informers_.claims[key] = c;
      if (binds_) later([this, key] { provision(key); });
    });
    return Reply{200, object_json("PersistentVolumeClaim", c.ns, c.name, c.uid, c.resource_version)};
  }

  // The provisioner: a volume on the selected node, bound to the claim.
  void provision(const std::string& key) {
    const kube::PersistentVolumeClaim& c = claims_.at(key);
    kube::PersistentVolume& pv = volumes_["pvc-" + c.uid];
    pv.name = "pvc-" + c.uid;
    pv.uid = "uid-" + pv.name;
    pv.has_node_affinity = true;
    pv.node_affinity = {on_host(*c.selected_node)};
    pv.storage_class_name = *c.storage_class_name;
    pv.capacity = c.storage_request;
    pv.access_modes = c.access_modes;
    pv.claim_ref = kube::ClaimRef{c.ns, c.name, c.uid};
    bind(key, pv.name);
  }

  // The PV controller: volume and claim bound to each other.
  void bind(const std::string& claim, const std::string& volume) {
    kube::PersistentVolume& pv = volumes_.at(volume);
    kube::PersistentVolumeClaim& c = claims_.at(claim);
    pv.available = false;
    pv.resource_version = next_rv();
    c.volume_name = volume;
    c.bind_completed = true;
    c.resource_version = next_rv();
    informers_.volumes[volume] = pv;
    informers_.claims[claim] = c;
    bound_at_.emplace(claim, w_.fake.seq());
  }

  // f, kLag loop turns from now.
  void later(std::function<void()> f, int turns = kLag) {
    if (turns == 0) return f();
    boost::asio::post(w_.io, [this, f = std::move(f), turns]() mutable { later(std::move(f), turns - 1); });
  }
  std::string next_rv() { return std::to_string(++rv_); }

  BinderWorld& w_;
  test::Storage& informers_;
  bool binds_;
  std::map<std::string, kube::PersistentVolume, std::less<>> volumes_;
  std::map<std::string, kube::PersistentVolumeClaim, std::less<>> claims_;
  std::uint64_t rv_ = 1000;
  std::map<std::string, std::uint64_t> bound_at_;
};

struct VolumeWorld {
  test::Storage objects = storage();  // the informers' view; declared first, it outlives the binds' frames
  BinderWorld w;
  VolumeServer server;
  std::chrono::milliseconds timeout;
  std::vector<sched::NodeInfo> nodes = {test::make_node().name("n1").label("kubernetes.io/hostname", "n1").info(),
                                        test::make_node().name("n2").label("kubernetes.io/hostname", "n2").info()};

  explicit VolumeWorld(bool controller_binds = true, std::chrono::milliseconds bind_timeout = 600s)
      : server(w, objects, controller_binds), timeout(bind_timeout) {
    w.server.add("default", "p1", "u1");
    w.server.add("default", "p2", "u2");
  }

  // The scheduling cycle: VolumeBinding's PreFilter, Filter and Reserve on
  // the node, then the bind with the PreBind Reserve handed back.
  void decide(const PodCase& c) {
    kube::Pod p = w.pod(c.key);
    p.claims = {c.claim};
    sched::VolumeBinding plugin(timeout);
    const auto ptrs = test::node_ptrs(nodes);
    sched::Cluster cluster{ptrs};
    cluster.objects = &objects;
    REQUIRE(plugin.pre_filter(p, cluster).kind == sched::PreFilterResult::Kind::run);
    const sched::NodeInfo& ni = nodes[c.node == std::string("n1") ? 0 : 1];
    REQUIRE(plugin.find(ni.node, nullptr).ok());
    std::vector<std::unique_ptr<sched::PreBind>> work;
    work.push_back(plugin.reserve(p, ni, cluster));
    REQUIRE(work.back() != nullptr);
    w.decide(c.key, c.node, std::move(work));
  }

  // Decides both pods and runs the loop dry.
  void run() {
    for (const PodCase& c : kPods) decide(c);
    REQUIRE(w.run_until([&] { return w.stats.binds_in_flight == 0; }));
    w.finish();
  }

  const testing::ServerPod& pod(const PodCase& c) { return *w.server.find(c.key); }
  std::vector<testing::ScriptedTransport::Sent> posts(const PodCase& c) {
    return w.fake.sent_matching(http::verb::post, pod(c).name + "/binding");
  }
};

std::uint64_t arrivals(trace::Point p) { return trace::point_stats()[p.id].arrivals; }

void check_world(VolumeWorld& v) {
  for (const PodCase& c : kPods) {
    INFO("pod " << c.key);
    testing::check_pod(v.w, c.key, c.node);
    const std::uint64_t bound_at = v.server.bound_at(std::string("default/") + c.claim);
    for (const auto& post : v.posts(c)) {  // never before the informers showed its claim bound
      CHECK(bound_at != 0);
      CHECK(bound_at < post.sent_seq);
    }
  }
  CHECK(v.objects.assumed.size() == 0);
  // The controller bound a claim for each PATCH the server applied, no other.
  int applied = 0;
  for (const auto& s : v.w.fake.sent_matching(http::verb::patch, "/persistentvolume")) applied += s.status == 200;
  CHECK(v.server.bindings() == (v.server.binds() ? applied : 0));
  testing::check_idle(v.w);
}

// A pod whose PreBind failed: back in backoff, its assumption forgotten,
// never bound; its FailedScheduling message ("" for none).
std::string prebind_failure(VolumeWorld& v, const PodCase& c) {
  const std::string uid = v.pod(c).uid;
  CHECK(v.w.where(uid) == "backoff");
  CHECK_FALSE(v.w.cache.contains(uid));
  CHECK(v.posts(c).empty());
  const std::string* why = v.w.events.last_failure(uid);
  CHECK(why != nullptr);
  return why != nullptr ? *why : std::string();
}

// The pod whose PATCH failed at `point` (if one did): its PreBind failed,
// and it was told so.
void check_failed_write(VolumeWorld& v, std::size_t point) {
  const std::string& what = v.w.fake.point_log().at(point - 1);
  for (const PodCase& c : kPods) {
    if (what.rfind("PATCH ", 0) != 0 || !what.ends_with(c.write)) continue;
    INFO("pod " << c.key << ", its PATCH failed");
    CHECK(prebind_failure(v, c).starts_with(kPreBindFailed));
  }
}

// The scenario; `gate_closes_at` closes the bind gate at that await point.
std::size_t run(const std::optional<Injection>& inject, std::size_t gate_closes_at = 0) {
  const auto waits_before = arrivals(trace::points::bind_volume_wait);
  VolumeWorld v;
  if (inject) v.w.fake.fail_at(inject->point, inject->fault);
  if (gate_closes_at != 0) v.w.fake.at(gate_closes_at, [&] { v.w.gate_open = false; });
  v.run();
  check_world(v);
  if (inject) {
    CHECK(v.w.fake.fault_fired());
    check_failed_write(v, inject->point);
  }
  if (!inject && gate_closes_at == 0) {
    CHECK(v.w.stats.binds_ok == 2);
    CHECK(arrivals(trace::points::bind_volume_wait) > waits_before);  // the PreBinds waited for the controller
  }
  if (gate_closes_at != 0) {
    for (const auto& s : v.w.fake.sent()) {
      const bool write = s.target.find("/persistentvolume") != std::string::npos;
      const bool bind = s.target.ends_with("/binding");
      if (write || bind) CHECK(s.point < gate_closes_at);
    }
    // No longer allowed to write: no FailedScheduling from us either (nor
    // its PodScheduled=False patch, which could land after the next
    // leader's bind).
    for (const PodCase& c : kPods) CHECK(v.w.events.last_failure(v.pod(c).uid) == nullptr);
    CHECK(v.w.fake.sent_matching(http::verb::patch, "/status").empty());
  }
  return v.w.fake.points();
}

}  // namespace

TEST_CASE("volume bind: after any one failure, each pod is bound once after its claim, or requeued; none lost") {
  CHECK(testing::every_await_point(testing::every_fault(), [](const auto& inject) { return run(inject); }) >= 4);
}

TEST_CASE("volume bind: the gate closed at any await point, no write is sent after it and the unsent are requeued") {
  testing::at_every_await_point("the bind gate closes", [](std::size_t i) { return run(std::nullopt, i); });
}

TEST_CASE("volume bind: a controller that never binds: the PreBind gives up at bindTimeoutSeconds") {
  const auto waits_before = arrivals(trace::points::bind_volume_wait);
  const auto started = std::chrono::steady_clock::now();
  VolumeWorld v(false, 150ms);
  v.run();
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(took >= 150ms);
  CHECK(took < 5s);
  check_world(v);
  CHECK(v.server.bindings() == 0);
  CHECK(arrivals(trace::points::bind_volume_wait) >= waits_before + 2);
  for (const PodCase& c : kPods) {
    INFO("pod " << c.key);
    CHECK(prebind_failure(v, c) == std::string(kPreBindFailed) + "binding volumes: context deadline exceeded");
  }
  CHECK(v.objects.assumed.size() == 0);
}
