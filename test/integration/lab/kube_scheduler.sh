#!/usr/bin/env bash
# The lab's real kube-scheduler binds a plain pod, and the fake kubelet runs it
# on the node it was bound to.
source "$(dirname "$0")/../lib.sh"
use_shared_lab

k -n "$NS" run plain --image=registry.k8s.io/pause:3.9 --restart=Never >/dev/null
wait_until 30 "pod bound and Running" \
  '[ "$(k -n "$NS" get pod plain -o jsonpath="{.status.phase}")" = Running ]'
node=$(k -n "$NS" get pod plain -o jsonpath='{.spec.nodeName}')
host=$(k -n "$NS" get pod plain -o jsonpath='{.status.hostIP}')
nodeip=$(k get node "$node" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
[ -n "$host" ] && [ "$host" = "$nodeip" ] || fail "hostIP $host is not $node's address $nodeip"
pass "bound to $node, Running, hostIP $host"

# The scheduler that bound it is kube-scheduler: it logs the bind.
log=$(dirname "$KCFG")/kube-scheduler.log
grep -q "Successfully bound pod to node.*pod=\"$NS/plain\"" "$log" ||
  fail "kube-scheduler.log has no bind line for $NS/plain"
pass "kube-scheduler.log: Successfully bound pod to node"

k -n "$NS" delete pod plain --wait=true --timeout=20s >/dev/null || fail "pod deletion did not finish"
pass "deletion finalized by the fake kubelet"
