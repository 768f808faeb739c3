#!/usr/bin/env bash
# What test/integration/lib.sh does for ./dev test --sanitize: a test's logs
# that hold a sanitizer report (UBSan's, which GCC writes only to the
# process's stderr, or ASan's) are copied to TOYSCHED_SANITIZER_REPORTS,
# also from a drill's work dir one level down; a clean test copies nothing;
# the test's own exit status is kept either way. Tried on a scratch test.
set -euo pipefail
: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"
T=$(mktemp -d /tmp/toysched-sanitizer-reports.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/scratch.sh" <<'SH'
source "$TOYSCHED_ROOT/test/integration/lib.sh"
echo 'I1201 03:00:00.000000 1 main.cpp:1] "Starting toy-scheduler"' >"$TEST_TMP/clean.log"
if [ "${WITH_REPORT:-}" = 1 ]; then
  echo 'src/kube/objects.cpp:71:3: runtime error: signed integer overflow' >"$TEST_TMP/toy.log"
  mkdir -p "$TEST_TMP/w-race-1"
  echo '==42==ERROR: AddressSanitizer: heap-use-after-free on address 0x1' >"$TEST_TMP/w-race-1/toy-b.log"
fi
exit "${STATUS:-0}"
SH

# run REPORTS WITH_REPORT STATUS: the scratch test's exit status.
run() {
  local rc=0
  TOYSCHED_SANITIZER_REPORTS=$1 WITH_REPORT=$2 STATUS=$3 bash "$T/scratch.sh" >/dev/null 2>&1 || rc=$?
  echo "$rc"
}
mkdir "$T/r"

[ "$(run "$T/r" 0 0)" = 0 ] || fail "a clean test failed"
[ -z "$(ls "$T/r")" ] || fail "a clean test left reports: $(ls "$T/r")"
[ "$(run "$T/r" 0 3)" = 3 ] || fail "a clean test's status 3 was not kept"
echo "ok: a clean test copies nothing and keeps its status"

[ "$(run "$T/r" 1 0)" = 0 ] || fail "a passing test with reports did not keep its status"
[ "$(ls "$T/r" | tr '\n' ' ')" = "scratch-toy-b.log scratch-toy.log " ] || fail "copied: $(ls "$T/r")"
grep -q 'runtime error: signed integer overflow' "$T/r/scratch-toy.log" || fail "the UBSan log is not the one copied"
echo "ok: the UBSan and the ASan log are kept, the clean one is not"

rm -f "$T/r"/*
[ "$(run "" 1 0)" = 0 ] || fail "without TOYSCHED_SANITIZER_REPORTS the test failed"
[ -z "$(ls "$T/r")" ] || fail "reports copied without TOYSCHED_SANITIZER_REPORTS"
echo "ok: nothing is copied outside ./dev test --sanitize"
