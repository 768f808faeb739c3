"""Random clusters for the differential judge, each from (seed, index) alone.

A cluster is what both schedulers are asked about: namespaces (their
labels, for pod affinity's namespaceSelector), nodes (allocatable, zones,
labels, taints, images, some cordoned), Services and ReplicaSets (for
PodTopologySpread's default spreading), pods already bound to nodes
(requests, host ports, priorities, labels, pod (anti-)affinity), then
pending pods with random constraints, held by the judge's scheduling gate.

Storage (volumes.py): claims, bound or not, and volumes, for the volume
plugins. Every object is plain JSON as the API server takes it. Names carry the
cluster's index, so a cluster never meets a leftover of the one before.
Clusters stay under 100 nodes: both schedulers then filter every node
(percentageOfNodesToScore).
"""
import random

import volumes

GATE = "toysched.dev/judge"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
NAMESPACES = ("diff-a", "diff-b", "diff-c")
APPS = ("web", "db", "cache", "batch", "api")
PRIORITY_CLASSES = {"diff-low": 10, "diff-mid": 100, "diff-high": 1000}
# (name, size): a few images, some on many nodes, some on few.
IMAGES = (
    ("registry.k8s.io/pause:3.9", 700 * 1024),
    ("docker.io/library/nginx:1.27", 150 * 2**20),
    ("docker.io/library/redis:7", 40 * 2**20),
    ("docker.io/library/postgres:16", 400 * 2**20),
    ("quay.io/prometheus/node-exporter:v1.8.0", 25 * 2**20),
    ("example.com/big/model:2", 2 * 2**30),
    ("example.com/tools", 300 * 2**20),  # untagged: a node lists it as example.com/tools:latest
)
RUNTIME_CLASS = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "diff-overhead"},
                 "handler": "runc", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}}
GPU = "example.com/gpu"
HUGEPAGES = "hugepages-2Mi"
DECLARED_FEATURE = "RestartAllContainersOnContainerExits"
TAINT_KEYS = ("dedicated", "gpu", "spot")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
CPUS = ("1", "2", "4", "8", "16", "3500m")
MEMORIES = ("2Gi", "4Gi", "8Gi", "16Gi", "32Gi", "6000Mi")
POD_CPUS = ("10m", "50m", "100m", "100m", "250m", "250m", "500m", "1", "1500m", "2")
POD_MEMORIES = ("16Mi", "64Mi", "64Mi", "128Mi", "128Mi", "512Mi", "512Mi", "1Gi", "2Gi", "3Gi")


def labels_selector(rng, key="app", values=APPS):
    """A label selector: matchLabels or matchExpressions over `key`."""
    r = rng.random()
    if r < 0.5:
        return {"matchLabels": {key: rng.choice(values)}}
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
    expr = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = sorted(rng.sample(values, rng.randint(1, 2)))
    return {"matchExpressions": [expr]}


