// simdjson on-demand decoding into objects.hpp; see decode.hpp for the rules
// and decode_detail.hpp for the walking helpers. Pods are in decode_pod.cpp,
// metadata in decode_meta.cpp.
#include "toysched/kube/decode.hpp"

#include "decode_detail.hpp"
#include "toysched/kube/quantity.hpp"

#include <cstring>

namespace toysched::kube {
namespace detail {

errc get_quantity(od::value& v, bool milli, std::int64_t& out) {
  std::string_view q;
  if (od::json_type t{}; v.type().get(t) == simdjson::SUCCESS && t == od::json_type::number) {
    // apimachinery's UnmarshalJSON also takes a bare number.
    q = v.raw_json_token();
    while (!q.empty() && (q.back() == ' ' || q.back() == '\n' || q.back() == '\r' || q.back() == '\t')) {
      q.remove_suffix(1);
    }
  } else {
    TS_SJ(v.get_string().get(q));
  }
  // Saturating: "memory: 100E" is valid to the API server; failing on it
  // would fail every list and watch that carries the object.
  const auto parsed = milli ? parse_quantity_milli_saturating(q) : parse_quantity_value_saturating(q);
  if (!parsed) return from_result(parsed.error());
  out = *parsed;
  return errc::ok;
}

errc get_resources(od::value& v, ResourceList& out) {
  return fields(v, [&](std::string_view name, od::value& val) {
    std::int64_t parsed = 0;
    TS_TRY(get_quantity(val, name == "cpu", parsed));
    if (name == "cpu") {
      out.r.milli_cpu = parsed, out.present |= ResourceList::cpu;
    } else if (name == "memory") {
      out.r.memory = parsed, out.present |= ResourceList::memory;
    } else if (name == "ephemeral-storage") {
      out.r.ephemeral_storage = parsed, out.present |= ResourceList::ephemeral;
    } else if (name == "pods") {
      out.r.pods = parsed, out.present |= ResourceList::pods;
    } else {
      extended_slot(out.r.extended, name) = parsed;
    }
    return errc::ok;
  });
}

TaintEffect to_effect(std::string_view s) {
  if (s.empty()) return TaintEffect::all;
  if (s == "NoSchedule") return TaintEffect::no_schedule;
  if (s == "PreferNoSchedule") return TaintEffect::prefer_no_schedule;
  if (s == "NoExecute") return TaintEffect::no_execute;
  return TaintEffect::unknown;
}

}  // namespace detail

using namespace detail;

namespace {

// --- nodes, leases, status ---------------------------------------------

errc get_node_status(od::value& v, Node& n) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "allocatable") {
      ResourceList l;
      TS_TRY(get_resources(val, l));
      n.allocatable = std::move(l.r);
      return errc::ok;
    }
    if (k == "images") {
      return elements(val, [&](od::value& item) {
        auto& img = n.images.emplace_back();
        return fields(item, [&](std::string_view ik, od::value& iv) {
          if (ik == "names") return get_strings(iv, img.names);
          if (ik == "sizeBytes") return get(iv, img.size_bytes);
          return errc::ok;
        });
      });
    }
    if (k == "declaredFeatures") return get_strings(val, n.declared_features);
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
        if (cond) n.conditions.emplace_back(std::move(type), std::move(value));
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
  take_meta(std::move(m), n);
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
  take_meta(std::move(m), l);
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
errc get_obj(od::value& v, Namespace& n) { return get_namespace(v, n); }
errc get_obj(od::value& v, Service& s) { return get_service(v, s); }
errc get_obj(od::value& v, ReplicationController& rc) { return get_replication_controller(v, rc); }
errc get_obj(od::value& v, ReplicaSet& rs) { return get_replica_set(v, rs); }
errc get_obj(od::value& v, StatefulSet& ss) { return get_stateful_set(v, ss); }
errc get_obj(od::value& v, PersistentVolumeClaim& c) { return get_persistent_volume_claim(v, c); }
errc get_obj(od::value& v, PersistentVolume& pv) { return get_persistent_volume(v, pv); }
errc get_obj(od::value& v, StorageClass& sc) { return get_storage_class(v, sc); }
errc get_obj(od::value& v, CSINode& n) { return get_csi_node(v, n); }
errc get_obj(od::value& v, VolumeAttachment& va) { return get_volume_attachment(v, va); }
errc get_obj(od::value& v, CSIDriver& d) { return get_csi_driver(v, d); }
errc get_obj(od::value& v, CSIStorageCapacity& c) { return get_csi_storage_capacity(v, c); }
errc get_obj(od::value& v, PodDisruptionBudget& pdb) { return get_pod_disruption_budget(v, pdb); }

// The tolerant second read of an object the decoder refused: every field on
// its own, every error ignored, so that what identifies the object is found
// even when another part of it is what failed.
void peek_identity(od::value& v, Undecodable& u) {
  auto str = [](od::value& val, std::string& out) {
    std::string_view s;
    if (val.get_string().get(s) == simdjson::SUCCESS) out.assign(s);
    return errc::ok;
  };
  (void)fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") {
      (void)fields(val, [&](std::string_view mk, od::value& mv) {
        if (mk == "name") return str(mv, u.name);
        if (mk == "namespace") return str(mv, u.ns);
        if (mk == "uid") return str(mv, u.uid);
        if (mk == "resourceVersion") return str(mv, u.resource_version);
        if (mk == "deletionTimestamp") u.deleting = !is_null(mv);
        return errc::ok;
      });
    } else if (k == "spec") {
      (void)fields(val, [&](std::string_view sk, od::value& sv) {
        if (sk == "nodeName") return str(sv, u.node_name);
        if (sk == "schedulerName") return str(sv, u.scheduler_name);
        if (sk == "schedulingGates") {
          (void)elements(sv, [&](od::value&) {
            u.scheduling_gated = true;
            return errc::ok;
          });
        }
        return errc::ok;
      });
    }
    return errc::ok;
  });
}

