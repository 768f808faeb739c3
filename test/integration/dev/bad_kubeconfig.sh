#!/usr/bin/env bash
# Broken kubeconfigs (issue 18, item 2): each row gives
# `toy-scheduler --kubeconfig FILE` a file that cannot work, and the binary
# must end within 10 s with exit status 1 and exactly one line of output, a
# fail_start line ("toy-scheduler: ...") that names the problem. Never a
# crash, a hang, an exception trace or another status.
# No lab: every row fails before the first connection.
set -euo pipefail
: "${TOYSCHED_BUILD:?run through meson test or ./dev test}"
BIN=$TOYSCHED_BUILD/toy-scheduler

T=$(mktemp -d /tmp/toysched-bad-kubeconfig.XXXXXX)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# A real certificate and key, so the PEM rows differ only in the slot used.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=bad-kubeconfig \
  -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
b64() { base64 -w0 "$@"; }
CERT=$(b64 "$T/cert.pem")
KEY=$(b64 "$T/key.pem")
NOT_PEM=$(printf 'just some bytes, no PEM here\n' | b64)

# config [CLUSTER] [USER] [CONTEXT] [CURRENT]: a kubeconfig whose parts can be
# replaced one at a time; "-" drops that part.
config() {
  local cluster=${1:-'{server: "https://127.0.0.1:1"}'}
  local user=${2:-'{token: t0ken}'}
  local context=${3:-'{cluster: k, user: u}'}
  local current=${4:-c}
  echo "apiVersion: v1"
  echo "kind: Config"
  [ "$cluster" = - ] || echo "clusters: [{name: k, cluster: $cluster}]"
  [ "$user" = - ] || echo "users: [{name: u, user: $user}]"
  [ "$context" = - ] || echo "contexts: [{name: c, context: $context}]"
  [ "$current" = - ] || echo "current-context: $current"
}

# row NAME WORD FILE: run the binary on FILE; WORD must appear in its one line.
row() {
  local name=$1 word=$2 file=$3 rc=0
  [[ $name =~ ${ROWS:-.} ]] || return 0  # ROWS=regex runs some rows only
  timeout -k 2 10 "$BIN" --kubeconfig "$file" >"$T/out" 2>&1 || rc=$?
  local lines
  lines=$(grep -c . "$T/out" || true)
  if [ "$rc" != 1 ]; then
    fail "$name: exit status $rc, not 1 (124 is the 10 s timeout); output: $(head -c 2000 "$T/out")"
  elif [ "$lines" != 1 ]; then
    fail "$name: $lines non-empty lines of output, not 1: $(head -c 2000 "$T/out")"
  elif LC_ALL=C grep -q '[[:cntrl:]]' "$T/out"; then
    fail "$name: the line holds control characters: $(cat -v "$T/out")"
  elif ! grep -q '^toy-scheduler: ' "$T/out"; then
    fail "$name: the line is not a 'toy-scheduler: ' start-up error: $(cat "$T/out")"
  elif ! sed "s|$T/[^ )]*|FILE|g" "$T/out" | grep -qiF -- "$word"; then  # the word, not a file name
    fail "$name: the line does not say '$word': $(cat "$T/out")"
  else
    echo "ok: $name: $(cat "$T/out")"
  fi
}

# write NAME: stdin into $T/NAME, whose path is printed.
write() {
  cat >"$T/$1"
  echo "$T/$1"
}

# Files that cannot be read as a kubeconfig at all.
row "missing file" "does not exist" "$T/no-such-file"
row "empty file" "empty" "$(write blank </dev/null)"
mkdir "$T/dir"
row "directory" "directory" "$T/dir"
row "not YAML" "YAML" "$(printf 'clusters: [{name: k\n\t}}} :: ][\n' | write not-yaml)"
# ESC first, then every byte value: yaml-cpp quotes the bad escape raw.
all_bytes() { for i in $(seq 27 255) $(seq 0 255); do printf "\\$(printf %03o "$i")"; done; }
row "binary garbage" "YAML" "$(printf 'key: "\\' | cat - <(all_bytes) | write garbage)"
row "YAML but a list" "map" "$(printf -- '- a\n- b\n' | write list)"
# 200 MB that starts like a kubeconfig: refused by its size, not loaded.
{
  config
  yes '# padding that makes the file huge but still valid YAML' | head -c 200000000 || true  # yes dies of SIGPIPE
} >"$T/huge"
row "huge file (200 MB)" "too large" "$T/huge"
row "endless file (/dev/zero)" "too large" /dev/zero
if [ "$(id -u)" = 0 ]; then
  echo "skip: unreadable file (chmod 000): running as root, which reads it anyway"
