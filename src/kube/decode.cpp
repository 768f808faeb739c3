// simdjson on-demand decoding into objects.hpp; see decode.hpp for the rules.
//
// On-demand reads the document once, front to back: every decoder below
// walks an object's fields in the order the server wrote them and picks what
// it knows, leaving the rest to be skipped. Fields may come in any order, so
// nothing is computed until an object's walk ends (see the pod request).
#include "toysched/kube/decode.hpp"

#include "toysched/kube/quantity.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace toysched::kube {
namespace {

namespace od = simdjson::ondemand;
static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING);

errc from_simdjson(simdjson::error_code e) {
  if (e == simdjson::SUCCESS) return errc::ok;
  if (e == simdjson::CAPACITY) return errc::object_too_large;
  return errc::json_malformed;
}

errc from_result(const boost::system::error_code& ec) {
  return ec.category() == error_category() ? static_cast<errc>(ec.value()) : errc::json_malformed;
}

// Early returns on failure: `errc` from our helpers, or a simdjson code.
#define TS_TRY(expr)                                           \
  do {                                                         \
    if (const errc ts_e_ = (expr); ts_e_ != errc::ok) return ts_e_; \
  } while (0)
#define TS_SJ(expr)                                                   \
  do {                                                                \
    if (const auto ts_e_ = (expr); ts_e_) return from_simdjson(ts_e_); \
  } while (0)

bool is_null(od::value& v) {
  od::json_type t{};
  return v.type().get(t) == simdjson::SUCCESS && t == od::json_type::null;
}

template <class F>
errc walk_object(od::object& obj, F&& f) {
  for (auto field_result : obj) {
    od::field field;
    TS_SJ(std::move(field_result).get(field));
    std::string_view key;
    TS_SJ(field.unescaped_key().get(key));
    TS_TRY(f(key, field.value()));
  }
  return errc::ok;
}

// Calls f(key, value) for every field; null reads as an empty object.
template <class F>
errc fields(od::value& v, F&& f) {
  if (is_null(v)) return errc::ok;
  od::object obj;
  TS_SJ(v.get_object().get(obj));
  return walk_object(obj, f);
}

// Calls f(value) for every element; null reads as an empty array.
template <class F>
errc elements(od::value& v, F&& f) {
  if (is_null(v)) return errc::ok;
  od::array arr;
  TS_SJ(v.get_array().get(arr));
  for (auto el : arr) {
    od::value item;
    TS_SJ(std::move(el).get(item));
    TS_TRY(f(item));
  }
  return errc::ok;
}

errc get(od::value& v, std::string& out) {
  if (is_null(v)) {
    out.clear();
    return errc::ok;
  }
  std::string_view s;
  TS_SJ(v.get_string().get(s));
  out.assign(s);
  return errc::ok;
}

errc get(od::value& v, std::int64_t& out) {
  if (is_null(v)) return errc::ok;
  TS_SJ(v.get_int64().get(out));
  return errc::ok;
}

errc get(od::value& v, std::int32_t& out) {
  std::int64_t wide = out;
  TS_TRY(get(v, wide));
  if (wide < std::numeric_limits<std::int32_t>::min() || wide > std::numeric_limits<std::int32_t>::max()) {
    return errc::json_malformed;
  }
  out = static_cast<std::int32_t>(wide);
  return errc::ok;
}

errc get(od::value& v, bool& out) {
  if (is_null(v)) return errc::ok;
  TS_SJ(v.get_bool().get(out));
  return errc::ok;
}

template <class T>
errc get(od::value& v, std::optional<T>& out) {
  if (is_null(v)) {
    out.reset();
    return errc::ok;
  }
  T tmp{};
  TS_TRY(get(v, tmp));
  out = std::move(tmp);
  return errc::ok;
}

errc get_time(od::value& v, std::optional<TimePoint>& out) {
  std::string s;
  TS_TRY(get(v, s));
  if (s.empty()) {
    out.reset();
    return errc::ok;
  }
  out = parse_micro_time(s);
  return out ? errc::ok : errc::json_malformed;
}

errc get_map(od::value& v, StringPairs& out) {
  return fields(v, [&](std::string_view k, od::value& val) {
    std::string s;
    TS_TRY(get(val, s));
    out.emplace_back(std::string(k), std::move(s));
    return errc::ok;
  });
}

