// Pods: the scheduling-relevant parts of a pod spec and the effective
// request computed by the Kubernetes rules. See decode.hpp for the rules
// every decoder follows, decode_detail.hpp for the walking helpers.
#include "decode_detail.hpp"
#include "toysched/kube/quantity.hpp"

namespace toysched::kube::detail {
namespace {

// Sums saturate at kQuantityMax, as each quantity does: hostile data must
// neither wrap into a small request that fits everywhere nor make a node's
// sum of pods overflow.
std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  // Every input is within ±kQuantityMax already: the sum cannot overflow.
  return std::clamp(a + b, -kQuantityMax, kQuantityMax);
}

void add_into(Resources& a, const Resources& b) {
  a.milli_cpu = sat_add(a.milli_cpu, b.milli_cpu);
  a.memory = sat_add(a.memory, b.memory);
  a.ephemeral_storage = sat_add(a.ephemeral_storage, b.ephemeral_storage);
  a.pods = sat_add(a.pods, b.pods);
  for (const auto& [k, v] : b.extended) {
    auto& slot = extended_slot(a.extended, k);
    slot = sat_add(slot, v);
  }
}

void max_into(Resources& a, const Resources& b) {
  a.milli_cpu = std::max(a.milli_cpu, b.milli_cpu);
  a.memory = std::max(a.memory, b.memory);
  a.ephemeral_storage = std::max(a.ephemeral_storage, b.ephemeral_storage);
  a.pods = std::max(a.pods, b.pods);
  for (const auto& [k, v] : b.extended) {
    auto& slot = extended_slot(a.extended, k);
    slot = std::max(slot, v);
  }
}

// requests, with each limit standing in for a missing request (the API's
// defaulting, pkg/apis/core/v1/defaults.go; objects from the server already
// carry it, hand-written ones may not).
Resources effective_requests(const ResourceList& req, const ResourceList& lim) {
  Resources out = req.r;
  auto fill = [&](unsigned bit, std::int64_t Resources::*m) {
    if (!(req.present & bit) && (lim.present & bit)) out.*m = lim.r.*m;
  };
  fill(ResourceList::cpu, &Resources::milli_cpu);
  fill(ResourceList::memory, &Resources::memory);
  fill(ResourceList::ephemeral, &Resources::ephemeral_storage);
  for (const auto& limit : lim.r.extended) {
    const bool has = std::any_of(req.r.extended.begin(), req.r.extended.end(),
                                 [&](const auto& e) { return e.first == limit.first; });
    if (!has) extended_slot(out.extended, limit.first) = limit.second;
  }
  return out;
}

errc get_requirements(od::value& v, ResourceList& req, ResourceList& lim) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "requests") return get_resources(val, req);
    if (k == "limits") return get_resources(val, lim);
    return errc::ok;
  });
}

// An in-tree disk VolumeRestrictions compares (objects.hpp InlineDisk):
// its identity and whether it is mounted read-only.
errc get_inline_disk(od::value& v, InlineDisk::Kind kind, Pod& p) {
  InlineDisk& d = p.disks.emplace_back();
  d.kind = kind;
  const std::string_view id_key = kind == InlineDisk::Kind::gce_pd    ? "pdName"
                                  : kind == InlineDisk::Kind::aws_ebs ? "volumeID"
                                  : kind == InlineDisk::Kind::iscsi   ? "iqn"
                                                                      : "image";
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == id_key) return get(val, d.id);
    if (k == "readOnly") return get(val, d.read_only);
    if (kind != InlineDisk::Kind::rbd) return errc::ok;
    if (k == "pool") return get(val, d.pool);
    if (k == "monitors") return get_strings(val, d.monitors);
    return errc::ok;
  }));
  // The API's default (SetDefaults_RBDVolumeSource), for hand-written pods.
  if (kind == InlineDisk::Kind::rbd && d.pool.empty()) d.pool = "rbd";
  return errc::ok;
}

