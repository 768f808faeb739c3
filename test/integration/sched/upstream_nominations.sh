#!/usr/bin/env bash
# Issue 47 (item 3): where status.nominatedNodeName is cleared, the same
# scenario run by the release's kube-scheduler v1.36.3, then by
# toy-scheduler with the very same --config, on one node of 4 CPU. Before
# the scheduler starts: a 3-cpu victim of priority 0 on the node (a
# finalizer keeps it Terminating once deleted), and four pending 3-cpu pods
# that do not fit, each with status.nominatedNodeName set to the node:
#   outranked    priority 500, preemptionPolicy Never: PostFilter says "not
#                eligible", so its nomination stays;
#   no-post      priority 500, a profile with no PostFilter at all: cleared;
#   dra-only     priority 500, a profile without DefaultPreemption but with
#                DynamicResources' PostFilter, which answers no nomination:
#                it stays;
#   no-candidate priority 0, default profile: nothing of lower priority to
#                evict, so no candidate: cleared.
# Then a 2-cpu preemptor of priority 1000 evicts the victim: the two
# nominations still there (outranked's, dra-only's, both of lower
# priority) are cleared, the preemptor is nominated and, once the victim is
# gone, bound there. Last, a 2-cpu pod of priority 0 fits beside it: no
# stale nomination is still counted on the node.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1
NODE=lab-node-1

CONFIG=$TEST_TMP/config.yaml
scheduler_config "$CONFIG" <<YAML
profiles:
- schedulerName: nom-default
- schedulerName: nom-no-post
  plugins: {postFilter: {disabled: [{name: '*'}]}}
- schedulerName: nom-dra-only
  plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}
YAML

priority_classes mid=500 never=500:Never high=1000

# make NAME CPU FIELD VALUE [CLASS] [FINALIZER]: a pod asking CPU whose spec
# sets FIELD (nodeName or schedulerName) to VALUE.
make() {
  { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s%s}\nspec:\n' "$1" "$NS" \
      "${6:+, finalizers: [$6]}"
    printf '  %s: %s\n' "$3" "$4"
    [ -z "${5:-}" ] || printf '  priorityClassName: %s-%s\n' "$5" "$NS"
    printf '  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "%s"}}}]\n' "$2"
  } | k apply -f - >/dev/null
}
nominate() {
  k -n "$NS" patch pod "$1" --subresource=status --type=merge \
    -p "{\"status\":{\"nominatedNodeName\":\"$NODE\"}}" >/dev/null
}
nnn() { k -n "$NS" get pod "$1" -o jsonpath='{.status.nominatedNodeName}'; }
failed() { [ "$(k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')" = False ]; }
release() { k -n "$NS" patch pod "$1" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true; }
on_exit 'for p in $(k -n "$NS" get pods -o name 2>/dev/null); do k -n "$NS" patch "$p" --type=json -p '"'"'[{"op":"remove","path":"/metadata/finalizers"}]'"'"' >/dev/null 2>&1; done'

# expect WHO POD VALUE: POD's status.nominatedNodeName is VALUE.
expect() { [ "$(nnn "$2")" = "$3" ] || fail "$1: $2's nominatedNodeName is '$(nnn "$2")', not '$3'"; }

# scenario WHO COMMAND...: the whole story, COMMAND running the scheduler.
scenario() {
  local who=$1 pid p
  shift
  make victim 3 nodeName "$NODE" "" toysched.test/hold
  make outranked 3 schedulerName nom-default never
  make no-post 3 schedulerName nom-no-post mid
  make dra-only 3 schedulerName nom-dra-only mid
  make no-candidate 3 schedulerName nom-default
  for p in outranked no-post dra-only no-candidate; do nominate "$p"; done
  "$@" >"$TEST_TMP/$who.log" 2>&1 &
  pid=$!
  on_exit "kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null"

  for p in outranked no-post dra-only no-candidate; do wait_until 60 "$who: $p tried" "failed $p"; done
  expect "$who" outranked "$NODE"
  expect "$who" no-post ""
  expect "$who" dra-only "$NODE"
  expect "$who" no-candidate ""
  pass "$who: Never and DynamicResources' PostFilter keep the nomination; no PostFilter, no candidate clear it"

  make preemptor 2 schedulerName nom-default high
  wait_until 30 "$who: the victim terminating" \
    '[ -n "$(k -n "$NS" get pod victim -o jsonpath="{.metadata.deletionTimestamp}")" ]'
  wait_until 30 "$who: the preemptor nominated" '[ "$(nnn preemptor)" = "$NODE" ]'
  expect "$who" outranked ""
  expect "$who" dra-only ""
  pass "$who: the preemptor nominated to $NODE; outranked's and dra-only's nominations cleared"

  release victim
  wait_until 30 "$who: the preemptor bound" '[ "$(node_of preemptor)" = "$NODE" ]'
  make late 2 schedulerName nom-default
  wait_until 30 "$who: the late pod bound beside it" '[ "$(node_of late)" = "$NODE" ]'
  for p in outranked no-post dra-only no-candidate; do expect "$who" "$p" ""; done
  pass "$who: a 2-cpu pod of priority 0 fits beside the preemptor: no nomination is counted there"

  signal_and_wait TERM "$pid"
  for p in $(k -n "$NS" get pods -o name); do release "${p#pod/}"; done
  k -n "$NS" delete pods --all --grace-period=0 --force >/dev/null 2>&1
  wait_until 30 "$who: the namespace emptied" '[ -z "$(k -n "$NS" get pods -o name)" ]'
}

scenario kube-scheduler "$TOYSCHED_BUILD/kube-scheduler" --config "$CONFIG" --secure-port 0 --v=2
scenario toy-scheduler "$TOYSCHED_BUILD/toy-scheduler" --config "$CONFIG" --secure-port=0 \
  --metrics-bind-address=127.0.0.1:0 -v=2
