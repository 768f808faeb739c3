#!/usr/bin/env bash
# Issue 18 item 1: watches expired (410 Gone) by etcd compaction in the
# middle of a 500-pod burst. toy-scheduler talks to the API server through
# toxiproxy; mid-burst the proxy is cut (its connections closed, new ones
# refused) while the API server goes on: the fake kubelet and a ticker make new revisions, and
# etcd (compacting every second; the watch cache off, so watches are served
# from etcd) compacts past every resourceVersion toy-scheduler has seen.
# Restored, its re-watches are refused with 410 and it must relist in the
# middle of its binds, then bind the rest: each pod once, no node over-
# committed, its cache equal to the server's, no crash. The 410s must show
# in toysched_watch_restarts_total{reason="expired"}, else nothing expired.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_faults.sh"
use_private_lab --nodes 3 --node-cpu 4 --node-pods 200 --etcd-compaction-interval 1s --watch-cache=false
burst_pods 500 23m
start_toxiproxy
KCFG=$TOXI_KCFG start_toy "$TEST_TMP/toy.log" -v=2
url=http://127.0.0.1:$(toy_port "$TEST_TMP/toy.log")

wait_mid_burst 60 100 500 "$TEST_TMP/toy.log"
rv=$(list_rv)
toxi POST /proxies/api '{"enabled": false}' >/dev/null
wait_compacted_past "$rv" 30
sleep 1 # a little longer cut: every retry so far refused
toxi POST /proxies/api '{"enabled": true}' >/dev/null
pass "toy-scheduler cut off from $(binds_logged "$TEST_TMP/toy.log") binds on until etcd compacted past resourceVersion $rv"

wait_until 120 "all 500 bound" '[ "$(bound_count app=burst)" = 500 ]'
for r in pods nodes; do
  n=$(metric "$url" toysched_watch_restarts_total resource=$r reason=expired)
  ((n >= 1)) || fail "no 410 on the $r watch: toysched_watch_restarts_total{resource=\"$r\",reason=\"expired\"} = $n"
  echo "  $r: $n watch restarts after 410 (expired), $(metric "$url" toysched_watch_restarts_total resource=$r reason=error) after errors"
done
pass "the pod and node watches met 410 and relisted"
check_promise 500 "$url" "$TEST_TMP/toy.log"
