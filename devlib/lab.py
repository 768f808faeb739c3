"""Start and stop kube-lab from Python: the one Python launcher, shared by the
drills (drills/kit.py) and the benchmarks (bench/run.py).

It lives in devlib/, beside the bash launcher (devlib/lab.sh), because
neither drills/ nor bench/ owns it and neither should import the other's
internals; both put the repository root on sys.path and `from devlib import
lab`. One contract for the three launchers (this one, devlib/lab.sh and
test/integration/lab_fixture.cpp; see lab/README.md):

  start  kube-lab --dir DIR FLAGS in a session, hence a process group, of its
         own (its kube-scheduler child is in it), stdout and stderr to
         DIR.out, with SIGTERM as its parent-death signal;
  ready  once DIR/ready exists and DIR/lock names our lab's pid: the lab
         writes the kubeconfig path into DIR/ready when every component it
         runs has synced, and holds DIR/lock (its pid in it) while it runs.
         If the lab dies first, or after the timeout, start() raises
         LabError with the end of DIR.out;
  stop   SIGTERM to the whole group; SIGKILL to it after a grace.

Only the standard library: it runs wherever meson's Python does.
"""
import ctypes
import fcntl
import os
import re
import signal
import subprocess
import time

# toy-scheduler's -v=1 line for its plain HTTP port (--metrics-bind-address ...:0 picks one).
_HTTP_PORT = re.compile(r'Serving health, metrics and debug endpoints"?.* port=(\d+)')


def toy_http_port(log_text):
    """The HTTP port a toy-scheduler's log names, or None before it serves."""
    m = _HTTP_PORT.search(log_text)
    return int(m.group(1)) if m else None


_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


class LabError(RuntimeError):
    """The lab did not become ready (it exited, or the timeout passed)."""


def child_setup(deathsig):
    """A preexec_fn for children that must not outlive this process: the
    default disposition of the signals we send them (a parent started in the
    background by a shell inherits SIGINT and SIGQUIT ignored, and its
    children with it), and `deathsig` when this process dies, even by SIGKILL."""
    def setup():
        for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        _libc.prctl(_PR_SET_PDEATHSIG, int(deathsig), 0, 0, 0)
    return setup


def default_binary():
    root = os.environ.get("TOYSCHED_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(os.environ.get("TOYSCHED_BUILD") or os.path.join(root, "build"), "kube-lab")


def _drop_stale_ready(lab_dir):
    """A lab killed with SIGKILL leaves DIR/ready behind. Remove it, but only
    while no lab holds DIR (its flock on DIR/lock): a live lab's file is its
    own, and the lab about to start will refuse that DIR anyway."""
    fd = os.open(os.path.join(lab_dir, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            os.remove(os.path.join(lab_dir, "ready"))
        except FileNotFoundError:
            pass
    except BlockingIOError:
        pass  # a lab runs on DIR
    finally:
        os.close(fd)  # releases the flock, if taken


def _first_line(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except FileNotFoundError:
        return ""


def tail(path, lines=40):
    """The last lines of a log, for an error message (the error itself if unreadable)."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(%s)" % e


class Lab:
    """One kube-lab process on one directory."""

    def __init__(self, lab_dir, flags=(), binary=None):
        self.dir = os.path.abspath(lab_dir)
        self.out = self.dir + ".out"
        self.flags = [str(f) for f in flags]
        self.binary = binary or default_binary()
        self.popen = None
        self.kubeconfig = None
        self.ready_seconds = None  # from the start to DIR/ready
        self.exit_code = None

    @property
    def pid(self):
        """The lab's pid, which is also its process group's id."""
        return self.popen.pid if self.popen else None

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def start(self, timeout=180.0):
        """Start the lab and wait until it is ready; returns the kubeconfig path."""
        os.makedirs(self.dir, exist_ok=True)
        _drop_stale_ready(self.dir)
        t0 = time.monotonic()
        with open(self.out, "wb") as out:
            self.popen = subprocess.Popen([self.binary, "--dir", self.dir] + self.flags, stdin=subprocess.DEVNULL,
                                          stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                          preexec_fn=child_setup(signal.SIGTERM))
        ready, lock = os.path.join(self.dir, "ready"), os.path.join(self.dir, "lock")
        while True:
            # DIR/lock naming our lab: a lab that did not get DIR (another
            # holds it) must not take that one's DIR/ready for its own.
            kubeconfig = _first_line(ready)
            if kubeconfig and _first_line(lock) == str(self.popen.pid):
                self.kubeconfig, self.ready_seconds = kubeconfig, time.monotonic() - t0
                return kubeconfig
            if self.popen.poll() is not None:
                raise LabError("kube-lab exited (status %s) before it was ready; the end of %s:\n%s"
                               % (self.popen.returncode, self.out, tail(self.out)))
            if time.monotonic() - t0 > timeout:
                self.stop()
                raise LabError("kube-lab not ready after %gs; the end of %s:\n%s"
                               % (timeout, self.out, tail(self.out)))
            time.sleep(0.1)

    def _group_alive(self):
        self.popen.poll()  # reap the leader if it has exited: a zombie still counts as the group's
        try:
            os.killpg(self.popen.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def stop(self, grace=20.0):
        """SIGTERM to the group, SIGKILL to it after `grace` seconds; returns
        the lab's exit status (None if it was never started)."""
        if self.popen is None:
            return None
        if self._group_alive():
            os.killpg(self.popen.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while self._group_alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if self._group_alive():
                os.killpg(self.popen.pid, signal.SIGKILL)
        self.exit_code = self.popen.wait()
        return self.exit_code
