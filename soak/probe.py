"""toy-scheduler as the soak sees it: the process (RSS, CPU from /proc) and
its own account of itself (/debug/tasks, /metrics)."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from devlib import lab  # noqa: E402  (child_setup: the children die with us)
from devlib import procfs  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
PORT_RE = re.compile(r'"Serving health, metrics and debug endpoints".* port=(\d+)')
SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def metrics(text):
    """Prometheus text -> {(name, labels string): value}."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE_RE.match(line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def metric_sum(ms, name):
    return sum(v for (n, _), v in ms.items() if n == name)


def metric(ms, name, labels=""):
    return ms.get((name, labels), 0.0)


class Toy:
    """A toy-scheduler child: its own session, SIGKILL if the soak dies."""

    def __init__(self, binary, kubeconfig, log_path, extra=()):
        self.log_path = log_path
        self._log = open(log_path, "ab")
        argv = [binary, "--kubeconfig", kubeconfig, "--metrics-bind-address=127.0.0.1:0", "--secure-port=0",
                "-v=2"] + list(extra)
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                      start_new_session=True, preexec_fn=lab.child_setup(signal.SIGKILL))
        self.pid = self.popen.pid
        self.port = None

    def alive(self):
        return self.popen.poll() is None

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError("toy-scheduler exited (%s) at start; its log: %s"
                                   % (self.popen.returncode, self.log_path))
            if self.port is None:
                m = PORT_RE.search(self.log())
                self.port = m and int(m.group(1))
            else:
                try:
                    if self.get("/readyz").strip() == "ok":
                        return
                except OSError:
                    pass
            time.sleep(0.2)
        raise RuntimeError("toy-scheduler not ready after %gs; its log: %s" % (timeout, self.log_path))

    def get(self, path, timeout=5):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=timeout) as r:
            return r.read().decode()

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return None

    def cpu_seconds(self):
        fields = procfs.proc_stat(self.pid)
        if fields is None:
            raise OSError("toy-scheduler (pid %d) is gone" % self.pid)
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime

    def sample(self):
        """One row of figures; raises OSError if the process or its port is gone."""
        rss, cpu = self.rss_kib(), self.cpu_seconds()
        tasks = json.loads(self.get("/debug/tasks?format=json"))
        ms = metrics(self.get("/metrics"))
        # An HTTP/2 connection's reader (http2/read/N) lives as long as its connection: a
        # client opens one at its first request and replaces it when idle.
        # Counted apart (at most one per client), not as tasks that must come
        # back to the baseline.
        readers = sum(1 for t in tasks["tasks"] if t["name"].startswith("http2/read/"))
        return {
            "rss_kib": rss,
            "cpu_s": round(cpu, 2),
            # Every live task, this very request's connection included (one).
            "tasks": len(tasks["tasks"]) + tasks.get("untracked", 0) - readers,
            "http2_connections": readers,
            "tasks_waiting": int(metric_sum(ms, "toysched_tasks_waiting")),
            "pending_active": int(metric(ms, "scheduler_pending_pods", '{queue="active"}')),
            "pending_backoff": int(metric(ms, "scheduler_pending_pods", '{queue="backoff"}')),
            "pending_unschedulable": int(metric(ms, "scheduler_pending_pods", '{queue="unschedulable"}')),
            "cache_nodes": int(metric(ms, "scheduler_cache_size", '{type="nodes"}')),
            "cache_pods": int(metric(ms, "scheduler_cache_size", '{type="pods"}')),
            "cache_assumed": int(metric(ms, "scheduler_cache_size", '{type="assumed_pods"}')),
            "binds_in_flight": int(metric(ms, "toysched_binds_in_flight")),
            "bind_conflicts": int(metric(ms, "toysched_bind_conflicts_total")),
            "attempts_scheduled": int(metric_sum_labels(ms, "scheduler_schedule_attempts_total", "scheduled")),
            "attempts_unschedulable": int(metric_sum_labels(ms, "scheduler_schedule_attempts_total",
                                                            "unschedulable")),
            "watch_restarts": int(metric_sum(ms, "toysched_watch_restarts_total")),
        }

    def stop(self, grace=15.0):
        """SIGTERM, then SIGKILL after grace; returns the exit status."""
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()
        return self.popen.returncode


def metric_sum_labels(ms, name, result):
    return sum(v for (n, labels), v in ms.items() if n == name and 'result="%s"' % result in labels)
