#!/usr/bin/env bash
# The scheduler-only build (issue 15 part 5: "meson setup -Dlab=disabled
# builds on a machine without Go"): configure a build with -Dlab=disabled and
# a PATH on which the only `go` is a trap that records being called, then
# build toy-scheduler and a unit test. Checked: no Go was invoked (neither by
# meson nor by ninja), no kube-lab target exists, the unit tests are
# defined, and the binary runs.
#
# Cheap on purpose: the directory is a sibling of the main build
# (build-scheduler-only beside build/, so the same relative paths) with the
# main build's compiler options, so ccache (hash_dir = false) serves every
# object the main build just compiled; kept between runs, so a warm run only
# relinks what changed.
set -euo pipefail
: "${TOYSCHED_BUILD:?run through meson test or ./dev test}"
: "${TOYSCHED_ROOT:?run through meson test or ./dev test}"
DIR=$TOYSCHED_BUILD-scheduler-only
T=$(mktemp -d /tmp/toysched-scheduler-only.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The main build's compiler options (read before PATH loses anything).
opts=(-Dlab=disabled)
for o in optimization debug b_ndebug werror b_sanitize cpp_args; do
  v=$(meson introspect --buildoptions "$TOYSCHED_BUILD" | python3 -c '
import json, sys
v = next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1])
# A list as a meson array literal: joined with commas, an argument that
# holds a comma (-fno-sanitize-recover=all) would be split in two.
print(json.dumps(v) if isinstance(v, list) else str(v).lower())' "$o")
  opts+=("-D$o=$v")
done

# A PATH without Go: the system's directories, and a `go` that only says it ran.
mkdir "$T/bin"
printf '#!/bin/sh\necho "$0 $*" >>%s/go-called\nexit 1\n' "$T" >"$T/bin/go"
chmod +x "$T/bin/go"
export PATH=$T/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset GOROOT GOPATH
[ "$(command -v go)" = "$T/bin/go" ] || fail "another go on PATH: $(command -v go)"

setup=(meson setup)
[ -f "$DIR/build.ninja" ] && setup+=(--reconfigure)
"${setup[@]}" "$DIR" "$TOYSCHED_ROOT" "${opts[@]}" >"$T/setup.log" 2>&1 ||
  { tail -n 30 "$T/setup.log" >&2; fail "meson setup -Dlab=disabled failed"; }
grep -qE 'kube-lab \(Go\) *: *(NO|False)' "$T/setup.log" || fail "the summary does not say kube-lab (Go): False: $(grep 'kube-lab' "$T/setup.log")"
targets=$(meson introspect --targets "$DIR" | python3 -c 'import json, sys; print("\n".join(t["name"] for t in json.load(sys.stdin)))')
grep -qx toy-scheduler <<<"$targets" || fail "no toy-scheduler target"
grep -qx kube-lab <<<"$targets" && fail "a kube-lab target in a -Dlab=disabled build"
units=$(grep -c '^unit-' <<<"$targets" || true)
((units >= 30)) || fail "only $units unit-test targets"

start=$SECONDS
ninja -C "$DIR" -j2 toy-scheduler test/unit-options >"$T/build.log" 2>&1 ||
  { tail -n 30 "$T/build.log" >&2; fail "ninja toy-scheduler failed"; }
[ ! -e "$T/go-called" ] || fail "Go was invoked: $(cat "$T/go-called")"
"$DIR/toy-scheduler" --version | grep -q '^toy-scheduler ' || fail "toy-scheduler --version"
"$DIR/test/unit-options" >"$T/unit.log" 2>&1 || { tail -n 20 "$T/unit.log" >&2; fail "unit-options failed"; }
echo "ok: -Dlab=disabled, no go on PATH: toy-scheduler and unit-options built in $((SECONDS - start)) s, Go never called, $units unit tests defined, no kube-lab"
