"""One cluster on the lab: create it, let both schedulers see it, ask each
about every pending pod, and take it down again.

How both sides see exactly the same state: the pending pods are created
held by the judge's scheduling gate, which toy-scheduler respects (a gated
pod is not its to place) and kube-lab judge reads. kube-lab judge takes one
snapshot of the bound pods and judges every gated pod against it; nothing
it computes is kept from one pod to the next. toy-scheduler in --dry-run
assumes each pod it decides onto its node, which would change what the
next pod sees; so its pods go one at a time: the gate is removed, the
decision read from /debug/explain, and the pod deleted, which drops the
assumption, before the next gate is removed. The deletion and the next
ungating reach toy-scheduler on the one pod watch, in that order, so the
next decision never sees the pod before.

Chained (--chain): each decided pod stays where toy-scheduler put it, and
kube-lab judge is asked about the next pod alone with the ones before
counted there (--assume), as kube-scheduler's cache counts a pod it
assumed: a burst decided one pod after another, from the same state on
both sides. Slower (kube-lab judge once per pod).
"""
import json
import subprocess
import time
import urllib.error
import urllib.request

import generate

TOY_ANSWER_TIMEOUT = 20.0


class AskError(Exception):
    """The cluster could not be set up or asked: not a difference, a failure to judge."""


def wait_for(timeout, what, cond, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AskError("timed out after %gs waiting for %s" % (timeout, what))
        time.sleep(interval)


class Toy:
    """toy-scheduler's plain HTTP endpoints (--metrics-bind-address)."""

    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port

    def get(self, path, missing_ok=False):
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as r:
                return json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            if e.code == 404 and missing_ok:
                return None
            raise


def apply(api, objs):
    """Create the cluster's objects; returns the pending pods as created."""
    for ns in objs["namespaces"]:
        api.ensure(ns)
        api.apply_labels("/api/v1/namespaces/" + ns["metadata"]["name"], ns["metadata"]["labels"])
    for node in objs["nodes"]:
        api.create(node)
    for obj in objs["services"] + objs["volumes"] + objs["claims"]:
        api.create(obj)
    uids = {}
    for rs in objs["replicasets"]:
        made = api.create(rs)
        uids[(rs["metadata"]["namespace"], rs["metadata"]["name"])] = made["metadata"]["uid"]
    for pod in objs["bound"] + objs["pending"]:
        for ref in pod["metadata"].get("ownerReferences", []):
            ref["uid"] = uids[(pod["metadata"]["namespace"], ref["name"])]
    for pod in objs["bound"]:
        api.create(pod)
    return [api.create(pod) for pod in objs["pending"]]


def baseline(toy):
    """What toy-scheduler holds with no cluster on the lab: the lab's own
    Service (default/kubernetes) and the like, to count ours on top of."""
    return toy.get("/debug/cluster-objects")["counts"]


def wait_synced(toy, objs, base, pending):
    """Until toy-scheduler's cache holds exactly the cluster: its nodes and
    bound pods, its Services and ReplicaSets, and the namespaces' labels."""
    want_nodes, want_bound = len(objs["nodes"]), len(objs["bound"])

    def cache_ok():
        c = toy.get("/debug/cache")
        return len(c["nodes"]) == want_nodes and c["bound_pods"] == want_bound and c["assumed_pods"] == 0

    wait_for(60, "toy-scheduler's cache to hold %d nodes and %d bound pods" % (want_nodes, want_bound), cache_ok)

    want = {"services": "services", "replicasets": "replicasets", "persistentvolumes": "volumes",
            "persistentvolumeclaims": "claims"}

    def objects_ok():
        c = toy.get("/debug/cluster-objects")["counts"]
        return all(c[kind] == base[kind] + len(objs[mine]) for kind, mine in want.items())

    wait_for(60, "toy-scheduler's Services, ReplicaSets, volumes and claims", objects_ok)
    labels = {ns["metadata"]["name"]: ns["metadata"]["labels"] for ns in objs["namespaces"]}
    seen = set()
    for pod in pending:  # one pod per namespace shows the labels toy-scheduler holds for it
        ns = pod["metadata"]["namespace"]
        if ns in seen:
            continue
        seen.add(ns)
        key = "%s/%s" % (ns, pod["metadata"]["name"])
        wait_for(60, "toy-scheduler's labels of namespace " + ns, lambda: toy.get(
            "/debug/cluster-objects?pod=" + key).get("pod", {}).get("namespace_labels") == labels[ns])


def ask_upstream(kube_lab, kubeconfig, config, out_path, assumed=(), only=None):
    """kube-lab judge over the gated pods (or `only` that one, "NS/NAME"),
    with the pods of `assumed` ((NS/NAME, node) pairs) counted where they
    were decided: {uid: its answer}."""
    argv = [kube_lab, "judge", "--kubeconfig", kubeconfig, "--config", config, "--out", out_path]
    argv += ["--assume=%s=%s" % a for a in assumed]
    if only:
        argv += ["--only", only]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AskError("kube-lab judge failed (%d): %s" % (p.returncode, p.stderr.strip()))
    with open(out_path) as f:
        answer = json.load(f)
    return {a["uid"]: a for a in answer["pods"]}, answer


def ask_toy(api, toy, pod, keep=False):
    """Ungate one pod, read toy-scheduler's decision, delete the pod (with
    `keep`, leave it: toy-scheduler counts it where it decided)."""
    meta = pod["metadata"]
    path = "/api/v1/namespaces/%s/pods/%s" % (meta["namespace"], meta["name"])
    api.request("PATCH", path, [{"op": "remove", "path": "/spec/schedulingGates"}],
                content_type="application/json-patch+json")
    key = "%s/%s" % (meta["namespace"], meta["name"])

    def answered():
        e = toy.get("/debug/explain?pod=" + key, missing_ok=True)
        return e if e is not None and e.get("uid") == meta["uid"] else None

    try:
        explain = wait_for(TOY_ANSWER_TIMEOUT, "toy-scheduler's decision on " + key, answered, interval=0.005)
    finally:
        if not keep:
            api.delete(path)
    return explain


def delete_all(api, collection):
    """Delete every object of a collection, their finalizers first: no
    controller on the judge's lab would ever remove the volume protection
    ones (kubernetes.io/pvc-protection, kubernetes.io/pv-protection)."""
    for item in api.list(collection):
        path = "%s/%s" % (collection, item["metadata"]["name"])
        if item["metadata"].get("finalizers"):
            api.request("PATCH", path, {"metadata": {"finalizers": None}},
                        content_type="application/merge-patch+json")
        api.delete(path)


def clean(api, toy):
    """Delete the cluster and wait until toy-scheduler holds none of it."""
    for ns in generate.NAMESPACES:
        for kind in ("pods", "services", "persistentvolumeclaims"):
            delete_all(api, "/api/v1/namespaces/%s/%s" % (ns, kind))
        delete_all(api, "/apis/apps/v1/namespaces/%s/replicasets" % ns)
    delete_all(api, "/api/v1/persistentvolumes")
    delete_all(api, "/api/v1/nodes")  # the judge's lab has no nodes of its own (--nodes 0)

    def empty():
        c = toy.get("/debug/cache")
        counts = toy.get("/debug/cluster-objects")["counts"]
        return (not c["nodes"] and c["bound_pods"] == 0 and c["assumed_pods"] == 0
                and counts["persistentvolumes"] == 0 and counts["persistentvolumeclaims"] == 0)

    wait_for(60, "toy-scheduler's cache to empty", empty)
