#!/usr/bin/env bash
# The format check that ./dev test runs before it builds (devlib/format.sh),
# on a scratch git repository with the project's own .clang-format and
# .flake8: it passes on files in the house format; it fails on a C++ file
# clang-format would change, a Go file gofmt would change and a Python file
# flake8 finds fault with, each time naming the file and saying that
# ./dev format fixes it; ./dev format's fixer then makes it pass, except for
# what no tool fixes (an unused import), which the check still names.
# No lab: it checks the tooling only.
set -euo pipefail
: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"
export PATH=$PATH:/usr/local/go/bin  # where ./dev finds gofmt
source "$TOYSCHED_ROOT/devlib/format.sh"

T=$(mktemp -d /tmp/toysched-format-check.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

R=$T/repo
mkdir -p "$R/src" "$R/lab" "$R/drills" "$R/build"
git -C "$R" init -q
cp "$TOYSCHED_ROOT/.clang-format" "$TOYSCHED_ROOT/.flake8" "$R/"
printf '/build/\n' >"$R/.gitignore"
printf 'int answer() { return 42; }\n' >"$R/src/good.cpp"
printf 'package main\n\nfunc main() {\n\tprintln("ok")\n}\n' >"$R/lab/main.go"
printf 'import os\n\n\ndef cwd():\n    return os.getcwd()\n' >"$R/drills/good.py"
# Ignored files are not checked: a build tree is not ours to format.
printf 'int  ignored( ){return 1;}\n' >"$R/build/gen.cpp"

# check_fails WHAT FILE: format_check exits 1 and its report names FILE and
# ./dev format.
check_fails() {
  local rc=0
  format_check "$R" >"$T/out" 2>&1 || rc=$?
  cat "$T/out"
  [ "$rc" = 1 ] || fail "$1: format_check exited $rc, not 1"
  grep -qF "$2" "$T/out" || fail "$1: the report does not name $2"
  grep -qF './dev format fixes them' "$T/out" || fail "$1: the report does not say ./dev format fixes them"
}
check_passes() {
  format_check "$R" >"$T/out" 2>&1 || { cat "$T/out"; fail "$1: format_check failed"; }
}

check_passes "files in the house format (and an unformatted one that git ignores)"
pass "in the house format: passes; an ignored file is not checked"

# C++: a new file, not yet added to git, is checked too.
printf 'int  f( ){return 1;}\n' >"$R/src/bad.cpp"
check_fails "C++" "src/bad.cpp"
pass "an unformatted C++ file fails the check, named"
format_fix "$R"
check_passes "C++ after format_fix"
[ "$(cat "$R/src/bad.cpp")" = "int f() { return 1; }" ] || fail "clang-format wrote: $(cat "$R/src/bad.cpp")"
pass "format_fix put it into the house format"

# Go
printf 'package main\n\nfunc  helper( ) int {\n  return 1\n}\n' >"$R/lab/bad.go"
git -C "$R" add lab/bad.go
check_fails "Go" "lab/bad.go"
pass "a Go file gofmt would change fails the check, named"
format_fix "$R"
check_passes "Go after format_fix"
pass "format_fix ran gofmt"

# Python: layout (fixable) and an unused import (not).
printf 'import os\nimport sys\nx=1\ndef f( a ):\n    return os.sep+a\n' >"$R/drills/bad.py"
check_fails "Python" "drills/bad.py:3:2: E225"
grep -qF "drills/bad.py:2:1: F401 'sys' imported but unused" "$T/out" || fail "flake8's unused import is not reported"
pass "a Python file with lint findings fails the check, each finding named"
format_fix "$R"
check_fails "Python after format_fix" "drills/bad.py:2:1: F401"
grep -q 'E225\|E302' "$T/out" && fail "autopep8 left layout findings"
pass "format_fix fixed the layout; the unused import is still reported"
sed -i '/^import sys$/d' "$R/drills/bad.py"
check_passes "Python, the import removed"
pass "fixed by hand: passes"

# An import below the sys.path line it needs stays there: the fixer must not
# hoist it (E402 is for a person to judge, and a noqa to say so).
printf 'import sys\nsys.path.append("lib")\nimport kit\n\nkit.run()\n' >"$R/drills/path.py"
format_fix "$R"
[ "$(sed -n 3p "$R/drills/path.py")" = "import kit" ] || fail "format_fix moved an import: $(cat "$R/drills/path.py")"
check_fails "E402" "drills/path.py:3:1: E402"
rm "$R/drills/path.py"
pass "format_fix leaves an import after sys.path where it is; the check still names it"

# A long line: the limit is .flake8's 120 columns, not flake8's default 79.
printf 'X = "%s"\n' "$(printf 'a%.0s' $(seq 100))" >"$R/drills/long.py"
check_passes "a 106-column line"
printf 'Y = "%s"\n' "$(printf 'a%.0s' $(seq 120))" >>"$R/drills/long.py"
check_fails "a 126-column line" "drills/long.py:2:121: E501"
pass "lines are limited to 120 columns, as .flake8 says"

# A missing tool fails the check rather than skipping what it would check.
rc=0
CLANG_FORMAT=clang-format-none format_check "$R" >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ "$rc" = 1 ] && grep -q 'not installed: clang-format-none' "$T/out" || fail "a missing clang-format passed the check"
pass "a missing tool fails the check, named"
