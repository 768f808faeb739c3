# Start and stop kube-lab from bash: used by ./dev and by the integration
# tests. Source it; it defines functions only.
#
#   lab_start DIR [kube-lab flags...]   starts a lab in the background, waits
#                                        for its ready line (or its death)
#   lab_stop DIR                         SIGTERM, wait, SIGKILL after 20 s
#
# After lab_start: LAB_PID, LAB_KUBECONFIG are set; the lab's stdout/stderr
# are in DIR.out.

: "${TOYSCHED_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${TOYSCHED_BUILD:=$TOYSCHED_ROOT/build}"
KUBE_LAB="$TOYSCHED_BUILD/kube-lab"
KUBECTL="$TOYSCHED_BUILD/kubectl"

lab_start() {
  local dir=$1; shift
  local timeout=${LAB_START_TIMEOUT:-180}
  mkdir -p "$dir"
  local out="$dir.out"
  "$KUBE_LAB" --dir "$dir" "$@" >"$out" 2>&1 &
  LAB_PID=$!
  echo "$LAB_PID" >"$dir.pid"
  local waited=0
  while ! grep -q '^ready kubeconfig=' "$out" 2>/dev/null; do
    if ! kill -0 "$LAB_PID" 2>/dev/null; then
      echo "lab: kube-lab exited before it was ready; its output:" >&2
      sed 's/^/  /' "$out" >&2
      return 1
    fi
    if (( waited >= timeout * 10 )); then
      echo "lab: not ready after ${timeout}s; its output:" >&2
      sed 's/^/  /' "$out" >&2
      lab_stop "$dir"
      return 1
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  LAB_KUBECONFIG=$(sed -n 's/^ready kubeconfig=//p' "$out" | tail -n1)
  export LAB_KUBECONFIG
}

lab_stop() {
  local dir=$1 pid
  pid=$(cat "$dir.pid" 2>/dev/null) || return 0
  if kill -TERM "$pid" 2>/dev/null; then
    local i
    for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -f "$dir.pid"
}