// Volumes that constrain where a pod goes: a claim (the volume plugins look
// it up), an in-tree disk (VolumeRestrictions), an ephemeral volume (the
// claim the ephemeral-volume controller makes for it, named after the pod
// and the volume, which the volume plugins look up in turn).
// Other kinds (emptyDir, configMap, projected, hostPath ...) constrain
// nothing.
errc get_volume(od::value& v, Pod& p) {
  std::string name;
  bool ephemeral = false;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "name") return get(val, name);
    if (is_null(val)) return errc::ok;
    if (k == "persistentVolumeClaim") {
      return fields(val, [&](std::string_view k2, od::value& v2) {
        return k2 == "claimName" ? get(v2, p.claims.emplace_back()) : errc::ok;
      });
    }
    if (k == "gcePersistentDisk") return get_inline_disk(val, InlineDisk::Kind::gce_pd, p);
    if (k == "awsElasticBlockStore") return get_inline_disk(val, InlineDisk::Kind::aws_ebs, p);
    if (k == "iscsi") return get_inline_disk(val, InlineDisk::Kind::iscsi, p);
    if (k == "rbd") return get_inline_disk(val, InlineDisk::Kind::rbd, p);
    if (k == "ephemeral") ephemeral = true;
    return errc::ok;
  }));
  if (ephemeral) p.ephemeral_volumes.push_back(std::move(name));
  return errc::ok;
}

errc get_toleration(od::value& v, Toleration& t) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "key") return get(val, t.key);
    if (k == "value") return get(val, t.value);
    if (k == "tolerationSeconds") return get(val, t.toleration_seconds);
    std::string s;
    if (k == "operator") {
      TS_TRY(get(val, s));
      t.op = s.empty() || s == "Equal" ? TolerationOp::equal
             : s == "Exists"           ? TolerationOp::exists
                                       : TolerationOp::unknown;
    } else if (k == "effect") {
      TS_TRY(get(val, s));
      t.effect = to_effect(s);
    }
    return errc::ok;
  });
}

struct Container {
  std::string name;  // matches its status
  std::string image;
  Resources requests;
  unsigned named = 0;         // ResourceList bits of the cpu and memory its requests or limits name
  bool restartable = false;   // an init container with restartPolicy Always: a sidecar
  bool restarts_all = false;  // a restartPolicyRules entry's action is RestartAllContainers
  std::vector<HostPort> host_ports;
};

errc get_container(od::value& v, Container& c) {
  ResourceList req, lim;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "name") return get(val, c.name);
    if (k == "image") return get(val, c.image);
    if (k == "resources") return get_requirements(val, req, lim);
    if (k == "restartPolicy") {
      std::string s;
      TS_TRY(get(val, s));
      c.restartable = s == "Always";
      return errc::ok;
    }
    if (k == "restartPolicyRules") {
      return elements(val, [&](od::value& rule) {
        return fields(rule, [&](std::string_view rk, od::value& rv) {
          if (rk != "action") return errc::ok;
          std::string action;
          TS_TRY(get(rv, action));
          c.restarts_all = c.restarts_all || action == "RestartAllContainers";
          return errc::ok;
        });
      });
    }
    if (k != "ports") return errc::ok;
    return elements(val, [&](od::value& item) {
      HostPort hp;
      TS_TRY(fields(item, [&](std::string_view pk, od::value& pv) {
        if (pk == "hostPort") return get(pv, hp.port);
        if (pk == "protocol") return get(pv, hp.protocol);
        if (pk == "hostIP") return get(pv, hp.host_ip);
        return errc::ok;
      }));
      if (hp.port <= 0) return errc::ok;  // no host port: nothing to reserve
      if (hp.protocol.empty()) hp.protocol = "TCP";
      if (hp.host_ip.empty()) hp.host_ip = "0.0.0.0";
      c.host_ports.push_back(std::move(hp));
      return errc::ok;
    });
  }));
  c.requests = effective_requests(req, lim);
  c.named = req.present | lim.present;
  return errc::ok;
}

// What the kubelet reports of a container's or the pod's resources once it
// runs (in-place resize, GA in 1.35): requests actuated and allocated.
// Only where status.resources is set, as upstream reads it.
struct StatusResources {
  std::string name;     // the container's; empty for the pod's own
  Resources actuated;   // status.resources.requests
  Resources allocated;  // allocatedResources
};

