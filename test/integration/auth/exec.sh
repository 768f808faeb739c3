#!/usr/bin/env bash
# Exec credential plugins (issue 51, item 1), as EKS, GKE and AKS
# kubeconfigs use them: toy-scheduler runs exec_plugin.sh (named by a path
# relative to the kubeconfig) and talks to the lab with what it prints.
#  - a token: it starts and binds a pod; the plugin ran once for all its
#    clients and was given the cluster (provideClusterInfo);
#  - a client certificate and key (the lab's admin pair): binds a pod;
#  - a token that expires in 5 s: run again before it expires;
#  - a wrong token first: the 401 runs the plugin again and the request
#    is retried with the right one;
#  - garbage output, and a plugin that hangs: a clear error naming the
#    plugin (killed at the 30 s timeout), toy-scheduler still up and retrying;
#  - the exec user defined in the second of two $KUBECONFIG files.
source "$(dirname "$0")/../lib.sh"
use_shared_lab
SCHED=toy-$NS
LAB_DIR_OF_KCFG=$(dirname "$KCFG")
CFG=$TEST_TMP/cfg
mkdir -p "$CFG/bin"
cp "$(dirname "$0")/exec_plugin.sh" "$CFG/bin/"
SERVER=$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')
CA=$(k config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
k config view --raw -o jsonpath='{.users[0].user.token}' >"$TEST_TMP/token"
[ -s "$TEST_TMP/token" ] || fail "the lab's kubeconfig has no token"

# cluster_part / user_part MODE [LIFE]: the halves of a kubeconfig.
cluster_part() {
  cat <<YAML
apiVersion: v1
kind: Config
current-context: lab
clusters: [{name: lab, cluster: {server: "$SERVER", certificate-authority-data: "$CA"}}]
contexts: [{name: lab, context: {cluster: lab, user: exec-user}}]
YAML
}
user_part() {
  cat <<YAML
users:
- name: exec-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: bin/exec_plugin.sh
      interactiveMode: Never
      provideClusterInfo: true
      installHint: exec_plugin.sh is in test/integration/auth
      env:
      - {name: EXEC_MODE, value: "$1"}
      - {name: EXEC_STATE, value: "$TEST_TMP/$1"}
      - {name: EXEC_TOKEN, value: "$TEST_TMP/token"}
      - {name: EXEC_CERT_CONFIG, value: "$LAB_DIR_OF_KCFG/kubeconfig-cert"}
      - {name: EXEC_LIFE, value: "${2:-0}"}
YAML
}
runs() { cat "$TEST_TMP/$1.runs" 2>/dev/null || echo 0; }

# toy MODE [LIFE]: toy-scheduler on a kubeconfig whose user runs the plugin in MODE.
toy() {
  { cluster_part; user_part "$@"; } >"$CFG/$1.yaml"
  KCFG_SAVED=$KCFG KCFG=$CFG/$1.yaml
  start_toy "$TEST_TMP/$1.log" -v=2 --scheduler-name="$SCHED"
  KCFG=$KCFG_SAVED
}
stop_toy() {
  signal_and_wait TERM "$TOY_PID"
  ((EXIT_STATUS == 0)) || fail "toy-scheduler ($1) exited with status $EXIT_STATUS"
}

# bind NAME: a pod for this scheduler, bound within 20 s.
bind() {
  k -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec: {schedulerName: $SCHED, containers: [{name: c, image: registry.k8s.io/pause:3.9}]}
YAML
  wait_until 20 "$1 bound" "[ -n \"\$(node_of $1)\" ]"
}

toy token
bind p-token
[ "$(runs token)" = 1 ] || fail "the plugin ran $(runs token) times for one start, not once"
grep -qF "\"cluster\":{\"server\":\"$SERVER\",\"certificate-authority-data\":\"$CA\"}" "$TEST_TMP/token.info" ||
  fail "KUBERNETES_EXEC_INFO lacks the cluster: $(cat "$TEST_TMP/token.info")"
stop_toy token
pass "a token from the plugin: p-token bound, the plugin ran once, given the cluster"

toy cert
bind p-cert
stop_toy cert
pass "a client certificate from the plugin: p-cert bound"

toy expiring 5
bind p-exp1
sleep 6
bind p-exp2
(($(runs expiring) >= 2)) || fail "an expiring token was not refreshed: $(runs expiring) runs"
stop_toy expiring
pass "a token expiring in 5 s: refreshed ($(runs expiring) runs), p-exp1 and p-exp2 bound"

toy wrong-first
bind p-401
[ "$(runs wrong-first)" = 2 ] || fail "a 401 should run the plugin once more: $(runs wrong-first) runs"
stop_toy wrong-first
pass "a wrong token: the 401 ran the plugin again and p-401 bound"

toy garbage
wait_until 20 "the garbage error" 'grep -q "exec_plugin.sh: its output is not JSON" "$TEST_TMP/garbage.log"'
sleep 2
kill -0 "$TOY_PID" || fail "toy-scheduler exited on garbage"
(($(runs garbage) <= 4)) || fail "the plugin ran $(runs garbage) times in a few seconds: no backoff"
stop_toy garbage
pass "garbage output: a clear error, $(runs garbage) runs with backoff, still up"

toy hang
wait_until 45 "the timeout error" 'grep -q "exec_plugin.sh did not finish within 30.0s; killed it (stderr: waiting for someone to log in)" "$TEST_TMP/hang.log"'
kill -0 "$(cat "$TEST_TMP/hang.pid")" 2>/dev/null && fail "the hung plugin still runs"
curl -s -o /dev/null "http://$(toy_port "$TEST_TMP/hang.log")/healthz" || fail "toy-scheduler does not answer /healthz"
stop_toy hang
pass "a hung plugin: killed at 30 s with a clear error, toy-scheduler still answering"

cluster_part >"$CFG/first.yaml"
mkdir -p "$CFG/second"
cp "$CFG/bin/exec_plugin.sh" "$CFG/second/exec_plugin.sh"
user_part token | sed 's|command: bin/exec_plugin.sh|command: ./exec_plugin.sh|' >"$CFG/second/config"
KUBECONFIG=$CFG/first.yaml:$CFG/second/config "$TOYSCHED_BUILD/toy-scheduler" --metrics-bind-address=127.0.0.1:0 \
  --secure-port=0 -v=2 --scheduler-name="$SCHED" >"$TEST_TMP/merged.log" 2>&1 &
TOY_PID=$!
on_exit "kill -TERM $TOY_PID 2>/dev/null; wait $TOY_PID 2>/dev/null"
bind p-merged
grep -q "command=\"$CFG/second/exec_plugin.sh\"" "$TEST_TMP/merged.log" || fail "not the second file's plugin"
stop_toy merged
pass "the exec user of the second of two \$KUBECONFIG files: p-merged bound"
check_no_overcommit
