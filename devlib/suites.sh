# ./dev test: the checks, then the suites on build/, build-sanitize/ or
# both. Sourced by ./dev, which defines ROOT, BUILD, log and die (and
# build.sh, lab.sh and format.sh what they define); it defines functions
# and their state only.

# Sum up a meson test log (one JSON object per line).
count_results() {
  python3 - "$@" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        continue
    for line in lines:
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(passed, failed, skipped)
PY
}

SHARED_LAB=
stop_shared_lab() { [ -n "$SHARED_LAB" ] && lab_stop "$SHARED_LAB"; return 0; }

# run_suites DIR [meson test args...]: the unit suite, then the integration
# suite against a shared lab, on the build in DIR (its toy-scheduler, its
# tests, its kube-lab); prints "N passed, N failed, N skipped".
run_suites() {
  local dir=$1; shift
  local logs=$dir/meson-logs rc=0
  # The tests (meson sets TOYSCHED_BUILD for each) and lab.sh's launcher
  # both take their binaries from DIR.
  export TOYSCHED_BUILD=$dir
  KUBE_LAB=$dir/kube-lab KUBECTL=$dir/kubectl
  rm -f "$logs/unit.json" "$logs/integration.json"
  log "unit tests ($dir)"
  # --no-rebuild: the caller just built everything; a rebuild here would only
  # re-run the (always stale, Go-cached) kube-lab target, 10-20 s each time.
  meson test -C "$dir" --no-rebuild --suite unit --logbase unit --print-errorlogs "$@" || rc=1
  if [ -x "$dir/kube-lab" ]; then
    # One lab shared by the integration tests that can share it (each works in
    # its own namespace); tests that restart or break a lab start their own.
    SHARED_LAB=$(mktemp -d /tmp/toysched-test-lab.XXXXXX)
    trap 'stop_san_build; stop_shared_lab' EXIT
    log "starting the shared lab in $SHARED_LAB"
    if lab_start "$SHARED_LAB" --nodes 3 --controllers --kube-scheduler; then
      export TOYSCHED_SHARED_KUBECONFIG=$LAB_KUBECONFIG
    else
      log "the shared lab did not start: its tests will fail"
    fi
    log "integration tests ($dir)"
    meson test -C "$dir" --no-rebuild --suite integration --logbase integration \
      --num-processes 1 --print-errorlogs "$@" || rc=1
    stop_shared_lab; SHARED_LAB=
  else
    log "kube-lab was not built (no Go?): integration tests not run"
    rc=1
  fi
  local passed failed skipped
  read -r passed failed skipped < <(count_results "$logs/unit.json" "$logs/integration.json")
  ((failed == 0)) || rc=1
  echo "$passed passed, $failed failed, $skipped skipped"
  return $rc
}

# Runs the suites on build-sanitize. A report fails the test whose process
# it stopped; and as the toy-schedulers that integration scripts start in the
# background end without anyone reading their exit status, every report is
# also kept under build-sanitize/sanitizer-reports, and any file there fails
# the run: ASan's and LSan's by log_path, UBSan's (GCC's UBSan ignores
# log_path beside ASan: it writes to stderr) by test/integration/lib.sh,
# which copies each test's logs that hold one.
test_sanitize() {
  build_sanitize
  run_sanitized_suites
}

run_sanitized_suites() {
  local reports=$SAN_BUILD/sanitizer-reports rc=0
  rm -rf "$reports" && mkdir -p "$reports"
  export TOYSCHED_SANITIZER_REPORTS=$reports
  export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:log_path=$reports/asan"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  # Sanitized code runs 2-3x slower: the same tests, longer timeouts; but
  # not suite 'tooling' (format, size, scheduler-only build, soak verdict):
  # they test ./dev's tools, which the sanitizers do not instrument.
  run_suites "$SAN_BUILD" --timeout-multiplier 3 --no-suite tooling || rc=1
  if compgen -G "$reports/*" >/dev/null; then
    log "sanitizer reports (each one fails the run):"
    head -n 60 "$reports"/* >&2
    echo "$(find "$reports" -type f | wc -l) sanitizer report(s) in $reports"
    rc=1
  else
    echo "no sanitizer report"
  fi
  return $rc
}

# The live page's test: Debian's Chromium, headless (test/integration/ui).
UI_PACKAGES=(chromium=156.0.8078.114-1~deb12u1)

# test --all: both passes, as CI runs them. The sanitized build is CPU work,
# the normal integration suite mostly waits on the lab: the build runs
# beside that suite at the lowest CPU and I/O priority, so it takes what the
# suite leaves idle, and the sanitized suites start as soon as both are done.
SAN_BUILD_PID=
stop_san_build() { [ -n "$SAN_BUILD_PID" ] && kill -- -"$SAN_BUILD_PID" 2>/dev/null; return 0; }

test_all() {
  local rc=0 blog=$BUILD/build-sanitize.log
  cmd_build
  log "building build-sanitize in the background (nice 19; log: $blog)"
  # setsid: its own process group, so an interrupt stops the whole build.
  setsid nice -n 19 ionice -c 3 "$ROOT/dev" build --sanitize >"$blog" 2>&1 &
  SAN_BUILD_PID=$!
  trap 'stop_san_build; stop_shared_lab' EXIT  # run_suites sets the same
  run_suites "$BUILD" || rc=1
  log "waiting for the background build of build-sanitize"
  if ! wait "$SAN_BUILD_PID"; then
    SAN_BUILD_PID=
    tail -n 40 "$blog" >&2
    log "the build of build-sanitize failed (above; whole log: $blog)"
    return 1
  fi
  SAN_BUILD_PID=
  run_sanitized_suites || rc=1
  return $rc
}

cmd_test() {
  local mode=normal
  case ${1:-} in
    --sanitize) mode=sanitize ;;
    --all) mode=all ;;
    "") ;;
    *) die "test: unknown argument $1 (--sanitize or --all)" ;;
  esac
  cmd_setup
  install_missing "${UI_PACKAGES[@]}"  # the page test (ui-page) drives a headless Chromium
  # Before the build: a format difference is found in seconds, not minutes.
  format_check "$ROOT" >&2 || die "the format check failed (above)"
  python3 "$ROOT/devlib/size_check.py" "$ROOT" >&2 ||
    die "the size check failed (above): split the function or the file"
  case $mode in
    sanitize) test_sanitize ;;
    all) test_all ;;
    *) cmd_build && run_suites "$BUILD" ;;
  esac
}
