#!/usr/bin/env bash
# Issue 13 item 8, in-place pod resize (GA in 1.35): a bound pod counts the
# larger of what its spec asks and what the kubelet reports in
# status.containerStatuses[].resources, as kube-scheduler does. One node of
# 4 CPU; pod `a` was resized down from 3 CPU to 1 and the kubelet has not
# carried it out yet (spec 1, status 3): a pod asking 2 CPU does not fit.
# Once the kubelet reports 1, the waiting 2-CPU pod is retried and fits.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1
start_toy "$TEST_TMP/toy.log" -v=4

# pod NAME CPU: a bare toy-scheduler pod asking that much CPU.
pod() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  schedulerName: toy-scheduler
  containers:
  - {name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "$2"}}}
YAML
}
node_of() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
phase_of() { k -n "$NS" get pod "$1" -o jsonpath='{.status.phase}'; }
scheduled_message() { k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
# actuated POD CPU: what the kubelet reports running the container at.
actuated() {
  k -n "$NS" patch pod "$1" --subresource=status --type=json >/dev/null \
    -p "[{\"op\":\"add\",\"path\":\"/status/containerStatuses/0/resources\",\"value\":{\"requests\":{\"cpu\":\"$2\"}}}]"
}

pod a 1
wait_until 10 "a bound" '[ -n "$(node_of a)" ]'
# The lab's kubelet writes the status once; ours must come after it.
wait_until 10 "a running" '[ "$(phase_of a)" = Running ]'
actuated a 3
[ "$(k -n "$NS" get pod a -o jsonpath='{.status.containerStatuses[0].resources.requests.cpu}')" = 3 ] ||
  fail "the API server did not keep the status resources"

# The same watch carries the status change and then b: b is decided with a
# counted at 3 CPU.
pod b 2
want="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
wait_until 10 "b decided" '[ -n "$(node_of b)" ] || [ -n "$(scheduled_message b)" ]'
[ -z "$(node_of b)" ] || fail "b was bound to $(node_of b) beside a still running at 3 CPU"
[ "$(scheduled_message b)" = "$want" ] || fail "b: '$(scheduled_message b)', expected '$want'"
pass "a counts 3 CPU while its resize down is not carried out: b (2 CPU) does not fit"

actuated a 1
# The resize down, once carried out, is an event that can help: b, waiting
# as unschedulable, is tried again and now fits (items 5 and 8 together).
wait_until 10 "b bound" '[ -n "$(node_of b)" ]'
pass "a counts 1 CPU once the kubelet reports it: b (2 CPU), waiting, is retried and fits"