errc get_strings(od::value& v, std::vector<std::string>& out) {
  return elements(v, [&](od::value& item) {
    TS_TRY(get(item, out.emplace_back()));
    return errc::ok;
  });
}

// --- resources ---------------------------------------------------------

// Sums saturate: an int64 overflow from hostile data must not wrap into a
// small request that fits everywhere.
std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return r;
}

using Extended = std::vector<std::pair<std::string, std::int64_t>>;

std::int64_t& extended_slot(Extended& ext, std::string_view name) {
  auto it = std::lower_bound(ext.begin(), ext.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it == ext.end() || it->first != name) it = ext.emplace(it, std::string(name), 0);
  return it->second;
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

// A resource list as written, remembering which standard names were
// present: a limit fills in a request only where the request is absent.
struct ResourceList {
  enum : unsigned { cpu = 1, memory = 2, ephemeral = 4, pods = 8 };
  Resources r;
  unsigned present = 0;
};

errc get_resources(od::value& v, ResourceList& out) {
  return fields(v, [&](std::string_view name, od::value& val) {
    std::string_view q;
    if (od::json_type t{}; val.type().get(t) == simdjson::SUCCESS && t == od::json_type::number) {
      // apimachinery's UnmarshalJSON also takes a bare number.
      q = val.raw_json_token();
      while (!q.empty() && (q.back() == ' ' || q.back() == '\n' || q.back() == '\r' || q.back() == '\t')) {
        q.remove_suffix(1);
      }
    } else {
      TS_SJ(val.get_string().get(q));
    }
    const auto parsed = name == "cpu" ? parse_quantity_milli(q) : parse_quantity_value(q);
    if (!parsed) return from_result(parsed.error());
    if (name == "cpu") {
      out.r.milli_cpu = *parsed, out.present |= ResourceList::cpu;
    } else if (name == "memory") {
      out.r.memory = *parsed, out.present |= ResourceList::memory;
    } else if (name == "ephemeral-storage") {
      out.r.ephemeral_storage = *parsed, out.present |= ResourceList::ephemeral;
    } else if (name == "pods") {
      out.r.pods = *parsed, out.present |= ResourceList::pods;
    } else {
      extended_slot(out.r.extended, name) = *parsed;
    }
    return errc::ok;
  });
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
  for (const auto& [k, v] : lim.r.extended) {
    const bool has = std::any_of(req.r.extended.begin(), req.r.extended.end(),
                                 [&](const auto& e) { return e.first == k; });
    if (!has) extended_slot(out.extended, k) = v;
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

// --- metadata ----------------------------------------------------------

struct Meta {
  std::string name, ns, uid, resource_version;
  bool deleting = false;
  bool initial_events_end = false;
  std::optional<TimePoint> created;
  StringPairs labels;
};

errc get_meta(od::value& v, Meta& m, bool want_labels) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "name") return get(val, m.name);
    if (k == "namespace") return get(val, m.ns);
    if (k == "uid") return get(val, m.uid);
    if (k == "resourceVersion") return get(val, m.resource_version);
    if (k == "deletionTimestamp") {
      m.deleting = !is_null(val);
      return errc::ok;
    }
    if (k == "creationTimestamp") return get_time(val, m.created);
    if (k == "labels" && want_labels) return get_map(val, m.labels);
    if (k == "annotations") {
      return fields(val, [&](std::string_view ak, od::value& av) {
        if (ak != "k8s.io/initial-events-end") return errc::ok;
        std::string s;
        TS_TRY(get(av, s));
        m.initial_events_end = s == "true";
        return errc::ok;
      });
    }
    return errc::ok;
  });
}

// --- pods --------------------------------------------------------------

TaintEffect to_effect(std::string_view s) {
  if (s.empty()) return TaintEffect::all;
  if (s == "NoSchedule") return TaintEffect::no_schedule;
  if (s == "PreferNoSchedule") return TaintEffect::prefer_no_schedule;
  if (s == "NoExecute") return TaintEffect::no_execute;
  return TaintEffect::unknown;
}

