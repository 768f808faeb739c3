#!/usr/bin/env python3
"""compare.py on made-up answers (no lab): what is a difference, what is
not, and what the allowlist explains."""
import collections
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

POD = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
WHERE = {"cluster": 0, "pod": "ns/p"}


def upstream(nodes, scores=None, weights=None):
    """kube-lab judge's shape: nodes {name: (verdict, plugin, code, reason)}, scores {name: ({plugin: n}, total)}."""
    a = {"profile": "diff-default", "nodes": [], "scored": bool(scores)}
    for name, (verdict, plugin, code, reason) in sorted(nodes.items()):
        a["nodes"].append({"node": name, "verdict": verdict, "plugin": plugin, "code": code, "reason": reason})
    if scores:
        a["weights"] = weights
        a["scores"] = [{"node": n, "plugins": p, "total": t} for n, (p, t) in sorted(scores.items())]
    return a


def toy(rejected=(), scores=None, weights=None, feasible=(), **extra):
    """/debug/explain's shape."""
    e = {"rejected": [{"node": n, "plugin": p, "code": c, "reason": r} for n, p, c, r in rejected], "scores": []}
    if scores:
        for n, (plugins, total) in sorted(scores.items()):
            e["scores"].append({"node": n, "total": total, "plugins": [
                {"plugin": p, "normalized": v, "weight": weights[p]} for p, v in plugins.items()]})
    else:
        e["scores"] = [{"node": n} for n in feasible]
    e.update(extra)
    return e


FIT = ("rejected", "NodeResourcesFit", "Unschedulable", "Insufficient cpu")
W = {"TaintToleration": 3, "NodeResourcesFit": 1}
S = {"a": ({"TaintToleration": 100, "NodeResourcesFit": 50}, 350),
     "b": ({"TaintToleration": 100, "NodeResourcesFit": 70}, 370)}


