#!/usr/bin/env bash
# The secure port against the real API server (issue 18): HTTPS with our own
# certificate file, delegated authentication (TokenReview) and authorization
# (SubjectAccessReview). /healthz /livez /readyz open; /metrics and /debug/*
# 401 without a token or with a bad one, 403 for a user RBAC does not allow,
# 200 for one it does and for the scheduler's own token; answers cached; the
# plain loopback port still open for local use; --authorization-kubeconfig
# used; scheduling goes on while a review waits. At -v=10, and no token and
# no line of the private key in any output.
source "$(dirname "$0")/../lib.sh"
use_shared_lab

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Users: two ServiceAccounts of this test's namespace; RBAC lets only
# "reader" GET /metrics, /debug/* and /ui (not PUT /debug/flags/v), as the
# manifests' toy-scheduler-endpoints role does.
for sa in nobody reader; do k -n "$NS" create serviceaccount "$sa" >/dev/null; done
k create clusterrole "$NS-endpoints" --verb=get --non-resource-url=/metrics --non-resource-url='/debug/*' \
  --non-resource-url=/ui >/dev/null
on_exit k delete clusterrole "$NS-endpoints" '>/dev/null'
k create clusterrolebinding "$NS-endpoints" --clusterrole="$NS-endpoints" --serviceaccount="$NS:reader" >/dev/null
on_exit k delete clusterrolebinding "$NS-endpoints" '>/dev/null'
NOBODY=$(k -n "$NS" create token nobody --duration=1h)
READER=$(k -n "$NS" create token reader --duration=1h)
# The scheduler's own credentials: the lab's token kubeconfig (system:masters).
OWN=$(k config view --raw --minify -o jsonpath='{.users[0].user.token}')
[ -n "$OWN" ] || fail "the lab's kubeconfig has no token"
BAD=not-a-token-$RANDOM$RANDOM

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$TEST_TMP/tls.key" -out "$TEST_TMP/tls.crt" 2>/dev/null
SPORT=$(free_port)
start_toy "$TEST_TMP/toy.log" -v=10 --secure-port="$SPORT" --bind-address=127.0.0.1 \
  --tls-cert-file="$TEST_TMP/tls.crt" --tls-private-key-file="$TEST_TMP/tls.key"
port=$(toy_port "$TEST_TMP/toy.log")
wait_until 10 "serving securely" "grep -q 'Serving securely' '$TEST_TMP/toy.log'"
url=https://localhost:$SPORT

# code METHOD PATH [TOKEN] [curl args]: the HTTP status; the body in $TEST_TMP/body.
code() {
  local method=$1 path=$2 token=${3:-}
  local auth=()
  [ -n "$token" ] && auth=(-H "Authorization: Bearer $token")
  curl -s --cacert "$TEST_TMP/tls.crt" -o "$TEST_TMP/body" -w '%{http_code}' -m 10 -X "$method" "${auth[@]}" \
    "${@:4}" "$url$path"
}
expect() {  # expect WANT METHOD PATH [TOKEN] [curl args]
  local want=$1 got; shift
  got=$(code "$@")
  [ "$got" = "$want" ] || fail "$1 $2 (token ${3:+given}): HTTP $got, want $want: $(head -c 300 "$TEST_TMP/body")"
}

# The certificate served is the file's (curl verifies it against that file).
wait_until 20 "ready over HTTPS" '[ "$(code GET /readyz)" = 200 ]'
for p in /healthz /livez /readyz; do expect 200 GET $p; done
pass "/healthz /livez /readyz: 200 without a token, over HTTPS with --tls-cert-file's certificate"

for p in /metrics /debug/cache /debug/tasks /ui; do
  expect 401 GET $p
  expect 401 GET $p "$BAD"
done
expect 401 PUT /debug/flags/v "" --data 3
grep -q '"reason":"Unauthorized"' "$TEST_TMP/body" || fail "the 401 is not a Status: $(cat "$TEST_TMP/body")"
expect 401 GET /healthz "$BAD"   # as upstream: a token that is sent must be good, even there
pass "/metrics /debug/cache /debug/tasks /ui PUT /debug/flags/v: 401 without a token and with a bad one"

