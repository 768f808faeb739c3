"""Reading /proc, for the benchmarks and the drills: a process's stat fields,
its children, and how long its threads have waited for a CPU."""
from pathlib import Path


def proc_stat(pid):
    """/proc/PID/stat's fields after the command name (which may hold spaces
    and parentheses): [0] is the state, [1] the parent's pid; None once gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def child_pid(ppid, word):
    """The pid of a child of ppid whose command line holds `word` as one
    argument (the lab's kube-scheduler: `kube-lab kube-scheduler ...`)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or (fields := proc_stat(d.name)) is None or int(fields[1]) != ppid:
            continue
        try:
            argv = (d / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if word in argv[1:]:
            return int(d.name)
    return None


def cpu_wait(pid):
    """How long a process's threads have waited, runnable, for a CPU: the
    kernel's run_delay summed over /proc/PID/task/*/schedstat (ns), and how
    many times they were put on one. None without a pid, once the process is
    gone, or if the kernel keeps no schedstat."""
    if not pid:
        return None
    total = slices = read = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            _, waited, runs = (int(x) for x in (task / "schedstat").read_text().split())
        except (OSError, ValueError):
            continue  # a thread that exited meanwhile
        total, slices, read = total + waited, slices + runs, read + 1
    return {"waited_ns": total, "slices": slices} if read else None


def cpu_wait_between(before, after):
    """The CPU wait between two cpu_wait() readings, in ms, with the mean per
    time on a CPU in µs; None if either reading is missing."""
    if not before or not after:
        return None
    waited = after["waited_ns"] - before["waited_ns"]
    slices = after["slices"] - before["slices"]
    return {"ms": round(waited / 1e6, 1), "slices": slices,
            "mean_us": round(waited / 1e3 / slices) if slices else 0}
