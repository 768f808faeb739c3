#!/usr/bin/env bash
# VolumeBinding with WaitForFirstConsumer claims on a real lab (4 nodes in
# 2 zones; the lab's statefulset, ephemeral-volume and persistentvolume
# controllers and its provisioner), played by toy-scheduler in NS and by
# the lab's kube-scheduler v1.36.3 in NS-kube with the same objects:
#  - a StatefulSet of 3 with a claim template on the default class
#    (lab-standard): every pod bound, every claim Bound to a volume
#    provisioned on its pod's node, by both;
#  - static volumes of a class without provisioner on lab-node-3 only: the
#    pod goes to lab-node-3 and its claim to the volume there; a second pod
#    finds none left and stays pending, both saying the same;
#  - a generic ephemeral volume: its claim made for the pod, provisioned
#    on the pod's node, by both;
#  - a CSI driver that publishes its capacity (CSIStorageCapacity): enough
#    on lab-node-2 alone, so the claim is to be provisioned there
#    (selected-node), and a claim larger than any capacity leaves its pod
#    pending, both saying the same;
#  - a class whose provisioner never answers: both choose a node for the
#    claim and leave the pod unbound; toy-scheduler, with bindTimeoutSeconds
#    8 (kube-scheduler's is 600 here), gives upstream's PreBind failure and
#    tries again, while other pods are bound meanwhile;
#  - a toy-scheduler killed by --crash-at right before PreBind's write, and
#    one killed while waiting for the provisioner: restarted, each pod is
#    bound once, its claim Bound on its node.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 4 --zones 2 --controllers --storage --kube-scheduler
scheduler_config "$TEST_TMP/config.yaml" <<'YAML'
profiles:
- schedulerName: toy-scheduler
  pluginConfig:
  - name: VolumeBinding
    args: {bindTimeoutSeconds: 8}
YAML
start_toy "$TEST_TMP/toy.log" --config "$TEST_TMP/config.yaml" -v=2
KUBE_NS=$NS-kube
k create namespace "$KUBE_NS" >/dev/null
source "$(dirname "$0")/side_by_side.sh"
sched_of() { [ "$1" = "$NS" ] && echo "${2:-toy-scheduler}" || echo default-scheduler; }
field() { k -n "$1" get "$2" "$3" -o jsonpath="{$4}" 2>/dev/null; }
# wffc_class NAME PROVISIONER: a WaitForFirstConsumer StorageClass, deleted at exit.
wffc_class() {
  on_exit k delete storageclass "$1" '>/dev/null 2>&1'
  printf 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: %s}\nprovisioner: %s\n%s\n' \
    "$1" "$2" 'volumeBindingMode: WaitForFirstConsumer' | k apply -f - >/dev/null
}
# local_to NS CLAIM POD: CLAIM is Bound to a volume whose node affinity is POD's node.
local_to() {
  local node pv
  node=$(node_in "$1" "$3")
  wait_until 30 "$1/$2 Bound" '[ "$(field '"$1"' pvc '"$2"' .status.phase)" = Bound ]'
  pv=$(field "$1" pvc "$2" .spec.volumeName)
  [ "$(k get pv "$pv" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}')" = "$node" ] ||
    fail "$1/$2: volume $pv is not on $node, where $3 is"
}

# --- A StatefulSet of 3 on the default class.
for ns in "$NS" "$KUBE_NS"; do stateful_set "$ns" web 3 "$(sched_of "$ns")"; done
for ns in "$NS" "$KUBE_NS"; do
  for i in 0 1 2; do
    wait_until 90 "$ns/web-$i bound" '[ -n "$(node_in '"$ns"' web-'"$i"')" ]'
    local_to "$ns" "data-web-$i" "web-$i"
  done
done
pass "StatefulSet of 3 on the default class: every pod bound, every claim Bound on its pod's node, by both"

