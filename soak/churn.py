"""The churn: what the soak does to the cluster, on a fixed period so that
every pattern (the deployment's high point, every churn node gone) has
recurred many times by the end of the warm-up.

Per tick (TICK s):
  bare pods      BARE_PER_TICK created (every 5th asks for 64 CPUs, which no node has:
                 FailedScheduling; every 7th selects the churn nodes, so it
                 waits while they are all gone) and deleted BARE_TTL s after
                 creation, bound or not;
Per period P (--period):
  the deployment scaled 5 -> 50 -> 5 in steps of 5, P/18 s apart;
  one churn node deleted or created again every P/6 s, in turn; a deleted
  node's pods are deleted NODE_GC_AFTER s later (unless the node is back),
  as kube-controller-manager's pod GC does for pods of nodes that are gone
  (the lab runs no pod GC); the deployment's ReplicaSet replaces its own.
"""
from api import ApiError

PAUSE_IMAGE = "registry.k8s.io/pause:3.9"
KIND_LABEL = "toysched-soak/kind"
CHURN_LABEL = "toysched-soak/churn-node"
DEPLOYMENT = "soak-web"
TICK = 2.0
BARE_PER_TICK = 5
BARE_TTL = 30.0
NODE_GC_AFTER = 10.0
REPLICAS = list(range(5, 51, 5)) + list(range(45, 5, -5))  # 5..50..10: 18 steps, then again from 5


def pod_spec(scheduler, cpu, selector=None):
    spec = {"schedulerName": scheduler, "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "pause", "image": PAUSE_IMAGE,
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return spec


def node_object(name, ip, cpu, memory, pods):
    """A node as kube-lab makes its own (lab/nodes.go): Ready, capacity =
    allocatable. The fake kubelet serves any node named lab-node-<i>."""
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": "amd64", CHURN_LABEL: "true"}},
            "status": {"capacity": res, "allocatable": res, "phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "toysched soak churn node"}],
                       "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}]}}


class Churn:
    def __init__(self, client, ns, scheduler, base_nodes, churn_nodes, period):
        self.c, self.ns, self.scheduler, self.period = client, ns, scheduler, period
        self.nodes = ["lab-node-%d" % i for i in range(base_nodes + 1, base_nodes + churn_nodes + 1)]
        self.ips = {n: "198.18.%d.%d" % (i // 256, i % 256)
                    for n, i in zip(self.nodes, range(base_nodes + 1, base_nodes + churn_nodes + 1))}
        self.present = set()
        self.bare = []  # (created monotonic, name)
        self.gc_due = []  # (due monotonic, node)
        self.seq = 0
        self.step = 0
        self.node_turn = 0
        self.next_scale = self.next_node = 0.0
        self.last_error = None
        self.counts = {"bare_created": 0, "bare_deleted": 0, "scales": 0, "nodes_deleted": 0, "nodes_created": 0,
                       "pods_gc_deleted": 0, "api_errors": 0}

    # -- set-up and tear-down --------------------------------------------------
    def setup(self):
        self.c.create("/api/v1/namespaces", {"metadata": {"name": self.ns}})
        for n in self.nodes:
            self.create_node(n)
        labels = {"app": DEPLOYMENT, KIND_LABEL: "deployment"}
        self.c.create("/apis/apps/v1/namespaces/%s/deployments" % self.ns, {
            "metadata": {"name": DEPLOYMENT, "labels": labels},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": pod_spec(self.scheduler, "100m")}}})

    def teardown(self):
        """Everything the churn made goes; the base nodes stay."""
        self.scale(0)
        self.c.delete("/apis/apps/v1/namespaces/%s/deployments/%s" % (self.ns, DEPLOYMENT))
        self.c.request("DELETE", "/api/v1/namespaces/%s/pods" % self.ns)  # deletecollection
        for n in list(self.present):
            self.delete_node(n)
        self.bare, self.gc_due = [], []

    # -- one tick ----------------------------------------------------------------
    def tick(self, now):
        """Does what is due at `now`; an API error is counted, not fatal (the
        soak is about the scheduler; the next tick tries again)."""
        for step in (self.bare_pods, self.deployment, self.node_churn, self.pod_gc):
            try:
                step(now)
            except (ApiError, OSError) as e:
                self.counts["api_errors"] += 1
                self.last_error = str(e)

    def bare_pods(self, now):
        while self.bare and now - self.bare[0][0] >= BARE_TTL:
            _, name = self.bare.pop(0)
            self.c.delete("/api/v1/namespaces/%s/pods/%s" % (self.ns, name))
            self.counts["bare_deleted"] += 1
        for _ in range(BARE_PER_TICK):
            self.seq += 1
            name, cpu, selector, kind = "bare-%d" % self.seq, "100m", None, "bare"
            if self.seq % 5 == 0:
                cpu, kind = "64", "bare-too-big"
            elif self.seq % 7 == 0:
                selector, kind = {CHURN_LABEL: "true"}, "bare-churn-node"
            self.c.create("/api/v1/namespaces/%s/pods" % self.ns, {
                "metadata": {"name": name, "labels": {KIND_LABEL: kind}},
                "spec": pod_spec(self.scheduler, cpu, selector)})
            self.bare.append((now, name))
            self.counts["bare_created"] += 1

    def deployment(self, now):
        if now < self.next_scale:
            return
        self.next_scale = now + self.period / len(REPLICAS)
        self.scale(REPLICAS[self.step % len(REPLICAS)])
        self.step += 1
        self.counts["scales"] += 1

    def scale(self, replicas):
        self.c.patch("/apis/apps/v1/namespaces/%s/deployments/%s/scale" % (self.ns, DEPLOYMENT),
                     {"spec": {"replicas": replicas}})

    def node_churn(self, now):
        if now < self.next_node:
            return
        self.next_node = now + self.period / 6
        node = self.nodes[self.node_turn % len(self.nodes)]
        self.node_turn += 1
        if node in self.present:
            self.delete_node(node)
            self.gc_due.append((now + NODE_GC_AFTER, node))
        else:
            self.create_node(node)

    def pod_gc(self, now):
        while self.gc_due and self.gc_due[0][0] <= now:
            _, node = self.gc_due.pop(0)
            if node not in self.present:
                self.counts["pods_gc_deleted"] += self.delete_pods_on(node)

    # -- nodes ---------------------------------------------------------------------
    def create_node(self, name):
        self.c.create("/api/v1/nodes", node_object(name, self.ips[name], "4", "32Gi", "110"))
        self.present.add(name)
        self.counts["nodes_created"] += 1

    def delete_node(self, name):
        self.c.delete("/api/v1/nodes/" + name)
        self.present.discard(name)
        self.counts["nodes_deleted"] += 1

    def delete_pods_on(self, node):
        """The pod GC's force delete (grace 0) of the pods bound to a gone node."""
        pods = self.c.get("/api/v1/namespaces/%s/pods" % self.ns, fieldSelector="spec.nodeName=" + node)["items"]
        for p in pods:
            self.c.delete("/api/v1/namespaces/%s/pods/%s" % (self.ns, p["metadata"]["name"]), grace=0)
        return len(pods)

    def live_nodes(self):
        return len(self.present)
