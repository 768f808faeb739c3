"""The judge's summary (stdout, and test/diff/RESULTS.md with --record) and
its details file (every difference; the pod and node of each kind's first)."""
import collections
import json
import os
import subprocess
import time

from devlib import marked_block

BEGIN = "<!-- diff-upstream: begin (written by ./dev diff-upstream --record) -->"
END = "<!-- diff-upstream: end -->"
TITLE = "# The differential judge's last long run"


def git_state(root):
    def git(*a):
        return subprocess.run(["git", "-C", root] + list(a), capture_output=True, text=True).stdout.strip()
    try:
        commit = git("rev-parse", "--short", "HEAD") or "unknown"
        return commit + (" + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")
    except OSError:
        return "unknown (no git)"


def kind_of(d):
    """A difference's class: its kind, and the plugin it concerns."""
    return "%s %s" % (d["kind"], d["plugin"]) if d["plugin"] else d["kind"]


def summary(args, commit, totals, diffs, allowlist, used):
    by_kind = collections.OrderedDict()
    for d in sorted(diffs, key=kind_of):
        k = by_kind.setdefault(kind_of(d), {"all": 0, "unexplained": 0, "by": collections.Counter()})
        k["all"] += 1
        if d["explainedBy"]:
            k["by"][d["explainedBy"]] += 1
        else:
            k["unexplained"] += 1
    unexplained = sum(k["unexplained"] for k in by_kind.values())
    head = ("seed %s, commit %s: %d clusters (%d nodes), %d pending pods, %d node verdicts and %d plugin "
            "scores compared in %.0f s" % (args.seed, commit, totals["clusters"], totals["nodes"], totals["pods"],
                                           totals["verdicts"], totals["scores"], totals.get("seconds", 0)))
    lines = [head, "differences: %d, explained %d, unexplained %d" % (len(diffs), len(diffs) - unexplained,
                                                                      unexplained)]
    md = ["- Command: `./dev diff-upstream --clusters %d --pods %d --seed %s`" % (args.clusters, args.pods, args.seed),
          "- Commit: %s" % commit, "- Date: %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
          "- Compared: %d clusters (%d nodes), %d pending pods, %d node verdicts, %d plugin scores"
          % (totals["clusters"], totals["nodes"], totals["pods"], totals["verdicts"], totals["scores"]),
          "", "**%d differences, %d unexplained**" % (len(diffs), unexplained), "",
          "| Kind | Plugin | Differences | Unexplained | Explained by |", "|---|---|---:|---:|---|"]
    for name, k in by_kind.items():
        by = ", ".join("%s (%d)" % (e, n) for e, n in sorted(k["by"].items()))
        lines.append("  %-60s %6d  unexplained %d%s" % (name, k["all"], k["unexplained"], "  [%s]" % by if by else ""))
        kind, _, plugin = name.partition(" ")
        md.append("| %s | %s | %d | %d | %s |" % (kind, plugin, k["all"], k["unexplained"], by))
    compared = sorted((k.split(" ", 1)[1], n) for k, n in totals.items() if k.startswith("scores "))
    profiles = sorted((k.split(" ", 1)[1], n) for k, n in totals.items() if k.startswith("pods "))
    lines.append("pods per profile: " + ", ".join("%s %d" % kv for kv in profiles))
    lines.append("pods scored on both sides over the same feasible nodes: %d; scores compared per plugin: %s"
                 % (totals["scored pods"], ", ".join("%s %d" % kv for kv in compared)))
    md += ["", "Pods per profile: " + ", ".join("%s %d" % kv for kv in profiles) + ".",
           "Pods scored on both sides over the same feasible nodes: %d; scores compared per plugin: %s."
           % (totals["scored pods"], ", ".join("%s %d" % kv for kv in compared))]
    md += ["", "| Allowlist entry | Issue 47 item | docs/compat.md row | Differences |", "|---|---|---|---:|"]
    md += ["| %s | %s | %s | %d |" % (e["id"], e["item"], e["compat"], used.get(e["id"], 0)) for e in allowlist]
    stale = [e["id"] for e in allowlist if used.get(e["id"]) == 0]
    if stale:
        lines.append("allowlist entries that explained nothing in this run: %s" % ", ".join(stale))
        md += ["", "Allowlist entries that explained nothing in this run: %s." % ", ".join(stale)]
    return {"text": "\n".join(lines), "markdown": "\n".join(md) + "\n", "unexplained": unexplained}


def node_of(nodes, name):
    for n in nodes:
        if n["metadata"]["name"] == name:
            return n
    return None


def write_details(path, args, commit, totals, diffs, used):
    """Every difference; the first of each class with its pod's spec and its
    node, to reproduce it on a small cluster."""
    examples, out = {}, []
    for d in diffs:
        pod, nodes = d.pop("_pod"), d.pop("_nodes")
        k = kind_of(d)
        if k not in examples:
            examples[k] = dict(d, podObject=pod, nodeObject=node_of(nodes, d["node"]) if d["node"] else None)
        out.append(d)
    doc = {"seed": args.seed, "commit": commit, "clusters": args.clusters, "podsPerCluster": args.pods,
           "totals": totals, "allowlistUse": used, "examples": examples, "differences": out}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)


def record(path, body):
    """Replace what lies between the markers; the prose around them stays."""
    marked_block.write(path, TITLE, BEGIN, END, body)
