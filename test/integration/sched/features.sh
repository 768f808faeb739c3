#!/usr/bin/env bash
# Each filter and score on a real cluster: the node chosen, or the exact
# reason `kubectl describe pod` shows.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3
start_toy "$TEST_TMP/toy.log" -v=2

expect_node() {
  wait_until 10 "$1 bound" "[ -n \"\$(node_of $1)\" ]"
  [ "$(node_of "$1")" = "$2" ] || fail "$1 went to $(node_of "$1"), expected $2"
  pass "$1 -> $2"
}
expect_reason() {
  local got=
  wait_until 10 "$1 unschedulable" "[ -n \"\$(scheduled_message $1)\" ]"
  got=$(scheduled_message "$1")
  [ -z "$(node_of "$1")" ] || fail "$1 was bound to $(node_of "$1")"
  [ "$got" = "$2" ] || fail "$1: '$got', expected '$2'"
  pass "$1: $2"
}
PAUSE='containers: [{name: c, image: registry.k8s.io/pause:3.9}]'

# --- taints and tolerations
k taint node lab-node-1 dedicated=gpu:NoSchedule >/dev/null
pod taint-no <<<"  nodeSelector: {kubernetes.io/hostname: lab-node-1}
  $PAUSE"
expect_reason taint-no "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
pod taint-yes <<<"  nodeSelector: {kubernetes.io/hostname: lab-node-1}
  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]
  $PAUSE"
expect_node taint-yes lab-node-1
k taint node lab-node-1 dedicated- >/dev/null

# --- nodeSelector
k label node lab-node-2 disk=ssd >/dev/null
pod selector <<<"  nodeSelector: {disk: ssd}
  $PAUSE"
expect_node selector lab-node-2

# --- required node affinity (In, NotIn, Gt, matchFields)
k label node lab-node-3 zone=b cores=16 >/dev/null
k label node lab-node-1 zone=a cores=4 >/dev/null
pod req-in <<<"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [b]}]}]}}}
  $PAUSE"
expect_node req-in lab-node-3
pod req-gt <<<"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: cores, operator: Gt, values: ['8']}]}]}}}
  $PAUSE"
expect_node req-gt lab-node-3
pod req-fields <<<"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [lab-node-1]}]}]}}}
  $PAUSE"
expect_node req-fields lab-node-1
pod req-none <<<"  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [mars]}]}]}}}
  $PAUSE"
expect_reason req-none "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."

# --- preferred node affinity: every node fits, the preference decides
pod preferred <<<"  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]}}
  $PAUSE"
expect_node preferred lab-node-1

# --- host ports: one per node, the fourth has nowhere to go
for i in 1 2 3 4; do
  pod "port-$i" <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, ports: [{containerPort: 80, hostPort: 8080}]}]"
done
wait_until 10 "three port pods bound" '[ "$(k -n "$NS" get pods port-1 port-2 port-3 port-4 -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | grep -c .)" = 3 ]'
nodes=$(k -n "$NS" get pods port-1 port-2 port-3 port-4 -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort -u | wc -l)
[ "$nodes" = 3 ] || fail "port pods share a node"
last=$(for p in port-1 port-2 port-3 port-4; do [ -n "$(node_of $p)" ] || echo $p; done)
expect_reason "$last" "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
k -n "$NS" delete pods port-1 port-2 port-3 port-4 --wait=false >/dev/null

# --- an unschedulable (cordoned) node
k cordon lab-node-1 lab-node-2 >/dev/null
pod cordoned <<<"  $PAUSE"
expect_node cordoned lab-node-3
k cordon lab-node-3 >/dev/null
pod all-cordoned <<<"  $PAUSE"
expect_reason all-cordoned "0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
k uncordon lab-node-1 lab-node-2 lab-node-3 >/dev/null
wait_until 10 "all-cordoned bound once uncordoned" '[ -n "$(node_of all-cordoned)" ]'
pass "uncordoned: all-cordoned -> $(node_of all-cordoned)"

# --- extended resources
k patch node lab-node-2 --subresource=status --type=merge \
  -p '{"status":{"capacity":{"example.com/gpu":"2"},"allocatable":{"example.com/gpu":"2"}}}' >/dev/null
