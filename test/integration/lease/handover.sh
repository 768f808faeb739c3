#!/usr/bin/env bash
# Two toy-scheduler replicas with --leader-elect (seed 002): one leader at a
# time; a graceful handover (SIGTERM) within 2 s, a forced one (SIGKILL)
# within lease + 1.2 x retry + 1 s; leaseTransitions +1 each time; pods sent
# in the forced gap wait, then are bound once. Prints the drill's numbers.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers

lease_field() { k -n kube-system get lease toy-scheduler -o jsonpath="{.spec.$1}" 2>/dev/null || true; }
declare -A PID
start_replica() {  # start_replica ID: a replica with that identity
  "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" -v=2 --leader-elect --metrics-bind-address=127.0.0.1:0 \
    --leader-elect-identity "$1" >>"$TEST_TMP/$1.log" 2>&1 &
  PID[$1]=$!
  on_exit "kill -KILL ${PID[$1]} 2>/dev/null"
}
other() { [ "$1" = a ] && echo b || echo a; }

# Started at the same instant: one leader, no error exits.
start_replica a
start_replica b
wait_until 20 "a leader" '[ -n "$(lease_field holderIdentity)" ]'
leader=$(lease_field holderIdentity)
sleep 3
kill -0 "${PID[a]}" && kill -0 "${PID[b]}" || fail "a replica exited"
[ "$(cat "$TEST_TMP/a.log" "$TEST_TMP/b.log" | grep -c 'successfully acquired lease')" = 1 ] || fail "two leaders"
pass "one leader: $leader; the other waits"

# A burst that fills the nodes exactly (3 x 4 CPU = 24 x 500m): only the leader binds.
deployment fill 24 toy-scheduler 500m
wait_until 30 "24 bound" '[ "$(bound_count app=fill)" = 24 ]'
[ "$(grep -c 'Successfully bound' "$TEST_TMP/$(other "$leader").log")" = 0 ] || fail "the standby bound pods"
check_no_overcommit
pass "only the leader bound; nodes filled exactly, none over-committed"
k -n "$NS" delete deployment fill --wait=true >/dev/null
wait_until 30 "fill pods gone" '[ "$(count_pods app=fill)" = 0 ]'

# Graceful: SIGTERM releases the lease; the standby takes it at once.
t0=$(lease_field leaseTransitions)
start=$(now_ms)
kill -TERM "${PID[$leader]}"
wait_until 10 "the standby holds the lease" '[ "$(lease_field holderIdentity)" = "$(other "$leader")" ]'
graceful=$(( $(now_ms) - start ))
wait "${PID[$leader]}"; rc=$?
[ "$rc" = 0 ] || fail "the old leader exited $rc on SIGTERM"
t1=$(lease_field leaseTransitions)
((graceful <= 2000)) || fail "graceful handover took ${graceful} ms"
[ "$t1" = $((t0 + 1)) ] || fail "leaseTransitions $t0 -> $t1"
pass "graceful handover $leader -> $(other "$leader") in ${graceful} ms; leaseTransitions $t0 -> $t1"
start_replica "$leader"   # back as the standby
leader=$(other "$leader")
sleep 3

# Forced: SIGKILL; the standby waits out the lease; pods sent meanwhile wait.
start=$(now_ms)
kill -KILL "${PID[$leader]}"
deployment gap 5 toy-scheduler
created=$(now_ms)
wait_until 30 "the standby holds the lease" '[ "$(lease_field holderIdentity)" = "$(other "$leader")" ]'
forced=$(( $(now_ms) - start ))
t2=$(lease_field leaseTransitions)
wait_until 15 "the gap pods bound" '[ "$(bound_count app=gap)" = 5 ]'
pending=$(( $(now_ms) - created ))
((forced <= 18400)) || fail "forced handover took ${forced} ms (limit 15 s + 1.2 x 2 s + 1 s)"
[ "$t2" = $((t1 + 1)) ] || fail "leaseTransitions $t1 -> $t2"
pass "forced handover $leader -> $(other "$leader") in ${forced} ms; leaseTransitions $t1 -> $t2"
echo "the 5 pods created in the gap waited ${pending} ms to be bound"
cat "$TEST_TMP"/*.log | grep 'Successfully bound' | grep -o 'pod="[^"]*"' | sort | uniq -d >"$TEST_TMP/dups"
[ ! -s "$TEST_TMP/dups" ] || fail "bound twice: $(cat "$TEST_TMP/dups")"
check_no_overcommit
echo "handover: graceful ${graceful} ms, forced ${forced} ms, leaseTransitions $t0 -> $t1 -> $t2, gap pods pending ${pending} ms"
