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
import re
import sys
from collections import defaultdict
from fractions import Fraction

SUFFIX = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
          "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
          "P": Fraction(10**15), "E": Fraction(10**18), "Ki": Fraction(2**10), "Mi": Fraction(2**20),
          "Gi": Fraction(2**30), "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60)}


def quantity(s):
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)", str(s))
    if not m:
        raise ValueError("bad quantity %r" % s)
    value = Fraction(m.group(1))
    if m.group(2):
        return value * Fraction(10) ** int(m.group(2))
    return value * SUFFIX[m.group(3) or ""]


def container_requests(c):
    res = c.get("resources", {})
    out = {k: quantity(v) for k, v in res.get("limits", {}).items()}
    out.update({k: quantity(v) for k, v in res.get("requests", {}).items()})
    return out


def pod_requests(spec):
    total = defaultdict(Fraction)
    for c in spec.get("containers", []):
        for k, v in container_requests(c).items():
            total[k] += v
    for c in spec.get("initContainers", []):
        for k, v in container_requests(c).items():
            total[k] = max(total[k], v)
    for k, v in spec.get("overhead", {}).items():
        total[k] += quantity(v)
    return total


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