SelectorOp to_selector_op(std::string_view s) {
  if (s == "In") return SelectorOp::in;
  if (s == "NotIn") return SelectorOp::not_in;
  if (s == "Exists") return SelectorOp::exists;
  if (s == "DoesNotExist") return SelectorOp::does_not_exist;
  if (s == "Gt") return SelectorOp::gt;
  if (s == "Lt") return SelectorOp::lt;
  return SelectorOp::unknown;
}

errc get_requirement_list(od::value& v, std::vector<NodeSelectorRequirement>& out) {
  return elements(v, [&](od::value& item) {
    auto& r = out.emplace_back();
    return fields(item, [&](std::string_view k, od::value& val) {
      if (k == "key") return get(val, r.key);
      if (k == "values") return get_strings(val, r.values);
      if (k == "operator") {
        std::string op;
        TS_TRY(get(val, op));
        r.op = to_selector_op(op);
      }
      return errc::ok;
    });
  });
}

errc get_term(od::value& v, NodeSelectorTerm& t) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "matchExpressions") return get_requirement_list(val, t.match_expressions);
    if (k == "matchFields") return get_requirement_list(val, t.match_fields);
    return errc::ok;
  });
}

errc get_node_affinity(od::value& v, Pod& p) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      return fields(val, [&](std::string_view k2, od::value& v2) {
        if (k2 != "nodeSelectorTerms") return errc::ok;
        return elements(v2, [&](od::value& t) { return get_term(t, p.required_affinity.emplace_back()); });
      });
    }
    if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      return elements(val, [&](od::value& item) {
        auto& pt = p.preferred_affinity.emplace_back();
        return fields(item, [&](std::string_view k2, od::value& v2) {
          if (k2 == "weight") return get(v2, pt.weight);
          if (k2 == "preference") return get_term(v2, pt.term);
          return errc::ok;
        });
      });
    }
    return errc::ok;
  });
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
  Resources requests;
  bool restartable = false;  // an init container with restartPolicy Always: a sidecar
  std::vector<HostPort> host_ports;
};

errc get_container(od::value& v, Container& c) {
  ResourceList req, lim;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "resources") return get_requirements(val, req, lim);
    if (k == "restartPolicy") {
      std::string s;
      TS_TRY(get(val, s));
      c.restartable = s == "Always";
      return errc::ok;
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
  return errc::ok;
}

// The pod's effective request, as component-helpers resource/helpers.go
// PodRequests computes it:
//   max( Σ app containers + Σ sidecars,
//        for each plain init container: its request + sidecars started before it )
//   then pod-level spec.resources replaces cpu/memory, then + spec.overhead.
struct PodSpecParts {
  Resources app_sum;
  std::vector<Container> inits;  // in order: "started before" matters
  ResourceList overhead;
  ResourceList pod_req, pod_lim;
};

Resources pod_requests(PodSpecParts& s) {
  Resources total = std::move(s.app_sum);
  Resources sidecars, init_peak;
  for (auto& c : s.inits) {
    if (c.restartable) {
      add_into(total, c.requests);
      add_into(sidecars, c.requests);
      max_into(init_peak, sidecars);
    } else {
      Resources during = c.requests;
      add_into(during, sidecars);
      max_into(init_peak, during);
    }
  }
  max_into(total, init_peak);
  // Pod-level resources (KEP-2837): only cpu and memory are supported there.
  const Resources pod_level = effective_requests(s.pod_req, s.pod_lim);
  if ((s.pod_req.present | s.pod_lim.present) & ResourceList::cpu) total.milli_cpu = pod_level.milli_cpu;
  if ((s.pod_req.present | s.pod_lim.present) & ResourceList::memory) total.memory = pod_level.memory;
  add_into(total, s.overhead.r);
  total.pods = 0;  // the scheduler counts pods on its own
  return total;
}

errc get_pod_spec(od::value& v, Pod& p, PodSpecParts& parts) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "nodeName") return get(val, p.node_name);
    if (k == "schedulerName") return get(val, p.scheduler_name);
    if (k == "priority") return get(val, p.priority);
    if (k == "nodeSelector") return get_map(val, p.node_selector);
    if (k == "overhead") return get_resources(val, parts.overhead);
    if (k == "resources") return get_requirements(val, parts.pod_req, parts.pod_lim);
    if (k == "tolerations") {
      return elements(val, [&](od::value& t) { return get_toleration(t, p.tolerations.emplace_back()); });
    }
    if (k == "affinity") {
      return fields(val, [&](std::string_view ak, od::value& av) {
        return ak == "nodeAffinity" ? get_node_affinity(av, p) : errc::ok;
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
        if (init) {
          parts.inits.push_back(std::move(c));
        } else {
          add_into(parts.app_sum, c.requests);
        }
        return errc::ok;
      });
    }
    return errc::ok;
  });
}

