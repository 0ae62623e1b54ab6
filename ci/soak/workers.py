"""The worker processes of a libFuzzer -fork parent and their memory, from /proc.

The parent runs each job as `sh -c "TARGET ... -features_dir=TMP/F<job> > log"`
(through system()), so a worker is a descendant of the parent whose
executable is the target binary and whose command line names its job's
features directory. The parent's own merge runs (-merge_inner) are the same
binary with no job; they are not workers. Processes come and go while we
read: anything that vanishes between two reads is skipped.
"""

import os
import re
from dataclasses import dataclass

_FEATURES_DIR = re.compile(r"-features_dir=\S*/F(\d+)$")


@dataclass(frozen=True)
class WorkerSample:
    pid: int
    job: int
    rss_kb: int  # VmRSS: resident now
    hwm_kb: int  # VmHWM: the process's peak resident set so far


def _read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:  # the process ended, or is not ours to read
        return None


def parent_pids(proc="/proc"):
    """pid -> parent pid for every process we can see."""
    table = {}
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        stat = _read(f"{proc}/{name}/stat")
        if stat is None:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2:
            table[int(name)] = int(fields[1])
    return table


def descendants(root, table):
    children = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def job_of(cmdline_args):
    """The -fork job a worker's arguments name, or None (a merge run, a shell)."""
    for arg in cmdline_args:
        match = _FEATURES_DIR.search(arg)
        if match:
            return int(match.group(1))
    return None


def memory_kb(status_text):
    """(VmRSS, VmHWM) in kB from the text of /proc/PID/status, or None."""
    values = {}
    for line in status_text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    if len(values) != 2:
        return None  # a zombie has no memory lines
    return values["VmRSS"], values["VmHWM"]


def sample_workers(parent, binary, proc="/proc"):
    """The workers of the -fork parent `parent` running `binary` now."""
    binary = os.path.realpath(binary)
    samples = []
    for pid in descendants(parent, parent_pids(proc)):
        try:
            if os.path.realpath(os.readlink(f"{proc}/{pid}/exe")) != binary:
                continue
        except OSError:
            continue
        cmdline = _read(f"{proc}/{pid}/cmdline", "rb")
        status = _read(f"{proc}/{pid}/status")
        if cmdline is None or status is None:
            continue
        job = job_of(os.fsdecode(cmdline).split("\0"))
        memory = memory_kb(status)
        if job is None or memory is None:
            continue
        samples.append(WorkerSample(pid=pid, job=job, rss_kb=memory[0], hwm_kb=memory[1]))
    return samples


def process_rss_kb(pid, proc="/proc"):
    """VmRSS of one process (the -fork parent itself), or None."""
    status = _read(f"{proc}/{pid}/status")
    memory = memory_kb(status) if status else None
    return memory[0] if memory else None