// The pod's effective request, as component-helpers resource/helpers.go
// PodRequests computes it with status resources (as kube-scheduler 1.36
// calls it):
//   max( Σ app containers + Σ sidecars,
//        for each plain init container: its request + sidecars started before it )
//   then pod-level spec.resources replaces cpu, memory and hugepages-* where
//   it sets them, then + spec.overhead;
// where a container (app or sidecar) or the pod has status resources, its
// request is max(spec, actuated, allocated): a resize counts from the
// moment it is asked for, and a resize down only once the kubelet has
// carried it out.
struct PodParts {
  std::vector<Container> apps;
  std::vector<Container> inits;  // in order: "started before" matters
  ResourceList overhead;
  ResourceList pod_req, pod_lim;
  std::vector<StatusResources> container_status;
  std::optional<StatusResources> pod_status;
  bool resize_infeasible = false;  // condition PodResizePending, reason Infeasible
  // The first DisruptionTarget condition, if any: True with reason
  // PreemptionByScheduler. Only the first counts, as upstream's
  // podTerminatingByPreemption reads it; deletionTimestamp may come after
  // status, so the pod's flag is set once the whole object is read.
  std::optional<bool> preempted;
};

// max(spec, actuated, allocated); an infeasible resize's spec is not
// counted: the kubelet will never carry it out.
Resources with_status(const Resources& spec, const StatusResources& st, bool infeasible) {
  Resources r = infeasible ? Resources{} : spec;
  max_into(r, st.actuated);
  max_into(r, st.allocated);
  return r;
}

Resources container_requests(const Container& c, const PodParts& s) {
  for (const auto& st : s.container_status) {
    if (st.name == c.name) return with_status(c.requests, st, s.resize_infeasible);
  }
  return c.requests;
}

bool is_hugepages(std::string_view name) { return name.starts_with("hugepages-"); }

// Pod-level requests (KEP-2837): cpu, memory and hugepages-* can be set
// there, and each one set replaces the containers' total for it.
void apply_pod_level(const PodParts& s, Resources& total) {
  Resources pod_level = effective_requests(s.pod_req, s.pod_lim);
  if (s.pod_status) pod_level = with_status(pod_level, *s.pod_status, s.resize_infeasible);
  const unsigned named = s.pod_req.present | s.pod_lim.present;
  if (named & ResourceList::cpu) total.milli_cpu = pod_level.milli_cpu;
  if (named & ResourceList::memory) total.memory = pod_level.memory;
  for (const auto* list : {&s.pod_req.r.extended, &s.pod_lim.r.extended}) {
    for (const auto& e : *list) {
      if (is_hugepages(e.first)) extended_slot(total.extended, e.first) = pod_level.extended_value(e.first);
    }
  }
}

// NonMissingContainerRequests: what a container that names no request for
// cpu (memory) gets instead; 0 adds nothing.
struct Defaults {
  std::int64_t milli_cpu = 0;
  std::int64_t memory = 0;
};

// Which of cpu and memory a container's request names. A limit names it
// too (the API's defaulting copies it into the request), and so does a
// resize the kubelet reports (status resources).
unsigned named(const Container& c, const PodParts& s) {
  unsigned n = c.named;
  for (const auto& st : s.container_status) {
    if (st.name != c.name) continue;
    for (const Resources* r : {&st.actuated, &st.allocated}) {
      if (r->milli_cpu != 0) n |= ResourceList::cpu;
      if (r->memory != 0) n |= ResourceList::memory;
    }
  }
  return n;
}

Resources with_defaults(Resources r, unsigned names, const Defaults& d) {
  if (!(names & ResourceList::cpu)) r.milli_cpu += d.milli_cpu;
  if (!(names & ResourceList::memory)) r.memory += d.memory;
  return r;
}

// `pod_level`: whether pod-level requests replace the containers' total
// (upstream skips them only where noted below).
Resources pod_requests(const PodParts& s, const Defaults& d = {}, bool pod_level = true) {
  Resources total;
  for (const auto& c : s.apps) add_into(total, with_defaults(container_requests(c, s), named(c, s), d));
  Resources sidecars, init_peak;
  for (const auto& c : s.inits) {
    if (c.restartable) {
      const Resources r = with_defaults(container_requests(c, s), named(c, s), d);
      add_into(total, r);
      add_into(sidecars, r);
      max_into(init_peak, sidecars);
    } else {
      // A plain init container has run to completion: its spec is what counts.
      Resources during = with_defaults(c.requests, c.named, d);
      add_into(during, sidecars);
      max_into(init_peak, during);
    }
  }
  max_into(total, init_peak);
  if (pod_level) apply_pod_level(s, total);
  add_into(total, s.overhead.r);
  total.pods = 0;  // the scheduler counts pods on its own
  return total;
}

