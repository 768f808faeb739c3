#!/usr/bin/env bash
# --zones and --node-images: the fake nodes carry the zone and region labels
# and the status.images the flags said, kube-scheduler's ImageLocality sees
# those images, and a lab restarted on the same DIR keeps the nodes as they
# were. Bad values are refused before anything starts: exit 1 and a message
# that names the fault.
source "$(dirname "$0")/../lib.sh"

refused '--zones must be >= 0' --zones -1
refused 'invalid argument' --zones two
refused 'no @SIZE' --node-images lab-node-1=docker.io/library/nginx:1.27
refused 'want NODE=IMAGE@SIZE' --node-images docker.io/library/nginx:1.27@150Mi
refused 'not a quantity' --node-images 'lab-node-1=nginx:1.27@lots'
refused 'is negative' --node-images 'lab-node-1=nginx:1.27@-1Mi'
refused 'only lab-node-1..4' --node-images 'lab-node-5=nginx:1.27@150Mi'
refused 'is not lab-node-<i>' --node-images 'node-1=nginx:1.27@150Mi'
refused 'is empty' --node-images 'lab-node-1=@150Mi'
refused 'listed twice' --node-images 'lab-node-2=nginx:1.27@1Mi,lab-node-2=nginx:1.27@2Mi'
refused 'want NODE=IMAGE@SIZE' --node-images 'lab-node-1=nginx:1.27@1Mi,'

digest=sha256:$(printf '%064d' 7)
images="lab-node-1=docker.io/library/nginx:1.27@150Mi,lab-node-1=registry.k8s.io/pause:3.9@700Ki"
images+=",lab-node-3=docker.io/library/nginx:1.27@150Mi,lab-node-3=registry.example/big@$digest@900Mi"
start_private_lab --nodes 4 --zones 2 --node-images "$images" --kube-scheduler

# expect_nodes WHAT: every node's labels and images are exactly the ones the
# flags above asked for (kubectl get nodes -o json, checked in Python).
expect_nodes() {
  k get nodes -o json >"$TEST_TMP/nodes.json"
  python3 - "$TEST_TMP/nodes.json" "$digest" <<'PY' || fail "$1: nodes are not as flagged"
import json
import sys

nodes = {n["metadata"]["name"]: n for n in json.load(open(sys.argv[1]))["items"]}
mi = 1024 * 1024
want_images = {
    "lab-node-1": [(["docker.io/library/nginx:1.27"], 150 * mi), (["registry.k8s.io/pause:3.9"], 700 * 1024)],
    "lab-node-2": [],
    "lab-node-3": [(["docker.io/library/nginx:1.27"], 150 * mi), (["registry.example/big@" + sys.argv[2]], 900 * mi)],
    "lab-node-4": [],
}
bad = []
if sorted(nodes) != sorted(want_images):
    bad.append(f"nodes {sorted(nodes)}")
for i, name in enumerate(sorted(want_images), start=1):
    n = nodes.get(name, {"metadata": {}, "status": {}})
    labels = n["metadata"].get("labels", {})
    want = {"topology.kubernetes.io/zone": f"zone-{(i - 1) % 2}", "topology.kubernetes.io/region": "lab"}
    got = {k: labels.get(k) for k in want}
    if got != want:
        bad.append(f"{name} labels {got}, want {want}")
    images = [(im["names"], im["sizeBytes"]) for im in n["status"].get("images", [])]
    if images != want_images[name]:
        bad.append(f"{name} images {images}, want {want_images[name]}")
    print(name, got["topology.kubernetes.io/zone"], images)
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  pass "$1: zones, region and images as flagged"
}
expect_nodes "fresh lab"

# kube-scheduler reads the images: ImageLocality scores the one node with a
# 900Mi image highest (empty, equal nodes otherwise), and the fake kubelet
# running the pod there leaves the node's images alone.
k run big --image="registry.example/big@$digest" --restart=Never >/dev/null
wait_until 60 "pod big Running" '[ "$(k get pod big -o jsonpath="{.status.phase}")" = Running ]'
node=$(k get pod big -o jsonpath='{.spec.nodeName}')
[ "$node" = lab-node-3 ] || fail "pod with lab-node-3's image went to $node"
expect_nodes "after a pod ran"
pass "kube-scheduler put the pod on the node with its image"

# A restart on the same DIR with other flags keeps the existing nodes as they are.
restart_private_lab 0 --nodes 4 --zones 3 --node-images lab-node-2=other:1@1Mi
expect_nodes "after a restart with --zones 3 and other images"