errc require(const Meta& m, bool ns, bool uid) {
  if (m.name.empty() || (ns && m.ns.empty()) || (uid && m.uid.empty())) return errc::json_missing_field;
  return errc::ok;
}

errc get_pod(od::value& v, Pod& p) {
  Meta m;
  PodSpecParts parts;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, false);
    if (k == "spec") return get_pod_spec(val, p, parts);
    if (k == "status") {
      return fields(val, [&](std::string_view sk, od::value& sv) {
        return sk == "phase" ? get(sv, p.phase) : errc::ok;
      });
    }
    return errc::ok;
  }));
  TS_TRY(require(m, true, true));
  p.ns = std::move(m.ns);
  p.name = std::move(m.name);
  p.uid = std::move(m.uid);
  p.resource_version = std::move(m.resource_version);
  p.deleting = m.deleting;
  p.creation_timestamp = m.created;
  p.requests = pod_requests(parts);
  return errc::ok;
}

// --- nodes, leases, status ---------------------------------------------

errc get_node_status(od::value& v, Node& n) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "allocatable") {
      ResourceList l;
      TS_TRY(get_resources(val, l));
      n.allocatable = std::move(l.r);
      return errc::ok;
    }
    if (k == "conditions" || k == "addresses") {
      const bool cond = k == "conditions";
      return elements(val, [&](od::value& item) {
        std::string type, value;
        TS_TRY(fields(item, [&](std::string_view ck, od::value& cv) {
          if (ck == "type") return get(cv, type);
          if (ck == (cond ? "status" : "address")) return get(cv, value);
          return errc::ok;
        }));
        if (cond && type == "Ready") n.ready = value == "True";
        if (!cond && type == "InternalIP" && n.internal_ip.empty()) n.internal_ip = std::move(value);
        return errc::ok;
      });
    }
    return errc::ok;
  });
}

errc get_node(od::value& v, Node& n) {
  Meta m;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, true);
    if (k == "status") return get_node_status(val, n);
    if (k != "spec") return errc::ok;
    return fields(val, [&](std::string_view sk, od::value& sv) {
      if (sk == "unschedulable") return get(sv, n.unschedulable);
      if (sk != "taints") return errc::ok;
      return elements(sv, [&](od::value& item) {
        auto& t = n.taints.emplace_back();
        return fields(item, [&](std::string_view tk, od::value& tv) {
          if (tk == "key") return get(tv, t.key);
          if (tk == "value") return get(tv, t.value);
          if (tk != "effect") return errc::ok;
          std::string e;
          TS_TRY(get(tv, e));
          t.effect = to_effect(e);
          if (t.effect == TaintEffect::all) t.effect = TaintEffect::unknown;  // taints always have one
          return errc::ok;
        });
      });
    });
  }));
  TS_TRY(require(m, false, true));
  n.name = std::move(m.name);
  n.uid = std::move(m.uid);
  n.resource_version = std::move(m.resource_version);
  n.labels = std::move(m.labels);
  return errc::ok;
}

errc get_lease(od::value& v, Lease& l) {
  Meta m;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, false);
    if (k != "spec") return errc::ok;
    return fields(val, [&](std::string_view sk, od::value& sv) {
      if (sk == "holderIdentity") return get(sv, l.holder_identity);
      if (sk == "leaseDurationSeconds") return get(sv, l.lease_duration_seconds);
      if (sk == "acquireTime") return get_time(sv, l.acquire_time);
      if (sk == "renewTime") return get_time(sv, l.renew_time);
      if (sk == "leaseTransitions") return get(sv, l.lease_transitions);
      if (sk == "strategy") return get(sv, l.strategy);
      if (sk == "preferredHolder") return get(sv, l.preferred_holder);
      return errc::ok;
    });
  }));
  TS_TRY(require(m, false, false));
  l.ns = std::move(m.ns);
  l.name = std::move(m.name);
  l.uid = std::move(m.uid);
  l.resource_version = std::move(m.resource_version);
  return errc::ok;
}

