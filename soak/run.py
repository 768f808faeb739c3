#!/usr/bin/env python3
"""./dev soak [minutes]: toy-scheduler under churn for a long time, looking
for slow leaks and lost pods.

On a private lab (kube-lab --controllers, BASE nodes) with toy-scheduler:

  1. baseline: BASELINE_S s with nothing to schedule; the task count then is
     the baseline;
  2. churn for MINUTES (default 30): pods created and deleted, a Deployment
     scaled up and down, nodes deleted (their pods with them, as the pod GC
     does) and created again (soak/churn.py); toy-scheduler sampled every
     --interval s: VmRSS and CPU (/proc), every task (/debug/tasks), its
     queues and cache (/metrics);
  3. settle: the churn stops; every live pod must end bound or reported
     (PodScheduled=False) and the task count must come back to the baseline;
  4. tear-down: what the churn made is deleted; toy-scheduler's cache must
     empty again (the base nodes, no pods); then SIGTERM.

Invariants (exit 1 if one fails): RSS growth after warm-up (the first 10 %
of the churn) under 5 %; the task count back to its baseline (an HTTP/2
connection's reader, task http2/read/N, counted apart: at most one per
client); every pod
created bound or reported, none lost, none bound twice; the cache emptied;
toy-scheduler running until we stopped it, then exiting 0. Exit 2: the soak
could not run; 130: interrupted. The samples (samples.csv), the logs and
summary.json stay in the run directory.
"""
import argparse
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(HERE)
BUILD = os.environ.get("TOYSCHED_BUILD") or os.path.join(ROOT, "build")
sys.path.insert(0, HERE)
sys.path.append(os.path.dirname(HERE))
import report  # noqa: E402
from api import Client, PodWatch  # noqa: E402
from churn import KIND_LABEL, TICK, Churn  # noqa: E402
from devlib import lab  # noqa: E402
from ledger import Ledger  # noqa: E402
from probe import Toy  # noqa: E402

NAMESPACE = "soak"
SCHEDULER = "toy-scheduler"
BASELINE_S = 10.0
SETTLE_TIMEOUT = 120.0
TASKS_TIMEOUT = 60.0
# toy-scheduler's API clients, each with at most one HTTP/2 connection:
# binds and lists, events, the lease, and the delegated authn and authz.
CLIENTS = 5
CACHE_TIMEOUT = 90.0


class Interrupted(BaseException):
    pass


def progress(msg):
    print("soak: " + msg, file=sys.stderr, flush=True)


