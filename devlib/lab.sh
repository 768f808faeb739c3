# Start and stop kube-lab from bash: the one bash launcher, used by ./dev,
# the integration tests and image-check. Source it; it defines functions only.
#
# One contract for the three launchers (this one, devlib/lab.py for the
# drills and the benchmarks, test/integration/lab_fixture.cpp for the C++
# tests); see lab/README.md:
#
#   start  kube-lab --dir DIR FLAGS, leading a process group of its own
#          (its kube-scheduler child is in it), stdout and stderr to DIR.out;
#   ready  once DIR/ready exists and DIR/lock names our lab's pid: the lab
#          writes the kubeconfig path into DIR/ready when every component it
#          runs has synced, and holds DIR/lock (its pid in it) while it runs.
#          If the lab dies first, or after the timeout, start fails and shows
#          DIR.out;
#   stop   SIGTERM to the whole group; SIGKILL to it after a grace.
#
#   lab_start DIR [kube-lab flags...]   sets and exports LAB_KUBECONFIG, sets
#                                        LAB_PID (= the group's id)
#   lab_stop DIR                         stops the lab lab_start started on DIR
#
# LAB_START_TIMEOUT (180 s) and LAB_STOP_GRACE (20 s) override the waits.
# lab_start must run in the shell that will call lab_stop (not in a $(...)):
# the lab is that shell's child and gets SIGTERM if that shell dies.

: "${TOYSCHED_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${TOYSCHED_BUILD:=$TOYSCHED_ROOT/build}"
KUBE_LAB="$TOYSCHED_BUILD/kube-lab"
KUBECTL="$TOYSCHED_BUILD/kubectl"

# toy_http_port LOG [SECS]: the plain HTTP port a toy-scheduler logs at -v=1
# ("Serving health, metrics and debug endpoints ... port=N"; with
# --metrics-bind-address ...:0 the port is only known from there), waiting
# up to SECS (default 10); status 1 if it never appears.
toy_http_port() {
  local i p
  for ((i = 0; i < ${2:-10} * 10; i++)); do
    p=$(grep -o 'Serving health, metrics and debug endpoints.* port=[0-9]*' "$1" 2>/dev/null | head -n1 | sed 's/.*port=//')
    [ -n "$p" ] && { echo "$p"; return 0; }
    sleep 0.1
  done
  return 1
}

lab_start() {
  local dir=$1; shift
  local out=$dir.out deadline=$((SECONDS + ${LAB_START_TIMEOUT:-180})) monitor=${-//[^m]/} rc=0 pgid
  if pgid=$(cat "$dir.pid" 2>/dev/null) && kill -0 -- "-$pgid" 2>/dev/null; then
    echo "lab: the lab started on $dir (pid $pgid) still runs: lab_stop it first" >&2
    return 1
  fi
  mkdir -p "$dir"
  # A lab killed with SIGKILL leaves DIR/ready behind. Remove it, but only
  # while no lab holds DIR (its flock on DIR/lock): a live lab's file is its
  # own, and the lab we start will refuse that DIR anyway.
  flock -n "$dir/lock" rm -f "$dir/ready" 2>/dev/null || true
  # Monitor mode puts a background job in a process group of its own, so that
  # lab_stop can signal the group (and a Ctrl-C at a terminal reaches only
  # us, who then stop it). setpriv: SIGTERM to the lab if this shell dies.
  set -m
  setpriv --pdeathsig TERM -- "$KUBE_LAB" --dir "$dir" "$@" </dev/null >"$out" 2>&1 &
  LAB_PID=$!
  [ -n "$monitor" ] || set +m
  echo "$LAB_PID" >"$dir.pid"
  # Ours is ready when DIR/ready exists and DIR/lock names our lab: a lab
  # that did not get DIR (another holds it) must not take that one's file.
  until [ -s "$dir/ready" ] && [ "$(head -n1 "$dir/lock" 2>/dev/null)" = "$LAB_PID" ]; do
    if ! kill -0 "$LAB_PID" 2>/dev/null; then
      wait "$LAB_PID" 2>/dev/null || rc=$?
      echo "lab: kube-lab exited (status $rc) before it was ready; its output:" >&2
      sed 's/^/  /' "$out" >&2
      rm -f "$dir.pid"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "lab: not ready after ${LAB_START_TIMEOUT:-180}s; its output:" >&2
      sed 's/^/  /' "$out" >&2
      lab_stop "$dir"
      return 1
    fi
    sleep 0.1
  done
  LAB_KUBECONFIG=$(head -n1 "$dir/ready")
  export LAB_KUBECONFIG
}

lab_stop() {
  local dir=$1 pgid i
  pgid=$(cat "$dir.pid" 2>/dev/null) || return 0
  if kill -TERM -- "-$pgid" 2>/dev/null; then
    # kill -0 on a group: true while any process of it is left.
    for ((i = 0; i < ${LAB_STOP_GRACE:-20} * 10; i++)); do
      kill -0 -- "-$pgid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 -- "-$pgid" 2>/dev/null; then
      echo "lab: still running ${LAB_STOP_GRACE:-20}s after SIGTERM: SIGKILL" >&2
      kill -KILL -- "-$pgid" 2>/dev/null || true
    fi
  fi
  wait "$pgid" 2>/dev/null || true
  rm -f "$dir.pid"
}
