"""The soak's short text summary and its JSON twin, from the verdicts."""

import json

from rss_trend import LIMIT_MB_PER_MILLION_RUNS, MIN_OBSERVED_SECONDS
from verdict import COULD_NOT_RUN, FAILED, PASSED

_STATUS_WORDS = {PASSED: "PASSED", FAILED: "FAILED", COULD_NOT_RUN: "COULD NOT RUN"}


def _targets(n):
    return "1 target" if n == 1 else f"{n} targets one after another"


def text(settings, verdicts, status):
    lines = [
        f"bpfdiff soak: {_STATUS_WORDS[status]}",
        f"{settings['hours']:g} h on {settings['cores']} cores: "
        f"{_targets(len(settings['targets']))}, {settings['share_seconds']:.0f} s each with -fork={settings['cores']}",
        f"build: {settings['build']}   planted bug: {settings['planted_bug'] or 'none (an unmutated build)'}",
        "",
        f"{'target':<24} {'runs':>11} {'exec/s':>8} {'jobs':>5} {'div':>4} {'find':>5} {'t/o':>4} {'oom':>4} "
        f"{'peak MB':>8}  RSS slope MB/Mruns: trend | in a job",
    ]
    for v in verdicts:
        lines.append(
            f"{v.name:<24} {v.runs:>11} {v.execs_per_second:>8.0f} {v.jobs:>5} {v.divergences:>4} "
            f"{v.findings:>5} {v.timeouts:>4} {v.ooms:>4} {v.peak_rss_mb:>8.1f}  "
            f"{v.trend.describe()} {v.trend.verdict} | {v.leak.describe()} {v.leak.verdict}")
    lines += [
        "",
        f"RSS slopes: least squares of each job's peak RSS (VmHWM) against the target's cumulative runs "
        f"(trend) and against the job's own runs (in a job), ± two standard errors; limit "
        f"{LIMIT_MB_PER_MILLION_RUNS:g} MB per million runs. Warm-up: only jobs that ran at least "
        f"{settings['warmup_runs']} runs and were sampled for {MIN_OBSERVED_SECONDS:g} s count "
        f"({sum(v.warmup_left_out for v in verdicts)} jobs left out in all); 'inconclusive' = too few such "
        f"jobs, or a slope not resolved to the limit: run longer, or fewer targets.",
    ]
    problems = [(v.name, f) for v in verdicts for f in v.failures]
    problems += [(v.name, f"could not run: {v.could_not_run}") for v in verdicts if v.could_not_run]
    if problems:
        lines += ["", "problems:"] + [f"  {name}: {what}" for name, what in problems]
    lines += ["", f"files: {settings['out']}/soak.csv, jobs.csv, soak.svg, summary.txt, soak.json, "
                  f"logs/, artifacts/; corpora in {settings['work']}"]
    return "\n".join(lines) + "\n"


def as_json(settings, verdicts, status):
    def fit(f):
        return {"slope_mb_per_million_runs": f.slope, "two_stderr": None if f.stderr is None else 2 * f.stderr,
                "jobs": f.points, "verdict": f.verdict}

    return json.dumps({
        "format": "bpfdiff-soak-1",
        "status": _STATUS_WORDS[status].lower().replace(" ", "_"),
        "exit_code": status,
        "settings": settings,
        "targets": [{
            "target": v.name, "runs": v.runs, "seconds": round(v.seconds, 1),
            "execs_per_second": round(v.execs_per_second, 1), "jobs": v.jobs, "cov": v.cov,
            "corpus": v.corpus, "divergences": v.divergences, "findings": v.findings,
            "timeouts": v.timeouts, "ooms": v.ooms, "peak_rss_mb": round(v.peak_rss_mb, 1),
            "rss_trend": fit(v.trend), "rss_in_job": fit(v.leak), "warmup_left_out": v.warmup_left_out,
            "failures": v.failures, "could_not_run": v.could_not_run,
        } for v in verdicts],
    }, indent=2) + "\n"
