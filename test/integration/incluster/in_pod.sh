#!/usr/bin/env bash
# in_pod.sh SECRETS_DIR COMMAND...: run COMMAND where a pod's containers find
# their ServiceAccount: SECRETS_DIR's token, ca.crt and namespace at
# /var/run/secrets/kubernetes.io/serviceaccount. Run it under
# `unshare -m --propagation private`: the tmpfs it mounts exists only in that
# mount namespace, so the host's filesystem is never touched.
#
# The tmpfs goes on the deepest directory on the way that exists (on a machine
# that is not a pod, /run: hidden from COMMAND only, which needs nothing
# there), and the rest of the path is made inside it.
set -euo pipefail
src=$1; shift
sa=$(realpath -m /var/run/secrets/kubernetes.io/serviceaccount)
top=$sa
while [ ! -d "$top" ]; do top=$(dirname "$top"); done
[ "$top" != / ] || { echo "in_pod.sh: no directory to mount over on the way to $sa" >&2; exit 1; }
mount -t tmpfs -o size=1m,mode=0755 toy-serviceaccount "$top"
mkdir -p "$sa"
cp "$src/token" "$src/ca.crt" "$src/namespace" "$sa/"
chmod 0644 "$sa"/*   # readable by the non-root user COMMAND may run as, as in a pod
exec "$@"
