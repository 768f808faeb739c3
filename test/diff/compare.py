"""Compare kube-scheduler's answer for a pod (kube-lab judge) with
toy-scheduler's (/debug/explain), node by node.

Both are first put in one shape: for each node, a verdict ("feasible";
"rejected" by a Filter, with plugin, code and reason; "leftOut" by a
PreFilter's node set; "preFilter" when a PreFilter rejected the pod before
any node was filtered), and, when two or more nodes fit, each score
plugin's normalized score and the weighted total per feasible node.

What counts as a difference, and what does not:
- a node's verdict; for a rejection, its plugin, then its reasons (in
  any order: see reasons()), then its code;
- which plugins scored (PreScore may skip one) and their weights;
- each plugin's normalized score on each node; and the weighted total,
  but only where every plugin's score agrees (a differing score differs
  the total too, and is reported once, as itself);
- scores are compared only when both sides found the same feasible nodes:
  normalizing depends on the set, so a filter difference would otherwise
  show again as a score difference on every node;
- which node was chosen is not compared: among equal totals both pick at
  random, and equal totals with equal feasible sets leave nothing else.
"""
import collections
import re

UNRESOLVABLE = "UnschedulableAndUnresolvable"


def upstream_view(answer):
    """kube-lab judge's answer for one pod, as {node: verdict} and scores."""
    verdicts = {}
    for n in answer["nodes"]:
        verdicts[n["node"]] = (n["verdict"], n.get("plugin", ""), n.get("code", ""), n.get("reason", ""))
    scores = {}
    for s in answer.get("scores") or []:
        scores[s["node"]] = (dict(s["plugins"]), s["total"])
    return verdicts, scores, dict(answer.get("weights") or {})


def toy_view(explain, node_names):
    """/debug/explain's JSON for one pod, in the same shape."""
    verdicts = {}
    if explain.get("preFilterRejectedBy"):
        v = ("preFilter", explain["preFilterRejectedBy"], UNRESOLVABLE, explain.get("preFilterReason", ""))
        return {n: v for n in node_names}, {}, {}
    for r in explain.get("rejected", []):
        verdicts[r["node"]] = ("rejected", r["plugin"], r.get("code", ""), r["reason"])
    scores, weights = {}, {}
    for s in explain.get("scores", []):
        verdicts[s["node"]] = ("feasible", "", "", "")
        if "plugins" in s:
            scores[s["node"]] = ({p["plugin"]: p["normalized"] for p in s["plugins"]}, s["total"])
            for p in s["plugins"]:
                weights[p["plugin"]] = p["weight"]
    left_out = explain.get("leftOutByPreFilter", 0)
    for n in node_names:
        if n not in verdicts:
            # Neither rejected nor feasible: left out by a PreFilter's node
            # set, or (a sampled search, never below 100 nodes) not filtered.
            verdicts[n] = ("leftOut", "", UNRESOLVABLE, "") if left_out else ("notFiltered", "", "", "")
    return verdicts, scores, weights


def pod_features(pod):
    """Tags of what a pending pod asks for, for allowlist entries that
    concern only pods of one kind."""
    spec = pod["spec"]
    tags = set()
    pod_level = spec.get("resources", {}).get("requests", {})
    if pod_level:
        tags.add("pod-level-resources")
    for c in spec.get("containers", []):
        req = c.get("resources", {}).get("requests", {})
        # Pod-level requests replace the containers' (for the resources they name).
        if any(r not in req and r not in pod_level for r in ("cpu", "memory")):
            tags.add("container-without-request")
    aff = spec.get("affinity", {})
    for kind in ("podAffinity", "podAntiAffinity"):
        a = aff.get(kind, {})
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution", []))
        terms += [w["podAffinityTerm"] for w in a.get("preferredDuringSchedulingIgnoredDuringExecution", [])]
        if a.get("requiredDuringSchedulingIgnoredDuringExecution"):
            tags.add("required-" + kind)
        if any("namespaceSelector" in t for t in terms):
            tags.add("namespace-selector")
    if spec.get("topologySpreadConstraints"):
        tags.add("topology-spread")
    if any("persistentVolumeClaim" in v for v in spec.get("volumes", [])):
        tags.add("claim")
    if any(c.get("restartPolicyRules") for c in spec.get("containers", []) + spec.get("initContainers", [])):
        tags.add("declared-features")
    return tags


def node_features(bound_pods):
    """Tags of what the pods bound to a node ask for, as pod_features, each
    prefixed "node-"."""
    tags = set()
    for p in bound_pods:
        tags |= {"node-" + t for t in pod_features(p)}
    return tags


