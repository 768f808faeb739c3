#!/usr/bin/env bash
# --controllers --storage --csi-driver: what a StatefulSet with
# volumeClaimTemplates and a pod with a generic ephemeral volume need, all
# of it the real parts (statefulset, ephemeral-volume and
# persistentvolume-binder controllers, the storage SIG's provisioner
# library, kube-scheduler's VolumeBinding): every claim is provisioned on
# the node kube-scheduler picked for its pod and bound; a zonal class pins
# its volume to a zone within its allowedTopologies; an Immediate class's
# volume is made first and the pod goes to it; a released volume is
# deleted. And the CSINode objects a kubelet would register; flags that
# do not go together are refused.
source "$(dirname "$0")/../lib.sh"

refused '--storage needs --controllers' --storage
refused '--csi-attach-limit needs --csi-driver' --csi-attach-limit 3
refused 'more than an int32' --csi-driver d --csi-attach-limit 4294967296

DRIVER=csi.lab.toysched.dev
use_private_lab --nodes 4 --zones 2 --controllers --storage --kube-scheduler \
  --csi-driver "$DRIVER" --csi-attach-limit 7

# --- CSINode and CSIDriver, as a kubelet and a driver's installer make them.
for i in 1 2 3 4; do
  got=$(k get csinode "lab-node-$i" -o jsonpath='{.spec.drivers[0].name} {.spec.drivers[0].allocatable.count} {.spec.drivers[0].topologyKeys} {.metadata.ownerReferences[0].kind}')
  [ "$got" = "$DRIVER 7 [\"kubernetes.io/hostname\",\"topology.kubernetes.io/zone\"] Node" ] ||
    fail "CSINode lab-node-$i: $got"
done
k get csidriver "$DRIVER" >/dev/null || fail "no CSIDriver $DRIVER"
pass "CSINode of every node: $DRIVER, allocatable.count 7, hostname and zone keys, owned by the Node"

# --- The StorageClasses: lab-standard the default, WaitForFirstConsumer.
classes=$(k get storageclass -o jsonpath='{range .items[*]}{.metadata.name} {.provisioner} {.volumeBindingMode} {.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}{"\n"}{end}')
grep -qx 'lab-standard lab.toysched.dev/hostpath WaitForFirstConsumer true' <<<"$classes" || fail "classes: $classes"
grep -qx 'lab-immediate lab.toysched.dev/hostpath Immediate ' <<<"$classes" || fail "classes: $classes"
pass "StorageClasses lab-standard (default, WaitForFirstConsumer) and lab-immediate"

# claim_field CLAIM JSONPATH: a field of CLAIM in NS.
claim_field() { k -n "$NS" get pvc "$1" -o jsonpath="{$2}"; }
# pv_affinity CLAIM: "KEY VALUES" of its volume's required node affinity.
pv_affinity() {
  k get pv "$(claim_field "$1" .spec.volumeName)" \
    -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key} {.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values}'
}
# check_local CLAIM POD: CLAIM is Bound, to a volume pinned to POD's node,
# the node kube-scheduler chose for it (selected-node).
check_local() {
  local node; node=$(node_of "$2")
  [ "$(claim_field "$1" .status.phase)" = Bound ] || fail "claim $1 is $(claim_field "$1" .status.phase)"
  [ "$(claim_field "$1" '.metadata.annotations.volume\.kubernetes\.io/selected-node')" = "$node" ] ||
    fail "claim $1: selected-node is not $node"
  [ "$(pv_affinity "$1")" = "kubernetes.io/hostname [\"$node\"]" ] || fail "claim $1's volume: $(pv_affinity "$1"), pod on $node"
}
running() { [ "$(k -n "$NS" get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ]; }
# volume_pod NAME <<YAML (its volumes, indented 2): a pause pod in NS, for
# kube-scheduler.
volume_pod() {
  { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n' "$1"
    printf '  containers: [{name: c, image: registry.k8s.io/pause:3.9}]\n  volumes:\n'
    cat; } | k -n "$NS" apply -f - >/dev/null
}

# --- A StatefulSet of 3 with a claim template on the default class.
stateful_set "$NS" web 3
wait_until 90 "3 StatefulSet pods Running" '[ "$(count_pods app=web --field-selector=status.phase=Running)" = 3 ]'
for i in 0 1 2; do
  check_local "data-web-$i" "web-$i"
  [ "$(claim_field "data-web-$i" .spec.storageClassName)" = lab-standard ] || fail "data-web-$i: not of the default class"
  [ "$(claim_field "data-web-$i" .status.capacity.storage)" = 1Gi ] || fail "data-web-$i: capacity $(claim_field "data-web-$i" .status.capacity.storage)"
done
pass "StatefulSet web: 3 pods Running, each claim Bound to a 1Gi volume on its pod's node"

# --- A generic ephemeral volume: its claim made from the pod's template.
volume_pod eph <<'YAML'
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
YAML
wait_until 60 "pod eph Running" 'running eph'
check_local eph-scratch eph
[ "$(claim_field eph-scratch '.metadata.ownerReferences[0].name')" = eph ] || fail "eph-scratch is not owned by the pod"
pass "generic ephemeral volume: claim eph-scratch made, owned by the pod, Bound on its node"

# A released volume (reclaim Delete) goes: the pod's deletion takes its
# claim (garbage collector), the binder releases the volume, the
# provisioner's Delete and the library remove it.
pv=$(claim_field eph-scratch .spec.volumeName)
k -n "$NS" delete pod eph --wait=true --timeout=30s >/dev/null
wait_until 60 "volume $pv deleted" '! k get pv "$pv" >/dev/null 2>&1'
pass "pod deleted: its claim and volume $pv deleted"

# --- A zonal class restricted to zone-1: the pod lands in zone-1 and the
# volume is pinned to the zone, not the node.
k apply -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: lab-zonal-1}
provisioner: lab.toysched.dev/hostpath
volumeBindingMode: WaitForFirstConsumer
parameters: {topology: zone}
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [zone-1]}]
YAML
on_exit k delete storageclass lab-zonal-1 '>/dev/null 2>&1'
claim zonal "" lab-zonal-1
volume_pod zonal <<<'  - {name: v, persistentVolumeClaim: {claimName: zonal}}'
wait_until 60 "pod zonal Running" 'running zonal'
zone=$(k get node "$(node_of zonal)" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')
[ "$zone" = zone-1 ] || fail "pod zonal on $(node_of zonal), in $zone: outside the class's allowedTopologies"
[ "$(pv_affinity zonal)" = 'topology.kubernetes.io/zone ["zone-1"]' ] || fail "zonal volume: $(pv_affinity zonal)"
pass "zonal class: pod on $(node_of zonal) in zone-1, volume pinned to zone-1"

# --- The Immediate class: provisioned and bound before any pod; the pod
# then goes where the volume is.
claim early "" lab-immediate
wait_until 30 "claim early Bound with no pod" '[ "$(claim_field early .status.phase)" = Bound ]'
where=$(pv_affinity early)
volume_pod early <<<'  - {name: v, persistentVolumeClaim: {claimName: early}}'
wait_until 60 "pod early Running" 'running early'
[ "$where" = "kubernetes.io/hostname [\"$(node_of early)\"]" ] || fail "volume $where, pod on $(node_of early)"
pass "Immediate class: claim Bound first ($where), pod scheduled to that node"
