"""Checks that no node holds more than its allocatable.

Reads `kubectl get nodes -o json` and `kubectl get pods -A -o json`; sums the
effective requests of the non-terminal pods bound to each node (the
Kubernetes rule: max(sum of app containers, largest init container) plus
overhead; a limit without a request counts as the request) and compares them
with the node's allocatable. Written apart from the scheduler's own code on
purpose: the check must not share the bugs it looks for. Exit 1 and a line
per over-committed node when it finds one.
"""
import json
import os
import sys
from collections import defaultdict
from fractions import Fraction

# The quantity and request rules live with the drills, which check the same.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "drills"))
from resources import pod_requests, quantity  # noqa: E402


def main(nodes_path, pods_path):
    nodes = json.load(open(nodes_path))["items"]
    pods = json.load(open(pods_path))["items"]
    used = defaultdict(lambda: defaultdict(Fraction))
    count = defaultdict(int)
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        count[node] += 1
        for k, v in pod_requests(p["spec"]).items():
            used[node][k] += v
    bad = 0
    for n in nodes:
        name = n["metadata"]["name"]
        alloc = {k: quantity(v) for k, v in n["status"].get("allocatable", {}).items()}
        if count[name] > alloc.get("pods", 0):
            print("%s: %d pods > %s allowed" % (name, count[name], alloc.get("pods")))
            bad += 1
        for k, v in used[name].items():
            if v > alloc.get(k, 0):
                print("%s: %s requested %s > allocatable %s" % (name, k, float(v), float(alloc.get(k, 0))))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
