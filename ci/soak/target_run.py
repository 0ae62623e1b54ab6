"""One fuzz target under libFuzzer's -fork for its share of the soak,
watched from outside: the parent's status lines (runs, counters) and its
workers' memory in /proc, sampled every SAMPLE_SECONDS; a row for the CSV
every `interval` seconds.

The parent gets -max_total_time=share. It then stops handing out jobs and
waits for the running ones, which can last up to 300 s each (a job's
length is min(300, job number) seconds); past the share plus a grace the
whole process group, which this module started in a session of its own,
gets SIGINT, then SIGKILL. The jobs cut short that way are not merged and
their runs are not counted.
"""

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

from findings import ArtifactWatcher
from fork_status import finished_jobs, parse_status_line
from rss_trend import JobMemory
from workers import process_rss_kb, sample_workers

SAMPLE_SECONDS = 1.0
KILL_AFTER_INTERRUPT_SECONDS = 15.0


def grace_seconds(share_seconds):
    """How long past its share a target may take to wind down."""
    return max(20.0, 0.05 * share_seconds)


@dataclass
class TargetPlan:
    name: str
    binary: str
    seeds: str | None  # the shipped seed corpus: read, never written
    flags: list  # from the target's .options file
    share_seconds: float
    cores: int
    work_dir: str  # outside the checkout: corpus/ (new inputs), tmp/ (TMPDIR of the jobs)
    artifact_dir: str
    log_path: str  # the parent's stdout and stderr

    @property
    def corpus_dir(self):
        return os.path.join(self.work_dir, "corpus")

    @property
    def temp_dir(self):
        return os.path.join(self.work_dir, "tmp")

    def command(self):
        corpora = [self.corpus_dir] + ([self.seeds] if self.seeds else [])
        # Our flags come last: libFuzzer takes the last of a repeated flag.
        return [self.binary, *corpora, *self.flags,
                f"-fork={self.cores}",
                "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1",
                f"-max_total_time={max(1, round(self.share_seconds))}",
                f"-artifact_prefix={self.artifact_dir}/"]


# One CSV row: the target's state at a moment of the soak.
# divergences and findings come from the artifacts (findings.py), the
# fork_* columns from the parent's own counters, which lag behind them.
ROW_FIELDS = [
    "soak_seconds", "target", "target_seconds", "runs", "execs_per_second",
    "jobs_merged", "cov", "features", "corpus", "divergences", "findings", "timeouts", "ooms",
    "fork_crashes", "fork_timeouts", "fork_ooms",
    "workers", "worker_rss_mb_max", "worker_peak_rss_mb_max", "parent_rss_mb",
]


@dataclass
class SeenJob:
    """A worker as /proc showed it: when, and its highest VmHWM."""
    first_seen: float
    last_seen: float
    hwm_kb: int = 0


@dataclass
class TargetRun:
    plan: TargetPlan
    watcher: ArtifactWatcher = None
    statuses: list = field(default_factory=list)
    seen: dict = field(default_factory=dict)  # job -> SeenJob
    started: bool = False  # the parent said it began fuzzing
    interrupted: bool = False  # we had to stop it past its grace
    kill_at: float = 0.0
    exit_code: int | None = None
    seconds: float = 0.0

    def jobs(self):
        """JobMemory for every merged job that was sampled at least once."""
        out = []
        for job, status in zip(finished_jobs(self.statuses), self.statuses):
            seen = self.seen.get(job.job)
            if seen is None:
                continue
            out.append(JobMemory(job=job.job, runs=job.runs, cumulative_runs=job.cumulative_runs,
                                 merged_at=float(status.seconds), peak_rss_mb=seen.hwm_kb / 1024,
                                 observed_seconds=seen.last_seen - seen.first_seen))
        return out

    def last_status(self):
        return self.statuses[-1] if self.statuses else None


class _LogTail:
    """The lines appended to a file since the last call."""

    def __init__(self, path):
        self._file = open(path, "r", errors="replace")
        self._partial = ""

    def lines(self):
        text = self._partial + self._file.read()
        lines = text.split("\n")
        self._partial = lines.pop()
        return lines

    def close(self):
        self._file.close()


