#!/usr/bin/env python3
"""manifests/ lets toy-scheduler list and watch every kind it watches.

The kinds are the lines of TOYSCHED_KINDS in include/toysched/kube/kinds.hpp;
the permissions are the rules of manifests/10-rbac.yaml (flow-style lists,
as that file writes them: `- apiGroups: [...]`, `resources: [...]`,
`verbs: [...]`). A kind added to the list without its RBAC rule fails here,
before an in-cluster scheduler fails with a 403 on its informer.

    rbac_test.py ROOT
"""
import os
import re
import sys

KIND = re.compile(r'^\s*KIND\((\w+), (\w+), "([^"]+)", (\w+)\)')
FLOW = re.compile(r'^\s*-?\s*(apiGroups|resources|verbs|resourceNames):\s*\[(.*)\]')


def kinds(root):
    """(resource, API group) of each line of TOYSCHED_KINDS."""
    out = []
    with open(os.path.join(root, "include", "toysched", "kube", "kinds.hpp")) as f:
        for line in f:
            m = KIND.match(line)
            if m:
                prefix = m.group(3)
                group = "" if prefix.startswith("/api/") else prefix.split("/")[2]
                out.append((m.group(2), group))
    return out


def rules(root):
    """Each rule of the RBAC manifest as a dict of its flow lists."""
    out, rule = [], None
    with open(os.path.join(root, "manifests", "10-rbac.yaml")) as f:
        for line in f:
            m = FLOW.match(line)
            if not m:
                continue
            if line.lstrip().startswith("-"):
                rule = {}
                out.append(rule)
            items = [v.strip().strip('"') for v in m.group(2).split(",") if v.strip()]
            rule[m.group(1)] = items
    return out


def allows(rules_, resource, group, verb):
    return any(group in r.get("apiGroups", []) and resource in r.get("resources", []) and
               verb in r.get("verbs", []) for r in rules_)


def missing(root):
    rs = rules(root)
    return ["%s %s (group %r)" % (verb, res, grp) for res, grp in kinds(root)
            for verb in ("list", "watch") if not allows(rs, res, grp, verb)]


def self_test():
    """The parser reads a rule, and a kind without one is reported."""
    rs = [{"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["list", "watch"]}]
    assert allows(rs, "replicasets", "apps", "watch")
    assert not allows(rs, "replicasets", "", "watch")
    assert not allows(rs, "statefulsets", "apps", "list")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    self_test()
    found = kinds(root)
    if len(found) < 3:
        print("rbac_test: found only %d kinds in kinds.hpp: its format changed?" % len(found))
        return 1
    gaps = missing(root)
    for g in gaps:
        print("manifests/10-rbac.yaml does not allow: " + g)
    print("rbac_test: %d kinds, %d missing permissions" % (len(found), len(gaps)))
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
