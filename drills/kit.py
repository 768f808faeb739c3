"""What every drill needs: kubectl, the lab, our processes, watches, cleanup.

A drill runs against a Target: a private lab it starts (no --kubeconfig) or
the user's cluster (--kubeconfig). Everything it starts is registered here
and undone in reverse order by Target.close(), which run.py calls on every
way out (success, failure, SIGINT/SIGTERM/SIGHUP). Child processes run in
their own session, so that a Ctrl-C reaches only the driver, which then stops
them in order (schedulers, then the objects, then the lab); and each carries
PR_SET_PDEATHSIG, so that even a SIGKILLed driver leaves none behind.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from fractions import Fraction

# The lab launcher, shared with the benchmarks, is devlib/lab.py.
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from devlib import lab  # noqa: E402
from resources import pod_requests, quantity  # noqa: E402  (shared with the tests)
import live_page  # noqa: E402

PAUSE_IMAGE = "registry.k8s.io/pause:3.9"
LABEL = "toysched-drill"  # every object a drill creates carries it


class DrillError(Exception):
    """The drill could not run (a missing precondition, a timeout): exit 2."""


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP: clean up and exit 130."""


def progress(msg):
    print("==> " + msg, file=sys.stderr, flush=True)


def now():
    return time.monotonic()


def wait_until(timeout, what, cond, interval=0.2):
    """Poll cond() until it returns something truthy; DrillError after timeout."""
    deadline = now() + timeout
    while True:
        v = cond()
        if v:
            return v
        if now() >= deadline:
            raise DrillError("timed out after %gs waiting for %s" % (timeout, what))
        time.sleep(interval)


class Proc:
    """A long-running child (a scheduler) with its log file. Its own session,
    the signals we send it at their defaults (the recovery drill needs
    SIGQUIT to work), SIGKILL when the driver dies."""

    def __init__(self, name, argv, log_path):
        self.name, self.log_path = name, log_path
        self._log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, start_new_session=True,
                                      preexec_fn=lab.child_setup(signal.SIGKILL))
        self.pid = self.popen.pid
        self.started = now()
        self.exit_code = None

    def alive(self):
        return self.popen.poll() is None

    def send(self, sig):
        if self.alive():
            os.kill(self.pid, sig)

    def wait(self, timeout):
        try:
            self.exit_code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.exit_code

    def stop(self, sig=signal.SIGTERM, grace=10.0):
        """Ask (sig), then cut (SIGKILL) after grace seconds. Returns the exit code."""
        if self.alive():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
            if self.wait(grace) is None:
                self.popen.kill()
                self.wait(5)
        else:
            self.exit_code = self.popen.returncode
        self._log.close()
        return self.exit_code

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


class Toy(Proc):
    """A toy-scheduler; its metrics port is read from its own log (-v>=1)."""

    def port(self, timeout=10):
        def find():
            port = lab.toy_http_port(self.log())
            if not self.alive():
                raise DrillError("%s exited (%s) at start; its log: %s"
                                 % (self.name, self.popen.returncode, self.log_path))
            return port
        return wait_until(timeout, self.name + " serving HTTP", find)

    def get(self, path, timeout=2):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port(), path), timeout=timeout) as r:
            return r.read().decode()

    def wait_ready(self, timeout=30):
        def ready():
            try:
                return self.get("/readyz").strip() == "ok"
            except OSError:
                if not self.alive():
                    raise DrillError("%s exited (%s); its log: %s" % (self.name, self.popen.returncode, self.log_path))
                return False
        wait_until(timeout, self.name + " /readyz (informers synced)", ready)

    def wait_standing_by(self, timeout=30):
        """A standby replica whose watch on the Lease is open: it will see a
        release at once (its log says so, -v>=2)."""
        def standing_by():
            if not self.alive():
                raise DrillError("%s exited (%s); its log: %s" % (self.name, self.popen.returncode, self.log_path))
            return '"standing by: watching the lease for its release"' in self.log()
        wait_until(timeout, self.name + " standing by (its Lease watch open)", standing_by, 0.05)


