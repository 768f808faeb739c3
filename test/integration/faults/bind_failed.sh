#!/usr/bin/env bash
# A bind that fails frees what its pod was assumed to take, which upstream
# treats as an assigned pod deleted: pods left unschedulable by that
# assumption are retried at once (handleBindingCycleError). Here p (600m)
# is assumed on the one 1-CPU node, its bind held in toxiproxy (3 s of
# latency on toy-scheduler's requests), and q (600m) is found not to fit
# beside it. The proxy is cut: p's bind never reaches the API server and
# fails; p is deleted meanwhile (toy-scheduler, cut off, learns it later,
# while p waits out its backoff, no longer counted anywhere). q must be
# bound within seconds of the proxy's return, not at the unschedulable
# pods' 5-minute flush.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1 --node-cpu 1
start_toxiproxy
KCFG=$TOXI_KCFG start_toy "$TEST_TMP/toy.log" -v=3
log=$TEST_TMP/toy.log
url=http://127.0.0.1:$(toy_port "$log")
wait_until 20 "toy-scheduler ready" '[ "$(curl -s "$url/readyz")" = ok ]'
# cpu_pod NAME CPU: a bare toy-scheduler pod (created directly, not through the proxy).
cpu_pod() { pod "$1" <<<"  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: '$2'}}}]"; }

# A first pod bound: toy-scheduler's pod watch and a pooled connection are
# up (a connection still shaking hands when the latency comes would take
# 3 s a round trip, and p would be seen late).
cpu_pod canary 0
wait_until 20 "the canary bound" '[ -n "$(node_of canary)" ]'

toxi POST /proxies/api/toxics '{"name": "slow", "type": "latency", "stream": "upstream", "attributes": {"latency": 3000}}' >/dev/null
cpu_pod p 600m
wait_until 10 "p's bind sent" "grep -q 'Attempting to bind pod to node\" pod=\"$NS/p\"' '$log'"
cpu_pod q 600m
wait_until 10 "q found not to fit beside p" "grep -q 'Unable to schedule pod; no fit; waiting\" pod=\"$NS/q\"' '$log'"
toxi POST /proxies/api '{"enabled": false}' >/dev/null
wait_until 20 "p's bind failed" "grep -q 'Failed to bind pod\" pod=\"$NS/p\"' '$log'"
k -n "$NS" delete pod p --wait=true >/dev/null
[ -z "$(node_of q)" ] || fail "q bound while p was assumed"
pass "p's bind failed (never sent on), p deleted; q still pending"

toxi DELETE /proxies/api/toxics/slow
toxi POST /proxies/api '{"enabled": true}' >/dev/null
back=$(now_ms)
wait_until 30 "q bound after the proxy's return" '[ -n "$(node_of q)" ]'
pass "q bound $(($(now_ms) - back)) ms after the proxy's return"
kill -0 "$TOY_PID" || fail "toy-scheduler died"
check_no_overcommit
