# Set-up and the builds of ./dev: the Debian packages, build/ and the
# sanitized build-sanitize/. Sourced by ./dev, which defines ROOT, BUILD,
# APT_PACKAGES, log and die; it defines functions (and SAN_BUILD) only.

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# install_missing PKG=VERSION...: apt-get only what is not installed yet.
install_missing() {
  local missing=() spec name
  for spec in "$@"; do
    name=${spec%%=*}
    dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$spec")
  done
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; then
      log "warning: a pinned version is not available; installing the current ones"
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]%%=*}"
    fi
  fi
}

cmd_setup() {
  install_missing "${APT_PACKAGES[@]}"
  [ "${1:-}" = --scheduler-only ] && return 0
  command -v go >/dev/null || die "Go is not installed (the lab needs Go >= 1.26)"
  local gov
  gov=$(go env GOVERSION)
  [[ $gov =~ ^go1\.(2[6-9]|[3-9][0-9]) ]] || die "the lab needs Go >= 1.26; found $gov"
  if [ -f "$ROOT/lab/go.sum" ]; then
    (cd "$ROOT/lab" && go mod download)
  fi
}

# The value of a meson option of the build in DIR.
build_option() {
  meson introspect --buildoptions "$1" |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$2"
}

# build [--scheduler-only]: the lab (Go) is built unless --scheduler-only.
cmd_build() {
  local lab=auto
  case ${1:-} in
    --scheduler-only) lab=disabled ;;
    --sanitize) cmd_setup && build_sanitize && return ;;
    "") ;;
    *) die "build: unknown argument $1 (--scheduler-only or --sanitize)" ;;
  esac
  cmd_setup "${1:-}"
  configure_build $lab
  meson compile -C "$BUILD"
}

# build_only TARGET...: setup, then only these targets (e.g. what the demo
# runs: a fresh clone's first demo need not wait for the tests, e2e.test and
# the fuzzers).
build_only() {
  cmd_setup
  configure_build auto
  meson compile -C "$BUILD" "$@"
}

# configure_build LAB: build/ configured, with -Dlab=LAB.
configure_build() {
  if [ ! -f "$BUILD/build.ninja" ]; then
    local opts=(-Dlab=$1)
    # CI builds with warnings as errors; a developer's newer compiler should
    # not stop a local build over a new warning.
    [ "${CI:-}" = true ] && opts+=(-Dwerror=true)
    meson setup "$BUILD" "$ROOT" "${opts[@]}"
  elif [ "$(build_option "$BUILD" lab)" != "$1" ]; then
    meson configure "$BUILD" -Dlab="$1"
  fi
}

# The ASan + UBSan build: the same tree compiled with GCC's sanitizers into
# build-sanitize (kube-lab there is the normal Go build, from Go's cache).
SAN_BUILD=$ROOT/build-sanitize

build_sanitize() {
  if [ ! -f "$SAN_BUILD/build.ninja" ]; then
    # -fno-sanitize-recover: UBSan aborts on its first report instead of
    # printing it and going on, so a report cannot pass for a green test.
    # No figure-only benchmarks: no test runs them.
    # -O1: what the sanitizers' authors advise, and 30 % less compile time
    # than the normal build's -O2 (34 against 24 CPU-s for scheduler.cpp).
    meson setup "$SAN_BUILD" "$ROOT" -Db_sanitize=address,undefined -Dbenchmarks=disabled \
      -Doptimization=1 -Dcpp_args='-fno-sanitize-recover=all -fno-omit-frame-pointer'
  fi
  meson compile -C "$SAN_BUILD"
}
