"""The volume workloads of ./dev bench (issue 48): the shapes of
scheduler_perf's volumes/performance-config.yaml (Kubernetes v1.36.3),
run as run.py runs SchedulingBasic (initial pods placed by the contender,
then the measured pods created while it runs), each pod with a claim of
its own on a volume of its own:

- in-tree-pvs (SchedulingInTreePVs): in-tree awsElasticBlockStore volumes,
  no CSINode;
- migrated-pvs (SchedulingMigratedInTreePVs): the same volumes, and a
  CSINode per node for ebs.csi.aws.com (count 39) whose
  migrated-plugins annotation names kubernetes.io/aws-ebs;
- csi-pvs (SchedulingCSIPVs): CSI volumes of ebs.csi.aws.com, the same
  CSINodes.

Each also as NAME-backlog (run.py's backlog: the measured pods all created,
pending, before the contender starts, no initial pods), so that the pod
creator, in the window in NAME, is not what sets the pace.

The objects follow upstream's templates (templates/pv-aws.yaml,
pv-csi.yaml, pvc.yaml: ReadOnlyMany, 1Gi, reclaim Retain) and naming (claim
pvc-I, volume NAMESPACE-vol-I; an in-tree volume's volumeID is vol-I, so the
initial and the measured volumes share IDs as upstream's do; a CSI volume's
handle is its name). Every volume and claim is created before any pod, and
every claim is Bound before the contender starts.

One difference, because the lab runs the persistentvolume-binder
(--controllers) and scheduler_perf runs none: upstream writes the bound
state itself (the claim's bind-completed annotation and volumeName, the
volume's claimRef without a UID, both statuses Bound). With a binder
running, such a claim is marked Lost (its volume's claimRef has no UID, or
the volume is not there yet). Here the volume is created pre-bound
(claimRef to its claim, no UID) and the claim names it (spec.volumeName),
as a user pre-binds them; the binder completes the binding (UID, statuses,
annotations). The end state is upstream's, with the UID.

Only the standard library: HTTP/1.1 keep-alive connections, one a thread.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass

DRIVER = "ebs.csi.aws.com"
ATTACH_LIMIT = 39  # upstream's csiNodeAllocatable count
PARALLEL = 16      # requests in flight while creating


@dataclass(frozen=True)
class VolumeWorkload:
    upstream: str        # the test case of volumes/performance-config.yaml
    source: str          # the volumes' source: "aws" (in-tree awsElasticBlockStore) or "csi"
    csi_nodes: bool      # a CSINode of DRIVER on each node, allocatable.count ATTACH_LIMIT
    threshold: float     # upstream's CI threshold (pods/s) ...
    threshold_case: str  # ... for this workload of that test case


VOLUME_WORKLOADS = {
    "in-tree-pvs": VolumeWorkload("SchedulingInTreePVs", "aws", False, 90,
                                  "5000Nodes_2000Pods: 5 000 nodes, 1 000 initial pods, 2 000 measured"),
    "migrated-pvs": VolumeWorkload("SchedulingMigratedInTreePVs", "aws", True, 35,
                                   "5000Nodes_5000Pods: 5 000 nodes, 5 000 initial pods, 5 000 measured"),
    "csi-pvs": VolumeWorkload("SchedulingCSIPVs", "csi", True, 48,
                              "5000Nodes_5000Pods: 5 000 nodes, 5 000 initial pods, 5 000 measured"),
}


BACKLOG = "-backlog"


def volume_workload(workload: str) -> VolumeWorkload | None:
    """The volume workload NAME or NAME-backlog is; None for another."""
    return VOLUME_WORKLOADS.get(workload.removesuffix(BACKLOG))


def is_backlog(workload: str) -> bool:
    """Whether every measured pod is pending before the contender starts."""
    return workload == "backlog" or workload.endswith(BACKLOG) and volume_workload(workload) is not None


def upstream_name(workload: str) -> str:
    """scheduler_perf's name of a bench workload (basic: SchedulingBasic)."""
    w = volume_workload(workload)
    return w.upstream if w else "SchedulingBasic" if workload == "basic" else workload


def lab_flags(workload: str) -> list[str]:
    """kube-lab's flags for a workload: the binder, and the CSINodes where upstream makes them."""
    w = volume_workload(workload)
    if w is None:
        return []
    return ["--controllers"] + (["--csi-driver", DRIVER, "--csi-attach-limit", str(ATTACH_LIMIT)]
                                if w.csi_nodes else [])


def claim_name(i: int) -> str:
    return f"pvc-{i}"


def volume_name(ns: str, i: int) -> str:
    return f"{ns}-vol-{i}"


