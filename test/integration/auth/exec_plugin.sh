#!/usr/bin/env bash
# An exec credential plugin for exec.sh, whose kubeconfigs set its env:
#   EXEC_MODE   token | expiring | wrong-first | cert | garbage | hang
#   EXEC_STATE  a path prefix: STATE.runs counts the runs, STATE.info keeps
#               the last KUBERNETES_EXEC_INFO, STATE.pid the last pid
#   EXEC_TOKEN  a file holding the lab's token; EXEC_CERT_CONFIG the lab's
#               client-certificate kubeconfig (mode cert)
#   EXEC_LIFE   seconds until the credential expires (mode expiring)
set -euo pipefail
runs=$(($(cat "$EXEC_STATE.runs" 2>/dev/null || echo 0) + 1))
echo "$runs" >"$EXEC_STATE.runs"
echo "$$" >"$EXEC_STATE.pid"
printf '%s\n' "${KUBERNETES_EXEC_INFO:-}" >"$EXEC_STATE.info"

# cred STATUS-FIELDS: an ExecCredential, apiVersion as the kubeconfig asks.
cred() { printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{%s}}\n' "$1"; }
# field KEY: the base64 *-data field of the certificate kubeconfig, as a JSON string.
field() { grep "$1" "$EXEC_CERT_CONFIG" | awk '{print $2}' | base64 -d | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'; }

case $EXEC_MODE in
  token) cred "\"token\":\"$(cat "$EXEC_TOKEN")\"" ;;
  expiring)
    at=$(date -u -d "+${EXEC_LIFE} seconds" +%Y-%m-%dT%H:%M:%SZ)
    cred "\"token\":\"$(cat "$EXEC_TOKEN")\",\"expirationTimestamp\":\"$at\"" ;;
  wrong-first)
    token=$(cat "$EXEC_TOKEN")
    [ "$runs" = 1 ] && token=not-the-lab-token
    cred "\"token\":\"$token\"" ;;
  cert) cred "\"clientCertificateData\":$(field client-certificate-data),\"clientKeyData\":$(field client-key-data)" ;;
  garbage) echo '<html>Please sign in</html>' ;;
  hang)
    echo "waiting for someone to log in" >&2
    sleep 600 ;;
esac
