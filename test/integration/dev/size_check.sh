#!/usr/bin/env bash
# devlib/size_check.py, which ./dev test runs before it builds: it fails on a
# function over 80 lines and on a file over 600, names them, and passes the
# tree as it is.
set -euo pipefail
CHECK=$TOYSCHED_ROOT/devlib/size_check.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# body N: a function of N lines in all, at namespace level.
body() {
  echo "namespace x {"
  echo "int f(int a) {"
  for ((i = 0; i < $1 - 2; i++)); do echo "  a += $i;"; done
  echo "}"
  echo "}  // namespace x"
}
mkdir -p "$T/src/x"
body 80 >"$T/src/x/ok.cpp"
python3 "$CHECK" "$T" >"$T/out" || fail "an 80-line function was refused: $(cat "$T/out")"
body 81 >"$T/src/x/long.cpp"
if python3 "$CHECK" "$T" >"$T/out"; then fail "an 81-line function passed"; fi
grep -q 'src/x/long.cpp:2: a function of 81 lines' "$T/out" || fail "unclear: $(cat "$T/out")"
rm "$T/src/x/long.cpp"
for ((i = 0; i < 601; i++)); do echo "// $i"; done >"$T/src/x/big.hpp"
if python3 "$CHECK" "$T" >"$T/out"; then fail "a 601-line file passed"; fi
grep -q 'src/x/big.hpp: 601 lines' "$T/out" || fail "unclear: $(cat "$T/out")"
python3 "$CHECK" "$TOYSCHED_ROOT" >"$T/out" || fail "the tree itself: $(cat "$T/out")"
echo "ok: size check refuses an 81-line function and a 601-line file, passes the tree"