def _row(run, soak_start, target_start, workers, parent_rss_kb, final=False):
    now = time.monotonic()
    status = run.last_status()
    found = run.watcher.update(final)
    target_seconds = now - target_start
    runs = status.runs if status else 0
    return {
        "soak_seconds": round(now - soak_start, 1),
        "target": run.plan.name,
        "target_seconds": round(target_seconds, 1),
        "runs": runs,
        "execs_per_second": round(runs / target_seconds, 1) if target_seconds > 0 else 0,
        "jobs_merged": len(run.statuses),
        "cov": status.cov if status else 0,
        "features": status.features if status else 0,
        "corpus": status.corpus if status else 0,
        "divergences": found.divergences,
        "findings": found.count("crash") + found.count("oom") + found.count("leak"),
        "timeouts": found.count("timeout"),
        "ooms": found.count("oom"),
        "fork_crashes": status.crashes if status else 0,
        "fork_timeouts": status.timeouts if status else 0,
        "fork_ooms": status.ooms if status else 0,
        "workers": len(workers),
        "worker_rss_mb_max": round(max((w.rss_kb for w in workers), default=0) / 1024, 1),
        "worker_peak_rss_mb_max": round(max((w.hwm_kb for w in workers), default=0) / 1024, 1),
        "parent_rss_mb": round((parent_rss_kb or 0) / 1024, 1),
    }


def run_target(plan, soak_start, interval, on_row):
    """Runs one target for its share; calls on_row(row) for each CSV row."""
    for path in (plan.corpus_dir, plan.temp_dir, plan.artifact_dir):
        os.makedirs(path, exist_ok=True)
    env = dict(os.environ, TMPDIR=plan.temp_dir)
    # Every job would overwrite the same stats file with its own counters.
    env.pop("BPFDIFF_FUZZ_STATS_JSON", None)
    run = TargetRun(plan, watcher=ArtifactWatcher(plan.binary, plan.artifact_dir))
    start = time.monotonic()
    with open(plan.log_path, "wb") as log:
        parent = subprocess.Popen(plan.command(), stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, cwd=plan.work_dir,
                                  env=env, start_new_session=True)
    tail = _LogTail(plan.log_path)
    interrupt_at = start + plan.share_seconds + grace_seconds(plan.share_seconds)
    next_row = start + interval
    workers = []
    try:
        while True:
            finished = parent.poll() is not None
            now = time.monotonic()
            for line in tail.lines():
                _read_line(run, line)
            workers = sample_workers(parent.pid, plan.binary) if not finished else []
            for w in workers:
                job = run.seen.setdefault(w.job, SeenJob(first_seen=now, last_seen=now))
                job.last_seen = now
                job.hwm_kb = max(job.hwm_kb, w.hwm_kb)
            if finished:
                break
            if now >= next_row:
                on_row(_row(run, soak_start, start, workers, process_rss_kb(parent.pid)))
                next_row += interval
            if now >= interrupt_at:
                _stop(parent, run, now)
            time.sleep(SAMPLE_SECONDS)
    finally:
        if parent.poll() is None:  # an exception in here: leave nothing running
            _signal_group(parent, signal.SIGKILL)
            parent.wait()
        tail.close()
    run.exit_code = parent.returncode
    run.seconds = time.monotonic() - start
    on_row(_row(run, soak_start, start, [], None, final=True))
    return run


def _read_line(run, line):
    status = parse_status_line(line)
    if status is not None:
        run.statuses.append(status)
    elif "starting to fuzz in" in line:
        run.started = True


def _stop(parent, run, now):
    if not run.interrupted:
        run.interrupted = True
        run.kill_at = now + KILL_AFTER_INTERRUPT_SECONDS
        _signal_group(parent, signal.SIGINT)
    elif now >= run.kill_at:
        _signal_group(parent, signal.SIGKILL)


def _signal_group(parent, signum):
    try:
        os.killpg(parent.pid, signum)  # the session we started: the parent and its jobs
    except ProcessLookupError:
        pass
