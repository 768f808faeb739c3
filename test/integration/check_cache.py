"""Checks toy-scheduler's /debug/cache against the API server.

    check_cache.py PODS_JSON CACHE_JSON

PODS_JSON is `kubectl get pods -A -o json`, CACHE_JSON what /debug/cache
served after it (nothing in flight). No pod may still be assumed and, node
by node, the cache must count the pods bound there and the sum of their
effective cpu and memory requests, as the API server has them. A scheduler
whose cache drifted from the server (a pod counted twice, a bind it thinks
failed but landed) fails here even before it over-commits a node.
"""
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "drills"))
from resources import pod_requests  # noqa: E402


def main(pods_path, cache_path):
    pods = json.load(open(pods_path))["items"]
    cache = json.load(open(cache_path))
    bad = []
    if cache["assumed"]:
        bad.append("still assumed: %s" % cache["assumed"][:5])
    count = defaultdict(int)
    cpu = defaultdict(int)
    mem = defaultdict(int)
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        req = pod_requests(p["spec"])
        count[node] += 1
        cpu[node] += math.ceil(req.get("cpu", 0) * 1000)  # milli-CPU, rounded up as the API does
        mem[node] += math.ceil(req.get("memory", 0))
    for n in cache["nodes"]:
        name, got = n["name"], n["requested"]
        want = (count[name], cpu[name], mem[name])
        have = (n["pods"], got["cpu_millis"], got["memory"])
        if have != want:
            bad.append("%s: cache has (pods, cpu_millis, memory) %s, the API server %s" % (name, have, want))
    for line in bad:
        print(line)
    if not bad:
        print("cache agrees: %s" % {n["name"]: (n["pods"], n["requested"]["cpu_millis"]) for n in cache["nodes"]})
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
