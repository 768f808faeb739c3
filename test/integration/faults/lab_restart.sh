#!/usr/bin/env bash
# Issue 18 item 1: the lab stopped and started again on the same DIR (the
# API server and etcd gone for 3 s, back with the same data and address) in
# the middle of a 500-pod burst. Binds in flight when it went are lost or
# land without an answer; watches break; toy-scheduler must reconnect,
# relist or re-watch, and bind the rest: each pod once, no node over-
# committed, its cache equal to the server's, and no crash. The time to
# bind a first pod after a restart is measured in sched-apiserver-restart.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_faults.sh"
# 500 pods of 23m on 3 nodes of 4 CPU and 200 pods: 11.5 of 12 CPU, so a
# pod counted twice or a bind forgotten shows as a node over-committed or a
# pod left pending.
LAB_FLAGS=(--nodes 3 --node-cpu 4 --node-pods 200)
use_private_lab "${LAB_FLAGS[@]}"
burst_pods 500 23m
start_toy "$TEST_TMP/toy.log" -v=2
url=http://127.0.0.1:$(toy_port "$TEST_TMP/toy.log")

wait_mid_burst 60 100 500 "$TEST_TMP/toy.log"
restart_private_lab 3 "${LAB_FLAGS[@]}"
kill -0 "$TOY_PID" || fail "toy-scheduler died with the API server: $(tail -n5 "$TEST_TMP/toy.log")"
pass "the lab restarted mid-burst at $(binds_logged "$TEST_TMP/toy.log") binds; toy-scheduler still runs"

wait_until 120 "all 500 bound" '[ "$(bound_count app=burst)" = 500 ]'
grep -c 'Failed to bind pod' "$TEST_TMP/toy.log" | sed 's/^/  binds failed by the restart (retried): /' || true
check_promise 500 "$url" "$TEST_TMP/toy.log"