for p in /metrics /ui /debug/cache; do expect 403 GET $p "$NOBODY"; done  # the body checked is the last
grep -qF "forbidden: User \\\"system:serviceaccount:$NS:nobody\\\" cannot get path \\\"/debug/cache\\\"" "$TEST_TMP/body" ||
  fail "the 403 does not say who and what: $(cat "$TEST_TMP/body")"
expect 403 PUT /debug/flags/v "$READER" --data 3
pass "403 for a user RBAC does not allow (and for PUT /debug/flags/v by a user allowed only to get)"

expect 200 GET /metrics "$READER"
grep -q '^scheduler_schedule_attempts_total' "$TEST_TMP/body" || fail "/metrics as reader: not the metrics"
expect 200 GET /debug/cache "$READER"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))["assumed"]' "$TEST_TMP/body" || fail "/debug/cache is not the cache"
expect 200 GET /debug/cache "$OWN"
expect 200 GET /ui "$READER"
grep -q '<title>' "$TEST_TMP/body" || fail "/ui is not the page: $(head -c 200 "$TEST_TMP/body")"
expect 200 PUT /debug/flags/v "$OWN" --data 10
grep -q 'successfully set klog.logging.verbosity to 10' "$TEST_TMP/body" || fail "PUT /debug/flags/v: $(cat "$TEST_TMP/body")"
pass "200 for the user RBAC allows, and for the scheduler's own token (GET /debug/cache, PUT /debug/flags/v)"

# Cached: 5 more requests with the reader's token within the 10 s TTL make
# no TokenReview and no SubjectAccessReview (the transport logs each request
# it sends at -v=6).
reviews() { grep -c 'Sending request.*\(tokenreviews\|subjectaccessreviews\)' "$TEST_TMP/toy.log" || true; }
expect 200 GET /metrics "$READER"  # within the TTL from here on
before=$(reviews)
for _ in 1 2 3 4 5; do expect 200 GET /metrics "$READER"; done
after=$(reviews)
[ "$before" -ge 4 ] && [ "$after" = "$before" ] || fail "reviews sent: $before before, $after after 5 cached requests"
pass "answers cached: $before reviews for the requests above, none for 5 repeats"

# The plain port, loopback only, for local use: no authentication.
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/debug/cache")" = 200 ] || fail "plain /debug/cache"
bad=$("$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --secure-port=0 --metrics-bind-address=0.0.0.0:0 2>&1) &&
  fail "plain HTTP on 0.0.0.0 was accepted"
[[ $bad == *"loopback only"* ]] || fail "plain HTTP on 0.0.0.0: $bad"
pass "--metrics-bind-address: plain HTTP on loopback; refused on 0.0.0.0 ($bad)"

# --authorization-kubeconfig: the reviews of authorization go where it says,
# here as "nobody", whom the API server does not let create reviews: the
# request fails with 500 and the log says why (authentication, with the
# scheduler's own credentials, still works: the error is the SAR's).
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
cat >"$TEST_TMP/nobody.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: lab, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: nobody, user: {token: "$NOBODY"}}]
contexts: [{name: nobody, context: {cluster: lab, user: nobody}}]
current-context: nobody
YAML
SPORT2=$(free_port)
"$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --secure-port="$SPORT2" --bind-address=127.0.0.1 -v=10 \
  --authorization-kubeconfig="$TEST_TMP/nobody.kubeconfig" >"$TEST_TMP/toy2.log" 2>&1 &
TOY2=$!
on_exit "kill -TERM $TOY2 2>/dev/null; wait $TOY2 2>/dev/null"
code2() { curl -sk -o "$TEST_TMP/body" -w '%{http_code}' -m 10 -H "Authorization: Bearer $READER" "https://127.0.0.1:$SPORT2$1"; }
wait_until 20 "the second scheduler serves" '[ "$(curl -sk -o /dev/null -w "%{http_code}" "https://127.0.0.1:$SPORT2/healthz")" = 200 ]'
[ "$(code2 /metrics)" = 500 ] || fail "with --authorization-kubeconfig of nobody: HTTP $(code2 /metrics), want 500"
grep -q 'Unable to authorize the request.*SubjectAccessReview answered HTTP 403' "$TEST_TMP/toy2.log" ||
  fail "no line saying the SubjectAccessReview was refused"
kill -TERM "$TOY2"; wait "$TOY2" || fail "the second scheduler: exit $? on SIGTERM"
pass "--authorization-kubeconfig is used for the reviews (as nobody: refused, 500, said in the log)"

# A review never holds up scheduling: a third scheduler (its own name) whose
# --authentication-kubeconfig points at a port that accepts and never
# answers (an unreachable API server, not a fake one) binds pods while a
# request waits on its TokenReview; the request ends in 401 after the
# review's 10 s.
SILENT=$(free_port)
python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); held = []
while True: held.append(s.accept()[0])' "$SILENT" &
on_exit "kill $! 2>/dev/null"
sed "s|$server|https://127.0.0.1:$SILENT|" "$TEST_TMP/nobody.kubeconfig" >"$TEST_TMP/silent.kubeconfig"
SPORT3=$(free_port)
"$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --secure-port="$SPORT3" --bind-address=127.0.0.1 -v=4 \
  --scheduler-name=toy-secure-slow --authentication-kubeconfig="$TEST_TMP/silent.kubeconfig" >"$TEST_TMP/toy3.log" 2>&1 &