class Watch:
    """`kubectl get -w --output-watch-events -o json` in a thread; every event
    is kept with the monotonic time it arrived, for timings the drill reports."""

    def __init__(self, target, args):
        self.events = []  # (t, type, object)
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(target.kubectl_argv(*args, "-w", "--output-watch-events", "-o", "json"),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=lab.child_setup(signal.SIGKILL))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        target.on_close(self.stop)

    def _read(self):
        dec, buf = json.JSONDecoder(), ""
        for line in iter(self.proc.stdout.readline, b""):
            buf += line.decode(errors="replace")
            while True:
                s = buf.lstrip()
                if not s:
                    buf = ""
                    break
                try:
                    obj, end = dec.raw_decode(s)
                except ValueError:
                    break
                buf = s[end:]
                with self._lock:
                    self.events.append((now(), obj.get("type"), obj.get("object", {})))

    def snapshot(self):
        with self._lock:
            return list(self.events)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Target:
    """Where the drill runs: a private lab, or the user's cluster."""

    def __init__(self, args, drill):
        self.root = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.build = os.environ.get("TOYSCHED_BUILD") or os.path.join(self.root, "build")
        self.kubectl = os.path.join(self.build, "kubectl")
        self.toy_bin = os.path.join(self.build, "toy-scheduler")
        self.drill = drill
        self.ns = args.namespace
        self.workdir = args.workdir
        os.makedirs(self.workdir, exist_ok=True)
        self.kubeconfig = args.kubeconfig
        self.on_lab = not args.kubeconfig
        self.lab = None
        self.lab_dir = None
        self.created_namespace = False
        self._closers = []
        self.procs = []
        for b in (self.kubectl, self.toy_bin):
            if not os.access(b, os.X_OK):
                raise DrillError("%s is not built: run ./dev build (or ./dev drill, which builds)" % b)
        shot = getattr(args, "ui_screenshot", None)
        self.live = live_page.LivePage(self, progress, shot) if getattr(args, "ui", False) or shot else None

    # -- cleanup -------------------------------------------------------------
    def on_close(self, fn):
        self._closers.append(fn)

    def close(self):
        """Undo everything, newest first; never raises."""
        while self._closers:
            fn = self._closers.pop()
            try:
                fn()
            except Exception as e:  # keep undoing the rest
                progress("cleanup step failed: %s" % e)

    # -- kubectl -------------------------------------------------------------
    def kubectl_argv(self, *args):
        return [self.kubectl, "--kubeconfig", self.kubeconfig] + list(args)

    def k(self, *args, input=None, check=True, timeout=60):
        """Run kubectl; returns stdout. Its own session: a Ctrl-C at the
        terminal must not kill the kubectl that is cleaning up."""
        p = subprocess.run(self.kubectl_argv(*args), input=input.encode() if input else None,
                           capture_output=True, timeout=timeout, start_new_session=True)
        if check and p.returncode != 0:
            raise DrillError("kubectl %s: %s" % (" ".join(args[:3]), p.stderr.decode().strip()))
        return p.stdout.decode()

    def kj(self, *args, **kw):
        return json.loads(self.k(*args, "-o", "json", **kw))

    # -- setting the scene ---------------------------------------------------
    def start_lab(self, *flags):
        self.lab_dir = tempfile.mkdtemp(prefix="lab.", dir=self.workdir)  # fresh: a lab dir holds etcd's data
        progress("starting a private lab (%s) in %s" % (" ".join(flags), self.lab_dir))
        self.lab = lab.Lab(self.lab_dir, flags)  # build/kube-lab, by the same TOYSCHED_BUILD rule as ours
        self.on_close(self.lab.stop)  # registered first: an interrupted start is stopped too
        try:
            self.kubeconfig = self.lab.start(timeout=180)
        except lab.LabError as e:
            raise DrillError(str(e))

    def setup_namespace(self):
        """Our namespace: created if missing (and then deleted at the end);
        if it exists, we only ever delete what we created in it."""
        try:
            self.k("version", timeout=20)
        except (DrillError, subprocess.TimeoutExpired) as e:
            raise DrillError("cannot reach the cluster with --kubeconfig %s: %s" % (self.kubeconfig, e))
        if self.k("get", "namespace", self.ns, "--ignore-not-found", "-o", "name").strip():
            self.on_close(self._delete_ours)
        else:
            self.k("create", "namespace", self.ns)
            self.created_namespace = True
            self.on_close(self._delete_namespace)

    def _delete_ours(self):
        if self.on_lab:
            return  # the lab goes with everything in it
        progress("deleting what the drill created in namespace %s" % self.ns)
        sel = "%s=%s" % (LABEL, self.drill)
        self.k("-n", self.ns, "delete", "deployments,replicasets,pods,leases", "-l", sel,
               "--ignore-not-found", "--wait=false", check=False)
        # Pods are the objects that take time to go (graceful deletion).
        try:
            wait_until(60, "the drill's pods to be gone", lambda: not self.k(
                "-n", self.ns, "get", "pods", "-l", sel, "-o", "name", check=False).strip(), 0.5)
        except DrillError as e:
            progress(str(e))

    def _delete_namespace(self):
        if self.on_lab:
            return
        self._delete_ours()  # first what is in it, so that nothing lingers if the namespace does
        progress("deleting namespace %s (the drill created it)" % self.ns)
        self.k("delete", "namespace", self.ns, "--wait=false", check=False)
        try:
            wait_until(30, "namespace %s to be gone" % self.ns, lambda: not self.k(
                "get", "namespace", self.ns, "--ignore-not-found", "-o", "name", check=False).strip(), 0.5)
        except DrillError:
            progress("namespace %s is still terminating (empty; the cluster's namespace controller "
                     "finishes it)" % self.ns)

    def toy(self, name, *flags):
        """Start a toy-scheduler; it is stopped (SIGKILL) at the end if still running."""
        argv = [self.toy_bin, "--kubeconfig", self.kubeconfig, "--metrics-bind-address=127.0.0.1:0",
                "--secure-port=0"] + list(flags)
        if not any(f.startswith("-v") or f.startswith("--v") for f in flags):
            argv.append("-v=2")
        p = Toy(name, argv, os.path.join(self.workdir, name + ".log"))
        self.procs.append(p)
        self.on_close(lambda: p.stop(signal.SIGKILL, grace=5) if p.alive() else None)
        if self.live:
            self.live.show(p)
        return p

    # -- objects -------------------------------------------------------------
    def labels(self, app):
        return {"app": app, LABEL: self.drill}

    def deployment(self, name, replicas, scheduler=None, cpu=None):
        tmpl = {"metadata": {"labels": self.labels(name)}, "spec": self.pod_spec(scheduler, cpu)}
        obj = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": name, "namespace": self.ns, "labels": self.labels(name)},
               "spec": {"replicas": 0 if self.live else replicas, "selector": {"matchLabels": self.labels(name)},
                        "template": tmpl}}
        self.k("create", "-f", "-", input=json.dumps(obj))
        if self.live:
            self.live.pace(name, replicas)

    def pod_spec(self, scheduler=None, cpu=None):
        c = {"name": "pause", "image": PAUSE_IMAGE}
        if cpu:
            c["resources"] = {"requests": {"cpu": cpu}}
        spec = {"containers": [c], "terminationGracePeriodSeconds": 0}
        if scheduler:
            spec["schedulerName"] = scheduler
        return spec

    def pods(self, app):
        return self.kj("-n", self.ns, "get", "pods", "-l", "app=" + app)["items"]

    def bound(self, app):
        return sum(1 for p in self.pods(app) if p["spec"].get("nodeName"))

    def check_cluster_wide_read(self):
        """Nodes and all pods: what the over-commit check needs to read."""
        for what in (("get", "nodes"), ("get", "pods", "-A")):
            if self.k("auth", "can-i", "list", what[1], check=False).strip() != "yes":
                raise DrillError("the drill needs to list %s (cluster-wide) to check for over-commit" % what[1])


