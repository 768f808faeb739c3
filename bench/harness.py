"""What ./dev bench's measurements are made of (bench/run.py's throughput
and latency, bench/scale.py's scale run): the lab with SchedulingBasic's
nodes, the pod creator, the watcher that stamps pods seen and seen bound,
the live page's feed reader, and /proc readings."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from common import CEILING, CLK_TCK, KUBE_LAB, log

sys.path.append(str(Path(__file__).resolve().parent.parent))  # this checkout's, whatever TOYSCHED_ROOT says
from devlib.lab import Lab as KubeLab, toy_http_port  # noqa: E402  (the lab launcher, shared with the drills)
from devlib.procfs import proc_stat  # noqa: E402


def proc_cpu_seconds(pid: int) -> float | None:
    """utime + stime of one process (not its children), in seconds."""
    fields = proc_stat(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_seconds() -> float:
    """CPU seconds every CPU spent busy since boot (/proc/stat: all but idle and iowait)."""
    f = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in f[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def proc_hwm_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def stop_descendants(grace: float = 20) -> None:
    """SIGTERM every process this one started, directly or not, then SIGKILL
    what is left after `grace`: after an interrupt that may have cut a
    measurement's own cleanup short, no lab or contender outlives the bench."""
    def descendants() -> list[int]:
        children: dict[int, list[int]] = {}
        for d in Path("/proc").iterdir():
            if d.name.isdigit() and (fields := proc_stat(d.name)) is not None:
                children.setdefault(int(fields[1]), []).append(int(d.name))
        out, todo = [], [os.getpid()]
        while todo:
            for c in children.get(todo.pop(), []):
                out.append(c)
                todo.append(c)
        return out

    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0)):
        for pid in descendants():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and descendants():
            try:
                os.waitpid(-1, os.WNOHANG)  # reap our own children as they exit
            except ChildProcessError:
                pass
            time.sleep(0.1)


def stop(p: subprocess.Popen | None, grace: float = 15) -> None:
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class Lab(KubeLab):
    """kube-lab with scheduler_perf's SchedulingBasic nodes and no kubelet (extra: more flags,
    bench/volumes.py's lab_flags)."""

    def __init__(self, work: Path, nodes: int, extra: list[str] = ()):
        super().__init__(work / "lab", ["--nodes", nodes, "--no-kubelet", "--node-cpu", "4", "--node-memory", "32Gi",
                                        "--node-pods", "110", *extra], binary=str(KUBE_LAB))

    def close(self, keep: bool = False) -> None:
        """Stop it and delete its directory (keeping its logs, with keep)."""
        self.stop(grace=20)
        lab_dir = Path(self.dir)
        if keep:  # its apiserver.log and etcd.log, for a post-mortem
            for f in lab_dir.glob("*.log"):
                shutil.copy(f, lab_dir.parent / f.name)
        shutil.rmtree(lab_dir, ignore_errors=True)


class Watcher:
    """bench-ceiling watch, read incrementally from its output file."""

    def __init__(self, work: Path, kubeconfig: str, scheduler: str):
        self.path = work / "watch.txt"
        self.path.write_text("")
        self.proc = subprocess.Popen(
            [str(CEILING), "watch", "--kubeconfig", kubeconfig, "--scheduler-name", scheduler,
             "--out", str(self.path), "-v", "2"], stderr=open(work / "watch.err", "w"))
        self.fh = open(self.path)
        self.partial = ""
        self.synced: int | None = None
        self.seen: dict[str, int] = {}
        self.bound: dict[str, int] = {}
        self.bound_in: dict[str, int] = {}

    def poll(self) -> None:
        data = self.partial + self.fh.read()
        lines = data.split("\n")
        self.partial = lines.pop()
        for line in lines:
            f = line.split()
            if f[0] == "synced":
                self.synced = int(f[1])
            elif f[0] == "seen":
                self.seen.setdefault(f[1], int(f[2]))
            elif f[0] == "bound" and f[1] not in self.bound:
                self.bound[f[1]] = int(f[2])
                ns = f[1].split("/", 1)[0]
                self.bound_in[ns] = self.bound_in.get(ns, 0) + 1

    def wait(self, cond, timeout: float, what: str, tick: float = 0.05) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if cond():
                return True
            if self.proc.poll() is not None:
                raise RuntimeError(f"the watcher died while waiting for {what}")
            if time.monotonic() > deadline:
                log(f"timed out after {timeout:.0f}s waiting for {what}")
                return False
            time.sleep(tick)

    def stop(self) -> None:
        stop(self.proc, 5)
        self.poll()


def create_pods(kubeconfig: str, scheduler: str, ns: str, count: int, rate: float = 0, prefix: str = "p-",
                placed_on: int = 0) -> dict:
    """bench-ceiling create: pending pods (with placed_on N: already bound to lab-node-1..N in turn)."""
    cmd = [str(CEILING), "create", "--kubeconfig", kubeconfig, "--scheduler-name", scheduler,
           "--namespace", ns, "--count", str(count), "--prefix", prefix]
    if rate:
        cmd += ["--rate", str(rate)]
    if placed_on:
        cmd += ["--placed-on", str(placed_on)]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"creating pods failed: {r.stdout}{r.stderr[-2000:]}")
    m = re.search(r"created (\d+) failed (\d+) seconds ([\d.]+)", r.stdout)
    return {"created": int(m.group(1)), "seconds": float(m.group(3)), "wall_seconds": secs}


class PageFeed:
    """The live page's feed (/debug/events-stream) read from the scheduler's
    start, as an open page reads it: every message received, counted, none
    drawn (drawing is the browser's work, on the viewer's machine)."""

    def __init__(self, log_path: Path, proc: subprocess.Popen):
        self.messages = self.bytes = 0
        self._stop = threading.Event()
        self._resp = None
        self._thread = threading.Thread(target=self._read, args=(log_path, proc), daemon=True)
        self._thread.start()

    def _read(self, log_path: Path, proc: subprocess.Popen) -> None:
        port = None
        while port is None and not self._stop.is_set() and proc.poll() is None:
            port = toy_http_port(log_path.read_text())
            time.sleep(0.005)
        if port is None:
            return
        self._resp = urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/events-stream", timeout=30)
        while not self._stop.is_set():
            line = self._resp.readline()
            if not line:
                break
            self.bytes += len(line)
            self.messages += line.startswith(b"event: ")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def percentile(xs: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not xs:
        return None
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


def creation(cr: dict) -> dict:
    """create_pods' result as the figures a measurement keeps."""
    return {"create_s": cr["seconds"], "create_pods_per_s": cr["created"] / cr["seconds"] if cr["seconds"] else None}


def drain_figures(bound_ns: list[int], t0: int, intervals: int, event_ns: list[int]) -> dict:
    """Rates from sorted bind stamps: the binds from t0 to the last bind, the
    whole job to the last bind or Scheduled event, whichever is later."""
    job_end = max([bound_ns[-1]] + event_ns)
    drain_s, job_s = (bound_ns[-1] - t0) / 1e9, (job_end - t0) / 1e9
    return {"drain_s": drain_s, "pods_per_s": intervals / drain_s if drain_s > 0 else None,
            "events_after_binds_s": (job_end - bound_ns[-1]) / 1e9, "job_s": job_s,
            "job_pods_per_s": intervals / job_s if job_s > 0 else None}
