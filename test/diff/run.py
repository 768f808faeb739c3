#!/usr/bin/env python3
"""./dev diff-upstream: ask kube-scheduler v1.36.3 and toy-scheduler the same
questions on random clusters, and compare the answers node by node.

For each cluster (generate.py, from --seed and the cluster's index) on a
private lab: kube-scheduler's framework answers through `kube-lab judge`,
toy-scheduler (--dry-run, the same --config) through /debug/explain; see
ask.py for how both see the same state, compare.py for what is compared.
Differences listed in allowlist.json (each naming its row of
docs/compat.md, or the item of issue 47 it is) are explained; any other
fails the run (exit 1). The summary goes to stdout, every difference, with
the pod and node of the first of each kind, to --out.
"""
import argparse
import collections
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("TOYSCHED_BUILD") or os.path.join(ROOT, "build")
sys.path.insert(0, ROOT)
from devlib import lab  # noqa: E402
import ask  # noqa: E402
import compare  # noqa: E402
import generate  # noqa: E402
import kube  # noqa: E402
import report  # noqa: E402
import volumes  # noqa: E402

CONFIG = os.path.join(HERE, "profiles.yaml")
ALLOWLIST = os.path.join(HERE, "allowlist.json")


class Interrupted(BaseException):
    pass


def progress(msg):
    print("==> " + msg, file=sys.stderr, flush=True)


def parse(argv):
    ap = argparse.ArgumentParser(prog="./dev diff-upstream", description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=50, help="random clusters (default 50)")
    ap.add_argument("--pods", type=int, default=50, help="pending pods per cluster (default 50)")
    ap.add_argument("--seed", default=None, help="the run's seed (default: a new one, printed)")
    ap.add_argument("--ci", action="store_true", help="the integration test's size: 4 clusters of 75 pending pods")
    ap.add_argument("--cluster-file", action="append", default=[], metavar="JSON",
                    help="judge this cluster (generate.py's shape; test/diff/repro/ has some) instead of random ones; "
                         "repeatable")
    ap.add_argument("--chain", action="store_true",
                    help="each pod sees the ones before it where toy-scheduler put them (ask.py); kube-lab judge once "
                         "per pod, for small runs")
    ap.add_argument("--repro", action="store_true",
                    help="judge every cluster of test/diff/repro/ (one reproduction per allowlist entry); an entry "
                         "that explains nothing fails too: its difference is gone, and so must the entry be")
    ap.add_argument("--out", default=None, help="the differences as JSON (default: %s, or repro.json with --repro)"
                    % os.path.join(BUILD, "diff-upstream", "differences.json"))
    ap.add_argument("--record", metavar="RESULTS_MD", default=None,
                    help="write the summary into this file (test/diff/RESULTS.md), between its markers")
    ap.add_argument("--allowlist", default=ALLOWLIST, help="the explained differences (default: %(default)s)")
    ap.add_argument("--config", default=CONFIG, help="the KubeSchedulerConfiguration both run (default: %(default)s)")
    ap.add_argument("--keep", metavar="DIR", default=None, help="work in DIR and keep it (lab, logs, answers)")
    a = ap.parse_args(argv)
    if a.ci:
        a.clusters, a.pods = 4, 75
    if a.repro:
        a.cluster_file = sorted(glob.glob(os.path.join(HERE, "repro", "*.json")))
    if a.cluster_file:
        a.clusters, a.seed = len(a.cluster_file), "(none: cluster files)"
    if a.out is None:
        a.out = os.path.join(BUILD, "diff-upstream", "repro.json" if a.repro else "differences.json")
    if a.seed is None:
        a.seed = str(random.SystemRandom().randrange(10**6))
    return a


def profile_names(config):
    with open(config) as f:
        names = re.findall(r"^\s*-?\s*schedulerName:\s*(\S+)", f.read(), re.M)
    if not names:
        raise ask.AskError("%s names no profile (schedulerName)" % config)
    return names


def start_toy(kubeconfig, config, work):
    log_path = os.path.join(work, "toy-scheduler.log")
    log = open(log_path, "wb")
    p = subprocess.Popen([os.path.join(BUILD, "toy-scheduler"), "--kubeconfig", kubeconfig, "--config", config,
                          "--dry-run", "-v=2", "--secure-port=0", "--metrics-bind-address=127.0.0.1:0"],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         preexec_fn=lab.child_setup(signal.SIGTERM))
    log.close()

    def port():
        if p.poll() is not None:
            raise ask.AskError("toy-scheduler exited (%d); the end of %s:\n%s" % (p.returncode, log_path,
                                                                                  lab.tail(log_path)))
        with open(log_path, errors="replace") as f:
            return lab.toy_http_port(f.read())

    toy = ask.Toy(ask.wait_for(30, "toy-scheduler to serve", port, 0.1))

    def ready():
        try:
            with ask.urllib.request.urlopen(toy.base + "/readyz", timeout=5) as r:
                return r.read().decode().strip() == "ok"
        except OSError:
            return port() is None  # re-raises if it died
    ask.wait_for(60, "toy-scheduler /readyz", ready, 0.1)
    return p, toy


