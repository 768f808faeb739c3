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

# What the e2e framework waits for in every namespace it makes: the
# "default" ServiceAccount and the root CA's ConfigMap (root-CA publisher).
wait_until 30 "kube-root-ca.crt in $NS" 'k -n "$NS" get configmap kube-root-ca.crt >/dev/null 2>&1'
grep -q 'BEGIN CERTIFICATE' <<<"$(k -n "$NS" get configmap kube-root-ca.crt -o jsonpath='{.data.ca\.crt}')" ||
  fail "kube-root-ca.crt holds no certificate"
pass "kube-root-ca.crt published"

# A ReplicationController makes its pods (the e2e tests use RCs), and a
# PodDisruptionBudget over them gets its status (disruption controller).
k -n "$NS" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: 3
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.9}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: rc}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: rc}}
YAML
wait_until 30 "3 RC pods Running" '[ "$(count_pods app=rc --field-selector=status.phase=Running)" = 3 ]'
pass "a ReplicationController's 3 pods Running"
allowed() { k -n "$NS" get pdb rc -o jsonpath='{.status.currentHealthy}/{.status.disruptionsAllowed}'; }
wait_until 30 "PDB status 3 healthy, 1 disruption allowed" '[ "$(allowed)" = 3/1 ]'
pass "PodDisruptionBudget status: $(allowed) (healthy/disruptions allowed)"

# A claim pre-bound to a volume is bound by the persistentvolume-binder
# (Bound, with the bind-completed annotation a scheduler checks).
volume "pv-$NS"
claim claim "pv-$NS"
claim_state() { k -n "$NS" get pvc claim -o jsonpath='{.status.phase} {.metadata.annotations.pv\.kubernetes\.io/bind-completed}'; }
wait_until 30 "the claim Bound, bind-completed" '[ "$(claim_state)" = "Bound yes" ]'
pass "a pre-bound claim is Bound by the persistentvolume-binder"