def volume(ns: str, i: int, source: str) -> dict:
    """Pod i's volume, pre-bound to its claim."""
    name = volume_name(ns, i)
    src = ({"awsElasticBlockStore": {"volumeID": f"vol-{i}"}} if source == "aws"
           else {"csi": {"driver": DRIVER, "volumeHandle": name}})
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                     "persistentVolumeReclaimPolicy": "Retain", **src,
                     "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns,
                                  "name": claim_name(i)}}}


def claim(ns: str, i: int) -> dict:
    """Pod i's claim, naming its volume."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name(i), "namespace": ns},
            "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}},
                     "volumeName": volume_name(ns, i)}}


def pod(ns: str, i: int, scheduler: str, prefix: str) -> dict:
    """bench-ceiling create's pod (scheduler_perf's pod-default: one pause
    container, 100m / 500Mi), with claim i mounted as upstream's are."""
    res = {"cpu": "100m", "memory": "500Mi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{prefix}{i:06d}", "namespace": ns, "labels": {"app": "bench"}},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": res, "limits": dict(res)}}],
                     "volumes": [{"name": "vol", "persistentVolumeClaim": {"claimName": claim_name(i)}}]}}


class Client:
    """One keep-alive connection to the lab's API server (ApiServer's address, token and CA)."""

    def __init__(self, api):
        u = urllib.parse.urlsplit(api.base)
        self.conn = http.client.HTTPSConnection(u.hostname, u.port, context=api.ctx, timeout=60)
        self.headers = {"Authorization": "Bearer " + api.token, "Content-Type": "application/json",
                        "Accept": "application/json"}

    def request(self, verb: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        self.conn.request(verb, path, json.dumps(body) if body is not None else None, self.headers)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data else {})

    def close(self) -> None:
        self.conn.close()


def post_all(api, posts: list[tuple[str, dict]], parallel: int = PARALLEL) -> float:
    """POST each (path, object), `parallel` in flight; the seconds it took.
    Any answer but 201 fails the lot."""
    lock = threading.Lock()
    todo = iter(posts)
    errors: list[str] = []

    def work() -> None:
        c = Client(api)
        try:
            while not errors:
                with lock:
                    item = next(todo, None)
                if item is None:
                    return
                status, obj = c.request("POST", *item)
                if status != 201:
                    errors.append(f"POST {item[0]} {item[1]['metadata']['name']}: {status} {obj.get('message')}")
        except Exception as e:  # reported below, never a hung run
            errors.append(str(e))
        finally:
            c.close()
    t0 = time.monotonic()
    threads = [threading.Thread(target=work) for _ in range(min(parallel, len(posts)) or 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"creating failed: {errors[0]}")
    return time.monotonic() - t0


def ensure_namespace(api, ns: str) -> None:
    c = Client(api)
    try:
        status, obj = c.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": ns}})
    finally:
        c.close()
    if status not in (201, 409):
        raise RuntimeError(f"cannot create namespace {ns}: {status} {obj.get('message')}")


def bound_claims(api, ns: str) -> int:
    c = Client(api)
    try:
        status, obj = c.request("GET", f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
    finally:
        c.close()
    if status != 200:
        raise RuntimeError(f"listing the claims of {ns}: {status} {obj.get('message')}")
    return sum(1 for i in obj.get("items", []) if i.get("status", {}).get("phase") == "Bound")


def prepare_volumes(api, workload: str, counts: dict[str, int], timeout: float = 300) -> dict:
    """Every volume, then every claim, of each namespace (name -> pods),
    then wait until the binder has bound every claim; the figures. Nothing
    for a workload without volumes."""
    w = volume_workload(workload)
    if w is None:
        return {}
    source = w.source
    for ns in counts:
        ensure_namespace(api, ns)
    t0 = time.monotonic()
    post_all(api, [("/api/v1/persistentvolumes", volume(ns, i, source)) for ns, n in counts.items()
                   for i in range(n)])
    post_all(api, [(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim(ns, i)) for ns, n in counts.items()
                   for i in range(n)])
    created = time.monotonic() - t0
    deadline = time.monotonic() + timeout
    while (bound := sum(bound_claims(api, ns) for ns in counts)) < sum(counts.values()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {bound} of {sum(counts.values())} claims Bound after {timeout:.0f}s")
        time.sleep(0.5)
    return {"volumes": sum(counts.values()), "volumes_create_s": created, "volumes_bound_s": time.monotonic() - t0}


def create_volume_pods(api, scheduler: str, ns: str, count: int, prefix: str = "p-") -> dict:
    """Pods 0..count-1 of ns, each with its claim: create_pods' result."""
    secs = post_all(api, [(f"/api/v1/namespaces/{ns}/pods", pod(ns, i, scheduler, prefix)) for i in range(count)])
    return {"created": count, "seconds": secs, "wall_seconds": secs}
