// VolumeBinding's Reserve, PreBind and Unreserve (volume_binding.hpp).
//
// PreBind writes what Reserve chose, then waits for the volume controller
// (kube-controller-manager's PV binder, and the provisioner it calls) to
// bind each claim. It reads the informers' objects, never the assumptions:
// those are what this scheduler expects, the informers what happened.
#include "toysched/sched/plugins/volume_binding.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>

#include "toysched/json/writer.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/log/log.hpp"
#include "toysched/sched/pre_bind.hpp"
#include "toysched/sched/volume_assumptions.hpp"
#include "toysched/trace/tasks.hpp"

namespace toysched::sched {
namespace {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

// How often the wait looks at the informers again. Upstream polls every
// second; a look is a few hash lookups, so a pod need not wait that long.
constexpr auto kPollInterval = std::chrono::milliseconds(100);

// resourceVersions are etcd revisions: comparable as numbers (upstream's
// versioner does the same). An unreadable one compares as 0.
std::uint64_t revision(std::string_view rv) {
  std::uint64_t n = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), n);
  return n;
}

struct StaticBinding {
  std::string volume, volume_rv;  // rv: after our write
  kube::ClaimRef claim;
  std::string claim_rv;
  bool prebound;  // the volume named the claim already (a user pre-bound it)
};
struct Provisioning {
  kube::ClaimRef claim;
  std::string claim_rv;  // after our write
};

class VolumePreBind final : public PreBind {
 public:
  VolumePreBind(const ClusterObjects& objects, VolumeAssumptions* assumed, const kube::Node& node,
                std::chrono::milliseconds timeout)
      : objects_(objects), assumed_(assumed), node_(node.name), timeout_(timeout) {
    labels_.name = node.name;
    labels_.labels = node.labels;
  }

  std::vector<StaticBinding> bind;
  std::vector<Provisioning> provision;

  PluginId plugin() const noexcept override { return PluginId::volume_binding; }
  asio::awaitable<std::string> run(PreBindContext ctx) override;
  void unreserve() noexcept override { release(); }

 private:
  asio::awaitable<std::string> write(PreBindContext& ctx);
  // checkBindings: true when every claim is bound; an error message when
  // binding must be retried; false and "" to wait on.
  bool bound(const PreBindContext& ctx, std::string& error) const;
  void release() noexcept;

  const ClusterObjects& objects_;
  VolumeAssumptions* assumed_;
  std::string node_;
  kube::Node labels_;  // the node's name and labels as the cache had them at Reserve
  std::chrono::milliseconds timeout_;
  bool released_ = false;
};

std::string volume_patch(const StaticBinding& b) {
  json::Writer w;
  w.object().key("metadata").object().field("resourceVersion", b.volume_rv);
  if (!b.prebound) w.key("annotations").object().field("pv.kubernetes.io/bound-by-controller", "yes").end();
  w.end();
  w.key("spec").object().key("claimRef").object();
  w.field("kind", "PersistentVolumeClaim").field("apiVersion", "v1").field("namespace", b.claim.ns);
  w.field("name", b.claim.name).field("uid", b.claim.uid).field("resourceVersion", b.claim_rv);
  w.end().end().end();
  return std::move(w).str();
}

std::string claim_patch(const Provisioning& p, const std::string& node) {
  json::Writer w;
  w.object().key("metadata").object().field("resourceVersion", p.claim_rv);
  w.key("annotations").object().field("volume.kubernetes.io/selected-node", node).end();
  w.end().end();
  return std::move(w).str();
}

asio::awaitable<std::string> VolumePreBind::write(PreBindContext& ctx) {
  for (StaticBinding& b : bind) {
    kube::RequestLimits limits;
    limits.may_send = ctx.may_send;
    auto r = co_await trace::traced(ctx.task, trace::points::bind_volume_write,
                                    ctx.api.patch_volume(b.volume, volume_patch(b), std::move(limits)));
    if (!r) co_return r.error().message;
    TS_LOG(2, "Updated PersistentVolume with claim. Waiting for binding to complete", {"PV", b.volume},
           {"PVC", b.claim.ns + "/" + b.claim.name});
    b.volume_rv = r->resource_version;
  }
  for (Provisioning& p : provision) {
    kube::RequestLimits limits;
    limits.may_send = ctx.may_send;
    auto r =
        co_await trace::traced(ctx.task, trace::points::bind_volume_write,
                               ctx.api.patch_claim(p.claim.ns, p.claim.name, claim_patch(p, node_), std::move(limits)));
    if (!r) co_return r.error().message;
    TS_LOG(2, "Updated PersistentVolumeClaim with selected node. Waiting for provisioning",
           {"PVC", p.claim.ns + "/" + p.claim.name}, {"node", node_});
    p.claim_rv = r->resource_version;
  }
  co_return std::string();
}