class Compare(unittest.TestCase):
    def same(self):
        u = upstream({"a": ("feasible", "", "", ""), "b": ("feasible", "", "", ""), "c": FIT}, S, W)
        t = toy([("c",) + FIT[1:]], S, W)
        return u, t

    def test_equal_answers_differ_nowhere(self):
        u, t = self.same()
        tally = collections.Counter()
        self.assertEqual(compare.diff_pod(WHERE, u, t, POD, tally=tally), [])
        self.assertEqual(tally, {"pods": 1, "pods diff-default": 1, "verdicts": 3, "scored pods": 1, "scores": 4,
                                 "scores TaintToleration": 2, "scores NodeResourcesFit": 2})

    def test_verdict_reason_and_code(self):
        u, t = self.same()
        t["rejected"][0]["reason"] = "Insufficient memory"
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual((d["kind"], d["node"], d["plugin"]), ("filter-reason", "c", "NodeResourcesFit"))
        t["rejected"][0].update(reason="Insufficient cpu", code="UnschedulableAndUnresolvable")
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual(d["kind"], "filter-code")
        t["rejected"][0]["plugin"] = "NodeAffinity"
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual(d["kind"], "filter-plugin")
        self.assertEqual(d["toy"], "rejected by NodeAffinity (UnschedulableAndUnresolvable): Insufficient cpu")

    def test_reasons_in_any_order(self):
        u, t = self.same()
        u["nodes"][2]["reason"] = "Insufficient cpu, Insufficient b.io/x, Insufficient a.io/y"
        t["rejected"][0]["reason"] = "Insufficient cpu, Insufficient a.io/y, Insufficient b.io/x"
        self.assertEqual(compare.diff_pod(WHERE, u, t, POD), [])
        t["rejected"][0]["reason"] = "Insufficient cpu, Insufficient a.io/y"
        self.assertEqual([d["kind"] for d in compare.diff_pod(WHERE, u, t, POD)], ["filter-reason"])

    def test_a_filter_difference_is_not_counted_again_as_scores(self):
        u, t = self.same()
        t["rejected"] = []
        t["scores"].append({"node": "c", "total": 0, "plugins": []})
        diffs = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual([(d["kind"], d["node"]) for d in diffs], [("verdict", "c")])

    def test_a_score_differs_and_its_total_is_not_reported_twice(self):
        u, t = self.same()
        t["scores"][1]["plugins"][1]["normalized"] = 60
        t["scores"][1]["total"] = 360
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual((d["kind"], d["node"], d["plugin"], d["upstream"], d["toy"]),
                         ("score", "b", "NodeResourcesFit", 70, 60))

    def test_a_total_alone_and_the_scorers(self):
        u, t = self.same()
        t["scores"][0]["total"] = 351
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual((d["kind"], d["upstream"], d["toy"]), ("total", 350, 351))
        u2 = copy.deepcopy(u)
        u2["weights"]["ImageLocality"] = 1
        for s in u2["scores"]:
            s["plugins"]["ImageLocality"] = 0
        kinds = [(d["kind"], d["plugin"], d["upstream"], d["toy"])
                 for d in compare.diff_pod(WHERE, u2, self.same()[1], POD)]
        self.assertEqual(kinds, [("scorers", "ImageLocality", "0..0", "skipped")])

    def test_left_out_and_pre_filter(self):
        u = upstream({"a": ("feasible", "", "", ""),
                      "b": ("leftOut", "", "UnschedulableAndUnresolvable", "node(s) didn't satisfy plugin(s) [X]")})
        t = toy(feasible=["a"], leftOutByPreFilter=1)
        self.assertEqual(compare.diff_pod(WHERE, u, t, POD), [])
        t = toy(feasible=["a"])  # b missing without a PreFilter's node set: not filtered
        [d] = compare.diff_pod(WHERE, u, t, POD)
        self.assertEqual((d["kind"], d["toy"]), ("verdict", "notFiltered"))
        pre = ("preFilter", "NodeAffinity", "UnschedulableAndUnresolvable", "conflict")
        u = upstream({"a": pre, "b": pre})
        t = toy(preFilterRejectedBy="NodeAffinity", preFilterReason="conflict")
        self.assertEqual(compare.diff_pod(WHERE, u, t, POD), [])

    def test_allowlist(self):
        u, t = self.same()
        t["scores"][1]["plugins"][1]["normalized"] = 60
        t["scores"][1]["total"] = 360
        diffs = compare.diff_pod(WHERE, u, t, POD)
        allow = [{"id": "other", "match": {"kind": "score", "plugin": "ImageLocality"}},
                 {"id": "fit", "match": {"kind": "score", "plugin": "NodeResourcesFit", "feature": "no-such"}},
                 {"id": "fit2", "match": {"kind": "score", "plugin": "NodeResourcesFit", "toy": "^60$"}}]
        used = compare.explain(allow, diffs)
        self.assertEqual(diffs[0]["explainedBy"], "fit2")
        self.assertEqual(used, {"other": 0, "fit": 0, "fit2": 1})

    def test_pod_features(self):
        pod = {"spec": {"containers": [{"name": "c"}], "affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"namespaceSelector": {}}]}}}}
        self.assertEqual(compare.pod_features(pod),
                         {"container-without-request", "required-podAntiAffinity", "namespace-selector"})
        # A difference on a node carries the tags of the pods bound there.
        u, t = Compare.same(self)
        t["rejected"][0]["reason"] = "Insufficient memory"
        [d] = compare.diff_pod(WHERE, u, t, POD, {"c": [pod], "a": [POD]})
        self.assertIn("node-container-without-request", d["features"])
        self.assertTrue(compare.matches({"match": {"feature": ["x", "node-namespace-selector"]}}, d))
        self.assertFalse(compare.matches({"match": {"feature": "container-without-request"}}, d))


if __name__ == "__main__":
    unittest.main()
