"""What a target's run means for the soak: its figures, its failures, and the
soak's exit status.

Fails (exit 1) on any divergence or other finding (a crash, an OOM, a
leak report), any timeout, or a resolved RSS slope above the limit
(rss_trend.py). With BPFDIFF_PLANTED_BUG set the findings are expected
(a negative control), and they still fail the soak: that is how the
control shows the soak sees them. Exit 2 when a target could not run (it
never started fuzzing, or no job of it finished), unless something failed:
a finding is never hidden behind "could not run".
"""

from dataclasses import dataclass, field

from rss_trend import WARMUP_RUNS, trend_and_leak

PASSED, FAILED, COULD_NOT_RUN = 0, 1, 2


@dataclass
class TargetVerdict:
    name: str
    runs: int
    seconds: float
    jobs: int
    cov: int
    corpus: int
    divergences: int
    findings: int  # crashes (divergences among them), OOMs and leaks
    timeouts: int
    ooms: int
    peak_rss_mb: float
    trend: object  # rss_trend.Fit
    leak: object  # rss_trend.Fit
    warmup_left_out: int
    failures: list = field(default_factory=list)
    could_not_run: str | None = None  # why, when it could not

    @property
    def execs_per_second(self):
        return self.runs / self.seconds if self.seconds > 0 else 0.0


def judge(run, findings, warmup_runs=WARMUP_RUNS):
    """The verdict for one target_run.TargetRun and its findings.Findings."""
    last = run.last_status()
    jobs = run.jobs()
    trend, leak, left_out = trend_and_leak(jobs, warmup_runs)
    crashes = max(last.crashes if last else 0, findings.count("crash"))
    timeouts = max(last.timeouts if last else 0, findings.count("timeout"))
    ooms = max(last.ooms if last else 0, findings.count("oom"))
    leaks = findings.count("leak")
    peak = max([j.peak_rss_mb for j in jobs] + [s.hwm_kb / 1024 for s in run.seen.values()], default=0.0)
    v = TargetVerdict(name=run.plan.name, runs=last.runs if last else 0, seconds=run.seconds,
                      jobs=len(run.statuses), cov=last.cov if last else 0, corpus=last.corpus if last else 0,
                      divergences=findings.divergences, findings=crashes + ooms + leaks,
                      timeouts=timeouts, ooms=ooms, peak_rss_mb=peak, trend=trend, leak=leak,
                      warmup_left_out=left_out)
    artifacts = run.plan.artifact_dir
    if v.divergences:
        v.failures.append(f"{v.divergences} divergence(s) (replays in {artifacts})")
    other = [c for c in findings.crash_classes.values() if c != "divergence"]
    if crashes > v.divergences:
        kinds = ", ".join(sorted(set(other))) or "not replayed"
        v.failures.append(f"{crashes - v.divergences} other crash(es): {kinds} (artifacts in {artifacts})")
    if ooms:
        v.failures.append(f"{ooms} out-of-memory (artifacts in {artifacts})")
    if leaks:
        v.failures.append(f"{leaks} leak report(s) (artifacts in {artifacts})")
    if timeouts:
        v.failures.append(f"{timeouts} timeout(s) (artifacts in {artifacts})")
    for label, fit_ in (("RSS trend over the soak", trend), ("RSS growth inside a job", leak)):
        if fit_.verdict == "fail":
            v.failures.append(f"{label}: {fit_.slope:.1f} MB per million runs, above the limit")
    if not run.started and run.interrupted:
        v.could_not_run = (f"its {run.plan.share_seconds:.0f} s ran out before libFuzzer had read its seeds "
                           f"(log: {run.plan.log_path}); give the soak more hours or fewer targets")
    elif not run.started:
        v.could_not_run = f"the fuzzer never started (log: {run.plan.log_path})"
    elif not run.statuses:
        v.could_not_run = f"no job finished in {run.seconds:.0f} s (log: {run.plan.log_path})"
    return v


def exit_status(verdicts):
    if any(v.failures for v in verdicts):
        return FAILED
    if any(v.could_not_run for v in verdicts) or not verdicts:
        return COULD_NOT_RUN
    return PASSED
