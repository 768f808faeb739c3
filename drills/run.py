#!/usr/bin/env python3
"""./dev drill NAME [options]: the drills of seeds 000 and 002 as commands.

Each drill sets the scene (a private lab, or the cluster of --kubeconfig),
does the steps, prints the numbers the drill asks for as small tables (or
one JSON object with --json) and checks every "Expect" it can. Exit status:
0 all invariants held, 1 an invariant broke, 2 the drill could not run
(what it needs is missing, or a step timed out), 130 interrupted.
Whatever it started or created is stopped and deleted on every way out,
Ctrl-C included.
"""
import argparse
import importlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kit  # noqa: E402

DRILLS = {
    "race": "race",
    "recovery": "recovery",
    "handover": "handover",
    "double-decision": "double_decision",
}


class Result:
    """What a drill found: numbers (data), checked invariants, text sections."""

    def __init__(self):
        self.data = {}
        self.checks = []
        self.sections = []

    def check(self, name, ok, detail=""):
        self.checks.append({"check": name, "ok": bool(ok), "detail": detail})
        if not ok:
            kit.progress("INVARIANT BROKEN: %s: %s" % (name, detail))

    def section(self, title, text):
        self.sections.append((title, text))

    @property
    def ok(self):
        return all(c["ok"] for c in self.checks)


def parse(argv):
    p = argparse.ArgumentParser(prog="./dev drill", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="drill", metavar="NAME", required=True)
    mods = {}
    for name, mod in DRILLS.items():
        m = importlib.import_module(mod)
        mods[name] = m
        sp = sub.add_parser(name, help=m.__doc__.splitlines()[0], description=m.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        sp.add_argument("--kubeconfig", help="run on this cluster (default: a private lab, started and stopped)")
        sp.add_argument("--namespace", default="sched-lab",
                        help="the drill's namespace; it creates and deletes only objects in it (default sched-lab)")
        sp.add_argument("--json", action="store_true", help="print the results as one JSON object")
        sp.add_argument("--nodes", type=int, default=3, help="lab only: number of nodes (default 3)")
        sp.add_argument("--workdir", help="where logs go (default: a temp dir, deleted unless the drill fails)")
        sp.add_argument("--keep", action="store_true", help="keep the workdir (logs) even on success")
        sp.add_argument("--ui", action="store_true",
                        help="print (and, with a display, open) each toy-scheduler's live page /ui, and pace the "
                        "burst (about 4 s) so the eye can follow it")
        sp.add_argument("--ui-screenshot", metavar="PNG",
                        help="keep the first toy-scheduler's page open in headless Chromium and save a screenshot "
                        "of it at the end (implies --ui's pacing)")
        m.add_args(sp)
    args = p.parse_args(argv)
    return args, mods[args.drill]


def render(name, target, res, secs):
    out = ["", "drill %s on %s, namespace %s: %.1f s" % (
        name, "a private lab" if target.on_lab else "the cluster of " + target.kubeconfig, target.ns, secs)]
    for title, text in res.sections:
        out += ["", title, text]
    out += ["", kit.table(["invariant", "holds", "detail"],
                          [[c["check"], "yes" if c["ok"] else "NO", c["detail"]] for c in res.checks])]
    out += ["", "ok: every invariant held" if res.ok else "FAILED: an invariant broke"]
    return "\n".join(out)


def main(argv):
    args, mod = parse(argv)
    name = args.drill
    own_workdir = not args.workdir
    if own_workdir:
        args.workdir = tempfile.mkdtemp(prefix="toysched-drill-%s." % name)

    def interrupted(sig, frame):
        raise kit.Interrupted(signal.Signals(sig).name)

    def still_cleaning(sig, frame):
        kit.progress("%s: still cleaning up, a moment" % signal.Signals(sig).name)

    # Set explicitly: a driver started in the background by a script inherits
    # SIGINT ignored, and Python would then never see it.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupted)

    started = time.monotonic()
    target = None
    res = Result()
    rc = 0
    error = None
    try:
        target = kit.Target(args, name)
        if target.on_lab:
            target.start_lab("--nodes", str(args.nodes), *mod.LAB_FLAGS)
        target.setup_namespace()
        mod.run(target, args, res)
        rc = 0 if res.ok else 1
    except kit.Interrupted as e:
        error, rc = "interrupted (%s)" % e, 130
    except kit.DrillError as e:
        error, rc = str(e), 2
    except Exception as e:  # a bug, or the environment (e.g. a binary being relinked)
        traceback.print_exc()
        error, rc = "%s: %s" % (type(e).__name__, e), 2
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, still_cleaning)
        if target:
            kit.progress("cleaning up")
            target.close()
    secs = time.monotonic() - started

    if error:
        print("drill %s: %s" % (name, error), file=sys.stderr)
    if args.json:
        obj = {"drill": name, "target": "lab" if target is None or target.on_lab else "cluster",
               "namespace": args.namespace, "ok": rc == 0, "exit_code": rc, "error": error,
               "duration_s": round(secs, 1)}
        obj.update(res.data)
        obj["checks"] = res.checks
        print(json.dumps(obj, indent=2, default=str))
    elif target and not error:
        print(render(name, target, res, secs))
    if rc == 0 and own_workdir and not args.keep:
        shutil.rmtree(args.workdir, ignore_errors=True)
    else:
        print("drill %s: logs in %s" % (name, args.workdir), file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
