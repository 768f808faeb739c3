#!/usr/bin/env python3
"""./dev e2e: Kubernetes' own sig-scheduling end-to-end tests (Ginkgo, from
the pinned release) against toy-scheduler. See test/e2e/README.md.

  1. build the test binary BUILD/e2e.test (meson's target: go test -c in lab/);
  2. start a private lab (kube-lab --nodes N --controllers; no
     kube-scheduler) and toy-scheduler on it as default-scheduler;
  3. run e2e.test with the focus and skip regexes (default: every
     [sig-scheduling] spec but those SKIPS names, each with its reason);
  4. stop both, read Ginkgo's JSON report and write test/e2e/RESULTS.md:
     every spec, its result, time and, when failed or skipped, why. Only
     the full run (the default focus and skips) writes that committed
     record; a run with --focus or --skip writes
     BUILD/e2e/focused-RESULTS.md instead, and --smoke writes nothing.

Exit status: 0 every selected spec passed, 1 a spec (or the suite's setup)
failed, 2 the run could not happen (build, lab, toy-scheduler, no report),
130 interrupted. The run directory (logs, report) is deleted only after a
run where everything passed, unless --keep.
"""
import argparse
import datetime as dt
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("TOYSCHED_BUILD") or os.path.join(ROOT, "build")
# This checkout's devlib, whatever TOYSCHED_ROOT says, as bench/run.py does.
sys.path.append(os.path.dirname(os.path.dirname(HERE)))
from devlib import lab  # noqa: E402  (the lab launcher, shared with the drills and the benchmarks)
from devlib import marked_block  # noqa: E402  (RESULTS.md's block, shared with ./dev diff-upstream)

# What the default run leaves out, each with the reason written next to it:
# RESULTS.md quotes the reason on every spec it skips, so a skip is never
# silent. Python regexes, joined with | into Ginkgo's (RE2) --ginkgo.skip:
# keep to the syntax both share.
SKIPS = [
    (r'\[Feature:OffByDefault\]', 'off by default in v1.36.3, as on the lab'),
    (r'\[Alpha\]', 'alpha features are off on the lab'),
    (r'GPU', 'no GPUs on the lab'),
]

# --smoke: a few quick specs for ./dev test (about a minute): three of the
# Conformance predicates (resources, node selector both ways), pod overhead
# (RuntimeClass, and the lab's extended resources) and LimitRange defaults.
# Not the hostPort Conformance spec: it waits out a 5-minute timeout by
# design. Substrings of the full names.
SMOKE = [
    "validates resource limits of pods that are allowed to run",
    "validates that NodeSelector is respected if not matching",
    "validates that NodeSelector is respected if matching",
    "verify pod overhead is accounted for",
    "should create a LimitRange with defaults and ensure pod has those defaults applied",
]

DEFAULT_FOCUS = r'\[sig-scheduling\]'
DEFAULT_RESULTS = os.path.join(ROOT, "test", "e2e", "RESULTS.md")
# A run of part of the suite: its report, never the committed record.
FOCUSED_RESULTS = os.path.join(BUILD, "e2e", "focused-RESULTS.md")
BEGIN, END = "<!-- e2e:begin -->", "<!-- e2e:end -->"
TITLE = "# Kubernetes' sig-scheduling e2e tests against toy-scheduler"

# The lines of e2e.test's output worth showing as it runs: a spec's end
# ("• [12.3 seconds]", "• [FAILED] ..."), failures and Ginkgo's summary. The
# rest (every STEP, every event) is in e2e.log.
ECHO = re.compile(r'^(•|\s*\[FAILED\]|\s+\[(FAIL|INTERRUPTED|TIMEDOUT|PANICKED|ABORTED)\] |Ran \d+ of|SUCCESS!|FAIL!|'
                  r'Summarizing)')
# With --ginkgo.v a spec's end says only "• [12.3 seconds]": its name is the
# line after the 30-dash delimiter Ginkgo writes when it starts the spec, so
# that line is shown too (but not the "SSS" of skipped specs, nor Ginkgo's
# own ReportAfterSuite nodes, which also follow one).
DELIMITER = re.compile(r'^-{30}$')
# Ginkgo states, folded into our three results.
FAILED_STATES = {"failed", "panicked", "timedout", "interrupted", "aborted"}
SKIPPED_STATES = {"skipped", "pending"}

