#!/usr/bin/env bash
# The lab serves real TLS and makes 3 Ready fake nodes with the sizes asked.
source "$(dirname "$0")/../lib.sh"
use_shared_lab

ready=$(k get nodes --no-headers | awk '$2 == "Ready"' | wc -l)
[ "$ready" = 3 ] || fail "expected 3 Ready nodes, got $ready: $(k get nodes)"
names=$(k get nodes -o jsonpath='{.items[*].metadata.name}')
[ "$names" = "lab-node-1 lab-node-2 lab-node-3" ] || fail "node names: $names"
pass "3 Ready nodes: $names"

alloc=$(k get node lab-node-2 -o jsonpath='{.status.allocatable.cpu} {.status.allocatable.memory} {.status.allocatable.pods}')
[ "$alloc" = "4 32Gi 110" ] || fail "allocatable of lab-node-2: $alloc"
ip=$(k get node lab-node-2 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
[ -n "$ip" ] || fail "lab-node-2 has no InternalIP"
taints=$(k get nodes -o jsonpath='{.items[*].spec.taints}')
[ -z "$taints" ] || fail "nodes are tainted: $taints"
pass "allocatable $alloc, InternalIP $ip, no taints"

# Certificate authentication works as well as the token, against the same CA.
cert_cfg=$(dirname "$KCFG")/kubeconfig-cert
n=$("$KUBECTL" --kubeconfig "$cert_cfg" get nodes --no-headers | wc -l)
[ "$n" = 3 ] || fail "client-certificate kubeconfig sees $n nodes"
pass "client certificate auth"

# TLS is verified: a kubeconfig whose CA is not the lab's is refused.
bad=$TEST_TMP/wrong-ca
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -subj /CN=not-the-lab -keyout "$TEST_TMP/k.pem" -out "$TEST_TMP/ca.pem" 2>/dev/null
server=$(k config view --raw -o jsonpath='{.clusters[0].cluster.server}')
token=$(k config view --raw -o jsonpath='{.users[0].user.token}')
"$KUBECTL" config --kubeconfig "$bad" set-cluster c --server "$server" \
  --certificate-authority "$TEST_TMP/ca.pem" --embed-certs >/dev/null
"$KUBECTL" config --kubeconfig "$bad" set-credentials u --token "$token" >/dev/null
"$KUBECTL" config --kubeconfig "$bad" set-context c --cluster c --user u >/dev/null
"$KUBECTL" config --kubeconfig "$bad" use-context c >/dev/null
if out=$("$KUBECTL" --kubeconfig "$bad" get nodes 2>&1); then
  fail "a kubeconfig with the wrong CA was accepted"
fi
grep -q 'certificate' <<<"$out" || fail "wrong CA failed, but not on the certificate: $out"
pass "wrong CA refused"

v=$(k version -o json)
grep -q '"gitVersion": "v1.36.3"' <<<"$v" || fail "versions: $v"
[ "$(grep -c '"gitVersion": "v1.36.3"' <<<"$v")" = 2 ] || fail "client and server differ: $v"
pass "kubectl and the API server are both v1.36.3"

# ephemeral-storage is in allocatable (the e2e tests divide it among pods).
eph=$(k get node lab-node-2 -o jsonpath='{.status.allocatable.ephemeral-storage}')
[ "$eph" = 100Gi ] || fail "ephemeral-storage allocatable of lab-node-2: '$eph'"
# An extended resource patched into capacity reaches allocatable, and leaves
# it when removed, as a kubelet reports it (the fake kubelet does).
drop_widget() {
  k patch node lab-node-3 --subresource=status --type=json \
    -p '[{"op":"remove","path":"/status/capacity/example.com~1widget"}]' >/dev/null 2>&1
}
widget() { k get node lab-node-3 -o jsonpath='{.status.allocatable.example\.com/widget}'; }
k patch node lab-node-3 --subresource=status --type=merge \
  -p '{"status":{"capacity":{"example.com/widget":"5"}}}' >/dev/null
on_exit drop_widget
wait_until 10 "example.com/widget in allocatable" '[ "$(widget)" = 5 ]'
drop_widget
wait_until 10 "example.com/widget gone from allocatable" '[ -z "$(widget)" ]'
pass "ephemeral-storage $eph; an extended resource follows capacity into allocatable and out"
