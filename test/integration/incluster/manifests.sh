#!/usr/bin/env bash
# manifests/ against a real API server (issue 8): `kubectl apply -f` and
# `apply -k` both pass server-side validation (dry run) and apply for real,
# to the same objects; Pod Security "restricted" admits the Deployment without
# a warning, while academy-build (shared with seed 002's framework scheduler)
# enforces no level; the Deployment says what the drills need; and the ServiceAccount
# can do exactly what toy-scheduler calls, and nothing more.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 1
M=$TOYSCHED_ROOT/manifests

# applies MODE ARGS...: kubectl apply, stdout and stderr kept apart; fails on
# an error or on any warning (a Pod Security warning would be one).
applies() {
  local what=$1; shift
  k apply "$@" >"$TEST_TMP/apply.out" 2>"$TEST_TMP/apply.err" ||
    fail "kubectl apply $* ($what): $(cat "$TEST_TMP/apply.err")"
  [ ! -s "$TEST_TMP/apply.err" ] || fail "kubectl apply $* ($what) warned: $(cat "$TEST_TMP/apply.err")"
}
# objects: "kind/name" lines of the last apply's output, sorted.
objects() { awk '{print $1}' "$TEST_TMP/apply.out" | sort; }
# states: the distinct second words of the last apply's output (created, unchanged…).
states() { awk '{print $2}' "$TEST_TMP/apply.out" | sort -u | tr '\n' ' ' | sed 's/ $//'; }

EXPECTED_OBJECTS="clusterrole.rbac.authorization.k8s.io/toy-scheduler
clusterrole.rbac.authorization.k8s.io/toy-scheduler-endpoints
clusterrolebinding.rbac.authorization.k8s.io/toy-scheduler
deployment.apps/toy-scheduler
namespace/academy-build
role.rbac.authorization.k8s.io/toy-scheduler-leader-election
rolebinding.rbac.authorization.k8s.io/toy-scheduler-leader-election
serviceaccount/toy-scheduler"