# -- facts from logs and objects ------------------------------------------------
BOUND_RE = re.compile(r'"Successfully bound pod to node" pod="([^"]+)" node="([^"]+)"')
CONFLICT_RE = re.compile(r"conflict|already assigned", re.I)
POD_RE = re.compile(r'pod="([^"]+)"')


def binds_in(log, ns):
    """{pod: node} of the binds a scheduler logged, in namespace ns."""
    return {p: n for p, n in BOUND_RE.findall(log) if p.startswith(ns + "/")}


def conflict_lines(log, ns=None):
    """The lines `grep -ci 'conflict\\|already assigned'` counts (in ns, if given)."""
    out = []
    for line in log.splitlines():
        if CONFLICT_RE.search(line):
            m = POD_RE.search(line)
            if ns is None or (m and m.group(1).startswith(ns + "/")):
                out.append(line)
    return out


def pods_in(lines):
    return {m.group(1) for m in (POD_RE.search(line) for line in lines) if m}


def node_usage(target):
    """Per node: allocatable, requested (every non-terminal pod bound there,
    all namespaces) and pod count. Over-committed: requested > allocatable."""
    nodes = target.kj("get", "nodes")["items"]
    pods = target.kj("get", "pods", "-A")["items"]
    usage = {}
    for n in nodes:
        alloc = {k: quantity(v) for k, v in n["status"].get("allocatable", {}).items()}
        usage[n["metadata"]["name"]] = {"allocatable": alloc, "requested": defaultdict(Fraction), "pods": 0,
                                        "schedulable": not n["spec"].get("unschedulable") and not any(
                                            t.get("effect") in ("NoSchedule", "NoExecute")
                                            for t in n["spec"].get("taints", []))}
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node or node not in usage or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        usage[node]["pods"] += 1
        for k, v in pod_requests(p["spec"]).items():
            usage[node]["requested"][k] += v
    for u in usage.values():
        u["over"] = [k for k, v in u["requested"].items() if v > u["allocatable"].get(k, 0)]
        if u["pods"] > u["allocatable"].get("pods", 0):
            u["over"].append("pods")
    return usage


