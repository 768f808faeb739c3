# Helpers for integration tests written in bash. Source it first thing.
# Every test runs against a real kube-lab: the shared one that `./dev test`
# starts (TOYSCHED_SHARED_KUBECONFIG), else one of its own, always torn down.
set -euo pipefail

: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"
source "$TOYSCHED_ROOT/devlib/lab.sh"

TEST_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "/tmp/toysched-$TEST_NAME.XXXXXX")
_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
  local rc=$? i f
  if ((rc != 0)); then  # a failed test shows the tail of every log it kept
    for f in "$TEST_TMP"/*.log; do
      [ -f "$f" ] || continue
      echo "--- last lines of $(basename "$f"):" >&2
      tail -n 40 "$f" >&2
    done
  fi
  for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[i]}" || true; done
  # ./dev test --sanitize: GCC's UBSan writes its report only to the stderr
  # of the process, here the log of a toy-scheduler the test ran in the
  # background (stopped above, so its leak report is in too). Keep every log
  # with a report where ./dev looks: it fails the run even if the test passed.
  if [ -n "${TOYSCHED_SANITIZER_REPORTS:-}" ]; then
    find "$TEST_TMP" -maxdepth 2 -name '*.log' -type f -exec grep -lE \
      'runtime error: |ERROR: (Address|Leak)Sanitizer' {} + 2>/dev/null | while IFS= read -r f; do
      cp "$f" "$TOYSCHED_SANITIZER_REPORTS/$TEST_NAME-$(basename "$f")"
    done || true  # grep finds nothing in a clean run: not the test's status
  fi
  rm -rf "$TEST_TMP"
}
trap _run_cleanups EXIT
# A command failing under `set -e` says where, instead of ending the test silently.
trap 'echo "FAIL: $(basename "${BASH_SOURCE[0]}"):$LINENO: $BASH_COMMAND" >&2' ERR

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# signal_and_wait SIG PID: send SIG to a background process of this shell and
# wait for it to end; its exit status is left in EXIT_STATUS (a function, not
# $(...): a subshell cannot wait for this shell's children), without
# tripping `set -e` on a non-zero one.
signal_and_wait() {
  EXIT_STATUS=0
  kill "-$1" "$2"
  wait "$2" || EXIT_STATUS=$?
}

# kubectl against the lab this test uses.
k() { "$KUBECTL" --kubeconfig "$KCFG" "$@"; }

# start_private_lab [kube-lab flags]: a lab of this test's own (for tests that
# stop, restart or break it). Sets KCFG and LAB_DIR.
start_private_lab() {
  LAB_DIR=$TEST_TMP/lab
  lab_start "$LAB_DIR" "$@" || fail "kube-lab did not start"
  on_exit lab_stop "$LAB_DIR"
  KCFG=$LAB_KUBECONFIG
}

# refused WANT FLAGS...: kube-lab (4 nodes) exits 1 with WANT in its message,
# before it starts anything.
refused() {
  local want=$1 rc=0 out; shift
  out=$("$KUBE_LAB" --dir "$TEST_TMP/refused" --nodes 4 "$@" 2>&1) || rc=$?
  ((rc == 1)) || fail "kube-lab $* exited $rc, not 1: $out"
  grep -qF -- "$want" <<<"$out" || fail "kube-lab $*: no '$want' in: $out"
  [ ! -e "$TEST_TMP/refused/etcd" ] || fail "kube-lab $* started etcd before refusing"
  pass "refused $*: $out"
}

# use_shared_lab: the suite's shared lab (3 nodes, controllers, kube-scheduler)
# or, when run alone, a private one like it. Gives the test its own namespace
# NS, deleted at the end.
use_shared_lab() {
  if [ -n "${TOYSCHED_SHARED_KUBECONFIG:-}" ]; then
    KCFG=$TOYSCHED_SHARED_KUBECONFIG
  else
    start_private_lab --nodes 3 --controllers --kube-scheduler
  fi
  NS=t-$(echo "$TEST_NAME" | tr '_' '-' | cut -c1-40)-$RANDOM
  k create namespace "$NS" >/dev/null
  on_exit k delete namespace "$NS" --wait=false '>/dev/null'
}

# wait_until SECONDS DESCRIPTION 'CONDITION': poll every 0.2 s. The condition
# is a string, evaluated afresh each time (single-quote it, so that any
# $(...) inside runs on every poll and not once at the call).
wait_until() {
  local secs=$1 what=$2 cond=$3
  local deadline=$((SECONDS + secs))
  until eval "$cond"; do
    ((SECONDS < deadline)) || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.2
  done
}

# count_pods SELECTOR [extra kubectl args]: number of pods matching in NS.
count_pods() { k -n "$NS" get pods -l "$1" --no-headers "${@:2}" 2>/dev/null | grep -c . || true; }

# start_toy LOG [toy-scheduler flags]: toy-scheduler against this test's lab,
# in the background, stopped at the end. Sets TOY_PID.
start_toy() {
  local log=$1; shift
  # Plain HTTP on port 0 (any free port), and no HTTPS unless the test asks
  # for it: several schedulers run side by side, and 10259 is one port.
  local secure=(--secure-port=0)
  [[ " $* " == *" --secure-port"* ]] && secure=()
  "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --metrics-bind-address=127.0.0.1:0 "${secure[@]}" "$@" >"$log" 2>&1 &
  TOY_PID=$!
  on_exit "kill -TERM $TOY_PID 2>/dev/null; wait $TOY_PID 2>/dev/null"
}

# deployment NAME REPLICAS [schedulerName] [cpu request]: a pause Deployment in NS.
deployment() {
  local name=$1 replicas=$2 sched=${3:-} cpu=${4:-}
  {
    cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name, namespace: $NS}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
YAML
    if [ -n "$sched" ]; then echo "      schedulerName: $sched"; fi
    echo "      containers:"
    echo "      - name: pause"
    echo "        image: registry.k8s.io/pause:3.9"
    if [ -n "$cpu" ]; then echo "        resources: {requests: {cpu: $cpu}}"; fi
  } | k apply -f - >/dev/null
}

# scheduler_config FILE <<YAML (its `profiles:` and what else it sets): a
# KubeSchedulerConfiguration for this test's lab, without leader election,
# that toy-scheduler --config and kube-scheduler --config read alike.
scheduler_config() {
  { printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
    printf 'leaderElection: {leaderElect: false}\nclientConnection: {kubeconfig: %s}\n' "$KCFG"
    cat; } >"$1"
}

# priority_classes NAME=VALUE[:Never]...: a PriorityClass NAME-$NS of each
# value (preemptionPolicy Never when asked), deleted at exit.
priority_classes() {
  local spec value
  for spec in "$@"; do on_exit k delete priorityclass "${spec%%=*}-$NS" '>/dev/null 2>&1'; done
  for spec in "$@"; do
    value=${spec#*=}
    printf -- '---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s-%s}\n' "${spec%%=*}" "$NS"
    printf 'value: %s\n' "${value%:Never}"
    [[ $value != *:Never ]] || printf 'preemptionPolicy: Never\n'
  done | k apply -f - >/dev/null
}

# pod NAME <<YAML (the spec, indented 2): a toy-scheduler pod in NS.
pod() {
  { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s}\nspec:\n  schedulerName: toy-scheduler\n' "$1" "$NS"
    cat; } | k apply -f - >/dev/null
}

# volume NAME [NODE...]: a 1Gi hostPath PersistentVolume, deleted at exit;
# with NODEs, its node affinity requires one of them (by hostname).
volume() {
  local name=$1; shift
  local nodes; nodes=$(IFS=,; echo "$*")
  on_exit k delete pv "$name" --wait=false '>/dev/null 2>&1'
  { printf 'apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\nspec:\n' "$name"
    printf '  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  hostPath: {path: /tmp/%s}\n' "$name"
    if [ -n "$nodes" ]; then
      printf '  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n'
      printf '      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [%s]}]\n' "$nodes"
    fi
  } | k apply -f - >/dev/null
}

# claim NAME VOLUME [CLASS]: a 1Gi claim in NS pre-bound to VOLUME ("":
# unbound), of storage class CLASS (default "": no class).
claim() {
  k -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: "${3:-}"
  ${2:+volumeName: $2}
  resources: {requests: {storage: 1Gi}}
YAML
}

# stateful_set NAMESPACE NAME REPLICAS [schedulerName]: a StatefulSet of
# pause pods (label app=NAME, started in parallel), each with a 1Gi claim
# "data" from a template of the default class.
stateful_set() {
  k -n "$1" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $2}
spec:
  replicas: $3
  serviceName: $2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $2}}
    spec:
      ${4:+schedulerName: $4}
      containers: [{name: c, image: registry.k8s.io/pause:3.9, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
YAML
}

# node_of POD: its spec.nodeName (empty while pending).
node_of() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.nodeName}'; }

# scheduled_message POD: the message of its PodScheduled condition.
scheduled_message() { k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }

# bound_count SELECTOR: pods in NS with spec.nodeName set.
bound_count() { k -n "$NS" get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }

# unbound SELECTOR: names of pods in NS without spec.nodeName, one per line.
unbound() {
  k -n "$NS" get pods -l "$1" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
    awk 'NF == 1 {print $1}'
}

# spread SELECTOR: "count node" lines, sorted by node.
spread() { k -n "$NS" get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort | uniq -c; }

# check_no_overcommit: on every node, the requests of the pods bound there fit
# its allocatable (the invariant every scheduler test ends with).
check_no_overcommit() {
  k get nodes -o json >"$TEST_TMP/nodes.json"
  k get pods -A -o json >"$TEST_TMP/pods.json"
  python3 "$TOYSCHED_ROOT/test/integration/check_overcommit.py" "$TEST_TMP/nodes.json" "$TEST_TMP/pods.json" ||
    fail "a node is over-committed"
}

# use_private_lab [kube-lab flags]: a lab of this test's own, and a namespace NS in it.
use_private_lab() {
  start_private_lab "$@"
  NS=t-$(echo "$TEST_NAME" | tr '_' '-' | cut -c1-40)
  k create namespace "$NS" >/dev/null
}

# now_ms: wall clock in milliseconds.
now_ms() { date +%s%3N; }

# toy_port LOG: the HTTP port a toy-scheduler started with port 0 listens on
# (from its -v=1 log line).
toy_port() { toy_http_port "$1" 10 || fail "timed out after 10s waiting for: the scheduler's HTTP port in $1"; }

# restart_private_lab PAUSE [kube-lab flags]: the private lab stopped, PAUSE
# seconds of no API server, started again on the same DIR (same port, same
# etcd data). Updates KCFG.
restart_private_lab() {
  local pause=$1; shift
  lab_stop "$LAB_DIR"
  sleep "$pause"
  lab_start "$LAB_DIR" "$@" || fail "the lab did not restart"
  KCFG=$LAB_KUBECONFIG
}

# start_toxiproxy: Shopify's toxiproxy (kube-lab toxiproxy) with one proxy,
# "api", from a free port to this test's lab. Sets TOXI_KCFG, KCFG with
# the proxy as its server (TLS passes through: the lab's certificate names
# 127.0.0.1, which the proxy listens on). Faults through `toxi`.
start_toxiproxy() {
  local server port i listen=
  "$KUBE_LAB" toxiproxy --port-file "$TEST_TMP/toxiproxy.port" 2>"$TEST_TMP/toxiproxy.log" &
  on_exit "kill $! 2>/dev/null"
  wait_until 20 "toxiproxy's API" '[ -s "$TEST_TMP/toxiproxy.port" ]'
  TOXI=http://127.0.0.1:$(cat "$TEST_TMP/toxiproxy.port")
  server=$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')
  # A port below the ephemeral range: it must stay ours while the proxy is
  # disabled (an outgoing connection could take an ephemeral one meanwhile).
  for ((i = 0; i < 20; i++)); do
    port=$((20000 + RANDOM % 12000))
    listen=$(toxi POST /proxies "{\"name\": \"api\", \"listen\": \"127.0.0.1:$port\", \"upstream\": \"${server#https://}\"}" 2>/dev/null) ||
      listen=
    [ -z "$listen" ] || break
  done
  [ -n "$listen" ] || fail "toxiproxy found no free port"
  TOXI_KCFG=$TEST_TMP/toxi.kubeconfig
  sed "s#$server#https://127.0.0.1:$port#" "$KCFG" >"$TOXI_KCFG"
}

# toxi METHOD PATH [JSON]: a request to toxiproxy's API (fails on an error),
# e.g. toxi POST /proxies/api/toxics '{"type": "latency", ...}' to add a
# fault, toxi DELETE /proxies/api/toxics/NAME to remove it, toxi POST
# /proxies/api '{"enabled": false}' to cut every connection and refuse new ones.
toxi() { curl -sf -X "$1" "$TOXI$2" ${3:+-d "$3"}; }

# check_cache_agrees URL: toy-scheduler's /debug/cache (at URL) holds no
# assumed pod and, node by node, the pods and requests the API server has.
check_cache_agrees() {
  k get pods -A -o json >"$TEST_TMP/pods.json"
  curl -sf "$1/debug/cache" >"$TEST_TMP/cache.json" || fail "no /debug/cache at $1"
  python3 "$TOYSCHED_ROOT/test/integration/check_cache.py" "$TEST_TMP/pods.json" "$TEST_TMP/cache.json" ||
    fail "/debug/cache disagrees with the API server"
}

# list_rv: the resourceVersion of NS's pod collection now: no later than
# anything a client watching pods has seen so far.
list_rv() {
  k get --raw "/api/v1/namespaces/$NS/pods?limit=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'
}

# compacted_past RV: whether a watch of NS's pods from RV is refused as too
# old (410): etcd compacted past it (a lab with --watch-cache=false).
compacted_past() {
  k get --raw "/api/v1/namespaces/$NS/pods?watch=1&timeoutSeconds=1&resourceVersion=$1" 2>&1 |
    grep -q -e '"code":410' -e 'too old resource version'
}

# wait_compacted_past RV SECS: new revisions (a ConfigMap every 0.5 s in
# NS), until etcd has compacted past RV.
wait_compacted_past() {
  local i deadline=$((SECONDS + $2))
  for ((i = 0; ; i++)); do
    compacted_past "$1" && return 0
    ((SECONDS < deadline)) || fail "etcd did not compact past resourceVersion $1 in $2 s"
    k -n "$NS" create configmap "tick-$i" >/dev/null
    sleep 0.5
  done
}

# metric URL NAME [LABEL=VALUE...]: the sum of NAME's samples with those
# labels on URL/metrics (parsed by prometheus_client), 0 if none.
metric() {
  curl -sf "$1/metrics" | /usr/bin/python3 -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
print(int(sum(s.value for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples
              if s.name == name and all(s.labels.get(k) == v for k, v in want.items()))))' "${@:2}"
}