Undecodable peek(od::value& v, errc why) {
  Undecodable u;
  u.error = make_error_code(why).message();
  peek_identity(v, u);
  return u;
}

// List items that could not be read: their index and why.
using Failures = std::vector<std::pair<std::size_t, errc>>;

template <class T>
errc get_list(od::value& v, List<T>& out, Failures& failed) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "items") {
      std::size_t i = 0;
      return elements(val, [&](od::value& item) {
        // A bad item is skipped, not the list's failure; it is read again
        // for its identity once the whole list is known to be sound. A
        // broken JSON text fails the next step of this walk instead.
        if (const errc e = get_obj(item, out.items.emplace_back()); e != errc::ok) {
          out.items.pop_back();
          failed.emplace_back(i, e);
        }
        ++i;
        return errc::ok;
      });
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

// What a Decoder keeps between documents: the parser's buffers run to
// several bytes per input byte, and every object the server sends in
// practice is far below this.
constexpr std::size_t kKeptCapacity = std::size_t{4} << 20;

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
    if (json.size() > kKeptCapacity) shrink();
    if (e != errc::ok) return e;
    return out;
  }

  // A big list page or object grew the parser and scratch buffer; give
  // that memory back rather than holding it for the next small event.
  void shrink() {
    scratch.reset();
    scratch_size = 0;
    // On failure the parser keeps its larger buffers: still correct.
    [[maybe_unused]] const auto err = parser.allocate(kKeptCapacity);
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

// The event's "object", on a second pass over the document.
errc find_object(od::document& doc, od::value& val) {
  doc.rewind();
  od::object obj;
  TS_SJ(doc.get_object().get(obj));
  TS_SJ(obj.find_field_unordered("object").get(val));
  return errc::ok;
}

// An object that could not be read is the event's failure only where the
// object is the event's protocol (a bookmark, an ERROR's Status).
bool skippable(EventType t) { return t == EventType::added || t == EventType::modified || t == EventType::deleted; }

template <class T>
errc get_event(od::document& doc, WatchEvent<T>& ev) {
  od::value root;
  TS_SJ(doc.get_value().get(root));
  std::optional<EventType> type;
  bool have_object = false, deferred = false;
  errc object_error = errc::ok;
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
    object_error = get_event_object(val, *type, ev);
    return skippable(*type) ? errc::ok : object_error;
  }));
  TS_TRY(at_end(doc));
  if (!type || !have_object) return errc::json_missing_field;
  ev.type = *type;
  od::value val;
  if (deferred) {
    TS_TRY(find_object(doc, val));
    object_error = get_event_object(val, *type, ev);
    if (!skippable(*type)) TS_TRY(object_error);
  }
  if (object_error != errc::ok) {
    ev.object = T{};
    TS_TRY(find_object(doc, val));
    ev.undecodable = peek(val, object_error);
  }
  return errc::ok;
}

