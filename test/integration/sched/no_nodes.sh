#!/usr/bin/env bash
# A cluster with no nodes: kube-scheduler v1.36.3 fails the cycle with
# ErrNoNodesAvailable, which no plugin rejected, so its queue counts an
# error and tries the pod again after the error backoff (1 s doubling),
# without waiting for an event. The pod is not parked among the
# unschedulable pods until a node comes or the 5-minute flush. Attempts are
# counted from the -v=4 line "About to try and schedule pod", one per attempt.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 0
start_toy "$TEST_TMP/toy.log" -v=4

attempts() { grep -c "About to try and schedule pod.*pod=\"$NS/$1\"" "$TEST_TMP/toy.log" || true; }

pod lonely <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"
wait_until 10 "lonely found unschedulable" \
  '[ "$(scheduled_message lonely)" = "no nodes available to schedule pods" ]'
grep -q "Unable to schedule pod; no nodes are registered to the cluster; waiting\" pod=\"$NS/lonely\"" \
  "$TEST_TMP/toy.log" || fail "no 'no nodes are registered' line for lonely"
# Backoffs of 1, 2, 4 s (each to the end of its 1 s window): a third
# attempt about 7 s after the first, with nothing happening in the cluster.
wait_until 15 "lonely tried again without any event" '[ "$(attempts lonely)" -ge 3 ]'
pass "no nodes: tried again after the error backoff ($(attempts lonely) attempts)"

# A node registers: the pod goes there once its backoff (at most 10 s) ends.
k create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: lab-node-1, labels: {kubernetes.io/hostname: lab-node-1}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: added by the test}]
YAML
wait_until 20 "lonely bound to the node that came" '[ "$(node_of lonely)" = lab-node-1 ]'
pass "a node registered: bound"
