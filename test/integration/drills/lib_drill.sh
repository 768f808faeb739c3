# run_drill NAME [args]: the drill with --json, on a private lab of its own;
# its JSON in $TEST_TMP/NAME.json, checked by check_json.py.
DRILL_RUN=$TOYSCHED_ROOT/drills/run.py
DRILL_RUNS=0
run_drill() {
  local name=$1; shift
  local out=$TEST_TMP/$name.json rc=0
  DRILL_RUNS=$((DRILL_RUNS + 1))
  python3 "$DRILL_RUN" "$name" --json --workdir "$TEST_TMP/w-$name-$DRILL_RUNS" "$@" >"$out" 2>"$TEST_TMP/$name.log" || rc=$?
  cat "$out"
  [ "$rc" = 0 ] || fail "drill $name exited $rc"
  python3 "$(dirname "${BASH_SOURCE[0]}")/check_json.py" "$name" "$out" || fail "drill $name: implausible results"
}
