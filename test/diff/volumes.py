"""A random cluster's storage, for the volume plugins (VolumeBinding,
VolumeZone, VolumeRestrictions): claims bound to volumes (some with node
affinity to a node or a zone, some labelled with a zone, some
ReadWriteOncePod), claims still unbound (a class that binds at once, or
one that waits for the first consumer), and claims named by pods that do
not exist.

No volume controller runs on the judge's lab: a bound pair is written
bound (the volume's claimRef, the claim's volumeName and bind-completed
annotation), as the controller would leave it.
"""

IMMEDIATE = "diff-immediate"
WAIT = "diff-wait"
STORAGE_CLASSES = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": IMMEDIATE},
     "provisioner": "example.com/none", "volumeBindingMode": "Immediate"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": WAIT},
     "provisioner": "example.com/none", "volumeBindingMode": "WaitForFirstConsumer"},
]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def claim(ns, name, access, cls, volume=None):
    meta = {"name": name, "namespace": ns}
    spec = {"accessModes": [access], "resources": {"requests": {"storage": "10Gi"}}, "storageClassName": cls}
    if volume:
        spec["volumeName"] = volume
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def volume(rng, name, access, ns, claim_name, nodes, zones):
    """A volume bound to ns/claim_name; maybe pinned to a node or a zone, maybe zone-labelled."""
    spec = {"capacity": {"storage": "10Gi"}, "accessModes": [access], "storageClassName": IMMEDIATE,
            "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": "/tmp/" + name},
            "claimRef": {"namespace": ns, "name": claim_name}}
    r = rng.random()
    if r < 0.35:
        expr = {"key": HOST, "operator": "In", "values": [rng.choice(nodes)]}
    elif r < 0.6 and zones:
        expr = {"key": ZONE, "operator": "In", "values": sorted(rng.sample(zones, rng.randint(1, len(zones))))}
    else:
        expr = None
    if expr:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}
    meta = {"name": name}
    if zones and rng.random() < 0.3:
        meta["labels"] = {ZONE: rng.choice(zones)}  # VolumeZone reads the label, not the affinity
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}


def storage(rng, prefix, namespaces, nodes, zones):
    """(volumes, claims, {namespace: [claim names pods may use]})."""
    volumes, claims, usable = [], [], {ns: [] for ns in namespaces}
    for j in range(rng.choice((0, 0, 4, 8, 12))):
        ns = rng.choice(namespaces)
        name = "%s-pvc%d" % (prefix, j)
        access = "ReadWriteOncePod" if rng.random() < 0.15 else "ReadWriteOnce"
        r = rng.random()
        if r < 0.55:
            pv = "%s-pv%d" % (prefix, j)
            volumes.append(volume(rng, pv, access, ns, name, nodes, zones))
            claims.append(claim(ns, name, access, IMMEDIATE, pv))
        elif r < 0.7:
            claims.append(claim(ns, name, access, IMMEDIATE))
        elif r < 0.85:
            claims.append(claim(ns, name, access, WAIT))
        # else: named by pods, never created
        usable[ns].append(name)
    return volumes, claims, usable


def add_volume(rng, spec, names):
    """Mount one of `names` (claims of the pod's namespace) into the pod."""
    if not names:
        return
    spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": rng.choice(names)}}]