# --- Static volumes: class lab-static has no provisioner; one volume per
# namespace, on lab-node-3, told apart by the claims' selectors.
wffc_class lab-static kubernetes.io/no-provisioner
for ns in "$NS" "$KUBE_NS"; do
  on_exit k delete pv "static-$ns" --wait=false '>/dev/null 2>&1'
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: static-$ns, labels: {owner: $ns}}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: lab-static
  hostPath: {path: /tmp/static-$ns}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [lab-node-3]}]}]
YAML
  for c in first second; do
    k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $c}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: lab-static
  selector: {matchLabels: {owner: $ns}}
  resources: {requests: {storage: 1Gi}}
YAML
  done
  claim_user "$ns" "$(sched_of "$ns")" first first
done
for ns in "$NS" "$KUBE_NS"; do
  wait_until 60 "$ns/first bound" '[ -n "$(node_in '"$ns"' first)" ]'
  [ "$(node_in "$ns" first)" = lab-node-3 ] || fail "$ns/first went to $(node_in "$ns" first), not lab-node-3"
  wait_until 30 "$ns/first's claim Bound to static-$ns" '[ "$(field '"$ns"' pvc first .spec.volumeName)" = static-'"$ns"' ]'
done
for ns in "$NS" "$KUBE_NS"; do claim_user "$ns" "$(sched_of "$ns")" second second; done
wait_until 30 "second pending with a message (toy-scheduler)" '[ -n "$(message_in "$NS" second)" ]'
wait_until 60 "second pending with a message (kube-scheduler)" '[ -n "$(message_in "$KUBE_NS" second)" ]'
[ "$(message_in "$NS" second)" = "$(kube_message second)" ] ||
  fail "second: toy-scheduler says '$(message_in "$NS" second)', kube-scheduler '$(kube_message second)'"
[ -z "$(node_in "$NS" second)" ] || fail "toy-scheduler bound second"
pass "static volumes: first on lab-node-3 with its volume, second pending, both say '$(message_in "$NS" second)'"

# --- A generic ephemeral volume.
for ns in "$NS" "$KUBE_NS"; do
  k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: eph}
spec:
  schedulerName: $(sched_of "$ns")
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
  volumes:
  - name: scratch
    ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}
YAML
done
for ns in "$NS" "$KUBE_NS"; do
  wait_until 60 "$ns/eph bound" '[ -n "$(node_in '"$ns"' eph)" ]'
  local_to "$ns" eph-scratch eph
done
pass "generic ephemeral volume: bound, its claim Bound on its node, by both"

# --- Storage capacity: driver cap.example publishes it; 5Gi reachable
# from lab-node-2 only. Nothing provisions for it: the claims stay unbound.
wffc_class lab-cap cap.example
on_exit k delete csidriver cap.example '>/dev/null 2>&1'
k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: cap.example}
spec: {attachRequired: false, storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-node-2, namespace: $NS}
storageClassName: lab-cap
nodeTopology: {matchLabels: {kubernetes.io/hostname: lab-node-2}}
capacity: 5Gi
YAML
for ns in "$NS" "$KUBE_NS"; do
  for c in fits-cap too-big; do
    size=$([ "$c" = fits-cap ] && echo 2Gi || echo 10Gi)
    k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $c}
spec: {accessModes: [ReadWriteOnce], storageClassName: lab-cap, resources: {requests: {storage: $size}}}
YAML
    claim_user "$ns" "$(sched_of "$ns")" "$c" "$c"
  done
done
selected() { field "$1" pvc "$2" '.metadata.annotations.volume\.kubernetes\.io/selected-node'; }
for ns in "$NS" "$KUBE_NS"; do
  wait_until 60 "$ns/fits-cap's claim to be provisioned on lab-node-2" '[ "$(selected '"$ns"' fits-cap)" = lab-node-2 ]'
done
wait_until 30 "too-big pending with a message (toy-scheduler)" '[ -n "$(message_in "$NS" too-big)" ]'
wait_until 60 "too-big pending with a message (kube-scheduler)" '[ -n "$(message_in "$KUBE_NS" too-big)" ]'
[ "$(message_in "$NS" too-big)" = "$(kube_message too-big)" ] ||
  fail "too-big: toy-scheduler says '$(message_in "$NS" too-big)', kube-scheduler '$(kube_message too-big)'"
