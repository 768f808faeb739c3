#!/usr/bin/env bash
# The race (seed 000, steps 1-3): toy-scheduler under the name
# default-scheduler beside the real kube-scheduler; 20 pods that both think
# are theirs. The API server is the arbiter: every pod ends on exactly one
# node, the binds of both sides add up to the pods, losers get a 409.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers --kube-scheduler
ks_log=$LAB_DIR/kube-scheduler.log
start_toy "$TEST_TMP/toy.log" --scheduler-name=default-scheduler -v=4

deployment race 20   # no schedulerName: both take it
wait_until 30 "20 pods bound" '[ "$(bound_count app=race)" = 20 ]'
sleep 2  # let the losers log their refusals
spread app=race

ours=$(grep -c "Successfully bound pod to node.*pod=\"$NS/" "$TEST_TMP/toy.log" || true)
theirs=$(grep -c "Successfully bound pod to node.*pod=\"$NS/" "$ks_log" || true)
our_conflicts=$(grep -ci 'conflict\|already assigned' "$TEST_TMP/toy.log" || true)
their_conflicts=$(grep -ci 'conflict\|already assigned' "$ks_log" || true)
echo "binds: toy-scheduler $ours, kube-scheduler $theirs; conflicts: toy-scheduler $our_conflicts, kube-scheduler $their_conflicts"
echo "win ratio (toy-scheduler : kube-scheduler) = $ours : $theirs"
[ $((ours + theirs)) = 20 ] || fail "binds add up to $((ours + theirs)), not 20"
pass "every pod bound once: the two sides' binds add up to 20"

# Exactly one conflict line per lost race on our side: each of our lines
# names a pod that kube-scheduler bound.
# (none at all when we won every race: grep then finds nothing, which is fine)
{ grep -i 'conflict\|already assigned' "$TEST_TMP/toy.log" || true; } | { grep -o 'pod="[^"]*"' || true; } | sort >"$TEST_TMP/lost"
[ "$(sort -u "$TEST_TMP/lost" | wc -l)" = "$(wc -l <"$TEST_TMP/lost")" ] || fail "two conflict lines for one pod"
while read -r p; do
  grep -q "Successfully bound pod to node.*$p" "$ks_log" || fail "we logged a lost race for $p, but kube-scheduler did not bind it"
done <"$TEST_TMP/lost"
pass "one conflict line per race we lost"

# The thing that would actually be a bug: a pod whose nodeName disagrees with
# the node it runs on.
k -n "$NS" get pods -l app=race -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.hostIP}{"\n"}{end}' |
  while read -r name node host; do
    ip=$(k get node "$node" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
    [ "$host" = "$ip" ] || fail "$name: spec.nodeName $node ($ip) but hostIP $host"
  done
pass "every pod's nodeName agrees with its hostIP"
check_no_overcommit
pass "no node over-committed"