TOY_SERVE_TIMEOUT = 10.0
E2E_STOP_GRACE = 30.0  # Ginkgo's interrupt still writes the JSON report: give it the time


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP: stop what we started, exit 130."""


class RunError(Exception):
    """The run could not happen (exit 2)."""


def progress(msg):
    print("==> " + msg, file=sys.stderr, flush=True)


def literal(text):
    """A regex matching `text`, for Python's re and Go's RE2 alike; only the
    metacharacters escaped (re.escape also escapes spaces: legal, unreadable)."""
    return re.sub(r'([\\.^$|?*+()\[\]{}])', r'\\\1', text)


def parse(argv):
    p = argparse.ArgumentParser(prog="./dev e2e", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--focus", metavar="REGEX", help="run the specs whose full name matches (default %s)"
                     % DEFAULT_FOCUS)
    sel.add_argument("--smoke", action="store_true",
                     help="only the %d quick specs of SMOKE in run.py (about a minute); writes no RESULTS.md "
                     "unless --results is given" % len(SMOKE))
    p.add_argument("--skip", metavar="REGEX",
                   help="leave out the specs whose full name matches (default: the SKIPS of run.py, "
                   "each with its reason; '' skips nothing)")
    p.add_argument("--nodes", type=int, metavar="N", default=3, help="the lab's node count (default 3)")
    p.add_argument("--keep", metavar="DIR",
                   help="run in DIR (logs, the lab, the report) and keep it; default: a temp dir, deleted "
                   "when everything passed")
    p.add_argument("--no-build", action="store_true",
                   help="use BUILD/e2e.test as it is (the integration test e2e-smoke: meson built it)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--results", metavar="PATH",
                     help="write the report here (default: test/e2e/RESULTS.md for the full run, "
                     "BUILD/e2e/focused-RESULTS.md for a run with --focus or --skip)")
    out.add_argument("--no-results", action="store_true", help="write no report file")
    args = p.parse_args(argv)
    if args.nodes < 1:
        p.error("--nodes must be at least 1")
    if args.smoke:
        args.focus = "|".join(literal(s) for s in SMOKE)
    elif args.focus is None:
        args.focus = DEFAULT_FOCUS
    args.custom_skip = args.skip is not None
    for opt in ("focus", "skip"):
        try:
            re.compile(getattr(args, opt) or "")
        except re.error as e:
            p.error("--%s: not a regex: %s" % (opt, e))
    if not args.custom_skip:
        args.skip = "|".join(rx for rx, _ in SKIPS)
    args.results = results_path(args)
    return args


def results_path(args):
    """Where the report goes (None: nowhere). test/e2e/RESULTS.md is the
    record of the full run, committed: only a run of every spec the default
    selects may replace it. A focused run (its own --focus or --skip) would
    rewrite it with most specs "not in the focus", so it writes
    FOCUSED_RESULTS; a smoke run, what ./dev test does, writes nothing."""
    if args.no_results or (args.smoke and args.results is None):
        return None
    if args.results is not None:
        return args.results
    if args.focus == DEFAULT_FOCUS and not args.custom_skip:
        return DEFAULT_RESULTS
    return FOCUSED_RESULTS


def build_e2e(binary):
    """meson's e2e.test target (go test -c with the lab's version stamp), so a
    run of this script on its own builds what ./dev build does; after ./dev
    build, Go's cache makes it a no-op of a second or two."""
    progress("building %s (meson target e2e.test; a cold build takes minutes)" % binary)
    t0 = time.monotonic()
    rc = subprocess.call(["meson", "compile", "-C", BUILD, "e2e.test"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL)
    secs = time.monotonic() - t0
    if rc != 0:
        raise RunError("building e2e.test failed (meson compile exit %d, %.0f s)" % (rc, secs))
    progress("built e2e.test in %.1f s" % secs)
    return secs


def prepare_workdir(args):
    """The run directory and whether it is ours to delete."""
    if not args.keep:
        return tempfile.mkdtemp(prefix="toysched-e2e."), True
    work = os.path.abspath(args.keep)
    os.makedirs(work, exist_ok=True)
    old = os.path.join(work, "lab")
    if os.path.exists(old):
        # A lab dir keeps its etcd: a rerun on it would meet the last run's
        # namespaces and pods. Remove it, but only when it is one (kube-lab's
        # lock and kubeconfig in it), never a directory of someone's.
        if not (os.path.isfile(os.path.join(old, "lock")) and os.path.isfile(os.path.join(old, "kubeconfig"))):
            raise RunError("%s exists and is not a kube-lab directory; pick another --keep DIR" % old)
        progress("removing the previous run's lab %s" % old)
        shutil.rmtree(old)
        try:
            os.remove(old + ".out")
        except FileNotFoundError:
            pass
    return work, False


def start_toy(kubeconfig, work):
    log_path = os.path.join(work, "toy-scheduler.log")
    progress("starting toy-scheduler as default-scheduler (log: %s)" % log_path)
    with open(log_path, "wb") as log:
        p = subprocess.Popen([os.path.join(BUILD, "toy-scheduler"), "--kubeconfig", kubeconfig,
                              "--scheduler-name=default-scheduler", "-v=2", "--secure-port=0",
                              "--metrics-bind-address=127.0.0.1:0"],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             preexec_fn=lab.child_setup(signal.SIGTERM))
    # Its HTTP port in the log means it has started serving; without it the
    # e2e specs would only time out, one after another, minutes each.
    deadline = time.monotonic() + TOY_SERVE_TIMEOUT
    while True:
        with open(log_path, errors="replace") as f:
            if lab.toy_http_port(f.read()) is not None:
                return p
        if p.poll() is not None:
            raise RunError("toy-scheduler exited (status %d) at start; the end of %s:\n%s"
                           % (p.returncode, log_path, lab.tail(log_path)))
        if time.monotonic() > deadline:
            stop_process(p, signal.SIGTERM, 10)
            raise RunError("toy-scheduler did not serve within %g s; the end of %s:\n%s"
                           % (TOY_SERVE_TIMEOUT, log_path, lab.tail(log_path)))
        time.sleep(0.1)


def stop_process(p, sig, grace):
    """`sig`, then SIGKILL after `grace` seconds; the exit status."""
    if p is None:
        return None
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
    return p.wait()


class E2E:
    """e2e.test, its output copied to e2e.log by a thread (so a full pipe
    never stalls it, even while we are stopping it) and the lines of ECHO
    shown on our stdout."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, preexec_fn=lab.child_setup(signal.SIGTERM))
        self.copier = threading.Thread(target=self._copy, daemon=True)
        self.copier.start()

    def _copy(self):
        with open(self.log_path, "wb") as log:
            after_delimiter = False
            for raw in self.p.stdout:
                log.write(raw)
                log.flush()
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if (after_delimiter and line.strip("S") and not line.startswith("[Report")) or ECHO.match(line):
                    print(line, flush=True)
                after_delimiter = bool(DELIMITER.match(line))

    def wait(self):
        rc = self.p.wait()
        self.copier.join(10)
        return rc

    def stop(self):
        # SIGINT is Ginkgo's interrupt: it ends the running spec and still
        # writes the report; after a Ctrl-C (which it got too) it is the
        # second one, which skips the cleanup a thrown-away lab does not need.
        rc = stop_process(self.p, signal.SIGINT, E2E_STOP_GRACE)
        self.copier.join(10)
        return rc


def e2e_argv(binary, kubeconfig, work, args):
    # --num-nodes: the cluster size some specs check before they run
    # (SkipUnlessNodeCountIsAtLeast); unset, it is -1 and they skip.
    return [binary, "--kubeconfig", kubeconfig, "--provider=local", "--num-nodes=%d" % args.nodes,
            "--ginkgo.focus=" + args.focus, "--ginkgo.skip=" + args.skip,
            "--ginkgo.v", "--ginkgo.no-color", "--ginkgo.timeout=3h",
            "--ginkgo.json-report=" + os.path.join(work, "e2e-report.json"), "--report-dir=" + work]


# -- the report ------------------------------------------------------------

def one_line(text, limit=160):
    line = (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
    return line if len(line) <= limit else line[:limit - 1] + "…"


def failure_reason(spec):
    f = spec.get("Failure") or {}
    loc = f.get("Location") or {}
    reason = one_line(f.get("Message")) or spec.get("State", "")
    if loc.get("FileName"):
        reason += " (%s:%s)" % (os.path.basename(loc["FileName"]), loc.get("LineNumber", "?"))
    return reason


def skip_reason(name, suite, spec, args, setup_failed):
    # What Ginkgo matches focus and skip against: the suite's description,
    # a space, the spec's full name.
    text = suite.get("SuiteDescription", "") + " " + name
    if not re.search(args.focus, text):
        return "not in the focus"
    if args.skip and re.search(args.skip, text):
        if args.custom_skip:
            return "matched --skip"
        for rx, why in SKIPS:
            if re.search(rx, text):
                return why
    if spec.get("State") == "pending":
        return "marked pending upstream"
    # Skipped from inside the spec (e2eskipper: a provider, a node count...):
    # Ginkgo keeps the skipper's words as the failure message.
    said = one_line((spec.get("Failure") or {}).get("Message"))
    if said:
        return said
    return "not run: the suite's setup failed" if setup_failed else "skipped by Ginkgo"


def read_report(path, args):
    """Rows (name, result, seconds, why) from Ginkgo's JSON report: every It
    spec, and the suite-level nodes (BeforeSuite...) that failed, since a
    failed setup fails the run though it is not a test."""
    with open(path) as f:
        suites = json.load(f)
    specs = [(suite, s) for suite in suites for s in suite.get("SpecReports") or []]
    rows = []
    for _, s in specs:
        if s.get("LeafNodeType") != "It" and s.get("State") in FAILED_STATES:
            name = ("[%s] %s" % (s["LeafNodeType"], s.get("LeafNodeText") or "")).strip()
            rows.append((name, s["State"], s.get("RunTime", 0) / 1e9, failure_reason(s)))
    setup_failed = bool(rows)
    for suite, s in specs:
        if s.get("LeafNodeType") != "It":
            continue
        name = " ".join((s.get("ContainerHierarchyTexts") or []) + [s.get("LeafNodeText") or ""])
        state = s.get("State", "?")
        if state == "passed":
            why = ""
        elif state in SKIPPED_STATES:
            why = skip_reason(name, suite, s, args, setup_failed)
        else:
            why = failure_reason(s)
        rows.append((name, state, s.get("RunTime", 0) / 1e9, why))
    rows.sort(key=lambda r: r[0])
    return rows


def count(rows):
    passed = sum(1 for r in rows if r[1] == "passed")
    skipped = sum(1 for r in rows if r[1] in SKIPPED_STATES)
    return passed, len(rows) - passed - skipped, skipped  # failed: any other state, an unknown one too


def git_state():
    def git(*a):
        return subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True).stdout.strip()
    try:
        commit = git("rev-parse", "--short", "HEAD") or "unknown"
        return commit + (" + uncommitted changes" if git("status", "--porcelain") else "")
    except OSError:
        return "unknown (no git)"


def cell(text):
    return str(text).replace("\n", " ").replace("|", "\\|")


def render(rows, info):
    passed, failed, skipped = count(rows)
    out = [
        "- Command: `%s`" % info["command"],
        "- Commit: %s" % info["commit"],
        "- Date: %s" % info["date"],
        "- Build of e2e.test: %.0f s; run of e2e.test: %.0f s" % (info["build_s"], info["run_s"]),
        "- Lab: %d nodes in as many zones (kube-lab --zones --controllers), toy-scheduler as default-scheduler"
        % info["nodes"],
        "- Focus: `%s`" % info["focus"],
        "",
        "**%d passed, %d failed, %d skipped**" % (passed, failed, skipped),
        "",
        "| Test | Result | Time (s) | Why |",
        "|---|---|---:|---|",
    ]
    for name, state, secs, why in rows:
        out.append("| %s | %s | %.1f | %s |" % (cell(name), state, secs, cell(why)))
    return "\n".join(out) + "\n"


def write_results(path, body):
    """Replace what lies between the markers; prose around them stays."""
    marked_block.write(path, TITLE, BEGIN, END, body)


# -- the run -----------------------------------------------------------------

def run(args, work, state):
    """Build, start, run; returns the rows. `state` holds what must be stopped."""
    binary = os.path.join(BUILD, "e2e.test")
    state["build_s"] = 0.0 if args.no_build else build_e2e(binary)
    lab_dir = os.path.join(work, "lab")
    # Each node in a zone of its own (topology.kubernetes.io/zone), so the
    # Multi-AZ specs run: they skip below two zones, and spread 5 pods per
    # zone, which one node per zone lets node spreading balance.
    flags = ["--nodes", str(args.nodes), "--zones", str(args.nodes), "--controllers"]
    progress("starting a lab (%s) in %s" % (" ".join(flags), lab_dir))
    state["lab"] = lab.Lab(lab_dir, flags, binary=os.path.join(BUILD, "kube-lab"))
    try:
        kubeconfig = state["lab"].start(timeout=180)
    except lab.LabError as e:
        raise RunError(str(e))
    state["toy"] = start_toy(kubeconfig, work)
    log_path = os.path.join(work, "e2e.log")
    progress("running e2e.test (log: %s)" % log_path)
    t0 = time.monotonic()
    state["e2e"] = E2E(e2e_argv(binary, kubeconfig, work, args), log_path)
    rc = state["e2e"].wait()
    state["run_s"] = time.monotonic() - t0
    progress("e2e.test exited with status %d after %.0f s" % (rc, state["run_s"]))
    if state["toy"].poll() is not None:
        progress("warning: toy-scheduler exited during the run (status %d); see %s"
                 % (state["toy"].returncode, os.path.join(work, "toy-scheduler.log")))
    report = os.path.join(work, "e2e-report.json")
    if not os.path.exists(report):
        raise RunError("e2e.test (exit %d) wrote no report; the end of %s:\n%s" % (rc, log_path, lab.tail(log_path)))
    rows = read_report(report, args)
    if rc != 0 and count(rows)[1] == 0:
        # A non-zero exit with no spec failed: Ginkgo refused the run (a bad
        # regex, a flag) or the framework did; not a pass.
        rows.append(("[e2e.test]", "failed", state["run_s"], "exit status %d with no failed spec; see e2e.log" % rc))
        rows.sort(key=lambda r: r[0])
    return rows


def stop_all(state):
    """Newest first: e2e.test, toy-scheduler, the lab. Never raises."""
    for what, stop in (("e2e", lambda x: x.stop()),
                       ("toy", lambda x: stop_process(x, signal.SIGTERM, 10)),
                       ("lab", lambda x: x.stop())):
        if state.get(what) is not None:
            try:
                stop(state[what])
            except Exception as e:  # keep stopping the rest
                progress("stopping %s failed: %s" % (what, e))


def main(argv):
    args = parse(argv)

    def interrupted(sig, frame):
        raise Interrupted(signal.Signals(sig).name)

    def still_cleaning(sig, frame):
        progress("%s: still stopping, a moment" % signal.Signals(sig).name)

    # Set explicitly: a driver started in the background by a script inherits
    # SIGINT ignored, and Python would then never see it.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupted)

    state, rows, error, rc = {}, None, None, 0
    work, own = None, False
    if args.results == FOCUSED_RESULTS:
        progress("a focused run: its report goes to %s; %s stays as it is" % (FOCUSED_RESULTS, DEFAULT_RESULTS))
    # The tree as it is when the binaries are built: a commit made while the
    # suite runs (it takes half an hour) must not be credited with the run.
    commit = git_state()
    try:
        work, own = prepare_workdir(args)
        rows = run(args, work, state)
    except Interrupted as e:
        error, rc = "interrupted (%s)" % e, 130
    except RunError as e:
        error, rc = str(e), 2
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, still_cleaning)
        if state.get("e2e") and state["e2e"].p.poll() is None:
            progress("stopping e2e.test, toy-scheduler and the lab")
        elif state.get("lab"):
            progress("stopping toy-scheduler and the lab")
        stop_all(state)

    if error:
        print("e2e: %s" % error, file=sys.stderr)
    report = "not written"
    if rows is not None:
        passed, failed, skipped = count(rows)
        rc = 1 if failed else 0
        if args.results:
            write_results(args.results, render(rows, {
                "command": shlex.join(["./dev", "e2e"] + argv), "commit": commit,
                "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "build_s": state["build_s"], "run_s": state["run_s"], "nodes": args.nodes,
                "focus": args.focus}))
            report = args.results
        elif rc != 0 or not own:
            report = os.path.join(work, "e2e-report.json")
    if work:
        if rc == 0 and own:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("e2e: logs in %s (e2e.log, toy-scheduler.log, lab.out, lab/apiserver.log)" % work, file=sys.stderr)
    if rows is not None:
        print("e2e: %d passed, %d failed, %d skipped (report: %s)" % (passed, failed, skipped, report))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
