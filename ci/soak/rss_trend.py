"""Least-squares slopes of workers' peak RSS against runs, and the gate on them.

A -fork worker is a fresh process per job, so memory is seen job by job:
each job's peak RSS (the highest VmHWM sampled from /proc while it ran)
against
  - the target's cumulative runs when the job was merged (the trend over
    the soak: do workers get heavier as the soak goes on?), and
  - the job's own runs (growth inside one process: the leak a long
    non-fork campaign would accumulate; job lengths grow from 1 s to
    300 s, which is what gives this fit its spread).

Warm-up, honestly: a process's memory climbs while it warms up, and under
-fork every job is a new process, so warm-up is counted in a process's
own runs, not in minutes of the soak. A single diff_fuzzer process,
measured, climbs from 46 MB to 183 MB over its first ~5,400 runs and then
stays flat; a linear fit over that climb would report thousands of MB per
million runs for memory that is bounded. So both fits use only the jobs
that ran at least `warmup_runs` runs (10,000 by default, ci/soak.sh
--warmup-runs) and were sampled for MIN_OBSERVED_SECONDS (a peak seen only
once may be short of the real one). The first minutes of a soak drop out
by themselves: libFuzzer's first jobs last a few seconds and run far fewer
runs than that. How many jobs were left out is printed, not hidden.

A fit with too few jobs, or whose slope is not resolved to better than
the limit itself (two standard errors >= LIMIT), is inconclusive: it
neither passes nor fails the gate, and the summary says so. A short soak,
or one whose jobs never get past the warm-up (a slow target on a busy
machine), is inconclusive; such a soak needs more hours, or fewer targets.
"""

import math
from dataclasses import dataclass

LIMIT_MB_PER_MILLION_RUNS = 10.0
MIN_OBSERVED_SECONDS = 5.0
MIN_POINTS = 4
WARMUP_RUNS = 10_000


@dataclass(frozen=True)
class Fit:
    points: int
    slope: float | None  # MB per million runs
    stderr: float | None  # of the slope, same unit

    @property
    def verdict(self):
        """"pass", "fail" or "inconclusive" against the limit."""
        if self.slope is None or self.stderr is None or 2 * self.stderr >= LIMIT_MB_PER_MILLION_RUNS:
            return "inconclusive"
        return "fail" if self.slope > LIMIT_MB_PER_MILLION_RUNS else "pass"

    def describe(self):
        if self.slope is None:
            return f"n/a ({self.points} jobs)"
        spread = "" if self.stderr is None else f" ± {2 * self.stderr:.1f}"
        return f"{self.slope:+.1f}{spread} ({self.points} jobs)"


def fit(points):
    """Least squares of y (MB) on x (runs): the slope in MB per million
    runs and its standard error. Too few points or no spread in x: no slope."""
    n = len(points)
    if n < MIN_POINTS:
        return Fit(n, None, None)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return Fit(n, None, None)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    residual = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in points)
    stderr = math.sqrt(residual / (n - 2) / sxx)
    return Fit(n, slope * 1e6, stderr * 1e6)


@dataclass(frozen=True)
class JobMemory:
    job: int
    runs: int  # the job's own
    cumulative_runs: int  # the target's, when the job was merged
    merged_at: float  # seconds into the target's run
    peak_rss_mb: float
    observed_seconds: float  # from the first to the last /proc sample of it


def trend_and_leak(jobs, warmup_runs=WARMUP_RUNS):
    """(trend fit, in-process fit, jobs left out as warm-up) for one target."""
    warm = [j for j in jobs if j.runs >= warmup_runs and j.observed_seconds >= MIN_OBSERVED_SECONDS]
    trend = fit([(j.cumulative_runs, j.peak_rss_mb) for j in warm])
    leak = fit([(j.runs, j.peak_rss_mb) for j in warm])
    return trend, leak, len(jobs) - len(warm)