[ -z "$(selected "$NS" too-big)" ] || fail "toy-scheduler chose a node for too-big's claim: $(selected "$NS" too-big)"
pass "storage capacity: a 2Gi claim provisioned on lab-node-2 by both; a 10Gi one pending, both say '$(message_in "$NS" too-big)'"

# --- A provisioner that never answers (toy-scheduler only).
wffc_class lab-silent silent.example.com
claim silent "" lab-silent
claim_user "$NS" toy-scheduler silent silent
# kube-scheduler, whose timeout is 600 s, is only seen to choose a node for
# the claim and leave the pod unbound meanwhile.
k -n "$KUBE_NS" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: silent}
spec: {accessModes: [ReadWriteOnce], storageClassName: lab-silent, resources: {requests: {storage: 1Gi}}}
YAML
claim_user "$KUBE_NS" default-scheduler silent silent
want='running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
wait_until 30 "silent's PreBind timed out" '[ "$(message_in "$NS" silent)" = "$want" ]'
deployment meanwhile 3 toy-scheduler
wait_until 30 "3 pods bound meanwhile" '[ "$(bound_count app=meanwhile)" = 3 ]'
wait_until 40 "silent tried again" '[ "$(grep -c "Updated PersistentVolumeClaim with selected node.*PVC=\"'"$NS"'/silent\"" "$TEST_TMP/toy.log")" -ge 2 ]'
for ns in "$NS" "$KUBE_NS"; do
  [ -n "$(selected "$ns" silent)" ] || fail "$ns: no node chosen for silent's claim"
  [ -z "$(node_in "$ns" silent)" ] || fail "$ns: silent was bound without its volume"
done
pass "a silent provisioner: '$want', tried again, other pods bound meanwhile; both chose a node for the claim, neither bound the pod"

# --- Killed before PreBind's write, and while it waits: nothing lost, nothing twice.
crash_case() {  # POINT POD
  claim "$2" "" lab-standard
  claim_user "$NS" toy-crash "$2" "$2"
  local rc=0
  "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --scheduler-name toy-crash --metrics-bind-address=127.0.0.1:0 \
    --secure-port=0 -v=2 --crash-at="$1" >"$TEST_TMP/$2-crash.log" 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "--crash-at=$1: exit status $rc, expected 2"
  grep -q "^crash-at: $1 reached by task" "$TEST_TMP/$2-crash.log" || fail "no crash-at line: $(tail -5 "$TEST_TMP/$2-crash.log")"
  grep -q "bind/$NS/$2.* at ${1%:*}" "$TEST_TMP/$2-crash.log" || fail "the dump has no bind/$NS/$2 at ${1%:*}: $(grep "bind/" "$TEST_TMP/$2-crash.log")"
  [ -z "$(node_in "$NS" "$2")" ] || fail "$2 bound by a scheduler that crashed before binding"
  "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --scheduler-name toy-crash --metrics-bind-address=127.0.0.1:0 \
    --secure-port=0 -v=2 >"$TEST_TMP/$2-restart.log" 2>&1 &
  local pid=$!
  wait_until 60 "$2 bound after the restart" '[ -n "$(node_in "$NS" '"$2"')" ]'
  local_to "$NS" "$2" "$2"
  kill -TERM "$pid"; wait "$pid" || true
  [ "$(cat "$TEST_TMP/$2-crash.log" "$TEST_TMP/$2-restart.log" | grep -c "Successfully bound pod to node.*pod=\"$NS/$2\"")" = 1 ] ||
    fail "$2: not bound exactly once"
}
crash_case bind.volume_write:1 before-write

crash_case bind.volume_wait:1 while-waiting
pass "killed before PreBind's write and while waiting: after a restart each pod bound once, its claim Bound on its node"
k delete namespace "$KUBE_NS" --wait=false >/dev/null
