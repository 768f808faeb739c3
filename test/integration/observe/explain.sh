#!/usr/bin/env bash
# /debug/explain and ./dev explain on the lab's 3 nodes: a pending pod names
# each node's rejecting filter and reason; a bound pod's plugin scores add up
# to the totals the -v=10 lines log; a --dry-run scheduler decides and
# explains but binds nothing and writes no event.
source "$(dirname "$0")/../lib.sh"
use_shared_lab
start_toy "$TEST_TMP/toy.log" -v=2 --vmodule=scheduler=10
port=$(toy_port "$TEST_TMP/toy.log")
explain() { "$TOYSCHED_ROOT/dev" explain "$NS/$1" --url "http://127.0.0.1:$port" "${@:2}"; }
mapfile -t nodes < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
[ "${#nodes[@]}" = 3 ] || fail "want the lab's 3 nodes, found: ${nodes[*]}"

# Pending: the third node fails NodeAffinity, the other two NodeResourcesFit.
pod pending <<YAML
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kubernetes.io/hostname, operator: In, values: [${nodes[0]}, ${nodes[1]}]}
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1000"}}}]
YAML
wait_until 30 "an attempt for the pending pod" 'explain pending --json >"$TEST_TMP/pending.json" 2>/dev/null'
python3 - "$TEST_TMP/pending.json" "${nodes[@]}" <<'PY' || fail "pending explain: $(cat "$TEST_TMP/pending.json")"
import json, sys
e = json.load(open(sys.argv[1]))
n0, n1, n2 = sys.argv[2:5]
assert e["result"] == "unresolvable", e["result"]  # 1000 cpus: more than any node has
assert e["nodes"] == 3 and e["feasible"] == 0, e
by_node = {r["node"]: (r["plugin"], r["reason"]) for r in e["rejected"]}
assert by_node == {n0: ("NodeResourcesFit", "Insufficient cpu"), n1: ("NodeResourcesFit", "Insufficient cpu"),
                   n2: ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")}, by_node
assert e["message"] == ("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                        "2 Insufficient cpu."), e["message"]
PY
text=$(explain pending)
echo "$text" | grep -Eq "^$(printf '%s' "${nodes[2]}") +NodeAffinity +node\(s\) didn't match Pod's node affinity/selector$" ||
  fail "the text table has no NodeAffinity row for ${nodes[2]}: $text"

# Bound: every node scored; the scores add up to what -v=10 logged.
pod bound <<YAML
  containers: [{name: c, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 10m}}}]
YAML
wait_until 30 "the pod bound" '[ -n "$(node_of bound)" ]'
explain bound --json >"$TEST_TMP/bound.json" || fail "no explanation for the bound pod"
grep "Calculated node's final score for pod" "$TEST_TMP/toy.log" | grep "pod=\"$NS/bound\"" >"$TEST_TMP/final.log" || true
python3 - "$TEST_TMP/bound.json" "$TEST_TMP/final.log" "$(node_of bound)" <<'PY' || fail "bound explain: $(cat "$TEST_TMP/bound.json")"
import json, re, sys
e = json.load(open(sys.argv[1]))
logged = {m.group(1): int(m.group(2)) for m in re.finditer(r'node="([^"]+)" score=(-?\d+)', open(sys.argv[2]).read())}
assert e["result"] == "scheduled" and e["node"] == sys.argv[3], (e["result"], e.get("node"), sys.argv[3])
assert len(e["scores"]) == 3, e["scores"]
for s in e["scores"]:
    weighted = [p["weighted"] for p in s["plugins"]]
    assert all(p["weighted"] == p["normalized"] * p["weight"] for p in s["plugins"]), s
    assert sum(weighted) == s["total"], s
    assert logged.get(s["node"]) == s["total"], (s["node"], s["total"], logged)
assert max(s["total"] for s in e["scores"]) == next(s["total"] for s in e["scores"] if s["node"] == e["node"])
PY
explain bound | grep -q "^\* $(node_of bound) " || fail "the text table does not star the chosen node: $(explain bound)"

# --dry-run: decided and explained, never bound, no event written.
start_toy "$TEST_TMP/dry.log" -v=2 --scheduler-name=dry --dry-run
dry_port=$(toy_port "$TEST_TMP/dry.log")
{ printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: tryme, namespace: %s}\nspec:\n  schedulerName: dry\n' "$NS"
  echo "  containers: [{name: c, image: registry.k8s.io/pause:3.9}]"; } | k apply -f - >/dev/null
wait_until 30 "the dry-run decision" 'grep -q "Dry run: pod would be bound to node.*pod=\"$NS/tryme\"" "$TEST_TMP/dry.log"'
"$TOYSCHED_ROOT/dev" explain "$NS/tryme" --url "http://127.0.0.1:$dry_port" --json >"$TEST_TMP/dry.json" ||
  fail "no explanation from the dry run"
grep -q '"result":"dry-run"' "$TEST_TMP/dry.json" || fail "dry-run explain: $(cat "$TEST_TMP/dry.json")"
sleep 2
[ -z "$(node_of tryme)" ] || fail "--dry-run bound the pod to $(node_of tryme)"
events=$(k -n "$NS" get events --field-selector involvedObject.name=tryme -o name | grep -c . || true)
[ "$events" = 0 ] || fail "--dry-run wrote $events event(s) about the pod"
pass "pending: each node's filter and reason; bound: scores add up to the -v=10 totals; dry run: explained, unbound"
