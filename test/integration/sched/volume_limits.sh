#!/usr/bin/env bash
# NodeVolumeLimits on a real lab (2 nodes, the lab's persistentvolume-binder),
# played at once by toy-scheduler in NS with CSI driver toy.csi.example and by
# the lab's kube-scheduler v1.36.3 in NS-kube with kube.csi.example, on the
# same CSINodes (one entry per driver, the same limits), and compared:
#  - lab-node-1 may attach 1 volume of each driver, lab-node-2 none: the
#    first pod with a CSI volume goes to lab-node-1, the second stays pending
#    with upstream's message;
#  - lab-node-2's limit raised to 1 (a CSINode update): the second is bound
#    there;
#  - a VolumeAttachment of another volume to lab-node-1, the first pod
#    deleted: the attachment still counts, so a third pod stays pending;
#    the attachment deleted, it is bound to lab-node-1.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 2 --controllers --kube-scheduler
start_toy "$TEST_TMP/toy.log" -v=2
KUBE_NS=$NS-kube
k create namespace "$KUBE_NS" >/dev/null
driver_of() { [ "$1" = "$NS" ] && echo toy.csi.example || echo kube.csi.example; }

# limits N1 N2: both drivers' allocatable.count on lab-node-1 and lab-node-2.
limits() {
  local i n
  for i in 1 2; do
    n=$([ "$i" = 1 ] && echo "$1" || echo "$2")
    k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: lab-node-$i}
spec:
  drivers:
  - {name: toy.csi.example, nodeID: lab-node-$i, allocatable: {count: $n}}
  - {name: kube.csi.example, nodeID: lab-node-$i, allocatable: {count: $n}}
YAML
  done
}
on_exit k delete csinode lab-node-1 lab-node-2 '>/dev/null 2>&1'

source "$(dirname "$0")/side_by_side.sh"
# csi_claim NAMESPACE NAME: a CSI volume of the namespace's driver and its claim.
csi_claim() { prebound_claim "$1" "$2" ReadWriteOnce "csi: {driver: $(driver_of "$1"), volumeHandle: handle-$2-$1}"; }
# user NAMESPACE POD CLAIM: a pod mounting CLAIM, for the namespace's scheduler.
user() { claim_user "$1" "$([ "$1" = "$NS" ] && echo toy-scheduler || echo default-scheduler)" "$2" "$3"; }
# pending POD WANT: both schedulers leave POD pending and say WANT.
pending() {
  wait_until 30 "$1 pending with a message (toy-scheduler)" '[ -n "$(message_in "$NS" '"$1"')" ]'
  wait_until 60 "$1 pending with a message (kube-scheduler)" '[ -n "$(message_in "$KUBE_NS" '"$1"')" ]'
  [ "$(message_in "$NS" "$1")" = "$2" ] || fail "toy-scheduler: $1 says '$(message_in "$NS" "$1")'"
  [ "$(kube_message "$1")" = "$2" ] || fail "kube-scheduler: $1 says '$(kube_message "$1")'"
  [ -z "$(node_in "$NS" "$1")" ] || fail "toy-scheduler bound $1 to $(node_in "$NS" "$1")"
}
# bound_to POD NODE: both schedulers bound POD to NODE.
bound_to() {
  local ns
  for ns in "$NS" "$KUBE_NS"; do
    wait_until 60 "$ns/$1 bound" '[ -n "$(node_in '"$ns"' '"$1"')" ]'
    [ "$(node_in "$ns" "$1")" = "$2" ] || fail "$ns: $1 went to $(node_in "$ns" "$1"), not $2"
  done
}
FULL="0/2 nodes are available: 2 node(s) exceed max volume count. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."

limits 1 0
for ns in "$NS" "$KUBE_NS"; do
  for c in one two three four; do csi_claim "$ns" "$c"; done
done
# Both schedulers list CSINodes before they decide; give their watches the
# limits before the first pod.
sleep 1
for ns in "$NS" "$KUBE_NS"; do user "$ns" first one; done
bound_to first lab-node-1
for ns in "$NS" "$KUBE_NS"; do user "$ns" second two; done
pending second "$FULL"
pass "limits 1 and 0: first on lab-node-1, second pending, both say '$FULL'"

limits 1 1
bound_to second lab-node-2
pass "lab-node-2's limit raised to 1: second bound there by both"

for ns in "$NS" "$KUBE_NS"; do
  on_exit k delete volumeattachment "va-$ns" '>/dev/null 2>&1'
  k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-$ns}
spec:
  attacher: $(driver_of "$ns")
  nodeName: lab-node-1
  source: {persistentVolumeName: pv-three-$ns}
YAML
  k -n "$ns" delete pod first --wait=false >/dev/null
done
for ns in "$NS" "$KUBE_NS"; do
  wait_until 30 "$ns/first gone" '[ -z "$(k -n '"$ns"' get pod first --ignore-not-found -o name)" ]'
done
for ns in "$NS" "$KUBE_NS"; do user "$ns" third four; done
pending third "$FULL"
pass "a VolumeAttachment still on lab-node-1 counts: third pending, both say '$FULL'"

for ns in "$NS" "$KUBE_NS"; do k delete volumeattachment "va-$ns" >/dev/null; done
bound_to third lab-node-1
pass "the VolumeAttachment deleted: third bound to lab-node-1 by both"
k delete namespace "$KUBE_NS" --wait=false >/dev/null