errc get_status(od::value& v, Status& s) {
  std::string kind;
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "kind") return get(val, kind);
    if (k == "code") return get(val, s.code);
    if (k == "status") return get(val, s.status);
    if (k == "reason") return get(val, s.reason);
    if (k == "message") return get(val, s.message);
    if (k != "details") return errc::ok;
    return fields(val, [&](std::string_view dk, od::value& dv) {
      if (dk == "name") return get(dv, s.details_name);
      if (dk == "kind") return get(dv, s.details_kind);
      if (dk == "retryAfterSeconds") return get(dv, s.retry_after_seconds);
      if (dk != "causes") return errc::ok;
      return elements(dv, [&](od::value& item) {
        auto& c = s.causes.emplace_back();
        return fields(item, [&](std::string_view ck, od::value& cv) {
          if (ck == "reason") return get(cv, c.reason);
          if (ck == "message") return get(cv, c.message);
          if (ck == "field") return get(cv, c.field);
          return errc::ok;
        });
      });
    });
  }));
  return kind == "Status" ? errc::ok : errc::json_missing_field;
}

errc get_obj(od::value& v, Pod& p) { return get_pod(v, p); }
errc get_obj(od::value& v, Node& n) { return get_node(v, n); }
errc get_obj(od::value& v, Lease& l) { return get_lease(v, l); }

template <class T>
errc get_list(od::value& v, List<T>& out) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "items") {
      return elements(val, [&](od::value& item) { return get_obj(item, out.items.emplace_back()); });
    }
    if (k != "metadata") return errc::ok;
    return fields(val, [&](std::string_view mk, od::value& mv) {
      if (mk == "resourceVersion") return get(mv, out.resource_version);
      if (mk == "continue") return get(mv, out.continue_token);
      return errc::ok;
    });
  });
}

std::optional<EventType> to_event_type(std::string_view s) {
  if (s == "ADDED") return EventType::added;
  if (s == "MODIFIED") return EventType::modified;
  if (s == "DELETED") return EventType::deleted;
  if (s == "BOOKMARK") return EventType::bookmark;
  if (s == "ERROR") return EventType::error;
  return std::nullopt;
}

template <class T>
errc get_event_object(od::value& v, EventType type, WatchEvent<T>& ev) {
  if (type == EventType::error) return get_status(v, ev.status);
  if (type != EventType::bookmark) return get_obj(v, ev.object);
  // A bookmark is a near-empty object: only its resourceVersion counts.
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k != "metadata") return errc::ok;
    Meta m;
    TS_TRY(get_meta(val, m, false));
    ev.object.resource_version = std::move(m.resource_version);
    ev.initial_events_end = m.initial_events_end;
    return errc::ok;
  });
}

}  // namespace

// --- Decoder -----------------------------------------------------------

struct Decoder::Impl {
  od::parser parser{kMaxListBytes};
  std::unique_ptr<char[]> scratch;
  std::size_t scratch_size = 0;

  // Runs fn(document, out) on one JSON text of at most `limit` bytes.
  template <class T, class Fn>
  result<T> run(std::string_view json, std::size_t readable, std::size_t limit, Fn&& fn) {
    if (json.size() > limit) return errc::object_too_large;
    const char* data = json.data();
    std::size_t capacity = readable;
    if (readable < json.size() + kJsonPadding) {
      const std::size_t need = json.size() + kJsonPadding;
      if (scratch_size < need) {
        scratch = std::make_unique<char[]>(need);
        scratch_size = need;
      }
      std::memcpy(scratch.get(), json.data(), json.size());
      std::memset(scratch.get() + json.size(), 0, kJsonPadding);
      data = scratch.get();
      capacity = need;
    }
    T out{};
    errc e = errc::ok;
    {
      od::document doc;
      if (const auto err = parser.iterate(data, json.size(), capacity).get(doc); err) {
        e = from_simdjson(err);
      } else {
        e = fn(doc, out);
      }
    }
    if (json.size() > kMaxObjectBytes) shrink();
    if (e != errc::ok) return e;
    return out;
  }

