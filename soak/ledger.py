"""What happened to every pod of the soak, from the pod watch: when it was
created, bound (to which nodes), reported unschedulable, deleted.

The invariant it checks: every pod created is bound, or told why not
(PodScheduled=False, which toy-scheduler writes with its FailedScheduling
event), and none is bound twice. A pod deleted before it was either is
"withdrawn" (the churn deleted it, or a scale-down took it: a ReplicaSet
deletes pending pods first), not lost, if it was deleted before LOST_AFTER;
a pod left pending and unexplained longer than that is lost.
"""
import re
import threading
from collections import Counter

LOST_AFTER = 60.0  # s: far beyond one attempt plus the 5 s an event may wait behind binds

BOUND_RE = re.compile(r'"Successfully bound pod to node" pod="([^"]+)" node="([^"]+)"')


class PodRecord:
    __slots__ = ("uid", "key", "kind", "created", "nodes", "bound_at", "reported_at", "reason", "deleted_at",
                 "lost_at")

    def __init__(self, uid, key, kind, t):
        self.uid, self.key, self.kind, self.created = uid, key, kind, t
        self.nodes = []  # every distinct spec.nodeName seen, in order (more than one: bound twice)
        self.bound_at = self.reported_at = self.reason = self.deleted_at = self.lost_at = None

    def settled(self):
        return self.bound_at is not None or self.reported_at is not None


def unschedulable_reason(pod):
    for c in pod.get("status", {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("reason") or "?"
    return None


class Ledger:
    def __init__(self, kind_label):
        self.kind_label = kind_label  # the pod label that says which churn made it
        self.pods = {}
        self.lock = threading.Lock()

    def on_event(self, t, typ, pod):
        meta = pod["metadata"]
        uid = meta["uid"]
        with self.lock:
            rec = self.pods.get(uid)
            if rec is None:
                kind = (meta.get("labels") or {}).get(self.kind_label, "other")
                rec = self.pods[uid] = PodRecord(uid, meta["namespace"] + "/" + meta["name"], kind, t)
            node = pod.get("spec", {}).get("nodeName")
            if node and node not in rec.nodes:
                rec.nodes.append(node)
                if rec.bound_at is None:
                    rec.bound_at = t
            reason = unschedulable_reason(pod)
            if reason and rec.reported_at is None:
                rec.reported_at, rec.reason = t, reason
            if typ == "DELETED" and rec.deleted_at is None:
                rec.deleted_at = t

    def mark_lost(self, now, min_age=LOST_AFTER):
        """Flags pods pending and unexplained for min_age (0: every such pod,
        as at the end of the settling); returns how many are flagged in all."""
        with self.lock:
            for rec in self.pods.values():
                if rec.lost_at is None and not rec.settled() and rec.deleted_at is None \
                        and now - rec.created >= min_age:
                    rec.lost_at = now
            return sum(1 for r in self.pods.values() if r.lost_at is not None)

    def unsettled_live(self):
        with self.lock:
            return [r for r in self.pods.values() if r.deleted_at is None and not r.settled()]

    def live(self):
        with self.lock:
            return sum(1 for r in self.pods.values() if r.deleted_at is None)

    def counts(self, scheduler_log):
        """The pod figures of the summary, and the pods behind each failure."""
        with self.lock:
            recs = list(self.pods.values())
        bound = [r for r in recs if r.bound_at is not None]
        reported_only = [r for r in recs if r.bound_at is None and r.reported_at is not None]
        withdrawn = [r for r in recs if not r.settled() and r.deleted_at is not None and r.lost_at is None]
        lost = [r for r in recs if not r.settled() and (r.lost_at is not None or r.deleted_at is None)]
        late = [r for r in recs if r.settled() and r.lost_at is not None]  # explained, but only after LOST_AFTER
        moved = [r for r in recs if len(r.nodes) > 1]
        # Binds the scheduler logged, per pod name, against the pods of that
        # name the API server had bound: more logged than bound = bound twice.
        logged = Counter(p for p, _ in BOUND_RE.findall(scheduler_log))
        bound_keys = Counter(r.key for r in bound)
        twice = sorted(k for k, n in logged.items() if n > bound_keys.get(k, 0))
        kinds = Counter(r.kind for r in recs)
        return {
            "created": len(recs),
            "by_kind": dict(sorted(kinds.items())),
            "bound": len(bound),
            "reported_only": len(reported_only),
            "reported_ever": sum(1 for r in recs if r.reported_at is not None),
            "withdrawn": len(withdrawn),
            "lost": sorted(r.key for r in lost),
            "late": sorted(r.key for r in late),
            "moved": sorted(r.key for r in moved),
            "binds_logged": sum(logged.values()),
            "logged_twice": twice,
            "reasons": dict(Counter(r.reason for r in recs if r.reason)),
        }