pod gpu-one <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {limits: {example.com/gpu: 1}}}]"
expect_node gpu-one lab-node-2
pod gpu-three <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {limits: {example.com/gpu: 3}}}]"
expect_reason gpu-three "0/3 nodes are available: 3 Insufficient example.com/gpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
# One that no node advertises at all (issue 18 item 2), alone and beside a
# cpu request no node can meet: each reason counted, sorted as upstream.
pod foo-none <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {limits: {example.com/foo: 1}}}]"
expect_reason foo-none "0/3 nodes are available: 3 Insufficient example.com/foo. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
pod foo-cpu <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9,
    resources: {requests: {cpu: '5'}, limits: {example.com/foo: 1}}}]"
expect_reason foo-cpu "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient example.com/foo. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."

# --- init containers: the largest init container counts, not only the app
pod init-big <<<"  initContainers: [{name: i, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '5'}}}]
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}}}]"
expect_reason init-big "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."

# --- pod overhead (from a RuntimeClass, set by admission): it counts too
k apply -f - >/dev/null <<'YAML'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: heavy}
handler: heavy
overhead: {podFixed: {cpu: "4"}}
YAML
pod overhead <<<"  runtimeClassName: heavy
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}}}]"
[ "$(k -n "$NS" get pod overhead -o jsonpath='{.spec.overhead.cpu}')" = 4 ] || fail "admission set no overhead"
expect_reason overhead "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."

# --- a node with no allocatable (issue 18 item 2). As upstream, every
# quantity is 0 then, pods included: it takes no pod, not even one that
# requests nothing. With only pods allocatable, it takes pods without
# requests (and scores them without dividing by its zero cpu and memory).
# The messages are kube-scheduler's Filter part, checked against it on the
# lab (its preemption part aside, which toy-scheduler does not do).
k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: lab-node-4, labels: {kubernetes.io/hostname: lab-node-4}}
status:
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok}]
YAML
[ -z "$(k get node lab-node-4 -o jsonpath='{.status.allocatable}')" ] || fail "the API server gave lab-node-4 an allocatable"
ON4="nodeSelector: {kubernetes.io/hostname: lab-node-4}"
pod bare-on-4 <<<"  $ON4
  $PAUSE"
expect_reason bare-on-4 "0/4 nodes are available: 1 Too many pods, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
pod cpu-on-4 <<<"  $ON4
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}}}]"
expect_reason cpu-on-4 "0/4 nodes are available: 1 Insufficient cpu, 1 Too many pods, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
k patch node lab-node-4 --subresource=status --type=merge -p '{"status":{"allocatable":{"pods":"3"}}}' >/dev/null
expect_node bare-on-4 lab-node-4
sleep 1 # time for a wrong bind: cpu-on-4 must stay pending (no cpu there)
[ -z "$(node_of cpu-on-4)" ] || fail "cpu-on-4 bound to a node with no cpu"
pass "cpu-on-4 still pending once lab-node-4 allows pods but has no cpu"
k patch node lab-node-4 --subresource=status --type=merge -p '{"status":{"allocatable":{"cpu":"1","pods":"3"}}}' >/dev/null
expect_node cpu-on-4 lab-node-4
# --- scheduling gates: a gated pod waits, untouched, and is placed once
# its last gate is removed (the API server sets reason SchedulingGated)
pod gated <<<"  schedulingGates: [{name: example.com/wait}]
  nodeSelector: {kubernetes.io/hostname: lab-node-2}
  $PAUSE"
sleep 2 # time for a wrong bind or a FailedScheduling event
[ -z "$(node_of gated)" ] || fail "gated pod bound while gated"
reason=$(k -n "$NS" get pod gated -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')
[ "$reason" = SchedulingGated ] || fail "gated pod's PodScheduled reason is '$reason'"
! k -n "$NS" get events --field-selector involvedObject.name=gated -o name | grep -q . ||
  fail "an event for a gated pod: $(k -n "$NS" get events --field-selector involvedObject.name=gated)"
pass "gated pod waits: no bind, no event, reason SchedulingGated"
k -n "$NS" patch pod gated --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]' >/dev/null
expect_node gated lab-node-2

kill -0 "$TOY_PID" || fail "toy-scheduler died"

check_no_overcommit
pass "no node over-committed"