  // A big list page grew the parser and scratch buffer; give that memory
  // back rather than holding it for the next small event.
  void shrink() {
    scratch.reset();
    scratch_size = 0;
    // On failure the parser keeps its larger buffers: still correct.
    [[maybe_unused]] const auto err = parser.allocate(kMaxObjectBytes);
  }
};

namespace {

// Anything after the root value (a second object, garbage) is malformed.
errc at_end(od::document& doc) {
  return doc.current_location().error() == simdjson::OUT_OF_BOUNDS ? errc::ok : errc::json_malformed;
}

// Decodes a whole document whose root is one object, with get(value, out).
template <class T, class Get>
auto whole(Get get) {
  return [get](od::document& doc, T& out) {
    od::value root;
    TS_SJ(doc.get_value().get(root));
    if (is_null(root)) return errc::json_malformed;
    TS_TRY(get(root, out));
    return at_end(doc);
  };
}

template <class T>
errc get_event(od::document& doc, WatchEvent<T>& ev) {
  od::value root;
  TS_SJ(doc.get_value().get(root));
  std::optional<EventType> type;
  bool have_object = false, deferred = false;
  TS_TRY(fields(root, [&](std::string_view k, od::value& val) {
    if (k == "type") {
      std::string_view s;
      TS_SJ(val.get_string().get(s));
      type = to_event_type(s);
      return type ? errc::ok : errc::json_malformed;
    }
    if (k != "object") return errc::ok;
    have_object = true;
    // The server writes "type" first; should another writer not, the
    // object is decoded on a second pass once its type is known.
    if (!type) {
      deferred = true;
      return errc::ok;
    }
    return get_event_object(val, *type, ev);
  }));
  TS_TRY(at_end(doc));
  if (!type || !have_object) return errc::json_missing_field;
  ev.type = *type;
  if (deferred) {
    doc.rewind();
    od::object obj;
    TS_SJ(doc.get_object().get(obj));
    od::value val;
    TS_SJ(obj.find_field_unordered("object").get(val));
    TS_TRY(get_event_object(val, *type, ev));
  }
  return errc::ok;
}

template <class T>
auto event() {
  return [](od::document& doc, WatchEvent<T>& ev) { return get_event(doc, ev); };
}

}  // namespace

Decoder::Decoder() : impl_(std::make_unique<Impl>()) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

result<Pod> Decoder::pod(std::string_view json, std::size_t readable) {
  return impl_->run<Pod>(json, readable, kMaxObjectBytes, whole<Pod>([](od::value& v, Pod& o) { return get_pod(v, o); }));
}
result<Node> Decoder::node(std::string_view json, std::size_t readable) {
  return impl_->run<Node>(json, readable, kMaxObjectBytes, whole<Node>([](od::value& v, Node& o) { return get_node(v, o); }));
}
result<Lease> Decoder::lease(std::string_view json, std::size_t readable) {
  return impl_->run<Lease>(json, readable, kMaxObjectBytes, whole<Lease>([](od::value& v, Lease& o) { return get_lease(v, o); }));
}
result<Status> Decoder::status(std::string_view json, std::size_t readable) {
  return impl_->run<Status>(json, readable, kMaxObjectBytes, whole<Status>([](od::value& v, Status& o) { return get_status(v, o); }));
}
result<PodList> Decoder::pod_list(std::string_view json, std::size_t readable) {
  return impl_->run<PodList>(json, readable, kMaxListBytes, whole<PodList>([](od::value& v, PodList& o) { return get_list(v, o); }));
}
result<NodeList> Decoder::node_list(std::string_view json, std::size_t readable) {
  return impl_->run<NodeList>(json, readable, kMaxListBytes, whole<NodeList>([](od::value& v, NodeList& o) { return get_list(v, o); }));
}
result<WatchEvent<Pod>> Decoder::pod_event(std::string_view line, std::size_t readable) {
  return impl_->run<WatchEvent<Pod>>(line, readable, kMaxObjectBytes, event<Pod>());
}
result<WatchEvent<Node>> Decoder::node_event(std::string_view line, std::size_t readable) {
  return impl_->run<WatchEvent<Node>>(line, readable, kMaxObjectBytes, event<Node>());
}
result<WatchEvent<Lease>> Decoder::lease_event(std::string_view line, std::size_t readable) {
  return impl_->run<WatchEvent<Lease>>(line, readable, kMaxObjectBytes, event<Lease>());
}

