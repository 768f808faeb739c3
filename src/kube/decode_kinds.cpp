// Kinds the scheduler reads only for its plugins: Namespaces (their labels,
// for pod affinity's namespaceSelector), the selectors of Services,
// ReplicationControllers, ReplicaSets and StatefulSets (for
// PodTopologySpread's default constraints), the storage kinds the volume
// plugins read (PersistentVolumeClaims, PersistentVolumes, StorageClasses),
// and PodDisruptionBudgets for preemption. Nothing else of them is kept.
// See decode.hpp for the rules, decode_detail.hpp for the helpers.
#include "decode_detail.hpp"

namespace toysched::kube::detail {
namespace {

// The common walk: metadata into `m` (what the kind keeps of it is then
// moved into `obj`), every other top-level field handed to `top(key, value)`.
template <class T, class Top>
errc get_object(od::value& v, T& obj, Meta& m, bool want_labels, bool want_claim, Top&& top, bool want_owners = false) {
  TS_TRY(fields(v, [&](std::string_view k, od::value& val) {
    if (k == "metadata") return get_meta(val, m, want_labels, want_owners, want_claim);
    return top(k, val);
  }));
  TS_TRY(require(m, false, false));
  take_meta(std::move(m), obj);
  return errc::ok;
}

// The same for a kind whose fields of interest are in spec: those are
// handed to `spec(key, value)`.
template <class T, class Spec>
errc get_kind(od::value& v, T& obj, bool want_labels, Spec&& spec) {
  Meta m;
  return get_object(v, obj, m, want_labels, false,
                    [&](std::string_view k, od::value& val) { return k == "spec" ? fields(val, spec) : errc::ok; });
}

// spec.selector as a plain map (Services, ReplicationControllers).
template <class T>
errc get_map_selector_kind(od::value& v, T& obj) {
  return get_kind(v, obj, false, [&](std::string_view k, od::value& val) {
    return k == "selector" ? get_map(val, obj.selector) : errc::ok;
  });
}

// spec.selector as a metav1.LabelSelector (ReplicaSets, StatefulSets).
template <class T>
errc get_label_selector_kind(od::value& v, T& obj) {
  return get_kind(v, obj, false, [&](std::string_view k, od::value& val) {
    return k == "selector" ? get_label_selector(val, obj.selector) : errc::ok;
  });
}

}  // namespace

errc get_namespace(od::value& v, Namespace& n) {
  return get_kind(v, n, true, [](std::string_view, od::value&) { return errc::ok; });
}
errc get_service(od::value& v, Service& s) { return get_map_selector_kind(v, s); }
errc get_replication_controller(od::value& v, ReplicationController& rc) { return get_map_selector_kind(v, rc); }
errc get_replica_set(od::value& v, ReplicaSet& rs) { return get_label_selector_kind(v, rs); }
errc get_stateful_set(od::value& v, StatefulSet& ss) { return get_label_selector_kind(v, ss); }

namespace {

// spec.accessModes, as AccessMode bits.
errc get_access_modes(od::value& v, std::uint8_t& out) {
  return elements(v, [&](od::value& mode) {
    std::string_view m;
    TS_SJ(mode.get_string().get(m));
    if (m == "ReadWriteOnce") out |= kReadWriteOnce;
    if (m == "ReadOnlyMany") out |= kReadOnlyMany;
    if (m == "ReadWriteMany") out |= kReadWriteMany;
    if (m == "ReadWriteOncePod") out |= kReadWriteOncePod;
    return errc::ok;
  });
}

// The `storage` entry of a resource list, in bytes (0: absent).
errc get_storage(od::value& v, std::int64_t& out) {
  ResourceList list;
  TS_TRY(get_resources(v, list));
  for (const auto& [name, value] : list.r.extended)
    if (name == "storage") out = value;
  return errc::ok;
}

errc get_volume_mode(od::value& v, bool& block) {
  std::string mode;
  TS_TRY(get(v, mode));
  block = mode == "Block";
  return errc::ok;
}

errc get_claim_spec(od::value& v, PersistentVolumeClaim& c) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "volumeName") return get(val, c.volume_name);
    if (k == "storageClassName") return get(val, c.storage_class_name);
    if (k == "accessModes") return get_access_modes(val, c.access_modes);
    if (k == "volumeMode") return get_volume_mode(val, c.block);
    if (k == "volumeAttributesClassName") return get(val, c.attributes_class);
    if (k == "selector") return get_label_selector(val, c.selector);
    if (k != "resources") return errc::ok;
    return fields(val, [&](std::string_view rk, od::value& rv) {
      return rk == "requests" ? get_storage(rv, c.storage_request) : errc::ok;
    });
  });
}