// Whether spec.resources names a resource pod-level requests may set
// (IsPodLevelRequestsSet, after the API's defaulting of requests from limits).
bool pod_level_set(const PodParts& s) {
  if ((s.pod_req.present | s.pod_lim.present) & (ResourceList::cpu | ResourceList::memory)) return true;
  for (const auto* list : {&s.pod_req.r.extended, &s.pod_lim.r.extended}) {
    if (std::any_of(list->begin(), list->end(), [](const auto& e) { return is_hugepages(e.first); })) return true;
  }
  return false;
}

// Which of cpu and memory the pod's whole request names: any container,
// the pod level or the overhead.
unsigned named_anywhere(const PodParts& s) {
  unsigned n = s.pod_req.present | s.pod_lim.present | s.overhead.present;
  for (const auto* list : {&s.apps, &s.inits}) {
    for (const auto& c : *list) n |= named(c, s);
  }
  return n;
}

// The two non-zero requests of kube::Pod (objects.hpp), from the request
// already computed without defaults.
void set_nonzero(const PodParts& s, Pod& p) {
  constexpr Defaults kBoth{kDefaultMilliCpuRequest, kDefaultMemoryRequest};
  // NodeResourcesFit's scorer is built without the PodLevelResources gate
  // (NewFit sets it on the plugin, not on its resourceAllocationScorer), so
  // upstream scores the pod being scheduled without its pod-level requests.
  const Resources incoming = pod_requests(s, kBoth, /*pod_level=*/false);
  p.nonzero_incoming = NonZeroRequests{incoming.milli_cpu, incoming.memory};
  if (!pod_level_set(s)) {
    p.nonzero = p.nonzero_incoming;
    return;
  }
  // getNonMissingContainerRequests: with pod-level requests, a default only
  // for a resource nothing names.
  const unsigned n = named_anywhere(s);
  const Defaults d{n & ResourceList::cpu ? 0 : kDefaultMilliCpuRequest,
                   n & ResourceList::memory ? 0 : kDefaultMemoryRequest};
  const Resources counted = d.milli_cpu == 0 && d.memory == 0 ? p.requests : pod_requests(s, d);
  p.nonzero = NonZeroRequests{counted.milli_cpu, counted.memory};
}

errc get_pod_spec(od::value& v, Pod& p, PodParts& parts) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "nodeName") return get(val, p.node_name);
    if (k == "hostNetwork") return get(val, p.host_network);
    if (k == "hostUsers") return get(val, p.host_users);
    if (k == "schedulerName") return get(val, p.scheduler_name);
    if (k == "priority") return get(val, p.priority);
    if (k == "preemptionPolicy") {
      // Absent means PreemptLowerPriority (the API's default); only Never
      // keeps a pod from preempting.
      std::string s;
      TS_TRY(get(val, s));
      p.preempt_never = s == "Never";
      return errc::ok;
    }
    if (k == "nodeSelector") return get_map(val, p.node_selector);
    if (k == "overhead") return get_resources(val, parts.overhead);
    if (k == "resources") return get_requirements(val, parts.pod_req, parts.pod_lim);
    if (k == "tolerations") {
      return elements(val, [&](od::value& t) { return get_toleration(t, p.tolerations.emplace_back()); });
    }
    if (k == "affinity") return get_affinity(val, p);
    if (k == "topologySpreadConstraints") {
      return elements(val, [&](od::value& c) { return get_spread_constraint(c, p); });
    }
    if (k == "volumes") return elements(val, [&](od::value& vol) { return get_volume(vol, p); });
    if (k == "resourceClaims") {
      return elements(val, [&](od::value&) {
        p.unsupported.resource_claims = true;
        return errc::ok;
      });
    }
    if (k == "schedulingGates") {
      return elements(val, [&](od::value&) {
        p.scheduling_gated = true;
        return errc::ok;
      });
    }
    if (k == "containers" || k == "initContainers") {
      const bool init = k == "initContainers";
      return elements(val, [&](od::value& item) {
        Container c;
        TS_TRY(get_container(item, c));
        // Sidecars keep their host ports for the pod's life; plain init
        // containers run before the app and are not counted by NodePorts.
        if (!init || c.restartable) {
          p.host_ports.insert(p.host_ports.end(), c.host_ports.begin(), c.host_ports.end());
        }
        p.restarts_all_containers = p.restarts_all_containers || c.restarts_all;
        (init ? parts.inits : parts.apps).push_back(std::move(c));
        return errc::ok;
      });
    }
    return errc::ok;
  });
}