# -f reads every .yaml/.json/.yml in the directory: the kustomization must not
# be one of them (kubectl would send it to the server as an object). It is
# named `Kustomization`, which kustomize reads and -f skips.
[ ! -e "$M/kustomization.yaml" ] && [ ! -e "$M/kustomization.yml" ] || fail "manifests/kustomization.y*ml breaks apply -f"
k kustomize "$M" >"$TEST_TMP/kustomized.yaml"
for f in "$M"/*.yaml; do grep -qx -- "- $(basename "$f")" "$M/Kustomization" || fail "$(basename "$f") is not in manifests/Kustomization"; done
pass "the Kustomization lists every manifest and apply -f skips it"

# Server-side dry run. A dry run persists nothing, so the objects inside
# academy-build need the namespace to exist already: create it first (as a
# user would on a cluster that has it).
k apply -f "$M/00-namespace.yaml" >/dev/null
applies "dry run" -f "$M" --dry-run=server
[ "$(objects)" = "$EXPECTED_OBJECTS" ] || fail "apply -f --dry-run=server: $(cat "$TEST_TMP/apply.out")"
grep -v '(server dry run)$' "$TEST_TMP/apply.out" && fail "a line without (server dry run)"
applies "dry run" -k "$M" --dry-run=server
[ "$(objects)" = "$EXPECTED_OBJECTS" ] || fail "apply -k --dry-run=server: $(cat "$TEST_TMP/apply.out")"
[ -z "$(k -n academy-build get all,serviceaccount,role --no-headers 2>/dev/null | grep toy-scheduler)" ] ||
  fail "the dry run left objects behind"
pass "apply -f and apply -k pass server-side validation (dry run), no warnings"

# For real: -k creates, then -f finds nothing to change; and the other way round.
applies "for real" -k "$M"
[ "$(objects)" = "$EXPECTED_OBJECTS" ] || fail "apply -k: $(cat "$TEST_TMP/apply.out")"
applies "again" -f "$M"
[ "$(states)" = unchanged ] || fail "apply -f after apply -k changed something: $(cat "$TEST_TMP/apply.out")"
k delete -f "$M/10-rbac.yaml" -f "$M/20-deployment.yaml" --wait=true >/dev/null
applies "for real" -f "$M"
[ "$(grep -c ' created$' "$TEST_TMP/apply.out")" = 7 ] || fail "apply -f: $(cat "$TEST_TMP/apply.out")"
applies "again" -k "$M"
[ "$(states)" = unchanged ] || fail "apply -k after apply -f changed something: $(cat "$TEST_TMP/apply.out")"
pass "apply -k and apply -f create the same objects, each a no-op after the other"

# The Deployment carries what the drills and the issue ask of it.
dep() { k -n academy-build get deployment toy-scheduler -o jsonpath="{$1}"; }
ctr=.spec.template.spec.containers[0]
check() { [ "$(dep "$1")" = "$2" ] || fail "deployment $1 is '$(dep "$1")', want '$2'"; }
check .spec.replicas 2
check .spec.template.spec.serviceAccountName toy-scheduler
check "$ctr.args" '["--leader-elect","--leader-elect-resource-namespace=academy-build","--scheduler-name=toy-scheduler","-v=2","--dump-dir=/dumps"]'
# The root filesystem is read-only: the SIGQUIT dump's file needs a volume.
check "$ctr.volumeMounts[?(@.mountPath==\"/dumps\")].name" dumps
check '.spec.template.spec.volumes[?(@.name=="dumps")].emptyDir.sizeLimit' 16Mi
check "$ctr.env[?(@.name==\"POD_NAME\")].valueFrom.fieldRef.fieldPath" metadata.name
check "$ctr.livenessProbe.httpGet.path" /livez
check "$ctr.readinessProbe.httpGet.path" /readyz
check "$ctr.livenessProbe.httpGet.scheme" HTTPS
check "$ctr.readinessProbe.httpGet.scheme" HTTPS
check "$ctr.livenessProbe.httpGet.port" https
check "$ctr.ports[?(@.name==\"https\")].containerPort" 10259
check .spec.template.spec.securityContext.runAsNonRoot true
check .spec.template.spec.securityContext.runAsUser 65532
check .spec.template.spec.securityContext.seccompProfile.type RuntimeDefault
check "$ctr.securityContext.readOnlyRootFilesystem" true
check "$ctr.securityContext.allowPrivilegeEscalation" false
check "$ctr.securityContext.capabilities.drop" '["ALL"]'
for r in requests limits; do
  [ -n "$(dep "$ctr.resources.$r.cpu")" ] && [ -n "$(dep "$ctr.resources.$r.memory")" ] || fail "no $r"
done
# academy-build is shared with seed 002's framework scheduler: no Pod Security
# label, and a kube-scheduler pod as kubeadm writes it (root, no seccomp) is
# admitted there without a warning.
labels=$(k get namespace academy-build -o jsonpath='{.metadata.labels}')
[[ $labels != *pod-security.kubernetes.io* ]] || fail "academy-build carries a Pod Security label: $labels"
k -n academy-build apply --dry-run=server -f - >/dev/null 2>"$TEST_TMP/framework.err" <<'YAML' ||
apiVersion: v1
kind: Pod
metadata: {name: framework-scheduler-probe, namespace: academy-build}
spec:
  hostNetwork: true
  containers:
  - name: kube-scheduler
    image: registry.k8s.io/kube-scheduler:v1.36.3
    command: [kube-scheduler, --config=/etc/kubernetes/scheduler-config.yaml]
YAML
  fail "a framework-scheduler pod is refused in academy-build: $(cat "$TEST_TMP/framework.err")"
[ ! -s "$TEST_TMP/framework.err" ] || fail "a framework-scheduler pod draws warnings: $(cat "$TEST_TMP/framework.err")"
# Our pod still meets "restricted": a server dry run of the template as a Pod
# in a namespace of its own that enforces (and warns on) it.
k create namespace restricted-probe >/dev/null
k label namespace restricted-probe pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/warn=restricted >/dev/null
k -n restricted-probe create serviceaccount toy-scheduler >/dev/null  # the pod names it
k -n academy-build get deployment toy-scheduler -o json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); t=d["spec"]["template"]
print(json.dumps({"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe","namespace":"restricted-probe","labels":t["metadata"]["labels"]},"spec":t["spec"]}))' |
  k apply -f - --dry-run=server >/dev/null 2>"$TEST_TMP/pod.err" || fail "the pod template is refused: $(cat "$TEST_TMP/pod.err")"
[ ! -s "$TEST_TMP/pod.err" ] || fail "the pod template draws warnings: $(cat "$TEST_TMP/pod.err")"
pass "the Deployment: 2 replicas, the drills' args, POD_NAME, probes, limits; its pod passes Pod Security restricted; academy-build admits a kube-scheduler pod"

# Least privilege. What every authenticated account may do (system:basic-user,
# system:discovery, system:public-info-viewer, system:service-account-issuer-
# discovery) shows up in `can-i --list` too: it is listed here on its own and
# checked against an account with no binding at all.
BUILTIN="selfsubjectreviews.authentication.k8s.io [] [] [create]
selfsubjectaccessreviews.authorization.k8s.io [] [] [create]
selfsubjectrulesreviews.authorization.k8s.io [] [] [create]
[/.well-known/openid-configuration/] [] [get]
[/.well-known/openid-configuration] [] [get]
[/api/*] [] [get]
[/api] [] [get]
[/apis/*] [] [get]
[/apis] [] [get]
[/healthz] [] [get]
[/livez] [] [get]
[/openapi/*] [] [get]
[/openapi] [] [get]
[/openid/v1/jwks/] [] [get]
[/openid/v1/jwks] [] [get]
[/readyz] [] [get]
[/version/] [] [get]
[/version] [] [get]"
# toy-scheduler's own, everywhere (ClusterRole): src/kube/reflector.cpp (list,
# watch; src/sched/cluster_objects.cpp for the eleven kinds the plugins and
# preemption look up), src/sched/binder.cpp (pods/binding),
# src/sched/preemption_executor.cpp (pods: delete), src/sched/events.cpp
# (pods/status, events), src/serve/auth.cpp (the secure port's reviews).
CLUSTER="pods [] [] [delete get list watch]
pods/binding [] [] [create]
pods/status [] [] [patch]
nodes [] [] [get list watch]
namespaces [] [] [list watch]
services [] [] [list watch]
replicationcontrollers [] [] [list watch]
replicasets.apps [] [] [list watch]
statefulsets.apps [] [] [list watch]
persistentvolumeclaims [] [] [list watch patch]
persistentvolumes [] [] [list watch patch]
storageclasses.storage.k8s.io [] [] [list watch]
csinodes.storage.k8s.io [] [] [list watch]
volumeattachments.storage.k8s.io [] [] [list watch]
csidrivers.storage.k8s.io [] [] [list watch]
csistoragecapacities.storage.k8s.io [] [] [list watch]
poddisruptionbudgets.policy [] [] [list watch]
events [] [] [create patch]
events.events.k8s.io [] [] [create patch]
tokenreviews.authentication.k8s.io [] [] [create]
subjectaccessreviews.authorization.k8s.io [] [] [create]"
# ... and in academy-build only (Role): src/lease/elector.cpp.
LEASES="leases.coordination.k8s.io [] [] [create]
leases.coordination.k8s.io [] [toy-scheduler] [get list watch update]"

norm() { awk 'NF {$1 = $1; print}' | sort -u; }
can_list() { k auth can-i --list --no-headers --as="system:serviceaccount:academy-build:$1" "${@:2}" | norm; }
same() {  # same WHAT GOT WANT
  [ "$2" = "$3" ] && return 0
  echo "--- $1: want (<) / got (>):" >&2
  diff <(echo "$3") <(echo "$2") >&2 || true
  fail "$1"
}
k -n academy-build create serviceaccount nobody >/dev/null
same "an account with no binding (the built-in rules)" "$(can_list nobody -n academy-build)" "$(echo "$BUILTIN" | norm)"
same "toy-scheduler, cluster-wide" "$(can_list toy-scheduler)" "$(printf '%s\n%s\n' "$BUILTIN" "$CLUSTER" | norm)"
same "toy-scheduler in default" "$(can_list toy-scheduler -n default)" "$(printf '%s\n%s\n' "$BUILTIN" "$CLUSTER" | norm)"
same "toy-scheduler in academy-build" "$(can_list toy-scheduler -n academy-build)" \
  "$(printf '%s\n%s\n%s\n' "$BUILTIN" "$CLUSTER" "$LEASES" | norm)"
pass "toy-scheduler's ServiceAccount can do exactly what it calls, leases only in academy-build and only its own"