class Cluster:
    """One random cluster: build() returns its objects, in creation order."""

    def __init__(self, seed, index, profiles, pending):
        self.rng = random.Random("%s/%d" % (seed, index))
        self.index = index
        self.profiles = list(profiles)
        self.pending_count = pending
        self.zones = ["zone-%d" % z for z in range(self.rng.choice((1, 2, 3, 3, 4)))]
        self.nodes = []
        self.used = {}  # node name -> [cpu millis, memory bytes, pods] of the bound pods placed there
        self.workloads = []  # (namespace, app, kind) of the ReplicaSets

    def name(self, what, i):
        return "c%d-%s%d" % (self.index, what, i)

    def build(self):
        rng = self.rng
        out = {"namespaces": self.namespaces()}
        out["nodes"] = [self.node(i) for i in range(rng.randint(3, rng.choice((8, 20, 40, 90))))]
        out["services"], out["replicasets"] = self.workload_objects()
        out["volumes"], out["claims"], self.claims = volumes.storage(
            rng, "c%d" % self.index, NAMESPACES, [n[0] for n in self.nodes], self.zones)
        self.bound_claims = {ns: [c["metadata"]["name"] for c in out["claims"]
                                  if c["metadata"]["namespace"] == ns and c["spec"].get("volumeName")]
                             for ns in NAMESPACES}
        bound = []
        for i in range(int(len(out["nodes"]) * rng.uniform(0, 3))):
            p = self.bound_pod(i)
            if p is not None:
                bound.append(p)
        out["bound"] = bound
        out["pending"] = [self.pending_pod(i) for i in range(self.pending_count)]
        return out

    # -- namespaces and nodes -------------------------------------------------
    def namespaces(self):
        rng = self.rng
        out = []
        for ns in NAMESPACES:
            labels = {"kubernetes.io/metadata.name": ns}
            if rng.random() < 0.6:
                labels["team"] = rng.choice(("red", "blue"))
            if rng.random() < 0.5:
                labels["env"] = rng.choice(("prod", "dev"))
            out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})
        return out

    def node(self, i):
        rng = self.rng
        name = self.name("n", i)
        labels = {HOST: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        if self.zones and rng.random() < 0.92:
            labels[ZONE] = self.zones[i % len(self.zones)] if rng.random() < 0.7 else rng.choice(self.zones)
            labels[REGION] = "region-1"
        if rng.random() < 0.5:
            labels["disktype"] = rng.choice(("ssd", "hdd"))
        if rng.random() < 0.5:
            labels["generation"] = str(rng.randint(1, 5))
        if rng.random() < 0.3:
            labels["tier"] = rng.choice(("frontend", "backend"))
        alloc = {"cpu": rng.choice(CPUS), "memory": rng.choice(MEMORIES),
                 "pods": rng.choice(("110", "110", "110", "110", "4", "12")), "ephemeral-storage": "100Gi"}
        if rng.random() < 0.15:
            alloc[GPU] = str(rng.choice((1, 2, 4)))
        if rng.random() < 0.15:
            alloc[HUGEPAGES] = rng.choice(("256Mi", "1Gi"))
        taints = []
        if rng.random() < 0.25:
            for key in rng.sample(TAINT_KEYS, rng.randint(1, 2)):
                t = {"key": key, "effect": rng.choice(EFFECTS)}
                if rng.random() < 0.7:
                    t["value"] = rng.choice(("a", "b"))
                taints.append(t)
        images = [{"names": [n if ":" in n else n + ":latest"], "sizeBytes": size}
                  for n, size in IMAGES if rng.random() < 0.35]
        spec = {"unschedulable": True} if rng.random() < 0.05 else {}
        status = {}
        if rng.random() < 0.5:
            status["declaredFeatures"] = [DECLARED_FEATURE]
        if taints:
            spec["taints"] = taints
        self.nodes.append((name, labels, alloc))
        self.used[name] = [0, 0, 0]
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
                "status": dict(status, capacity=alloc, allocatable=alloc, images=images,
                               conditions=[{"type": "Ready", "status": "True", "reason": "KubeletReady"}])}

    def workload_objects(self):
        rng = self.rng
        services, replicasets = [], []
        for ns in NAMESPACES:
            for app in APPS:
                if rng.random() < 0.3:
                    services.append({"apiVersion": "v1", "kind": "Service",
                                     "metadata": {"name": "%s-%s" % (self.name("svc", 0), app), "namespace": ns},
                                     "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
                if rng.random() < 0.3:
                    name = "%s-%s" % (self.name("rs", 0), app)
                    self.workloads.append((ns, app, name))
                    replicasets.append({
                        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": ns},
                        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": app}},
                                 "template": {"metadata": {"labels": {"app": app}},
                                              "spec": {"containers": [{"name": "c", "image": IMAGES[0][0]}]}}}})
        return services, replicasets

    # -- pods -----------------------------------------------------------------
    def containers(self, big=False):
        rng = self.rng
        out = []
        for c in range(rng.choice((1, 1, 1, 2))):
            ctr = {"name": "c%d" % c, "image": rng.choice(IMAGES)[0]}
            r = rng.random()
            req = {}
            if r < 0.75:
                req = {"cpu": rng.choice(POD_CPUS), "memory": rng.choice(POD_MEMORIES)}
            elif r < 0.85:
                req = {"cpu": rng.choice(POD_CPUS)}
            elif r < 0.9:
                req = {"memory": rng.choice(POD_MEMORIES)}
            if rng.random() < 0.1:
                req["ephemeral-storage"] = rng.choice(("1Gi", "30Gi", "200Gi"))
            if big:
                req["cpu"] = rng.choice(("20", "64"))
            if req:
                ctr["resources"] = {"requests": req}
            out.append(ctr)
        return out

    def pod_base(self, name, ns, app):
        rng = self.rng
        labels = {"app": app}
        if rng.random() < 0.5:
            labels["version"] = rng.choice(("v1", "v2"))
        if rng.random() < 0.3:
            labels["tier"] = rng.choice(("frontend", "backend"))
        spec = {"containers": self.containers(), "terminationGracePeriodSeconds": 0}
        if rng.random() < 0.4:
            spec["priorityClassName"] = rng.choice(sorted(PRIORITY_CLASSES))
        if rng.random() < 0.1:
            port = {"containerPort": 8080, "hostPort": rng.choice((80, 443, 8080)),
                    "protocol": rng.choice(("TCP", "TCP", "UDP"))}
            if rng.random() < 0.3:
                port["hostIP"] = "127.0.0.1"
            spec["containers"][0]["ports"] = [port]
        if rng.random() < 0.1:
            init = {"name": "init", "image": IMAGES[0][0],
                    "resources": {"requests": {"cpu": rng.choice(POD_CPUS), "memory": rng.choice(POD_MEMORIES)}}}
            if rng.random() < 0.4:
                init["restartPolicy"] = "Always"  # a sidecar: it counts beside the containers, not before them
            spec["initContainers"] = [init]
        if rng.random() < 0.05:
            spec["runtimeClassName"] = RUNTIME_CLASS["metadata"]["name"]  # admission adds its overhead
        meta = {"name": name, "namespace": ns, "labels": labels}
        owners = [w for w in self.workloads if w[0] == ns and w[1] == app]
        if owners and rng.random() < 0.6:
            # The ReplicaSet's uid is known once it exists: the driver fills it in.
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owners[0][2],
                                        "uid": "", "controller": True}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def bound_pod(self, i):
        rng = self.rng
        ns, app = rng.choice(NAMESPACES), rng.choice(APPS)
        pod = self.pod_base(self.name("b", i), ns, app)
        spec = pod["spec"]
        if rng.random() < 0.12:
            term = self.pod_term(ns)
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        elif rng.random() < 0.08:
            term = self.pod_term(ns)
            spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        elif rng.random() < 0.15:
            kind = rng.choice(("podAffinity", "podAntiAffinity"))
            spec["affinity"] = {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "podAffinityTerm": self.pod_term(ns)}]}}
        if rng.random() < 0.1:
            volumes.add_volume(rng, spec, self.bound_claims[ns])
        node = self.place(pod)
        if node is None:
            return None
        spec["nodeName"] = node
        return pod

    def place(self, pod):
        """A node the pod's requests fit on (so the bound pods are a cluster
        a scheduler could have made), or None."""
        cpu = sum(quantity(c.get("resources", {}).get("requests", {}).get("cpu", "0"), milli=True)
                  for c in pod["spec"]["containers"])
        mem = sum(quantity(c.get("resources", {}).get("requests", {}).get("memory", "0"))
                  for c in pod["spec"]["containers"])
        for _ in range(4):
            name, _, alloc = self.rng.choice(self.nodes)
            u = self.used[name]
            if (u[0] + cpu <= quantity(alloc["cpu"], milli=True) and u[1] + mem <= quantity(alloc["memory"])
                    and u[2] + 1 <= int(alloc["pods"])):
                u[0] += cpu
                u[1] += mem
                u[2] += 1
                return name
        return None

    def pod_term(self, ns):
        rng = self.rng
        term = {"labelSelector": labels_selector(rng),
                "topologyKey": rng.choice((HOST, HOST, ZONE, ZONE, REGION))}
        r = rng.random()
        if r < 0.15:
            term["namespaces"] = sorted(rng.sample(NAMESPACES, rng.randint(1, 2)))
        elif r < 0.3:
            term["namespaceSelector"] = rng.choice(({}, labels_selector(rng, "team", ("red", "blue")),
                                                    labels_selector(rng, "env", ("prod", "dev"))))
        if rng.random() < 0.1:
            term["matchLabelKeys" if rng.random() < 0.5 else "mismatchLabelKeys"] = ["version"]
        return term

    def pending_pod(self, i):
        rng = self.rng
        ns, app = rng.choice(NAMESPACES), rng.choice(APPS)
        pod = self.pod_base(self.name("p", i), ns, app)
        spec = pod["spec"]
        spec["schedulerName"] = rng.choice(self.profiles)
        spec["schedulingGates"] = [{"name": GATE}]
        if rng.random() < 0.04:
            spec["containers"] = self.containers(big=True)
        if rng.random() < 0.06:
            self.pod_level_resources(spec)
        if rng.random() < 0.15:
            volumes.add_volume(rng, spec, self.claims[ns])
        if rng.random() < 0.04:
            # A rule only a node declaring RestartAllContainersOnContainerExits
            # may run (NodeDeclaredFeatures).
            c = spec["containers"][0]
            c["restartPolicy"] = "Never"
            c["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                        "exitCodes": {"operator": "In", "values": [42]}}]
        if rng.random() < 0.08:
            spec["containers"][0].setdefault("resources", {}).setdefault("requests", {})[GPU] = "1"
            spec["containers"][0]["resources"]["limits"] = {GPU: "1"}
        if rng.random() < 0.15:
            spec["nodeSelector"] = rng.choice(({"disktype": "ssd"}, {ZONE: rng.choice(self.zones or ["zone-0"])},
                                               {"tier": "backend"}))
        if rng.random() < 0.35:
            spec["tolerations"] = self.tolerations()
        affinity = {}
        if rng.random() < 0.4:
            affinity["nodeAffinity"] = self.node_affinity()
        for kind in ("podAffinity", "podAntiAffinity"):
            a = self.pod_affinity(ns)
            if a:
                affinity[kind] = a
        if affinity:
            spec["affinity"] = affinity
        if rng.random() < 0.3:
            spread = {}
            for _ in range(rng.choice((1, 1, 2))):
                c = self.spread(pod)  # the API refuses two of one topologyKey and whenUnsatisfiable
                spread.setdefault((c["topologyKey"], c["whenUnsatisfiable"]), c)
            spec["topologySpreadConstraints"] = list(spread.values())
        return pod

    def pod_level_resources(self, spec):
        """spec.resources (PodLevelResources, beta and on in 1.36): the pod's
        requests, its containers' left unset; some with hugepages, which
        need a limit equal to the request."""
        rng = self.rng
        for c in spec["containers"] + spec.get("initContainers", []):
            c.pop("resources", None)  # the API wants the pod's requests at least their sum
        req = {"cpu": rng.choice(POD_CPUS), "memory": rng.choice(POD_MEMORIES)}
        res = {"requests": req}
        if rng.random() < 0.5:
            req[HUGEPAGES] = rng.choice(("64Mi", "128Mi", "512Mi"))
            res["limits"] = {HUGEPAGES: req[HUGEPAGES], "memory": req["memory"]}
        spec["resources"] = res

    def tolerations(self):
        rng = self.rng
        if rng.random() < 0.07:
            return [{"operator": "Exists"}]
        out = []
        for key in rng.sample(TAINT_KEYS, rng.randint(1, 2)):
            t = {"key": key}
            if rng.random() < 0.5:
                t["operator"] = "Equal"
                t["value"] = rng.choice(("a", "b"))
            else:
                t["operator"] = "Exists"
            if rng.random() < 0.6:
                t["effect"] = rng.choice(EFFECTS)
            out.append(t)
        return out

    def node_affinity(self):
        rng = self.rng
        out = {}
        if rng.random() < 0.4:
            terms = [{"matchExpressions": [self.node_expr() for _ in range(rng.randint(1, 2))]}
                     for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.1:
                # One name per matchFields requirement (the API's rule); terms are ORed.
                names = sorted(rng.sample([n[0] for n in self.nodes], min(len(self.nodes), rng.randint(1, 3))))
                terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]
            out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        if rng.random() < 0.6 or not out:
            out["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [self.node_expr()]}}
                for _ in range(rng.randint(1, 3))]
        return out

    def node_expr(self):
        rng = self.rng
        key = rng.choice(("disktype", "generation", "tier", ZONE))
        if key == "generation" and rng.random() < 0.5:
            return {"key": key, "operator": rng.choice(("Gt", "Lt")), "values": [str(rng.randint(1, 5))]}
        op = rng.choice(("In", "In", "NotIn", "Exists", "DoesNotExist"))
        values = {"disktype": ("ssd", "hdd"), "generation": ("1", "2", "3", "4", "5"),
                  "tier": ("frontend", "backend"), ZONE: tuple(self.zones or ["zone-0"])}[key]
        expr = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = sorted(rng.sample(values, rng.randint(1, min(2, len(values)))))
        return expr

    def pod_affinity(self, ns):
        rng = self.rng
        out = {}
        if rng.random() < 0.12:
            out["requiredDuringSchedulingIgnoredDuringExecution"] = [self.pod_term(ns)]
        if rng.random() < 0.2:
            out["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": self.pod_term(ns)}
                for _ in range(rng.randint(1, 2))]
        return out

    def spread(self, pod):
        rng = self.rng
        hard = rng.random() < 0.6
        c = {"maxSkew": rng.choice((1, 1, 2, 3)), "topologyKey": rng.choice((HOST, ZONE, ZONE)),
             "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": pod["metadata"]["labels"]["app"]}}}
        if hard and rng.random() < 0.2:
            c["minDomains"] = rng.randint(1, 5)
        if rng.random() < 0.2:
            c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
        if rng.random() < 0.1 and "version" in pod["metadata"]["labels"]:
            c["matchLabelKeys"] = ["version"]
        return c