def parse(argv):
    p = argparse.ArgumentParser(prog="./dev soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("minutes", nargs="?", type=float, default=30.0, help="churn duration (default 30)")
    p.add_argument("--period", type=float, default=180.0,
                   help="s, one cycle of the deployment's scaling and of the node churn (default 180)")
    p.add_argument("--interval", type=float, default=2.0, help="s between samples (default 2)")
    p.add_argument("--nodes", type=int, default=3, help="base nodes, never deleted (default 3)")
    p.add_argument("--churn-nodes", type=int, default=3, help="nodes deleted and created again (default 3)")
    p.add_argument("--workdir", help="the run directory (default build/soak/<UTC time>)")
    p.add_argument("--record", metavar="RESULTS_MD",
                   help="write the figures as the 'Soak' section of this file (e.g. bench/RESULTS.md)")
    return p.parse_args(argv)


class Soak:
    def __init__(self, args):
        self.args = args
        self.dir = args.workdir
        self.lab = self.toy = self.watch = self.churn = self.client = None
        self.ledger = Ledger(KIND_LABEL)
        self.csv = report.CsvLog(os.path.join(self.dir, "samples.csv"))
        self.t0 = None
        self.phase = "baseline"
        self.died = None  # what we saw when toy-scheduler was gone unasked
        self.times = {}

    # -- the run ----------------------------------------------------------------
    def run(self):
        a = self.args
        self.lab = lab.Lab(os.path.join(self.dir, "lab"), ["--nodes", a.nodes, "--controllers"])
        progress("starting a lab (%d nodes, controllers) in %s" % (a.nodes, self.lab.dir))
        kubeconfig = self.lab.start(timeout=180)
        self.client = Client(self.lab.dir)
        self.toy = Toy(os.path.join(BUILD, "toy-scheduler"), kubeconfig, os.path.join(self.dir, "toy-scheduler.log"))
        self.toy.wait_ready()
        progress("toy-scheduler pid %d ready, metrics on 127.0.0.1:%d" % (self.toy.pid, self.toy.port))
        self.churn = Churn(self.client, NAMESPACE, SCHEDULER, a.nodes, a.churn_nodes, a.period)
        self.churn.setup()
        self.watch = PodWatch(Client(self.lab.dir), NAMESPACE, self.ledger.on_event)
        self.watch.start()
        self.t0 = time.monotonic()
        self.sample_for(BASELINE_S)
        base = [r["tasks"] for r in self.csv.rows]
        self.times["tasks_baseline"] = min(base) if base else None
        if len(set(base)) > 1:
            progress("the task count varied in the baseline: %s; the lowest is the baseline" % sorted(set(base)))
        self.churn_phase(a.minutes * 60)
        self.settle_phase()
        self.teardown_phase()

    def churn_phase(self, secs):
        progress("churn for %.1f min (period %g s)" % (secs / 60, self.args.period))
        self.phase, self.times["churn_start"] = "churn", time.monotonic()
        end = self.times["churn_start"] + secs
        next_tick = next_sample = next_note = time.monotonic()
        while time.monotonic() < end and self.died is None:
            now = time.monotonic()
            if now >= next_tick:
                self.churn.tick(now)
                next_tick = max(next_tick + TICK, time.monotonic())  # late: no burst to catch up
            if now >= next_sample:
                self.sample()
                next_sample = max(next_sample + self.args.interval, time.monotonic())
            if now >= next_note:
                r = self.csv.rows[-1] if self.csv.rows else {}
                progress("%4.0f s: %d pods live, RSS %s, %s tasks, %d API errors" % (
                    now - self.times["churn_start"], self.ledger.live(), report.mib(r.get("rss_kib")),
                    r.get("tasks"), self.churn.counts["api_errors"]))
                next_note += 60
            time.sleep(max(0.0, min(next_tick, next_sample) - time.monotonic()))
        self.times["churn_end"] = time.monotonic()

    def settle_phase(self):
        """The churn has stopped: every live pod bound or reported, the queue
        drained, the binds done; then the task count back to the baseline."""
        self.phase = "settle"
        t = time.monotonic()
        self.poll(SETTLE_TIMEOUT, lambda r: not self.ledger.unsettled_live() and r["pending_active"] == 0
                  and r["binds_in_flight"] == 0)
        self.times["settle_s"] = time.monotonic() - t
        progress("settled in %.0f s; waiting for the task count to come back to %s"
                 % (self.times["settle_s"], self.times["tasks_baseline"]))
        row = self.poll(TASKS_TIMEOUT, lambda r: r["tasks"] == self.times["tasks_baseline"])
        self.times["tasks_after"] = row and row["tasks"]
        # Whatever is still pending unexplained now is lost, however young:
        # the churn has stopped and the settling gave it SETTLE_TIMEOUT.
        self.ledger.mark_lost(time.monotonic(), min_age=0)

    def teardown_phase(self):
        """Delete what the churn made; toy-scheduler's cache must empty."""
        self.phase = "teardown"
        progress("deleting what the churn made")
        self.churn.teardown()
        want = self.args.nodes
        row = self.poll(CACHE_TIMEOUT, lambda r: r["cache_nodes"] == want and r["cache_pods"] == 0
                        and r["cache_assumed"] == 0)
        self.times["cache_after"] = row and {k: row[k] for k in ("cache_nodes", "cache_pods", "cache_assumed")}

    def poll(self, timeout, cond):
        """Sample every --interval s until cond(sample) holds, toy-scheduler
        is gone or timeout; returns the last sample (None if none)."""
        deadline = time.monotonic() + timeout
        last = None
        while self.died is None:
            row = self.sample()
            last = row or last
            if (row and cond(row)) or time.monotonic() >= deadline:
                break
            time.sleep(self.args.interval)
        return last

    # -- sampling -----------------------------------------------------------------
    def sample_for(self, secs):
        end = time.monotonic() + secs
        while time.monotonic() < end and self.died is None:
            self.sample()
            time.sleep(self.args.interval)

    def sample(self):
        """One row into the CSV and returned; None if toy-scheduler is gone
        (noted in self.died) or did not answer."""
        now = time.monotonic()
        if not self.toy.alive():
            self.died = self.died or "exited with status %s during the %s" % (self.toy.popen.returncode, self.phase)
            return None
        try:
            row = self.toy.sample()
        except (OSError, ValueError, KeyError) as e:
            if not self.toy.alive():
                return self.sample()
            progress("a sample failed (%s); skipped" % e)
            return None
        start = self.times.get("churn_start", self.t0 + BASELINE_S)  # baseline samples: t < 0
        row.update({"t_s": round(now - start, 1), "phase": self.phase,
                    "pods_live": self.ledger.live(), "churn_nodes": self.churn.live_nodes(),
                    "deployment_step": self.churn.step, "lost_so_far": self.ledger.mark_lost(now)})
        self.csv.add(row)
        return row

    # -- the end ----------------------------------------------------------------------
    def close(self):
        """Stop everything we started, whatever happened; never raises."""
        for step in (lambda: self.watch and self.watch.stop(), self.stop_toy,
                     lambda: self.lab and self.lab.stop(), self.csv.close):
            try:
                step()
            except Exception as e:  # keep stopping the rest
                progress("cleanup step failed: %s" % e)

    def stop_toy(self):
        if self.toy is None or "exit_code" in self.times:
            return
        was_alive = self.toy.alive()
        self.times["exit_code"] = self.toy.stop()
        self.times["stopped_by_us"] = was_alive


def checks(soak, pods, rss):
    t = soak.times
    out = []

    def check(name, ok, detail):
        out.append({"check": name, "ok": bool(ok), "detail": detail})
    ran = soak.died is None and t.get("stopped_by_us") is True
    check("toy-scheduler ran until stopped, then exited 0", ran and t.get("exit_code") == 0,
          soak.died or "SIGTERM at the end: exit %s" % t.get("exit_code"))
    growth = rss and rss.get("growth_pct")
    rss_check = "RSS growth after warm-up < %g %%" % report.RSS_GROWTH_LIMIT
    if os.environ.get("TOYSCHED_SANITIZER_REPORTS"):
        # ./dev test --sanitize: ASan keeps freed memory in its quarantine
        # (256 MB), so RSS grows with the churn, leak or not; LeakSanitizer
        # judges leaks there, at exit.
        check(rss_check, True, "not judged on an ASan build (its quarantine grows RSS): %s" % (
            "-" if growth is None else "%+.2f %%" % growth))
    else:
        check(rss_check, growth is not None and growth < report.RSS_GROWTH_LIMIT,
              "no RSS samples after the warm-up" if growth is None else "%+.2f %% (%s -> %s)" % (
                  growth, report.mib(rss["after_warmup"]), report.mib(rss["end"])))
    check("task count back to its baseline", t.get("tasks_after") == t.get("tasks_baseline"),
          "baseline %s, after the churn %s" % (t.get("tasks_baseline"), t.get("tasks_after")))
    peak_h2 = max((r.get("http2_connections", 0) for r in soak.csv.rows), default=0)
    check("at most one HTTP/2 connection per client", peak_h2 <= CLIENTS,
          "at most %d at once (%d clients: binds, events, lease, authn, authz)" % (peak_h2, CLIENTS))
    check("every pod bound or reported", not pods["lost"] and pods["created"] > 0,
          "%d created, %d lost%s" % (pods["created"], len(pods["lost"]),
                                     (": " + ", ".join(pods["lost"][:5])) if pods["lost"] else ""))
    twice = pods["moved"] + pods["logged_twice"]
    check("no pod bound twice", not twice,
          "%d binds logged for %d pods bound" % (pods["binds_logged"], pods["bound"])
          + ("; twice: " + ", ".join(twice[:5]) if twice else ""))
    cache = t.get("cache_after") or {}
    check("cache emptied after the tear-down",
          cache.get("cache_nodes") == soak.args.nodes and cache.get("cache_pods") == 0
          and cache.get("cache_assumed") == 0, "nodes %s (base %d), pods %s, assumed %s" % (
              cache.get("cache_nodes"), soak.args.nodes, cache.get("cache_pods"), cache.get("cache_assumed")))
    return out


def git_commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def setting(args, load):
    return ("%d CPUs shared with other work (load average %.1f at the start, %.1f at the end), the soak and"
            " toy-scheduler at nice %d; %d base + %d churn nodes (4 CPU, 32Gi, 110 pods each)"
            % (os.cpu_count(), load, os.getloadavg()[0], os.getpriority(os.PRIO_PROCESS, 0), args.nodes,
               args.churn_nodes))


def summarize(soak, args, argv, load, commit, started):
    rows = soak.csv.rows
    t = soak.times
    churn_s = t.get("churn_end", 0) - t.get("churn_start", 0)
    pods = soak.ledger.counts(soak.toy.log() if soak.toy else "")
    rss = report.rss_figures(rows, churn_s) if rows else None
    s = {"command": " ".join(["./dev soak"] + argv), "date": started, "commit": commit,
         "setting": setting(args, load), "churn_s": churn_s, "period_s": args.period, "interval_s": args.interval,
         "settle_s": t.get("settle_s", 0.0), "churn": soak.churn.counts if soak.churn else {}, "pods": pods,
         "rss": rss, "tasks_baseline": t.get("tasks_baseline"), "tasks_after": t.get("tasks_after"),
         "tasks_peak": max((r["tasks"] for r in rows), default=None),
         "cpu_s": rows[-1]["cpu_s"] if rows else 0.0,
         "watch_relists": soak.watch.relists if soak.watch else 0,
         "watch_reconnects": soak.watch.reconnects if soak.watch else 0,
         "csv": soak.csv.f.name}
    s["checks"] = checks(soak, pods, rss)
    return s


def main(argv):
    args = parse(argv)
    args.workdir = os.path.abspath(args.workdir or os.path.join(
        BUILD, "soak", dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")))
    os.makedirs(args.workdir, exist_ok=True)
    for b in ("toy-scheduler", "kube-lab"):
        if not os.access(os.path.join(BUILD, b), os.X_OK):
            print("soak: %s is not built: run ./dev build" % os.path.join(BUILD, b), file=sys.stderr)
            return 2

    def interrupted(sig, frame):
        raise Interrupted(signal.Signals(sig).name)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, interrupted)
    load = os.getloadavg()[0]
    commit = git_commit()  # now: the tree may be edited while a long run goes on
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC (start)")
    soak, rc, error = Soak(args), 0, None
    try:
        soak.run()
    except Interrupted as e:
        rc, error = 130, "interrupted (%s)" % e
    except (lab.LabError, RuntimeError, OSError) as e:
        rc, error = 2, "%s: %s" % (type(e).__name__, e)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        progress("stopping toy-scheduler and the lab")
        soak.close()
        # etcd's data is of no use once the lab is gone, and large after a long run; the logs stay.
        shutil.rmtree(os.path.join(args.workdir, "lab", "etcd"), ignore_errors=True)
    if error:
        progress(error)
        progress("the run directory: %s" % args.workdir)
        return rc
    s = summarize(soak, args, argv, load, commit, started)
    with open(os.path.join(args.workdir, "summary.json"), "w") as f:
        json.dump(s, f, indent=2, default=str)
    print(report.render(s))
    if args.record:
        report.write_section(args.record, report.markdown(s))
        progress("wrote the Soak section of %s" % args.record)
    return 0 if all(c["ok"] for c in s["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
