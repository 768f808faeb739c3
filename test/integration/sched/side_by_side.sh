# Helpers for a scenario played twice on one lab, by toy-scheduler in NS
# and by the lab's kube-scheduler in KUBE_NS, with the same objects (the
# caller sets KUBE_NS and sources lib.sh first).

# prebound_claim NAMESPACE NAME ACCESS SOURCE [LABELS]: a volume named
# pv-NAME-NAMESPACE of access mode ACCESS, whose source is the YAML flow
# mapping SOURCE (e.g. "hostPath: {path: /tmp/x}") and whose labels are the
# flow mapping's content LABELS, and a claim pre-bound to it, which the
# lab's binder then binds.
prebound_claim() {
  local pv=pv-$2-$1
  on_exit k delete pv "$pv" --wait=false '>/dev/null 2>&1'
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $pv, labels: {${5:-}}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [$3]
  $4
  storageClassName: ""
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $2, namespace: $1}
spec:
  accessModes: [$3]
  storageClassName: ""
  volumeName: $pv
  resources: {requests: {storage: 1Gi}}
YAML
  wait_until 30 "claim $1/$2 bound" \
    '[ "$(k -n '"$1"' get pvc '"$2"' -o jsonpath={.metadata.annotations.pv\\.kubernetes\\.io/bind-completed})" = yes ]'
}
# claim_user NAMESPACE SCHEDULER POD CLAIM [PRIORITY-CLASS]: a pod mounting
# CLAIM (PRIORITY-CLASS-NS its priority class, if given).
claim_user() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $3, namespace: $1}
spec:
  schedulerName: $2
  ${5:+priorityClassName: $5-$NS}
  volumes: [{name: data, persistentVolumeClaim: {claimName: $4}}]
  containers: [{name: c, image: registry.k8s.io/pause:3.9}]
YAML
}
node_in() { k -n "$1" get pod "$2" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
message_in() { k -n "$1" get pod "$2" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
# kube-scheduler's message, less the PostFilter text of DynamicResources,
# which toy-scheduler does not run (it refuses pods with resource claims).
kube_message() { local m; m=$(message_in "$KUBE_NS" "$1"); echo "${m/no new claims to deallocate, /}"; }