def quantity(q, milli=False):
    """A Kubernetes quantity as an integer (millis with milli=True); the
    suffixes this generator writes only."""
    q = str(q)
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "m": 1}
    for suffix, mult in units.items():
        if q.endswith(suffix):
            n = int(q[:-len(suffix)])
            if suffix == "m":
                return n if milli else n // 1000
            return n * mult * (1000 if milli else 1)
    return int(q) * (1000 if milli else 1)


def cluster(seed, index, profiles, pending):
    """The objects of cluster `index` of run `seed`, pending pods spread over `profiles`."""
    return Cluster(seed, index, profiles, pending).build()


def from_file(path, profile):
    """A cluster written by hand (a reproduction): generate.py's keys, each
    optional, its objects in the namespaces diff-a, diff-b, diff-c; pending
    pods get the judge's gate, and `profile` unless they name one."""
    import json
    with open(path) as f:
        objs = json.load(f)
    for key in ("namespaces", "nodes", "services", "replicasets", "volumes", "claims", "bound", "pending"):
        objs.setdefault(key, [])
    # The judge's namespaces (the only ones it cleans), unlabelled unless the file says otherwise.
    named = {ns["metadata"]["name"] for ns in objs["namespaces"]}
    objs["namespaces"] += [{"metadata": {"name": ns}} for ns in NAMESPACES if ns not in named]
    for ns in objs["namespaces"]:
        ns.update(apiVersion="v1", kind="Namespace")
        ns["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = ns["metadata"]["name"]
    for node in objs["nodes"]:  # a Ready node with its hostname label, capacity as allocatable
        node.update(apiVersion="v1", kind="Node")
        node["metadata"].setdefault("labels", {})[HOST] = node["metadata"]["name"]
        status = node.setdefault("status", {})
        status.setdefault("capacity", status.get("allocatable", {}))
        status.setdefault("conditions", [{"type": "Ready", "status": "True", "reason": "KubeletReady"}])
    for pod in objs["bound"] + objs["pending"]:
        pod.update(apiVersion="v1", kind="Pod")
        for c in pod["spec"]["containers"]:
            c.setdefault("image", IMAGES[0][0])
    for pod in objs["pending"]:
        pod["spec"].setdefault("schedulerName", profile)
        pod["spec"]["schedulingGates"] = [{"name": GATE}]
    return objs