namespace {
// One parser per thread for the free functions: building a simdjson parser
// per call would cost more than most decodes.
Decoder& local_decoder() {
  thread_local Decoder d;
  return d;
}
}  // namespace

result<Pod> decode_pod(std::string_view json) { return local_decoder().pod(json); }
result<Node> decode_node(std::string_view json) { return local_decoder().node(json); }
result<Lease> decode_lease(std::string_view json) { return local_decoder().lease(json); }
result<Status> decode_status(std::string_view json) { return local_decoder().status(json); }
result<PodList> decode_pod_list(std::string_view json) { return local_decoder().pod_list(json); }
result<NodeList> decode_node_list(std::string_view json) { return local_decoder().node_list(json); }
result<WatchEvent<Pod>> decode_pod_event(std::string_view line) { return local_decoder().pod_event(line); }
result<WatchEvent<Node>> decode_node_event(std::string_view line) { return local_decoder().node_event(line); }
result<WatchEvent<Lease>> decode_lease_event(std::string_view line) { return local_decoder().lease_event(line); }

// --- MicroTime and Lease encoding ---------------------------------------

std::string format_micro_time(TimePoint t) {
  using namespace std::chrono;
  const auto us = floor<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss hms{us - day};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

std::optional<TimePoint> parse_micro_time(std::string_view s) {
  using namespace std::chrono;
  auto num = [&](std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int Y = 0, M = 0, D = 0, h = 0, m = 0, sec = 0;
  if (!num(0, 4, Y) || !num(5, 2, M) || !num(8, 2, D) || !num(11, 2, h) || !num(14, 2, m) ||
      !num(17, 2, sec) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      // Digits past the sixth are below our precision: truncated.
      if (pos - start < 6) micros = micros * 10 + (s[pos] - '0');
      ++pos;
    }
    if (pos == start) return std::nullopt;
    for (std::size_t n = pos - start; n < 6; ++n) micros *= 10;
  }
  int offset_min = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (!num(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !num(pos + 4, 2, om) ||
        oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_min = (s[pos] == '-' ? -1 : 1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const year_month_day ymd{year{Y}, month{static_cast<unsigned>(M)}, day{static_cast<unsigned>(D)}};
  if (!ymd.ok() || h > 23 || m > 59 || sec > 59) return std::nullopt;
  const auto tp = sys_days{ymd} + hours{h} + minutes{m - offset_min} + seconds{sec} + microseconds{micros};
  return time_point_cast<TimePoint::duration>(tp);
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(ch);  // UTF-8 passes through as is
        }
    }
  }
  out.push_back('"');
}

std::string encode_lease(const Lease& l) {
  std::string out;
  out.reserve(384);
  auto key = [&](std::string_view k) {
    if (out.back() != '{') out.push_back(',');
    append_json_string(out, k);
    out.push_back(':');
  };
  auto str = [&](std::string_view k, std::string_view v) { key(k), append_json_string(out, v); };
  out += R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{)";
  str("name", l.name);
  if (!l.ns.empty()) str("namespace", l.ns);
  // uid and resourceVersion make a PUT conditional on the object we read.
  if (!l.uid.empty()) str("uid", l.uid);
  if (!l.resource_version.empty()) str("resourceVersion", l.resource_version);
  out += R"(},"spec":{)";
  // Always written, even empty: releasing the lease is holderIdentity "".
  str("holderIdentity", l.holder_identity);
  if (l.lease_duration_seconds) key("leaseDurationSeconds"), out += std::to_string(*l.lease_duration_seconds);
  if (l.acquire_time) str("acquireTime", format_micro_time(*l.acquire_time));
  if (l.renew_time) str("renewTime", format_micro_time(*l.renew_time));
  if (l.lease_transitions) key("leaseTransitions"), out += std::to_string(*l.lease_transitions);
  if (l.strategy) str("strategy", *l.strategy);
  if (l.preferred_holder) str("preferredHolder", *l.preferred_holder);
  out += "}}";
  return out;
}

}  // namespace toysched::kube
