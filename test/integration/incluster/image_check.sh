#!/usr/bin/env bash
# The runtime stage of the Containerfile, proved without a container engine
# (`./dev image-check`, issue 8). Slow the first time (debootstrap, a release
# build), so it is not part of `./dev test`.
#
#  1. A minimal bookworm root (debootstrap --variant=minbase, what
#     debian:bookworm-slim is made from), from the archive apt on this machine
#     uses, with the suites that image has (bookworm, -updates, -security).
#  2. The Containerfile's runtime stage, read from it and carried out in that
#     root: ARG, RUN (chroot, /bin/sh -c, the ARGs as environment as an engine
#     gives them), COPY --from=build, USER, EXPOSE, ENTRYPOINT; anything else
#     stops the check, so the file and this script cannot drift apart quietly.
#  3. The binary built the way the build stage builds it (its `meson setup`
#     options, read from the Containerfile).
#  4. Its links: every shared library it loads in the root comes from a
#     package RUNTIME_PACKAGES names, and every package named gives one.
#  5. It runs: ENTRYPOINT, as USER, root filesystem read-only, against a lab,
#     until a pod is bound; SIGTERM ends it with status 0.
#
# Cached under build/image-check/: base/ (debootstrap) and root/ (the stage
# applied, redone when the runtime stage's text changes); the binary and the
# run are redone every time.
set -euo pipefail
: "${TOYSCHED_ROOT:?run through ./dev image-check}" "${TOYSCHED_BUILD:?}"
source "$TOYSCHED_ROOT/devlib/lab.sh"
CF=$TOYSCHED_ROOT/Containerfile
WORK=$TOYSCHED_BUILD/image-check
mkdir -p "$WORK"
log() { printf '==> image-check: %s\n' "$*" >&2; }
die() { printf 'image-check: FAIL: %s\n' "$*" >&2; exit 1; }
t0=$SECONDS

# ---- the Containerfile, as instructions: comments gone, continuations joined
instructions() {  # instructions STAGE: "all" or "runtime" (after the last FROM)
  awk -v which="$1" '
    /^[[:space:]]*#/ && !cont { next }
    { line = cont ? line " " $0 : $0 }
    /\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, "", line); cont = 1; next }
    { cont = 0; if (line ~ /[^[:space:]]/) out[n++] = line; line = "" }
    END {
      start = 0
      if (which == "runtime") for (i = 0; i < n; i++) if (out[i] ~ /^FROM /) start = i
      for (i = start; i < n; i++) print out[i]
    }' "$CF"
}
STAGE=$(instructions runtime)
read -r _ from _ <<<"$(head -n1 <<<"$STAGE")"
[ "$from" = debian:bookworm-slim ] || die "the runtime stage is FROM $from; this check builds debian:bookworm-slim"

# ---- the package archive this machine's apt uses, per suite, read by apt
# itself from its own configuration (/etc/apt/sources.list,
# sources.list.d/*.list and deb822 *.sources; comments, options and
# "Enabled: no" as apt understands them). Nothing is assumed: a suite the
# machine has no source for stops the check.
apt_site() {  # apt_site SUITE: the URI of the first enabled `deb` source for SUITE
  apt-get indextargets --no-release-info --format '$(TARGET_OF) $(RELEASE) $(SITE)' 2>/dev/null |
    awk -v s="$1" '$1 == "deb" && $2 == s {print $3; exit}' | sed 's:/*$::'
}
for suite in bookworm bookworm-updates bookworm-security; do
  [ -n "$(apt_site "$suite")" ] || die "this machine's apt configuration has no deb source for $suite \
(/etc/apt/sources.list, /etc/apt/sources.list.d/*.list or *.sources): the root is built from the archive apt \
uses here, and the image has bookworm, bookworm-updates and bookworm-security"
done
MIRROR=$(apt_site bookworm)
UPDATES=$(apt_site bookworm-updates)
SECURITY=$(apt_site bookworm-security)

# ---- 1. the base root
BASE=$WORK/base
base_key=$(printf 'minbase bookworm %s %s %s\n' "$MIRROR" "$UPDATES" "$SECURITY" | sha256sum | cut -c1-16)
if [ "$(cat "$BASE/.image-check" 2>/dev/null)" != "$base_key" ]; then
  log "debootstrap --variant=minbase bookworm from $MIRROR (a few minutes, once)"
  rm -rf "$BASE" "$BASE.tmp"
  # In a mount namespace of its own: the /proc it mounts in the root never
  # outlives it, even if it dies half-way.
  unshare -m --propagation private \
    debootstrap --variant=minbase bookworm "$BASE.tmp" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -n 20 "$WORK/debootstrap.log" >&2; die "debootstrap failed (log: $WORK/debootstrap.log)"; }
  rm -f "$BASE.tmp/etc/apt/sources.list"
  cat >"$BASE.tmp/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $MIRROR
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $UPDATES
Suites: bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  echo "$base_key" >"$BASE.tmp/.image-check"
  mv "$BASE.tmp" "$BASE"