bool VolumePreBind::bound(const PreBindContext& ctx, std::string& error) const {
  if (!ctx.pod_exists()) {
    error = "pod does not exist any more";
    return false;
  }
  for (const StaticBinding& b : bind) {
    const kube::PersistentVolume* pv = objects_.volume(b.volume);
    const kube::PersistentVolumeClaim* c = objects_.claim(b.claim.ns, b.claim.name);
    if (pv == nullptr || c == nullptr) {
      error =
          "failed to check binding: " +
          std::string(pv == nullptr ? "persistentvolume \"" + b.volume : "persistentvolumeclaim \"" + b.claim.name) +
          "\" not found";
      return false;
    }
    if (revision(pv->resource_version) < revision(b.volume_rv)) return false;  // our write not seen yet
    if (!volume_fits(*pv, labels_)) {
      error = "pv \"" + b.volume + "\" node affinity doesn't match node \"" + node_ + "\"";
      return false;
    }
    if (!pv->claim_ref || pv->claim_ref->uid.empty()) {
      error = "ClaimRef got reset for pv \"" + b.volume + "\"";
      return false;
    }
    if (c->volume_name.empty() || !c->bind_completed) return false;
  }
  for (const Provisioning& p : provision) {
    const kube::PersistentVolumeClaim* c = objects_.claim(p.claim.ns, p.claim.name);
    if (c == nullptr) {
      error = "failed to check provisioning pvc: persistentvolumeclaim \"" + p.claim.name + "\" not found";
      return false;
    }
    if (revision(c->resource_version) < revision(p.claim_rv)) return false;
    // A provisioner that failed takes the annotation away: try again.
    if (c->selected_node != node_) {
      error = "provisioning failed for PVC \"" + p.claim.name + "\"";
      return false;
    }
    if (!c->volume_name.empty()) {
      const kube::PersistentVolume* pv = objects_.volume(c->volume_name);
      if (pv == nullptr) return false;  // the informer may not have it yet
      if (!volume_fits(*pv, labels_)) {
        error = "pv \"" + c->volume_name + "\" node affinity doesn't match node \"" + node_ + "\"";
        return false;
      }
    }
    if (c->volume_name.empty() || !c->bind_completed) return false;
  }
  return true;
}

asio::awaitable<std::string> VolumePreBind::run(PreBindContext ctx) {
  if (std::string err = co_await write(ctx); !err.empty()) co_return err;
  const auto deadline = clock::now() + timeout_;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    std::string error;
    if (bound(ctx, error)) break;
    if (!error.empty()) co_return "binding volumes: " + error;
    if (clock::now() >= deadline) co_return "binding volumes: context deadline exceeded";
    timer.expires_after(std::min<clock::duration>(kPollInterval, deadline - clock::now()));
    co_await trace::traced(ctx.task, trace::points::bind_volume_wait, timer.async_wait(asio::use_awaitable));
  }
  TS_LOG(2, "All PVCs for pod are bound", {"node", node_});
  release();  // the informers hold the bound objects now
  co_return std::string();
}

void VolumePreBind::release() noexcept {
  if (released_ || assumed_ == nullptr) return;
  released_ = true;
  for (const StaticBinding& b : bind) assumed_->forget_volume(b.volume);
  for (const Provisioning& p : provision) assumed_->forget_claim(p.claim.ns, p.claim.name);
}

}  // namespace

std::unique_ptr<PreBind> VolumeBinding::reserve(const kube::Pod& /*pod*/, const NodeInfo& ni,
                                                const Cluster& /*cluster*/) {
  if (delayed_.empty() || objects_ == nullptr) return nullptr;  // every claim bound already
  PodVolumes chosen;
  if (!find(ni.node, &chosen).ok()) return nullptr;  // not expected: Filter passed this node
  if (chosen.bind.empty() && chosen.provision.empty()) return nullptr;
  VolumeAssumptions* assumed = objects_->volume_assumptions();
  auto work = std::make_unique<VolumePreBind>(*objects_, assumed, ni.node, timeout_);
  for (const auto& [pv, c] : chosen.bind) {
    const kube::ClaimRef ref{c->ns, c->name, c->uid};
    const bool prebound = volume_bound_to(pv->claim_ref, *c);  // then not marked bound-by-controller
    work->bind.push_back({pv->name, pv->resource_version, ref, c->resource_version, prebound});
    if (assumed != nullptr) assumed->assume_volume(*pv, ref);
  }
  for (const kube::PersistentVolumeClaim* c : chosen.provision) {
    work->provision.push_back({kube::ClaimRef{c->ns, c->name, c->uid}, c->resource_version});
    if (assumed != nullptr) assumed->assume_claim(*c, ni.node.name);
  }
  return work;
}

}  // namespace toysched::sched
