#!/usr/bin/env python3
"""compare_metric_names.py THEIRS OURS: kube-scheduler's /metrics text and
toy-scheduler's. Exit 1, printing why, when a family users chart is missing
from ours, or a scheduler_* / process_* family of ours is not kube-scheduler's
(name, type, or label names where both sides have series)."""
import sys

from prometheus_client.parser import text_string_to_metric_families

REQUIRED = ["scheduler_cache_size", "scheduler_schedule_attempts", "scheduler_scheduling_attempt_duration_seconds",
            "scheduler_scheduling_algorithm_duration_seconds", "scheduler_pod_scheduling_attempts",
            "scheduler_pod_scheduling_sli_duration_seconds", "scheduler_plugin_execution_duration_seconds",
            "scheduler_pending_pods", "process_cpu_seconds", "process_open_fds", "process_max_fds",
            "process_resident_memory_bytes", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
            "process_start_time_seconds", "process_network_receive_bytes", "process_network_transmit_bytes"]


def load(path):
    out = {}
    with open(path) as f:
        for fam in text_string_to_metric_families(f.read()):
            labels = set()
            for s in fam.samples:
                labels |= set(s.labels) - {"le", "quantile"}
            out[fam.name] = (fam.type, labels, bool(fam.samples))
    return out


def main(theirs_path, ours_path):
    theirs, ours = load(theirs_path), load(ours_path)
    bad = ["missing from ours: " + n for n in REQUIRED if n not in ours]
    checked = compared = 0
    for name, (typ, labels, has) in sorted(ours.items()):
        if not name.startswith(("scheduler_", "process_")):
            continue
        checked += 1
        if name not in theirs:
            bad.append("not in kube-scheduler's /metrics: " + name)
            continue
        ttyp, tlabels, thas = theirs[name]
        if ttyp != typ:
            bad.append("%s: type %s, kube-scheduler's %s" % (name, typ, ttyp))
        if has and thas:
            compared += 1
            if labels != tlabels:
                bad.append("%s: labels %s, kube-scheduler's %s" % (name, sorted(labels), sorted(tlabels)))
        else:
            print("labels not compared (no series on %s side): %s" % ("our" if not has else "their", name))
    if bad:
        print("\n".join(bad))
        return 1
    print("%d families checked, %d with labels compared" % (checked, compared))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
