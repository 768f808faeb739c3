#!/usr/bin/env bash
# VolumeRestrictions and VolumeZone on a real lab (3 nodes in 3 zones, the
# lab's persistentvolume-binder), each scenario played twice: by
# toy-scheduler in NS and by the lab's kube-scheduler v1.36.3 in NS-kube,
# with the same objects, and the outcomes compared:
#  - ReadWriteOncePod: a second pod on a claim in use stays pending with
#    upstream's message; deleting the first lets it in; a pod of higher
#    priority preempts the claim's user, and only it;
#  - a volume labelled with a zone (no node affinity) puts its pod in that
#    zone, a "__"-joined list of zones in one of them, and a zone no node
#    has keeps the pod pending with upstream's message.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --zones 3 --controllers --kube-scheduler
start_toy "$TEST_TMP/toy.log" -v=2
KUBE_NS=$NS-kube
k create namespace "$KUBE_NS" >/dev/null
priority_classes user=10 urgent=1000

source "$(dirname "$0")/side_by_side.sh"
# bound_claim NAMESPACE NAME ACCESS [ZONE-LABEL]: a hostPath volume (labelled
# topology.kubernetes.io/zone=ZONE-LABEL if given) and its claim.
bound_claim() {
  prebound_claim "$1" "$2" "$3" "hostPath: {path: /tmp/pv-$2-$1}" "${4:+topology.kubernetes.io/zone: $4}"
}
user() { claim_user "$@"; }
# both SCENARIO-FUNCTION: run it in NS for toy-scheduler, in KUBE_NS for kube-scheduler.
both() { "$1" "$NS" toy-scheduler; "$1" "$KUBE_NS" default-scheduler; }

# --- ReadWriteOncePod: one pod at a time
rwop_pair() {
  bound_claim "$1" solo ReadWriteOncePod
  user "$1" "$2" first solo
  wait_until 30 "$1/first bound" '[ -n "$(node_in '"$1"' first)" ]'
  user "$1" "$2" second solo
}
both rwop_pair
WANT="0/3 nodes are available: 3 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
wait_until 30 "second pending with a message (toy-scheduler)" '[ -n "$(message_in "$NS" second)" ]'
wait_until 60 "second pending with a message (kube-scheduler)" '[ -n "$(message_in "$KUBE_NS" second)" ]'
[ "$(message_in "$NS" second)" = "$WANT" ] || fail "toy-scheduler: second says '$(message_in "$NS" second)'"
[ "$(kube_message second)" = "$WANT" ] || fail "kube-scheduler: second says '$(kube_message second)'"
[ -z "$(node_in "$NS" second)" ] || fail "toy-scheduler bound second to $(node_in "$NS" second)"
pass "a ReadWriteOncePod claim in use: the second pod pending, both say '$WANT'"

for ns in "$NS" "$KUBE_NS"; do k -n "$ns" delete pod first --wait=false >/dev/null; done
wait_until 30 "toy-scheduler binds second once first is gone" '[ -n "$(node_in "$NS" second)" ]'
wait_until 60 "kube-scheduler binds second once first is gone" '[ -n "$(node_in "$KUBE_NS" second)" ]'
pass "the claim's user deleted: second bound by both"

# --- ReadWriteOncePod and preemption: the claim's user is the one victim,
# though a pod of the same priority sits on every node
rwop_preempt() {
  bound_claim "$1" contested ReadWriteOncePod
  user "$1" "$2" holder contested user
  wait_until 30 "$1/holder bound" '[ -n "$(node_in '"$1"' holder)" ]'
  HOLDER_NODE[$1]=$(node_in "$1" holder)
  for i in 1 2 3; do
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: bystander-$i, namespace: $1}
spec:
  schedulerName: $2
  priorityClassName: user-$NS
  nodeSelector: {kubernetes.io/hostname: lab-node-$i}
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
  done
  for i in 1 2 3; do wait_until 30 "$1/bystander-$i bound" '[ -n "$(node_in '"$1"' bystander-'"$i"')" ]'; done
  user "$1" "$2" urgent contested urgent
}
declare -A HOLDER_NODE
both rwop_preempt
for ns in "$NS" "$KUBE_NS"; do
  wait_until 60 "$ns: urgent bound" '[ -n "$(node_in '"$ns"' urgent)" ]'
  [ "$(node_in "$ns" urgent)" = "${HOLDER_NODE[$ns]}" ] ||
    fail "$ns: urgent went to $(node_in "$ns" urgent), not ${HOLDER_NODE[$ns]}"
  [ -z "$(k -n "$ns" get pod holder --ignore-not-found -o name)" ] || fail "$ns: holder was not preempted"
  for i in 1 2 3; do
    [ -n "$(k -n "$ns" get pod "bystander-$i" --ignore-not-found -o name)" ] || fail "$ns: bystander-$i was preempted"
  done
done
pass "a ReadWriteOncePod claim's user preempted by a pod of higher priority, bystanders spared, by both"

# --- VolumeZone: the volume's zone label decides
zones() {
  bound_claim "$1" zonal ReadWriteOnce zone-1
  bound_claim "$1" two-zones ReadWriteOnce zone-0__zone-2
  bound_claim "$1" nowhere ReadWriteOnce zone-9
  user "$1" "$2" in-zone-1 zonal
  user "$1" "$2" in-two-zones two-zones
  user "$1" "$2" in-no-zone nowhere
}
both zones
for ns in "$NS" "$KUBE_NS"; do
  wait_until 60 "$ns: zonal pods bound" '[ -n "$(node_in '"$ns"' in-zone-1)" ] && [ -n "$(node_in '"$ns"' in-two-zones)" ]'
  [ "$(node_in "$ns" in-zone-1)" = lab-node-2 ] || fail "$ns: in-zone-1 went to $(node_in "$ns" in-zone-1)"
  case "$(node_in "$ns" in-two-zones)" in
    lab-node-1 | lab-node-3) ;;
    *) fail "$ns: in-two-zones went to $(node_in "$ns" in-two-zones)" ;;
  esac
done
pass "a zone-labelled volume: its pod in zone-1 (lab-node-2), a two-zone volume's in zone-0 or zone-2, by both"
WANT="0/3 nodes are available: 3 node(s) had no available volume zone. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
wait_until 30 "in-no-zone pending with a message (toy-scheduler)" '[ -n "$(message_in "$NS" in-no-zone)" ]'
wait_until 60 "in-no-zone pending with a message (kube-scheduler)" '[ -n "$(message_in "$KUBE_NS" in-no-zone)" ]'
[ "$(message_in "$NS" in-no-zone)" = "$WANT" ] || fail "toy-scheduler: in-no-zone says '$(message_in "$NS" in-no-zone)'"
[ "$(kube_message in-no-zone)" = "$WANT" ] || fail "kube-scheduler: in-no-zone says '$(kube_message in-no-zone)'"
[ -z "$(node_in "$NS" in-no-zone)" ] || fail "toy-scheduler bound in-no-zone to $(node_in "$NS" in-no-zone)"
pass "a volume in a zone no node has: pending, both say '$WANT'"
k delete namespace "$KUBE_NS" --wait=false >/dev/null
