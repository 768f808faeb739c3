#!/usr/bin/env bash
# VolumeBinding on a real lab, with the lab's persistentvolume-binder:
#  - a claim pre-bound to a volume whose node affinity names one node (and
#    two that do not exist, as the e2e test does) puts the pod on that node;
#  - a pod whose claim does not exist stays pending, saying so; once the
#    claim and its volume appear (and the controller binds them), the pod is
#    scheduled without being touched: the claim's events move it;
#  - an unbound claim of a WaitForFirstConsumer class without provisioner,
#    and no volume for it: pending, with upstream's reason (binding and
#    provisioning such claims: volume_binding.sh).
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
start_toy "$TEST_TMP/toy.log" -v=2

PAUSE='  containers: [{name: c, image: registry.k8s.io/pause:3.9}]'
uses() { pod "$1" <<<"  volumes: [{name: data, persistentVolumeClaim: {claimName: $2}}]
$PAUSE"; }

volume "pv-a-$NS" lab-node-2 no-such-node-1 no-such-node-2
claim a "pv-a-$NS"
uses on-volume a
wait_until 30 "on-volume bound" '[ -n "$(node_of on-volume)" ]'
[ "$(node_of on-volume)" = lab-node-2 ] || fail "on-volume went to $(node_of on-volume), not lab-node-2"
pass "a bound volume's node affinity chose lab-node-2"

uses waits-for-claim b
want='0/3 nodes are available: persistentvolumeclaim "b" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.'
wait_until 20 "waits-for-claim: PodScheduled=False" '[ "$(scheduled_message waits-for-claim)" = "$want" ]'
pass "a missing claim: pending, '$want'"
volume "pv-b-$NS" lab-node-3
claim b "pv-b-$NS"
wait_until 40 "waits-for-claim bound once its claim is" '[ -n "$(node_of waits-for-claim)" ]'
[ "$(node_of waits-for-claim)" = lab-node-3 ] || fail "waits-for-claim went to $(node_of waits-for-claim)"
pass "the claim's arrival (and binding) moved the pod: bound to lab-node-3"

k apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: late-$NS}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
YAML
on_exit k delete storageclass "late-$NS" --wait=false '>/dev/null 2>&1'
claim c "" "late-$NS"
uses late c
want="0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
wait_until 20 "late: PodScheduled=False" '[ "$(scheduled_message late)" = "$want" ]'
[ -z "$(node_of late)" ] || fail "late was bound to $(node_of late)"
pass "WaitForFirstConsumer, no volume, no provisioner: pending, '$want'"