errc get_claim_ref(od::value& v, std::optional<ClaimRef>& out) {
  if (is_null(v)) return errc::ok;
  ClaimRef& r = out.emplace();
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "namespace") return get(val, r.ns);
    if (k == "name") return get(val, r.name);
    if (k == "uid") return get(val, r.uid);
    return errc::ok;
  });
}

errc get_volume_spec(od::value& v, PersistentVolume& pv) {
  return fields(v, [&](std::string_view k, od::value& val) {
    if (k == "capacity") return get_storage(val, pv.capacity);
    if (k == "accessModes") return get_access_modes(val, pv.access_modes);
    if (k == "volumeMode") return get_volume_mode(val, pv.block);
    if (k == "volumeAttributesClassName") return get(val, pv.attributes_class);
    if (k == "storageClassName") return get(val, pv.storage_class_name);
    if (k == "claimRef") return get_claim_ref(val, pv.claim_ref);
    if (k == "csi" && !is_null(val)) {
      return fields(val, [&](std::string_view ck, od::value& cv) {
        if (ck == "driver") return get(cv, pv.csi_driver);
        if (ck == "volumeHandle") return get(cv, pv.csi_volume_handle);
        return errc::ok;
      });
    }
    if (k != "nodeAffinity") return errc::ok;
    return fields(val, [&](std::string_view ak, od::value& av) {
      // A null `required` is an absent one: no constraint.
      if (ak != "required" || is_null(av)) return errc::ok;
      // A present selector with no terms matches no node (CheckNodeAffinity).
      pv.has_node_affinity = true;
      return get_node_selector(av, pv.node_affinity);
    });
  });
}

}  // namespace

errc get_persistent_volume_claim(od::value& v, PersistentVolumeClaim& c) {
  Meta m;
  TS_TRY(get_object(
      v, c, m, false, true,
      [&](std::string_view k, od::value& val) { return k == "spec" ? get_claim_spec(val, c) : errc::ok; }, true));
  c.read_write_once_pod = (c.access_modes & kReadWriteOncePod) != 0;
  // storage/util's GetPersistentVolumeClaimClass: the beta annotation,
  // when there, wins over spec.storageClassName.
  if (m.beta_storage_class) c.storage_class_name = std::move(m.beta_storage_class);
  c.bind_completed = m.bind_completed;
  c.selected_node = std::move(m.selected_node);
  for (const OwnerReference& o : m.owners)
    if (o.controller) c.controller_uid = o.uid;
  return errc::ok;
}

errc get_persistent_volume(od::value& v, PersistentVolume& pv) {
  Meta m;
  TS_TRY(get_object(v, pv, m, true, true, [&](std::string_view k, od::value& val) {
    if (k == "spec") return get_volume_spec(val, pv);
    if (k != "status") return errc::ok;
    return fields(val, [&](std::string_view sk, od::value& sv) {
      if (sk != "phase") return errc::ok;
      std::string phase;
      TS_TRY(get(sv, phase));
      pv.available = phase == "Available";
      return errc::ok;
    });
  }));
  if (m.beta_storage_class) pv.storage_class_name = std::move(*m.beta_storage_class);
  return errc::ok;
}

// A StorageClass has no spec: volumeBindingMode is a top-level field.
errc get_storage_class(od::value& v, StorageClass& sc) {
  Meta m;
  return get_object(v, sc, m, false, false, [&](std::string_view k, od::value& val) {
    if (k == "provisioner") return get(val, sc.provisioner);
    if (k == "allowedTopologies") {
      return elements(val, [&](od::value& term) {
        TopologyTerm& t = sc.allowed_topologies.emplace_back();
        return fields(term, [&](std::string_view tk, od::value& tv) {
          if (tk != "matchLabelExpressions") return errc::ok;
          return elements(tv, [&](od::value& e) {
            auto& [key, values] = t.expressions.emplace_back();
            return fields(e, [&](std::string_view ek, od::value& ev) {
              if (ek == "key") return get(ev, key);
              return ek == "values" ? get_strings(ev, values) : errc::ok;
            });
          });
        });
      });
    }
    if (k != "volumeBindingMode") return errc::ok;
    std::string mode;
    TS_TRY(get(val, mode));
    sc.wait_for_first_consumer = mode == "WaitForFirstConsumer";
    return errc::ok;
  });
}

