#!/usr/bin/env bash
# --config with two profiles in one process (issue 15's acceptance, and
# issue 14's "MostAllocated fills one node before the next"):
#  - default-scheduler (LeastAllocated, the default) spreads 3 pods over
#    the 3 empty nodes;
#  - packer (MostAllocated; BalancedAllocation disabled, so that only the
#    strategy differs) puts its 3 pods on one node;
#  - each profile's events name it as reportingController, as upstream's;
#  - --kubeconfig beside --config is ignored with a warning naming it;
#  - a config with a plugin that does not exist is one line and exit 1.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3

CONFIG=$TEST_TMP/config.yaml
scheduler_config "$CONFIG" <<YAML
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: NodeResourcesBalancedAllocation}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
YAML
start_toy "$TEST_TMP/toy.log" --config "$CONFIG" -v=2
wait_until 20 "two profiles logged" '[ "$(grep -c "Scheduler profile" "$TEST_TMP/toy.log")" = 2 ]'
grep -q 'these flags are ignored, the file decides: --kubeconfig' "$TEST_TMP/toy.log" ||
  fail "no warning that --kubeconfig is ignored under --config"
pass "two profiles from one file; --kubeconfig beside --config named as ignored"

# one_pod NAME SCHEDULER: a pod asking 500m and 1Gi.
one_pod() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {profile: $2}}
spec:
  schedulerName: $2
  containers:
  - {name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 500m, memory: 1Gi}}}
YAML
}
for i in 1 2 3; do one_pod "spread-$i" default-scheduler; done
wait_until 30 "3 default-scheduler pods bound" '[ "$(bound_count profile=default-scheduler)" = 3 ]'
nodes=$(spread profile=default-scheduler | wc -l)
[ "$nodes" = 3 ] || fail "LeastAllocated put 3 pods on $nodes node(s): $(spread profile=default-scheduler)"
pass "default-scheduler (LeastAllocated): 3 pods on 3 nodes"

for i in 1 2 3; do one_pod "pack-$i" packer; done
wait_until 30 "3 packer pods bound" '[ "$(bound_count profile=packer)" = 3 ]'
nodes=$(spread profile=packer | wc -l)
[ "$nodes" = 1 ] || fail "MostAllocated put 3 pods on $nodes nodes: $(spread profile=packer)"
pass "packer (MostAllocated): 3 pods on one node: $(spread profile=packer | xargs)"

# reporter POD: the reportingController of its Scheduled event.
reporter() {
  k -n "$NS" get events.events.k8s.io -o \
    jsonpath="{range .items[?(@.regarding.name==\"$1\")]}{.reason} {.reportingController}{\"\\n\"}{end}" |
    awk '$1 == "Scheduled" {print $2}'
}
wait_until 20 "Scheduled events" '[ -n "$(reporter spread-1)" ] && [ -n "$(reporter pack-1)" ]'
[ "$(reporter spread-1)" = default-scheduler ] || fail "spread-1's event reported by '$(reporter spread-1)'"
[ "$(reporter pack-1)" = packer ] || fail "pack-1's event reported by '$(reporter pack-1)'"
pass "each profile's events name it as reportingController"
check_no_overcommit

# A config that cannot run: one line, exit 1, before any connection.
cat >"$TEST_TMP/bad.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: x
  plugins: {filter: {enabled: [{name: NoSuchPlugin}]}}
YAML
set +e
"$TOYSCHED_BUILD/toy-scheduler" --config "$TEST_TMP/bad.yaml" >"$TEST_TMP/bad.out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "a config naming an unknown plugin exited $rc, not 1"
[ "$(wc -l <"$TEST_TMP/bad.out")" = 1 ] || fail "not one line: $(cat "$TEST_TMP/bad.out")"
grep -q 'profiles\[0\].plugins.filter: plugin "NoSuchPlugin" does not exist' "$TEST_TMP/bad.out" ||
  fail "unexpected error: $(cat "$TEST_TMP/bad.out")"
pass "an unknown plugin: exit 1 with: $(cat "$TEST_TMP/bad.out")"
