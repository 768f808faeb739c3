#!/usr/bin/env bash
# /ui in headless Chromium, against toy-scheduler on a private lab (a
# cluster nobody else changes meanwhile): after a burst, the page shows
# every node (grouped by zone) and every bound pod on the node the API
# says, coloured by who bound it (us; kube-scheduler while we watched;
# before we started), the queue counts /metrics gives, the Lease holder the API gives, a
# task table; a click on a pod shows its /debug/explain. The screenshot is
# kept in build/test-artifacts/ui-page.png.
source "$(dirname "$0")/../lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || fail "no $CHROMIUM: ./dev test installs Debian's chromium (or: ./dev setup-ui)"
start_private_lab --nodes 4 --zones 2 --controllers --kube-scheduler
NS=ui
k create namespace "$NS" >/dev/null
# Bound by kube-scheduler before toy-scheduler starts: "unknown" on the page.
deployment before 2
wait_until 60 "2 pods bound before we start" '[ "$(bound_count app=before)" = 2 ]'
start_toy "$TEST_TMP/toy.log" -v=2 --leader-elect --leader-elect-resource-namespace="$NS" \
  --leader-elect-resource-name=ui-lease --leader-elect-identity=ui-a
port=$(toy_port "$TEST_TMP/toy.log")
deployment burst 24 toy-scheduler 100m
# Bound by kube-scheduler while we watch (pending first, then bound): "other".
deployment theirs 3
# One pod no node can hold: the unschedulable queue, with its reason.
pod too-big <<YAML
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1000"}}}]
YAML
wait_until 60 "24 pods bound" '[ "$(bound_count app=burst)" = 24 ]'
wait_until 60 "3 pods bound by kube-scheduler" '[ "$(bound_count app=theirs)" = 3 ]'
wait_until 30 "too-big unschedulable" \
  '[ "$(metric "http://127.0.0.1:$port" scheduler_pending_pods queue=unschedulable)" = 1 ]'

# What the API says, to compare with the page.
k get nodes -o json >"$TEST_TMP/nodes.json"
k get pods -A -o json >"$TEST_TMP/pods.json"
k -n "$NS" get lease ui-lease -o jsonpath='{.spec.holderIdentity}' >"$TEST_TMP/holder.txt"
for q in active backoff unschedulable; do
  printf '%s %s\n' "$q" "$(metric "http://127.0.0.1:$port" scheduler_pending_pods "queue=$q")"
done >"$TEST_TMP/queue.txt"

mkdir -p "$TOYSCHED_BUILD/test-artifacts"
python3 "$(dirname "$0")/page_check.py" "http://127.0.0.1:$port/ui" "$TEST_TMP" \
  "$TOYSCHED_BUILD/test-artifacts/ui-page.png" || fail "the page does not show what the API says"
pass "the page shows every node, every bound pod on its node, the queue counts, the lease holder, the tasks"