// spec.drivers[]: name and allocatable.count (null or absent: no limit).
errc get_csi_node(od::value& v, CSINode& n) {
  return get_kind(v, n, false, [&](std::string_view k, od::value& val) {
    if (k != "drivers") return errc::ok;
    return elements(val, [&](od::value& d) {
      CSINode::Driver& driver = n.drivers.emplace_back();
      return fields(d, [&](std::string_view dk, od::value& dv) {
        if (dk == "name") return get(dv, driver.name);
        if (dk != "allocatable" || is_null(dv)) return errc::ok;
        return fields(
            dv, [&](std::string_view ak, od::value& av) { return ak == "count" ? get(av, driver.count) : errc::ok; });
      });
    });
  });
}

// spec.attacher, spec.nodeName and spec.source.persistentVolumeName (an
// inline volume spec, CSI migration's, is not kept).
errc get_volume_attachment(od::value& v, VolumeAttachment& va) {
  return get_kind(v, va, false, [&](std::string_view k, od::value& val) {
    if (k == "attacher") return get(val, va.attacher);
    if (k == "nodeName") return get(val, va.node_name);
    if (k != "source") return errc::ok;
    return fields(val, [&](std::string_view sk, od::value& sv) {
      return sk == "persistentVolumeName" ? get(sv, va.persistent_volume_name) : errc::ok;
    });
  });
}

errc get_csi_driver(od::value& v, CSIDriver& d) {
  return get_kind(v, d, false, [&](std::string_view k, od::value& val) {
    return k == "storageCapacity" ? get(val, d.storage_capacity) : errc::ok;
  });
}

// Top-level fields, no spec. maximumVolumeSize, when set, is what a volume
// may have (upstream's volumeLimit prefers it to capacity).
errc get_csi_storage_capacity(od::value& v, CSIStorageCapacity& c) {
  Meta m;
  std::int64_t capacity = 0, maximum = 0;
  bool has_capacity = false, has_maximum = false;
  TS_TRY(get_object(v, c, m, false, false, [&](std::string_view k, od::value& val) {
    if (k == "storageClassName") return get(val, c.storage_class_name);
    if (k == "nodeTopology") return get_label_selector(val, c.node_topology);
    if (k == "capacity" && !is_null(val)) return has_capacity = true, get_quantity(val, false, capacity);
    if (k == "maximumVolumeSize" && !is_null(val)) return has_maximum = true, get_quantity(val, false, maximum);
    return errc::ok;
  }));
  if (has_maximum) {
    c.limit = maximum;
  } else if (has_capacity) {
    c.limit = capacity;
  }
  return errc::ok;
}

// spec.selector; status.disruptionsAllowed and the keys of
// status.disruptedPods. Each time there must still be a string (or null), as
// the API server writes a metav1.Time: another type is a malformed object.
errc get_pod_disruption_budget(od::value& v, PodDisruptionBudget& pdb) {
  Meta m;
  return get_object(v, pdb, m, false, false, [&](std::string_view k, od::value& val) {
    if (k == "spec") {
      return fields(val, [&](std::string_view sk, od::value& sv) {
        return sk == "selector" ? get_label_selector(sv, pdb.selector) : errc::ok;
      });
    }
    if (k != "status") return errc::ok;
    return fields(val, [&](std::string_view sk, od::value& sv) {
      if (sk == "disruptionsAllowed") return get(sv, pdb.disruptions_allowed);
      if (sk != "disruptedPods") return errc::ok;
      return fields(sv, [&](std::string_view pod, od::value& when) {
        if (!is_null(when)) {
          std::string_view time;
          TS_SJ(when.get_string().get(time));
        }
        pdb.disrupted_pods.emplace_back(pod);
        return errc::ok;
      });
    });
  });
}

}  // namespace toysched::kube::detail