def diff_pod(where, upstream_answer, explain, pod, bound_by_node=None, tally=None):
    """Every difference for one pod: a list of dicts (kind, node, plugin,
    upstream, toy, features, plus `where`: cluster and pod). `bound_by_node`
    ({node: [pods]}) adds the tags of a node's pods to a difference there.
    `tally` (a Counter) counts what was compared: node verdicts, pods whose
    scores were compared, and each plugin's (node, score) pairs."""
    tally = tally if tally is not None else collections.Counter()
    nodes = [n["node"] for n in upstream_answer["nodes"]]
    uv, us, uw = upstream_view(upstream_answer)
    tv, ts, tw = toy_view(explain, nodes)
    base = dict(where, profile=upstream_answer["profile"])
    tags = pod_features(pod)
    out = []

    def add(kind, node="", plugin="", up=None, toy=None):
        features = tags | node_features((bound_by_node or {}).get(node, [])) if node else tags
        out.append(dict(base, kind=kind, node=node, plugin=plugin, upstream=up, toy=toy, features=sorted(features)))

    tally["pods"] += 1
    tally["pods " + upstream_answer["profile"]] += 1
    tally["verdicts"] += len(nodes)
    for n in nodes:
        u, t = uv[n], tv.get(n, ("missing", "", "", ""))
        if u[0] != t[0]:
            add("verdict", n, u[1] or t[1], verdict_text(u), verdict_text(t))
        elif u[0] in ("rejected", "preFilter"):
            if u[1] != t[1]:
                add("filter-plugin", n, u[1], verdict_text(u), verdict_text(t))
            elif reasons(u[3]) != reasons(t[3]):
                add("filter-reason", n, u[1], u[3], t[3])
            elif t[2] and u[2] != t[2]:
                add("filter-code", n, u[1], u[2], t[2])
    feasible_u = sorted(n for n in nodes if uv[n][0] == "feasible")
    feasible_t = sorted(n for n in nodes if tv.get(n, ("",))[0] == "feasible")
    if feasible_u != feasible_t or len(feasible_u) < 2:
        return out
    tally["scored pods"] += 1
    for p in sorted(set(uw) | set(tw)):
        if p not in tw or p not in uw:
            add("scorers", "", p, scored_text(us, p), scored_text(ts, p))
        elif uw[p] != tw[p]:
            add("weight", "", p, uw[p], tw[p])
    for n in feasible_u:
        (up, utotal), (tp, ttotal) = us[n], ts[n]
        differed = False
        for p in sorted(set(up) & set(tp)):
            tally["scores"] += 1
            tally["scores " + p] += 1
            if up[p] != tp[p]:
                add("score", n, p, up[p], tp[p])
                differed = True
        if not differed and set(up) == set(tp) and utotal != ttotal:
            add("total", n, "", utotal, ttotal)
    return out


def reasons(text):
    """A status's reasons, in an order of their own: upstream lists a
    node's lacking extended resources in Go's map order, which varies from
    call to call; the order is nowhere shown to a user (FailedScheduling
    counts each reason apart)."""
    return sorted(text.split(", ")) if text else []


def scored_text(scores, plugin):
    """What a side's plugin scored over the feasible nodes: "skipped", or
    the range of its normalized scores ("0..0" adds nothing to any total)."""
    values = [p[plugin] for p, _ in scores.values() if plugin in p]
    return "%d..%d" % (min(values), max(values)) if values else "skipped"


def verdict_text(v):
    kind, plugin, code, reason = v
    if kind in ("rejected", "preFilter"):
        return "%s by %s (%s): %s" % (kind, plugin, code or "?", reason)
    return kind


# -- the allowlist --------------------------------------------------------------
def matches(entry, d):
    """Whether allowlist `entry` explains difference `d`. Each field of its
    `match` must hold: kind, plugin, profile equal (or among a list); upstream and toy as
    regular expressions over the side's text; feature (a tag, or a list of
    which any will do) among the difference's tags."""
    m = entry["match"]
    for key in ("kind", "plugin", "profile"):
        if key in m and d.get(key) not in ([m[key]] if isinstance(m[key], str) else m[key]):
            return False
    for key in ("upstream", "toy"):
        if key in m and not re.search(m[key], str(d.get(key))):
            return False
    if "feature" in m:
        wanted = [m["feature"]] if isinstance(m["feature"], str) else m["feature"]
        if not set(wanted) & set(d.get("features", [])):
            return False
    return True


def explain(allowlist, diffs):
    """Marks each difference with the id of the first entry explaining it
    (`explainedBy`, None if none); returns {entry id: matches}."""
    used = {e["id"]: 0 for e in allowlist}
    for d in diffs:
        d["explainedBy"] = None
        for e in allowlist:
            if matches(e, d):
                d["explainedBy"] = e["id"]
                used[e["id"]] += 1
                break
    return used