else
  config >"$T/unreadable"
  chmod 000 "$T/unreadable"
  row "unreadable file (chmod 000)" "permission denied" "$T/unreadable"
fi

# Missing fields.
row "no clusters" 'cluster "k"' "$(config - | write no-clusters)"
row "no server" "no server" "$(config '{insecure-skip-tls-verify: false}' | write no-server)"
row "no users" 'user "u"' "$(config '' - | write no-users)"
row "no contexts" 'context "c"' "$(config '' '' - | write no-contexts)"
row "no current-context" "current-context" "$(config '' '' '' - | write no-current)"

# Names that lead nowhere.
row "unknown current-context" 'context "elsewhere"' "$(config '' '' '' elsewhere | write unknown-context)"
row "unknown user" 'user "gone"' "$(config '' '' '{cluster: k, user: gone}' | write unknown-user)"
row "unknown cluster" 'cluster "gone"' "$(config '' '' '{cluster: gone, user: u}' | write unknown-cluster)"

# Bad base64 and bad PEM.
row "bad base64 CA" "certificate-authority-data" \
  "$(config '{server: "https://127.0.0.1:1", certificate-authority-data: "not*base64"}' | write b64-ca)"
row "bad base64 client certificate" "client-certificate-data" \
  "$(config '' "{client-certificate-data: 'not*base64', client-key-data: $KEY}" | write b64-cert)"
row "bad base64 client key" "client-key-data" \
  "$(config '' "{client-certificate-data: $CERT, client-key-data: 'not*base64'}" | write b64-key)"
row "CA base64 of non-PEM" "not PEM" \
  "$(config "{server: \"https://127.0.0.1:1\", certificate-authority-data: $NOT_PEM}" | write non-pem-ca)"
row "client key base64 of non-PEM" "not PEM" \
  "$(config '' "{client-certificate-data: $CERT, client-key-data: $NOT_PEM}" | write non-pem-key)"
row "a key where the CA belongs" "PRIVATE KEY block, not a CERTIFICATE" \
  "$(config "{server: \"https://127.0.0.1:1\", certificate-authority-data: $KEY}" | write key-as-ca)"
row "a key where the client certificate belongs" "PRIVATE KEY block, not a CERTIFICATE" \
  "$(config '' "{client-certificate-data: $KEY, client-key-data: $KEY}" | write key-as-cert)"
row "a certificate where the client key belongs" "CERTIFICATE block, not a PRIVATE KEY" \
  "$(config '' "{client-certificate-data: $CERT, client-key-data: $CERT}" | write cert-as-key)"

# Files the kubeconfig names that are not there.
row "missing certificate-authority file" "certificate-authority" \
  "$(config '{server: "https://127.0.0.1:1", certificate-authority: pki/none.crt}' | write missing-ca)"
row "missing tokenFile" "tokenFile" "$(config '' '{tokenFile: /nonexistent/token}' | write missing-token)"
row "endless tokenFile (/dev/zero)" "too large" "$(config '' '{tokenFile: /dev/zero}' | write zero-token)"

# Exec blocks client-go refuses, and one wanting a terminal (a plugin that
# runs but fails is not a start-up error: it is retried).
EXEC_V1='apiVersion: client.authentication.k8s.io/v1'
row "exec without command" "no command" "$(config '' "{exec: {$EXEC_V1, interactiveMode: Never}}" | write exec-nocmd)"
row "exec v1 without interactiveMode" "interactiveMode must be set" \
  "$(config '' "{exec: {$EXEC_V1, command: aws}}" | write exec-nomode)"
row "exec interactiveMode Always" "terminal" \
  "$(config '' "{exec: {$EXEC_V1, command: kubelogin, interactiveMode: Always}}" | write exec-always)"
row "exec v1alpha1" "not supported" \
  "$(config '' '{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}' | write exec-alpha)"

[ "$failures" = 0 ] || {
  echo "FAIL: $failures row(s) failed" >&2
  exit 1
}
echo "ok: every broken kubeconfig ends in one clear line and exit status 1"