// Back over a list whose items `failed` could not be read, for what
// identifies each.
errc peek_items(od::document& doc, const Failures& failed, std::vector<Undecodable>& out) {
  doc.rewind();
  od::object root;
  TS_SJ(doc.get_object().get(root));
  od::value items;
  TS_SJ(root.find_field_unordered("items").get(items));
  std::size_t i = 0;
  auto next = failed.begin();
  return elements(items, [&](od::value& item) {
    if (next != failed.end() && next->first == i) out.push_back(peek(item, (next++)->second));
    ++i;
    return errc::ok;
  });
}

template <class T>
auto list_of() {
  return [](od::document& doc, List<T>& out) {
    Failures failed;
    TS_TRY(whole<List<T>>([&failed](od::value& v, List<T>& o) { return get_list(v, o, failed); })(doc, out));
    return failed.empty() ? errc::ok : peek_items(doc, failed, out.undecodable);
  };
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

namespace {
// One object, a list page, a watch event of a kind with a get_obj().
template <class T>
result<T> one(Decoder::Impl& impl, std::string_view json, std::size_t readable) {
  return impl.run<T>(json, readable, kMaxObjectBytes, whole<T>([](od::value& v, T& o) { return get_obj(v, o); }));
}
template <class T>
result<List<T>> page(Decoder::Impl& impl, std::string_view json, std::size_t readable) {
  return impl.run<List<T>>(json, readable, kMaxListBytes, list_of<T>());
}
template <class T>
result<WatchEvent<T>> one_event(Decoder::Impl& impl, std::string_view line, std::size_t readable) {
  return impl.run<WatchEvent<T>>(line, readable, kMaxObjectBytes, event<T>());
}
}  // namespace

result<Pod> Decoder::pod(std::string_view json, std::size_t readable) { return one<Pod>(*impl_, json, readable); }
result<Node> Decoder::node(std::string_view json, std::size_t readable) { return one<Node>(*impl_, json, readable); }
result<Lease> Decoder::lease(std::string_view json, std::size_t readable) { return one<Lease>(*impl_, json, readable); }
result<Status> Decoder::status(std::string_view json, std::size_t readable) {
  return impl_->run<Status>(json, readable, kMaxObjectBytes,
                            whole<Status>([](od::value& v, Status& o) { return get_status(v, o); }));
}
template <class T>
result<List<T>> Decoder::list(std::string_view json, std::size_t readable) {
  return page<T>(*impl_, json, readable);
}
template <class T>
result<WatchEvent<T>> Decoder::event(std::string_view line, std::size_t readable) {
  return one_event<T>(*impl_, line, readable);
}
template <class T>
result<T> Decoder::object(std::string_view json, std::size_t readable) {
  return one<T>(*impl_, json, readable);
}
#define TOYSCHED_DECODE(Type, ...)                                                                     \
  template result<List<Type>> Decoder::list<Type>(std::string_view json, std::size_t readable);        \
  template result<WatchEvent<Type>> Decoder::event<Type>(std::string_view line, std::size_t readable); \
  template result<Type> Decoder::object<Type>(std::string_view json, std::size_t readable);
TOYSCHED_KINDS(TOYSCHED_DECODE)
#undef TOYSCHED_DECODE

// One parser per thread for the free functions: building a simdjson parser
// per call would cost more than most decodes.
Decoder& thread_decoder() {
  thread_local Decoder d;
  return d;
}

result<Pod> decode_pod(std::string_view json) { return thread_decoder().pod(json); }
result<Node> decode_node(std::string_view json) { return thread_decoder().node(json); }
result<Lease> decode_lease(std::string_view json) { return thread_decoder().lease(json); }
result<Status> decode_status(std::string_view json) { return thread_decoder().status(json); }
}  // namespace toysched::kube
