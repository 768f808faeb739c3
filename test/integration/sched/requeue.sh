#!/usr/bin/env bash
# An unschedulable pod is tried again only after an event that can help it:
# node annotations and condition heartbeats do not bring it back, a label
# change does (and the label it asked for binds it); a placed pod relabelled
# out of a pending pod's anti-affinity lets it in; a bound pod resized
# down makes room for a pod waiting for CPU. Attempts are counted from the
# -v=4 line "About to try and schedule pod", one per attempt.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1
start_toy "$TEST_TMP/toy.log" -v=4

attempts() { grep -c "About to try and schedule pod.*pod=\"$NS/$1\"" "$TEST_TMP/toy.log" || true; }

pod waiting <<<"  nodeSelector: {disk: nvme}
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"
wait_until 10 "waiting found unschedulable" '[ -n "$(scheduled_message waiting)" ]'
sleep 2  # past its 1 s backoff: any move from now on is an attempt at once
before=$(attempts waiting)
[ "$before" = 1 ] || fail "waiting was tried $before times before any node event"

# Nothing a filter reads: no attempt.
for i in 1 2 3; do
  k annotate node lab-node-1 --overwrite "example.com/note=$i" >/dev/null
  k patch node lab-node-1 --subresource=status --type=strategic >/dev/null \
    -p '{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"'"$(date -u +%Y-%m-%dT%H:%M:%SZ)"'"}]}}'
done
sleep 3
[ "$(attempts waiting)" = "$before" ] ||
  fail "annotations and heartbeats requeued the pod: $(attempts waiting) attempts, expected $before"
pass "annotations and condition heartbeats: no new attempt"

# A label change can help (here it does not yet): one more attempt.
k label node lab-node-1 example.com/unrelated=yes >/dev/null
wait_until 5 "an attempt after a label change" '[ "$(attempts waiting)" -gt "$before" ]'
[ -z "$(node_of waiting)" ] || fail "waiting bound to $(node_of waiting) without its label"
pass "label change: tried again ($(attempts waiting) attempts)"
k label node lab-node-1 disk=nvme >/dev/null
wait_until 5 "waiting bound once the node has its label" '[ "$(node_of waiting)" = lab-node-1 ]'
pass "the label it asked for: bound"

# A placed pod relabelled lets in a pod that its old labels kept out by
# required anti-affinity (upstream's InterPodAffinity hint on
# UpdatePodLabel): tried again at once, not at the 5-minute flush.
pod db <<<"  nodeSelector: {kubernetes.io/hostname: lab-node-1}
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"
wait_until 10 "db bound" '[ "$(node_of db)" = lab-node-1 ]'
k -n "$NS" label pod db app=db >/dev/null
pod shy <<<"  nodeSelector: {kubernetes.io/hostname: lab-node-1}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: kubernetes.io/hostname
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"
wait_until 10 "shy found unschedulable" '[ -n "$(scheduled_message shy)" ]'
sleep 2  # past its 1 s backoff
[ -z "$(node_of shy)" ] || fail "shy bound to $(node_of shy) beside a pod its anti-affinity excludes"
k -n "$NS" label pod db app=other --overwrite >/dev/null
wait_until 5 "shy bound once db no longer matches its anti-affinity" '[ "$(node_of shy)" = lab-node-1 ]'
pass "a placed pod relabelled out of a pending pod's anti-affinity: bound"

# A bound pod resized down (in-place, the resize subresource) frees room.
# On a node the fake kubelet leaves alone: the API server takes a resize of
# a pod with running containers only when its kubelet reports their
# resources, which the fake one does not; with no container running, it does.
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: bare-1, labels: {kubernetes.io/hostname: bare-1}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok}]
YAML
ON_BARE='  nodeSelector: {kubernetes.io/hostname: bare-1}'
pod big <<<"$ON_BARE
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '3'}}}]"
wait_until 10 "big bound" '[ "$(node_of big)" = bare-1 ]'
pod needs-cpu <<<"$ON_BARE
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '2'}}}]"
wait_until 10 "needs-cpu unschedulable" \
  '[ "$(scheduled_message needs-cpu)" = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn'"'"'t match Pod'"'"'s node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling." ]'
sleep 2  # past its backoff
k -n "$NS" patch pod big --subresource resize >/dev/null \
  -p '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}'
wait_until 5 "needs-cpu bound after big was resized down" '[ "$(node_of needs-cpu)" = bare-1 ]'
pass "a bound pod resized down: the waiting pod bound"
check_no_overcommit