def node_ips(target):
    ips = {}
    for n in target.kj("get", "nodes")["items"]:
        for a in n["status"].get("addresses", []):
            if a["type"] == "InternalIP":
                ips[n["metadata"]["name"]] = a["address"]
    return ips


def parse_dump(text):
    """The task dump (SIGQUIT or --crash-at) from a log: (first line, tasks).
    Each task: {id, state, name, point, where}."""
    start = max(text.rfind("SIGQUIT: quit"), text.rfind("crash-at: "))
    if start < 0:
        return None, []
    lines = text[start:].splitlines()
    tasks = []
    for line in lines[1:]:
        if line.startswith("native backtrace"):
            break
        m = re.match(r"task (\d+) \[([^\]]*)\] (\S+)(?:,)? (?:last )?at (\S+) \(([^)]*)\)", line)
        if m:
            tasks.append({"id": int(m.group(1)), "state": m.group(2), "name": m.group(3),
                          "point": m.group(4), "where": m.group(5)})
    return lines[0], tasks


# -- output ----------------------------------------------------------------------
def table(headers, rows):
    rows = [[str(c) for c in r] for r in rows]
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    fmt = "  ".join("%%-%ds" % x for x in w)
    out = [fmt % tuple(headers), fmt % tuple("-" * x for x in w)]
    out += [fmt % tuple(r) for r in rows]
    return "\n".join(line.rstrip() for line in out)


def ms(seconds):
    return None if seconds is None else int(round(seconds * 1000))


def cpu_str(q):
    return ("%g" % float(q)) if q is not None else "-"