def judge_cluster(index, args, env, totals):
    """One cluster: its differences (each with its pod and node) and counts."""
    if args.cluster_file:
        objs = generate.from_file(args.cluster_file[index], env["profiles"][0])
    else:
        objs = generate.cluster(args.seed, index, env["profiles"], args.pods)
    api, toy = env["api"], env["toy"]
    pending = ask.apply(api, objs)
    ask.wait_synced(toy, objs, env["base"], pending)
    kube_lab, out_path = os.path.join(BUILD, "kube-lab"), os.path.join(env["work"], "upstream-%d.json" % index)
    upstream = {} if args.chain else ask.ask_upstream(kube_lab, env["kubeconfig"], env["config"], out_path)[0]
    decided = []  # (NS/NAME, node) in --chain
    diffs = []
    by_name = {p["metadata"]["name"]: p for p in objs["pending"]}
    bound_by_node = {}
    for p in objs["bound"]:
        bound_by_node.setdefault(p["spec"]["nodeName"], []).append(p)
    for pod in pending:
        uid, key = pod["metadata"]["uid"], "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
        if args.chain:
            upstream = ask.ask_upstream(kube_lab, env["kubeconfig"], env["config"], out_path, decided, key)[0]
        if uid not in upstream:
            raise ask.AskError("kube-lab judge did not judge %s" % key)
        explain = ask.ask_toy(api, toy, pod, keep=args.chain)
        where = {"cluster": index, "pod": key}
        found = compare.diff_pod(where, upstream[uid], explain, by_name[pod["metadata"]["name"]], bound_by_node,
                                 totals)
        if explain.get("node") and args.chain:  # it counts there from now on, its tags too
            decided.append((key, explain["node"]))
            bound_by_node.setdefault(explain["node"], []).append(by_name[pod["metadata"]["name"]])
        for d in found:
            d["_pod"] = by_name[pod["metadata"]["name"]]
            d["_nodes"] = objs["nodes"]
        diffs += found
    totals["clusters"] += 1
    totals["nodes"] += len(objs["nodes"])
    ask.clean(api, toy)
    return diffs


def run(args, work, state):
    lab_dir = os.path.join(work, "lab")
    progress("starting a lab (--nodes 0) in %s" % lab_dir)
    state["lab"] = lab.Lab(lab_dir, ["--nodes", "0", "--no-kubelet"], binary=os.path.join(BUILD, "kube-lab"))
    try:
        kubeconfig = state["lab"].start(timeout=180)
    except lab.LabError as e:
        raise ask.AskError(str(e))
    api = kube.Client(lab_dir)
    for name, value in generate.PRIORITY_CLASSES.items():
        api.ensure({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                    "value": value})
    for ns in generate.NAMESPACES:
        api.ensure({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for obj in [generate.RUNTIME_CLASS] + volumes.STORAGE_CLASSES:
        api.ensure(obj)
    # toy-scheduler takes its connection from the file (--kubeconfig beside
    # --config is ignored, as upstream's): a copy names the lab's.
    config = os.path.join(work, "config.yaml")
    with open(args.config) as f, open(config, "w") as out:
        out.write(f.read() + "clientConnection: {kubeconfig: %s}\n" % json.dumps(kubeconfig))
    state["toy"], toy = start_toy(kubeconfig, config, work)
    env = {"api": api, "toy": toy, "kubeconfig": kubeconfig, "work": work, "base": ask.baseline(toy),
           "profiles": profile_names(args.config), "config": config}
    totals = collections.Counter()
    diffs = []
    t0 = time.monotonic()
    for i in range(args.clusters):
        found = judge_cluster(i, args, env, totals)
        diffs += found
        progress("cluster %d/%d: %d differences (%.0f s so far)"
                 % (i + 1, args.clusters, len(found), time.monotonic() - t0))
    totals["seconds"] = time.monotonic() - t0
    return diffs, totals


def stop(state):
    """toy-scheduler, then the lab; never raises (an interrupted run too)."""
    toy, the_lab = state.get("toy"), state.get("lab")
    if toy is not None and toy.poll() is None:
        toy.send_signal(signal.SIGTERM)
        try:
            toy.wait(10)
        except subprocess.TimeoutExpired:
            toy.kill()
    if the_lab is not None:
        the_lab.stop()


def finish(args, commit, diffs, totals, work):
    """The verdict: summary, details, RESULTS.md; exit 1 if unexplained."""
    with open(args.allowlist) as f:
        allowlist = json.load(f)["entries"]
    used = compare.explain(allowlist, diffs)
    summary = report.summary(args, commit, totals, diffs, allowlist, used)
    report.write_details(args.out, args, commit, totals, diffs, used)
    print(summary["text"])
    print("details: %s" % args.out)
    if args.record:
        report.record(args.record, summary["markdown"])
    stale = [e["id"] for e in allowlist if used[e["id"]] == 0]
    if args.repro and stale:
        print("allowlist entries whose reproduction no longer differs: %s; remove them (and keep the reproduction, "
              "now a regression test)" % ", ".join(stale))
    if summary["unexplained"] or (args.repro and stale):
        print("kept for a look: %s (the lab's objects are gone; the answers of both sides are there)" % work)
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv):
    args = parse(argv)

    def interrupted(sig, frame):
        raise Interrupted(signal.Signals(sig).name)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupted)
    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="toysched-diff.")
    if args.keep and os.path.exists(os.path.join(work, "lab")):
        raise SystemExit("%s already holds a lab: pick another --keep DIR" % work)
    os.makedirs(work, exist_ok=True)
    # The tree as the binaries were built from it: a commit made during a
    # long run must not be credited with it.
    commit = report.git_state(ROOT)
    state = {}
    progress("seed %s, %d clusters of %d pending pods, work dir %s" % (args.seed, args.clusters, args.pods, work))
    try:
        diffs, totals = run(args, work, state)
    except Interrupted as e:
        progress("interrupted (%s)" % e)
        return 130
    except (ask.AskError, kube.ApiError) as e:
        progress("error: %s" % e)
        progress("the toy-scheduler log and the lab are in %s" % work)
        return 2
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, lambda sig, frame: progress("still stopping, a moment"))
        stop(state)
    return finish(args, commit, diffs, totals, work)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
