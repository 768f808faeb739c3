#!/usr/bin/env python3
"""bench/volumes.py's objects: the shapes of scheduler_perf's volume
workloads (templates/pv-aws.yaml, pv-csi.yaml, pvc.yaml; the pod of
pod-default with its claim), pre-bound for the lab's binder, and the lab
flags each workload runs with. No lab: the objects only.
"""
import os
import sys

ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import volumes  # noqa: E402


def cases():
    """(what, got, want) for each property checked."""
    out = []

    def check(what, got, want):
        out.append((what, got, want))

    aws = volumes.volume("bench-tput", 7, "aws")
    check("in-tree volume name", aws["metadata"]["name"], "bench-tput-vol-7")
    check("in-tree volumeID (upstream's vol-I, shared across namespaces)", aws["spec"]["awsElasticBlockStore"],
          {"volumeID": "vol-7"})
    check("in-tree volume has no csi source", "csi" in aws["spec"], False)
    check("access modes", aws["spec"]["accessModes"], ["ReadOnlyMany"])
    check("capacity", aws["spec"]["capacity"], {"storage": "1Gi"})
    check("reclaim policy", aws["spec"]["persistentVolumeReclaimPolicy"], "Retain")
    check("claimRef: pre-bound to its claim, no UID", aws["spec"]["claimRef"],
          {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "bench-tput", "name": "pvc-7"})

    csi = volumes.volume("bench-init", 3, "csi")
    check("CSI source: the driver, the volume's name as handle", csi["spec"]["csi"],
          {"driver": "ebs.csi.aws.com", "volumeHandle": "bench-init-vol-3"})
    check("CSI volume has no in-tree source", "awsElasticBlockStore" in csi["spec"], False)

    c = volumes.claim("bench-tput", 7)
    check("claim name and namespace", (c["metadata"]["name"], c["metadata"]["namespace"]), ("pvc-7", "bench-tput"))
    check("claim names its volume", c["spec"]["volumeName"], "bench-tput-vol-7")
    check("claim request", c["spec"]["resources"], {"requests": {"storage": "1Gi"}})
    check("claim carries no bound state (the binder writes it)", ("status" in c, "annotations" in c["metadata"]),
          (False, False))

    p = volumes.pod("bench-tput", 7, "bench-toy-1", "p-")
    check("pod name", p["metadata"]["name"], "p-000007")
    check("pod scheduler", p["spec"]["schedulerName"], "bench-toy-1")
    check("pod volume: its own claim", p["spec"]["volumes"],
          [{"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-7"}}])
    check("pod requests", p["spec"]["containers"][0]["resources"]["requests"], {"cpu": "100m", "memory": "500Mi"})
    check("pod not placed", "nodeName" in p["spec"], False)

    check("in-tree-pvs lab flags: the binder, no CSINode", volumes.lab_flags("in-tree-pvs"), ["--controllers"])
    for w in ("migrated-pvs", "csi-pvs"):
        check(f"{w} lab flags", volumes.lab_flags(w),
              ["--controllers", "--csi-driver", "ebs.csi.aws.com", "--csi-attach-limit", "39"])
    check("basic lab flags", volumes.lab_flags("basic"), [])
    check("csi-pvs-backlog lab flags: csi-pvs's", volumes.lab_flags("csi-pvs-backlog"), volumes.lab_flags("csi-pvs"))
    check("backlogs", [volumes.is_backlog(w) for w in ("backlog", "basic", "in-tree-pvs", "in-tree-pvs-backlog",
                                                       "basic-backlog")], [True, False, False, True, False])
    check("in-tree-pvs-backlog's upstream name", volumes.upstream_name("in-tree-pvs-backlog"), "SchedulingInTreePVs")
    check("no volume workload", (volumes.volume_workload("basic"), volumes.volume_workload("backlog")), (None, None))
    check("upstream names", [volumes.upstream_name(w) for w in ("basic", "in-tree-pvs", "migrated-pvs", "csi-pvs")],
          ["SchedulingBasic", "SchedulingInTreePVs", "SchedulingMigratedInTreePVs", "SchedulingCSIPVs"])
    check("volume sources", {w: v.source for w, v in volumes.VOLUME_WORKLOADS.items()},
          {"in-tree-pvs": "aws", "migrated-pvs": "aws", "csi-pvs": "csi"})
    check("upstream thresholds", {w: v.threshold for w, v in volumes.VOLUME_WORKLOADS.items()},
          {"in-tree-pvs": 90, "migrated-pvs": 35, "csi-pvs": 48})
    return out


def main():
    failures = [f"{what}: got {got!r}, want {want!r}" for what, got, want in cases() if got != want]
    print("".join(f"FAIL: {f}\n" for f in failures) + f"bench volumes: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
