"""A default ./dev bench takes longer than most sittings (about 3.5 hours on
2 CPUs), so it is measured in groups and every finished group is written to
disk at once: run the same command again and it goes on where it stopped.

A group is one node count, run, workload and setting with all its
contenders, in that group's shuffled order, or one setting of the scale run.
A group is never split across sittings, so the paired ratios (contenders of
one group against each other) always compare measurements taken minutes
apart on the same machine state. A group cut short (Ctrl-C, SIGTERM) is
measured again from its start.

The progress file is named by a key: the measured code and the arguments
that change what is measured. Change either and the old progress no longer
applies; the next run starts over. The measured code is every tracked file
but prose and the renderers (bench/report.py, plots.py, targets.py, which
`--from-json` re-runs on saved figures), as committed plus any uncommitted
change to it: an edit to the scheduler between two sittings starts the
bench over rather than mixing two schedulers in one table.

The progress files live in bench/progress/, which git tracks: a sitting's
finished groups, committed, go on in the next checkout (a fresh clone, a
new machine) under the same key, since they are not measured code. A run
that completes removes its file; commit that removal with the results.
"""
from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import json
import os
import subprocess
from pathlib import Path

from common import ROOT

# Where run.py keeps progress by default. Named once: were it also spelled
# out in NOT_MEASURED and the two drifted apart, the progress files would
# count as measured code and no sitting could ever resume.
PROGRESS_DIR = ROOT / "bench" / "progress"
# What does not change a measurement: prose, the saved figures, the modules
# that only render them, and the progress kept so far.
NOT_MEASURED = ("*.md", "bench/sched-results.json", "bench/*.png", "bench/report.py", "bench/plots.py",
                "bench/targets.py", f"{PROGRESS_DIR.relative_to(ROOT)}/*")
# The arguments that do not change what is measured.
NOT_KEYED = ("out", "keep", "from_json", "budget", "progress", "fresh")


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def measured_code() -> str | None:
    """A hash of the measured files as they are on disk (HEAD's blobs plus
    `git diff HEAD` of those files), or None outside a git checkout."""
    def git(*a: str) -> bytes:
        return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, check=True).stdout

    def measured(path: str) -> bool:
        return not any(fnmatch.fnmatch(path, p) for p in NOT_MEASURED)
    try:
        tree = [line for line in git("ls-tree", "-r", "HEAD").decode().splitlines()
                if measured(line.split("\t", 1)[1])]
        changed = [p for p in git("diff", "HEAD", "--name-only").decode().splitlines() if measured(p)]
        diff = git("diff", "HEAD", "--", *changed) if changed else b""
    except (OSError, subprocess.CalledProcessError):
        return None
    h = hashlib.sha256("\n".join(tree).encode())
    h.update(diff)
    return h.hexdigest()


def run_key(code: str, args) -> str:
    keyed = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_KEYED}
    return hashlib.sha256(json.dumps([code, keyed], default=str).encode()).hexdigest()[:16]


class Progress:
    """The groups measured so far for one key, in a JSON-lines file: a
    header (when and with what the run began), then one line per group."""

    def __init__(self, directory: Path, key: str, info: dict, fresh: bool):
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{key}.jsonl"
        self.sitting = f"{now()} pid {os.getpid()}"  # two sittings may begin in the same minute
        self.groups: dict[str, dict] = {}
        if fresh:
            self.path.unlink(missing_ok=True)
        if self.path.exists():
            lines = [json.loads(x) for x in self.path.read_text().splitlines() if x.strip()]
            self.header = lines[0]
            self.groups = {g["group"]: g for g in lines[1:]}
        else:
            self.header = {"info": info, "began": now()}
            self.path.write_text(json.dumps(self.header) + "\n")

    def done(self, group: str) -> bool:
        return group in self.groups

    def left(self, groups: list[str]) -> int:
        return sum(not self.done(g) for g in groups)

    def add(self, group: str, started: str, wall_s: float, results: list[dict]) -> None:
        g = {"group": group, "sitting": self.sitting, "started": started, "finished": now(), "wall_s": wall_s,
             "results": results}
        self.groups[group] = g
        with open(self.path, "a") as f:  # one line per group, flushed before the next group starts
            f.write(json.dumps(g) + "\n")

    def results(self, groups: list[str]) -> list[dict]:
        return [r for g in groups if g in self.groups for r in self.groups[g]["results"]]

    def info(self) -> dict:
        """The run's info as first recorded, dated from its first group to its last."""
        info = dict(self.header["info"])
        gs = sorted(self.groups.values(), key=lambda g: g["started"])
        if gs:
            sittings = len({g["sitting"] for g in gs})
            info["date"] = (f"{gs[0]['started']} to {gs[-1]['finished']}"
                            + (f", in {sittings} sittings" if sittings > 1 else ""))
        return info

    def wall_seconds(self) -> float:
        return sum(g["wall_s"] for g in self.groups.values())

    def remove(self) -> None:
        """A finished run's progress: the next run of the same command measures again."""
        self.path.unlink(missing_ok=True)
