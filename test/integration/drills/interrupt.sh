#!/usr/bin/env bash
# A drill interrupted with SIGINT midway leaves nothing behind:
#  1. on a cluster (--kubeconfig, a namespace that exists already): none of
#     its objects (pods, Deployments, ReplicaSets, its Lease) stay in the
#     namespace, an object of someone else's there stays, no process of it runs;
#  2. on its own lab: no kube-lab (nor its kube-scheduler child) and no
#     toy-scheduler of it runs.
source "$(dirname "$0")/../lib.sh"
DRILL_RUN=$TOYSCHED_ROOT/drills/run.py

# descendants PID: every process below PID.
descendants() {
  local c
  for c in $(pgrep -P "$1" || true); do echo "$c"; descendants "$c"; done
}

# interrupt_when 'CONDITION' DRILL ARGS...: start the drill in the background,
# SIGINT it once CONDITION holds, and check it exits 130 leaving no process.
interrupt_when() {
  local cond=$1; shift
  local w=$TEST_TMP/w-$1
  python3 "$DRILL_RUN" "$@" --workdir "$w" >"$TEST_TMP/$1.out" 2>"$TEST_TMP/$1.log" &
  local drv=$!
  on_exit "kill -KILL $drv 2>/dev/null"
  W=$w wait_until 90 "the drill midway ($cond)" "$cond"
  local procs
  procs=$(descendants "$drv" | sort -u)
  echo "drill $1 (pid $drv) midway; its processes: $(echo $procs)"
  [ -n "$procs" ] || fail "the drill had started no process"
  local start=$SECONDS
  signal_and_wait INT "$drv"
  echo "drill $1 exited $EXIT_STATUS, $((SECONDS - start)) s after SIGINT"
  [ "$EXIT_STATUS" = 130 ] || fail "drill $1 exited $EXIT_STATUS after SIGINT, not 130"
  local p left=
  for p in $procs; do
    kill -0 "$p" 2>/dev/null && left+=" $p($(tr '\0' ' ' </proc/$p/cmdline | cut -c1-80))"
  done
  [ -z "$left" ] || fail "processes left running:$left"
  ! pgrep -f "$w" >/dev/null || fail "a process still names the workdir: $(pgrep -af "$w")"
}

# 1. On a cluster: the handover drill, interrupted in the forced gap (two
# replicas, the Lease, the gap Deployment and its pods all exist).
use_private_lab --nodes 3 --controllers
k -n "$NS" create configmap not-the-drills >/dev/null
interrupt_when '[ -n "$(k -n "$NS" get deployment gap -o name 2>/dev/null)" ]' \
  handover --kubeconfig "$KCFG" --namespace "$NS"
left=$(k -n "$NS" get pods,deployments,replicasets,leases -o name 2>/dev/null)
[ -z "$left" ] || fail "objects left in $NS: $left"
[ -n "$(k -n "$NS" get configmap not-the-drills -o name)" ] || fail "the drill deleted an object it did not create"
k get namespace "$NS" >/dev/null || fail "the drill deleted a namespace it did not create"
pass "handover on a cluster, interrupted in the forced gap: nothing left in $NS, nothing running"

# 2. On its own lab: the race drill, interrupted once toy-scheduler runs
# beside kube-scheduler.
interrupt_when '[ -s "$W/toy-scheduler.log" ]' race
pass "race on its own lab, interrupted: no kube-lab, kube-scheduler or toy-scheduler left"
