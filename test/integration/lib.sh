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
  local i
  for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[i]}" || true; done
  rm -rf "$TEST_TMP"
}
trap _run_cleanups EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

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

# wait_until SECONDS DESCRIPTION COMMAND...: poll every 0.2 s.
wait_until() {
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    ((SECONDS < deadline)) || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.2
  done
}

# count_pods SELECTOR [extra kubectl args]: number of pods matching in NS.
count_pods() { k -n "$NS" get pods -l "$1" --no-headers "${@:2}" 2>/dev/null | grep -c . || true; }
