# ./dev demo: a 3-node lab, toy-scheduler and a 20-pod Deployment, shown
# and torn down. Sourced by ./dev, which defines ROOT, BUILD, log and die
# (and lab.sh and build.sh what they define); it defines functions and their
# state only.

DEMO_LAB= DEMO_TOY=
stop_demo() {
  [ -n "$DEMO_TOY" ] && kill -TERM "$DEMO_TOY" 2>/dev/null && wait "$DEMO_TOY" 2>/dev/null
  [ -n "$DEMO_LAB" ] && lab_stop "$DEMO_LAB"
  rm -rf "$DEMO_LAB" "$DEMO_LAB".out
  return 0
}

# open_page URL: in a browser where there is a display; else only printed.
open_page() {
  log "live page: $1"
  if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && command -v xdg-open >/dev/null; then
    xdg-open "$1" </dev/null >/dev/null 2>&1 &
  fi
}

# pause_for_page MESSAGE: on a terminal, wait for Enter; else a moment.
pause_for_page() {
  if [ -t 0 ]; then
    read -r -p "$1 (Enter) " _
  else
    sleep 3
  fi
}

cmd_demo() {
  local ui=false
  case ${1:-} in
    --ui) ui=true ;;
    "") ;;
    *) die "demo: unknown argument $1 (only --ui)" ;;
  esac
  build_only toy-scheduler kube-lab kubectl
  DEMO_LAB=$(mktemp -d /tmp/toysched-demo.XXXXXX)
  trap stop_demo EXIT
  log "starting a lab: 3 nodes, controllers on"
  lab_start "$DEMO_LAB" --nodes 3 --controllers
  local k=("$KUBECTL" --kubeconfig "$LAB_KUBECONFIG")
  "${k[@]}" get nodes
  log "starting toy-scheduler (log: $DEMO_LAB/toy-scheduler.log)"
  "$BUILD/toy-scheduler" --kubeconfig "$LAB_KUBECONFIG" -v=2 --secure-port=0 --metrics-bind-address=127.0.0.1:0 \
    >"$DEMO_LAB/toy-scheduler.log" 2>&1 &
  DEMO_TOY=$!
  local port replicas=20
  port=$(toy_http_port "$DEMO_LAB/toy-scheduler.log" 10) || die "toy-scheduler did not start serving; see $DEMO_LAB/toy-scheduler.log"
  if $ui; then
    open_page "http://127.0.0.1:$port/ui"
    pause_for_page "open it, then start the burst"
    replicas=0 # grown below, a step at a time, so the eye can follow
  fi
  log "creating a 20-replica Deployment with schedulerName: toy-scheduler"
  "${k[@]}" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo, namespace: default}
spec:
  replicas: $replicas
  selector: {matchLabels: {app: demo}}
  template:
    metadata: {labels: {app: demo}}
    spec:
      schedulerName: toy-scheduler
      containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
YAML
  if $ui; then
    for ((replicas = 2; replicas <= 20; replicas += 2)); do
      sleep 0.4
      "${k[@]}" scale deployment demo --replicas="$replicas" >/dev/null
    done
  fi
  local start=$SECONDS bound=0
  while :; do
    bound=$("${k[@]}" get pods -l app=demo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true)
    [ "$bound" = 20 ] && break
    ((SECONDS - start < 60)) || die "only $bound of 20 pods bound after 60 s; see $DEMO_LAB/toy-scheduler.log"
    sleep 0.2
  done
  log "all 20 pods bound; where they went:"
  "${k[@]}" get pods -l app=demo -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName,STATUS:.status.phase --sort-by=.spec.nodeName
  log "pods per node:"
  "${k[@]}" get pods -l app=demo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c
  log "what toy-scheduler said (first lines of its log):"
  head -n 4 "$DEMO_LAB/toy-scheduler.log" | cut -c1-160
  local pod
  pod=$("${k[@]}" get pods -l app=demo -o jsonpath='{.items[0].metadata.name}')
  log "why default/$pod went where it did (./dev explain default/$pod --url http://127.0.0.1:$port):"
  python3 "$ROOT/devlib/explain.py" "default/$pod" --url "http://127.0.0.1:$port"
  if $ui; then pause_for_page "the page stays up until you are done"; fi
}