// status.resources or a container status's resources and allocatedResources.
errc get_status_resources(std::string_view k, od::value& v, std::optional<StatusResources>& st) {
  if (k == "resources") {
    if (is_null(v)) return errc::ok;  // not reported: the spec alone counts
    ResourceList req, lim;
    TS_TRY(get_requirements(v, req, lim));
    if (!st) st.emplace();
    st->actuated = std::move(req.r);
    return errc::ok;
  }
  ResourceList allocated;
  TS_TRY(get_resources(v, allocated));
  if (!st) st.emplace();
  st->allocated = std::move(allocated.r);
  return errc::ok;
}

errc get_container_status(od::value& v, PodParts& parts) {
  std::optional<StatusResources> st;
  bool has_resources = false;
  std::string name;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "name") return get(val, name);
    if (k != "resources" && k != "allocatedResources") return errc::ok;
    if (k == "resources") has_resources = !is_null(val);
    return get_status_resources(k, val, st);
  }));
  // Upstream reads allocatedResources only beside status resources.
  if (has_resources) {
    st->name = std::move(name);
    parts.container_status.push_back(std::move(*st));
  }
  return errc::ok;
}

errc get_pod_status(od::value& v, Pod& p, PodParts& parts) {
  std::optional<StatusResources> pod_st;
  bool has_resources = false;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "phase") return get(val, p.phase);
    if (k == "nominatedNodeName") return get(val, p.nominated_node_name);
    if (k == "startTime") return get_time(val, p.start_time);
    if (k == "containerStatuses" || k == "initContainerStatuses") {
      return elements(val, [&](od::value& item) { return get_container_status(item, parts); });
    }
    if (k == "resources" || k == "allocatedResources") {
      if (k == "resources") has_resources = !is_null(val);
      return get_status_resources(k, val, pod_st);
    }
    if (k != "conditions") return errc::ok;
    return elements(val, [&](od::value& item) {
      std::string type, status, reason;
      TS_TRY(fields(item, [&](std::string_view ck, od::value& cv) {
        if (ck == "type") return get(cv, type);
        if (ck == "status") return get(cv, status);
        if (ck == "reason") return get(cv, reason);
        return errc::ok;
      }));
      if (type == "PodResizePending") parts.resize_infeasible = reason == "Infeasible";
      if (type == "DisruptionTarget" && !parts.preempted) {
        parts.preempted = status == "True" && reason == "PreemptionByScheduler";
      }
      return errc::ok;
    });
  }));
  if (has_resources) parts.pod_status = std::move(pod_st);
  return errc::ok;
}

// Containers' images, then init containers', whatever order the JSON had
// them in (the API server writes initContainers first).
void take_images(PodParts& parts, Pod& p) {
  p.images.reserve(parts.apps.size() + parts.inits.size());
  for (auto* list : {&parts.apps, &parts.inits}) {
    for (auto& c : *list) {
      if (!c.image.empty()) p.images.push_back(std::move(c.image));
    }
  }
}

}  // namespace

errc get_pod(od::value& v, Pod& p) {
  Meta m;
  PodParts parts;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, true, true);
    if (k == "spec") return get_pod_spec(val, p, parts);
    if (k == "status") return get_pod_status(val, p, parts);
    return errc::ok;
  }));
  TS_TRY(require(m, true, true));
  p.terminating_by_preemption = m.deleting && parts.preempted.value_or(false);
  take_meta(std::move(m), p);
  p.requests = pod_requests(parts);
  set_nonzero(parts, p);
  take_images(parts, p);
  return errc::ok;
}

}  // namespace toysched::kube::detail