fi

# in_root [--exec] [chroot options] -- COMMAND...: COMMAND in the root, with
# /proc and /dev as an engine gives a container, in a private mount namespace
# (with RO=1, the root read-only). --exec: in place of the calling (sub)shell,
# so that a background job's pid is COMMAND's.
in_root() {
  local opts=() run=()
  [ "$1" = --exec ] && { run=(exec); shift; }
  while [ "$1" != -- ]; do opts+=("$1"); shift; done; shift
  "${run[@]}" unshare -m --propagation private /bin/sh -ec '
    r=$1; shift
    if [ "${RO:-}" = 1 ]; then mount --bind "$r" "$r"; mount -o remount,bind,ro "$r"; fi
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    exec "$@"' sh "$ROOTFS" chroot "${opts[@]}" "$ROOTFS" "$@"
}

# ---- 2. the runtime stage
ROOTFS=$WORK/root
stage_key=$( { echo "$base_key"; echo "$STAGE"; } | sha256sum | cut -c1-16)
args_env=() copies=() user=0:0 entrypoint=
fresh=0
[ "$(cat "$ROOTFS/.image-check" 2>/dev/null)" = "$stage_key" ] || fresh=1
if ((fresh)); then
  log "applying the Containerfile's runtime stage to a copy of the base"
  rm -rf "$ROOTFS"
  cp -a "$BASE" "$ROOTFS"
  : >"$WORK/run.log"
  cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"   # an engine provides it at run time
fi
while IFS= read -r line; do
  read -r op rest <<<"$line"
  case $op in
    FROM) ;;
    ARG)
      name=${rest%%=*} value=${rest#*=}
      [[ $rest == *=* ]] || die "ARG without a default: $rest"
      value=${value#\"}; value=${value%\"}
      args_env+=("$name=$value") ;;
    RUN)
      if ((fresh)); then
        log "RUN ${rest:0:100}..."
        in_root -- /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
          "${args_env[@]}" /bin/sh -c "$rest" >>"$WORK/run.log" 2>&1 ||
          { tail -n 20 "$WORK/run.log" >&2; die "RUN failed: $rest"; }
      fi ;;
    COPY)
      [[ $rest =~ ^--from=build[[:space:]]+(/[^[:space:]]+)[[:space:]]+(/[^[:space:]]+)$ ]] ||
        die "COPY: only 'COPY --from=build /SRC /DST' is understood: $rest"
      copies+=("${BASH_REMATCH[2]}") ;;
    USER) user=$rest ;;
    EXPOSE) ;;
    ENTRYPOINT)
      entrypoint=$(python3 -c 'import json,sys; a=json.loads(sys.argv[1]); assert len(a)==1; print(a[0])' "$rest") ||
        die "ENTRYPOINT: one path in exec form expected: $rest" ;;
    *) die "the runtime stage has '$op', which this check does not carry out" ;;
  esac
