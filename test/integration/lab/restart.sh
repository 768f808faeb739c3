#!/usr/bin/env bash
# A lab restarted on the same dir keeps its data and its address; a second lab
# on a dir in use is refused at once.
source "$(dirname "$0")/../lib.sh"
start_private_lab --nodes 2 --controllers

k create deployment keep --image=registry.k8s.io/pause:3.9 --replicas=2 >/dev/null
server=$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')

start=$SECONDS
if "$KUBE_LAB" --dir "$LAB_DIR" --nodes 2 >"$TEST_TMP/second.out" 2>&1; then
  fail "a second lab on a busy dir started"
fi
((SECONDS - start < 10)) || fail "the second lab took $((SECONDS - start))s to give up"
grep -qi 'in use' "$TEST_TMP/second.out" || fail "unclear message: $(cat "$TEST_TMP/second.out")"
pass "second lab refused: $(head -n1 "$TEST_TMP/second.out")"

lab_stop "$LAB_DIR"
lab_start "$LAB_DIR" --nodes 2 --controllers || fail "restart failed"
KCFG=$LAB_KUBECONFIG
k get deployment keep >/dev/null || fail "the deployment did not survive the restart"
server2=$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')
[ "$server" = "$server2" ] || fail "address changed across restart: $server -> $server2"
[ "$(k get nodes --no-headers | wc -l)" = 2 ] || fail "nodes after restart: $(k get nodes)"
pass "restart kept the deployment and the address $server"