TOY3=$!
on_exit "kill -TERM $TOY3 2>/dev/null; wait $TOY3 2>/dev/null"
wait_until 20 "the third scheduler serves" '[ "$(curl -sk -o /dev/null -w "%{http_code}" "https://127.0.0.1:$SPORT3/readyz")" = 200 ]'
curl -sk -o /dev/null -w '%{http_code}' -m 30 -H "Authorization: Bearer $READER" "https://127.0.0.1:$SPORT3/metrics" \
  >"$TEST_TMP/slow.code" &
CURL=$!
sleep 1
start=$(now_ms)
deployment slow 3 toy-secure-slow 10m
wait_until 8 "3 pods bound while the review waits" '[ "$(bound_count app=slow)" = 3 ]'
took=$(($(now_ms) - start))
kill -0 "$CURL" 2>/dev/null || fail "the request did not wait on its review: $(cat "$TEST_TMP/slow.code")"
wait "$CURL" || true
[ "$(cat "$TEST_TMP/slow.code")" = 401 ] || fail "after the review timed out: HTTP $(cat "$TEST_TMP/slow.code"), want 401"
grep -q 'Unable to authenticate the request' "$TEST_TMP/toy3.log" || fail "no line saying the review failed"
kill -TERM "$TOY3"; wait "$TOY3" || fail "the third scheduler: exit $? on SIGTERM"
pass "3 pods bound in ${took} ms while a request waited on an unanswered TokenReview (then 401)"

# Nothing secret in any output, at -v=10: no token, no line of the key,
# after the scheduler has also done its work (lists, watches, binds, events).
deployment web 3 toy-scheduler 10m
wait_until 30 "3 pods bound" '[ "$(bound_count app=web)" = 3 ]'
kill -TERM "$TOY_PID"; wait "$TOY_PID" || fail "exit $? on SIGTERM"
grep -q 'tokenreviews' "$TEST_TMP/toy.log" || fail "no review in the -v=10 log: is it the right log?"
for t in "$OWN" "$NOBODY" "$READER" "$BAD"; do
  ! grep -qF "$t" "$TEST_TMP/toy.log" "$TEST_TMP/toy2.log" "$TEST_TMP/toy3.log" || fail "a token is in a log"
done
while read -r line; do
  ! grep -qF "$line" "$TEST_TMP/toy.log" || fail "a line of the private key is in the log"
done < <(grep -v -- '-----' "$TEST_TMP/tls.key")
pass "$(wc -l <"$TEST_TMP/toy.log") lines at -v=10: none holds a token or a line of the private key"
