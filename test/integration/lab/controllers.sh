#!/usr/bin/env bash
# --controllers: a Deployment becomes a ReplicaSet and its pods, as on a real
# cluster, and deleting it removes them (garbage collector).
source "$(dirname "$0")/../lib.sh"
use_shared_lab

k -n "$NS" create deployment x --image=registry.k8s.io/pause:3.9 --replicas=20 >/dev/null
wait_until 30 "20 pods" '[ "$(count_pods app=x)" = 20 ]'
pass "20 pods created"
wait_until 30 "20 pods bound by kube-scheduler" \
  '[ "$(count_pods app=x --field-selector=status.phase=Running)" = 20 ]'
pass "20 pods bound and Running"

k -n "$NS" delete deployment x --wait=true --timeout=30s >/dev/null
wait_until 30 "pods gone" '[ "$(count_pods app=x)" = 0 ]'
pass "deployment deleted, pods collected"