done <<<"$STAGE"
((fresh)) && echo "$stage_key" >"$ROOTFS/.image-check"
[ ${#copies[@]} = 1 ] || die "expected one COPY --from=build (the binary)"
[ "${copies[0]}" = "$entrypoint" ] || die "ENTRYPOINT $entrypoint is not the binary copied to ${copies[0]}"
[[ $user =~ ^[0-9]+:[0-9]+$ ]] && [ "${user%%:*}" != 0 ] || die "USER must be a numeric non-root uid:gid, is '$user'"
packages=
for a in "${args_env[@]}"; do [[ $a == RUNTIME_PACKAGES=* ]] && packages=${a#*=}; done
[ -n "$packages" ] || die "no ARG RUNTIME_PACKAGES in the runtime stage"

# ---- 3. the binary, built as the build stage builds it
setup_opts=$(instructions all | sed -n 's/.*meson setup \/build \/src \([^&]*\).*/\1/p' | head -n1)
[ -n "$setup_opts" ] || die "no 'meson setup /build /src OPTIONS' in the Containerfile"
read -ra setup_opts <<<"$setup_opts"
BIN_BUILD=$WORK/build
if [ ! -f "$BIN_BUILD/build.ninja" ]; then
  log "meson setup ${setup_opts[*]}"
  meson setup "$BIN_BUILD" "$TOYSCHED_ROOT" "${setup_opts[@]}" >"$WORK/meson-setup.log" ||
    { cat "$WORK/meson-setup.log" >&2; die "meson setup"; }
fi
log "building toy-scheduler (release)"
meson compile -C "$BIN_BUILD" toy-scheduler >"$WORK/meson-compile.log" 2>&1 ||
  { tail -n 30 "$WORK/meson-compile.log" >&2; die "meson compile"; }
install -m 0755 -s "$BIN_BUILD/toy-scheduler" "$ROOTFS$entrypoint"

# ---- 4. its links, package by package, inside the root
linked=$(in_root -- /bin/sh -c '
  ldd "$1" | grep -q "not found" && { ldd "$1" >&2; exit 1; }
  for so in $(ldd "$1" | awk "/=>/ {print \$3}"); do
    real=$(readlink -f "$so") owner=
    for p in "$real" "$so" "/usr$so" "${so#/usr}"; do   # usrmerge: dpkg knows one of the two
      owner=$(dpkg -S "$p" 2>/dev/null) && { owner=${owner%%:*}; break; }
    done
    [ -n "$owner" ] || { echo "no package owns $so" >&2; exit 1; }
    echo "$owner"
  done | sort -u' sh "$entrypoint") || die "ldd in the root: a library is missing"
named=$(tr ' ' '\n' <<<"$packages" | grep . | sort -u)
[ "$linked" = "$named" ] || {
  echo "linked, not named: $(comm -23 <(echo "$linked") <(echo "$named") | tr '\n' ' ')" >&2
  echo "named, not linked: $(comm -13 <(echo "$linked") <(echo "$named") | tr '\n' ' ')" >&2
  die "RUNTIME_PACKAGES and the binary's links disagree"
}
log "links: $(tr '\n' ' ' <<<"$linked")- each named in RUNTIME_PACKAGES, nothing more"

# ---- 5. it runs: ENTRYPOINT, as USER, read-only root, against a lab
LAB=$(mktemp -d /tmp/toysched-image-check-lab.XXXXXX)
TOY=
cleanup() {
  [ -n "$TOY" ] && kill -KILL "$TOY" 2>/dev/null
  lab_stop "$LAB"; rm -rf "$LAB" "$LAB.out"
  rm -f "$ROOTFS/tmp/kubeconfig"
}
trap cleanup EXIT
log "starting a lab"
lab_start "$LAB" --nodes 2 || die "the lab did not start"
kc() { "$KUBECTL" --kubeconfig "$LAB_KUBECONFIG" "$@"; }
install -m 0644 "$LAB_KUBECONFIG" "$ROOTFS/tmp/kubeconfig"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
sport=$(free_port)
RO=1 in_root --exec --userspec="$user" -- /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  "$entrypoint" --kubeconfig /tmp/kubeconfig -v=2 --metrics-bind-address="127.0.0.1:$port" --secure-port="$sport" \
  >"$WORK/toy-scheduler.log" 2>&1 &
TOY=$!
kc apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: image-check, namespace: default}
spec:
  schedulerName: toy-scheduler
  containers: [{name: pause, image: registry.k8s.io/pause:3.9}]
YAML
for _ in $(seq 150); do
  node=$(kc get pod image-check -o jsonpath='{.spec.nodeName}')
  [ -n "$node" ] && break
  kill -0 "$TOY" 2>/dev/null || { cat "$WORK/toy-scheduler.log" >&2; die "toy-scheduler exited in the root"; }
  sleep 0.2
done
[ -n "$node" ] || { cat "$WORK/toy-scheduler.log" >&2; die "the pod was not bound in 30 s"; }
grep -q 'Successfully bound pod to node' "$WORK/toy-scheduler.log" || die "bound, but not by this toy-scheduler"
# What it ran as, seen from outside: the uid, and its / mounted read-only.
uid=$(awk '/^Uid:/ {print $2}' "/proc/$TOY/status")
[ "$uid" = "${user%%:*}" ] || die "it ran as uid $uid"
awk '$5 == "/" {print $6}' "/proc/$TOY/mountinfo" | grep -q '^ro\b' || die "its root filesystem is not read-only"
if command -v curl >/dev/null && curl -fsS -m 2 "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
  curl -fsS -m 2 "http://127.0.0.1:$port/metrics" | grep -q . || die "/healthz answers but /metrics does not"
  log "/healthz and /metrics answer from inside the root"
  # HTTPS with the self-signed certificate made in the root, the reviews
  # sent from it: the lab's admin token (system:masters) may read, no token
  # may not.
  https() { curl -ks -o /dev/null -w '%{http_code}' -m 5 "$@"; }
  [ "$(https "https://127.0.0.1:$sport/healthz")" = 200 ] || die "HTTPS /healthz without a token"
  [ "$(https "https://127.0.0.1:$sport/debug/cache")" = 401 ] || die "HTTPS /debug/cache without a token is not 401"
  [ "$(https -H "Authorization: Bearer $(cat "$LAB/token")" "https://127.0.0.1:$sport/debug/cache")" = 200 ] ||
    die "HTTPS /debug/cache with the admin token is not 200"
  log "HTTPS from inside the root: /healthz 200, /debug/cache 401 without a token, 200 with the admin token"
fi
kill -TERM "$TOY"
rc=0; wait "$TOY" || rc=$?
TOY=
[ "$rc" = 0 ] || { cat "$WORK/toy-scheduler.log" >&2; die "exit status $rc on SIGTERM"; }
log "ran $entrypoint as $user on a read-only root: pod bound to $node; SIGTERM -> exit 0"
log "passed in $((SECONDS - t0)) s"
