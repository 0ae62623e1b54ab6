"""libFuzzer's -fork status lines, read into numbers.

The -fork parent prints one line each time it has merged a finished job:

  LLVM 14:  #N: cov: C ft: F corp: K exec/s E oom/timeout/crash: O/T/C time: Ss job: J dft_time: D
  later:    the same with `exec/s: E`

N counts the runs of every job merged so far (each job's
stat::number_of_executed_units), so the runs of job J are N minus the N
of the line before it. E has meant different averages in different
versions: the soak computes its own rates from N and the clock.
"""

import re
from dataclasses import dataclass

_STATUS = re.compile(
    r"^#(?P<runs>\d+): cov: (?P<cov>\d+) ft: (?P<features>\d+) corp: (?P<corpus>\d+)"
    r" exec/s:? (?P<execs>\d+)"
    r" oom/timeout/crash: (?P<ooms>\d+)/(?P<timeouts>\d+)/(?P<crashes>\d+)"
    r" time: (?P<seconds>\d+)s job: (?P<job>\d+)"
)


@dataclass(frozen=True)
class ForkStatus:
    runs: int  # cumulative, over every merged job
    cov: int
    features: int
    corpus: int
    execs_per_second: int  # as libFuzzer printed it (see above)
    ooms: int
    timeouts: int
    crashes: int
    seconds: int  # since the -fork parent started
    job: int  # the job just merged


def parse_status_line(line):
    """A ForkStatus for a -fork status line, None for any other line."""
    match = _STATUS.match(line.strip())
    if match is None:
        return None
    n = {key: int(value) for key, value in match.groupdict().items()}
    return ForkStatus(
        runs=n["runs"], cov=n["cov"], features=n["features"], corpus=n["corpus"],
        execs_per_second=n["execs"], ooms=n["ooms"], timeouts=n["timeouts"],
        crashes=n["crashes"], seconds=n["seconds"], job=n["job"])


@dataclass(frozen=True)
class FinishedJob:
    job: int
    runs: int  # the job's own
    cumulative_runs: int  # the target's, once this job was merged


def finished_jobs(statuses):
    """The jobs the status lines report, in merge order, with their own runs.

    How a job ended is not read from the counters: the parent counts a
    job's crash, timeout or OOM only after printing its line, and the last
    job's never, so the soak reads outcomes from the artifacts instead."""
    jobs, previous_runs = [], 0
    for status in statuses:
        jobs.append(FinishedJob(job=status.job, runs=status.runs - previous_runs, cumulative_runs=status.runs))
        previous_runs = status.runs
    return jobs
