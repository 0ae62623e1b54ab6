#!/usr/bin/env python3
"""The soak's driver (ci/soak.sh builds and finds the targets, then calls
this): runs each target for its share of the time under -fork, then writes
into --out:

  soak.csv      a row per target every --interval seconds (written as it goes)
  jobs.csv      each merged job: its runs and its worker's peak RSS
  soak.svg      workers' peak RSS and throughput over the soak
  summary.txt   the short summary (also printed), soak.json the same as data
  logs/         each -fork parent's output; artifacts/<target>/ its findings

Exit status: 0 passed, 1 failed, 2 could not run (verdict.py).

Targets run one after another, each with every core, rather than side by
side: libFuzzer's timeouts are wall-clock, and N targets sharing the cores
would run slower than their .options timeouts assume, so a side-by-side
soak could fail on timeouts that only measure the crowding. One target at
a time also leaves each a stretch of time of its own for its RSS trend,
and figures that compare with the nightly's single-target runs.
"""

import argparse
import csv
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # ci/

import soak_plot
import summary
from libfuzzer_options import flags_from_options
from rss_trend import WARMUP_RUNS
from target_run import ROW_FIELDS, TargetPlan, run_target
from verdict import COULD_NOT_RUN, PASSED, exit_status, judge

JOB_FIELDS = ["target", "job", "runs", "cumulative_runs", "merged_at_seconds", "peak_rss_mb", "observed_seconds"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", action="append", required=True, metavar="NAME=BINARY")
    p.add_argument("--hours", type=float, required=True)
    p.add_argument("--cores", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--source", required=True, help="the checkout: seeds and .options files")
    p.add_argument("--build", default="", help="shown in the summary")
    p.add_argument("--interval", type=float, default=30.0)
    p.add_argument("--warmup-runs", type=int, default=WARMUP_RUNS,
                   help="a process's first runs, left out of the RSS fits (rss_trend.py)")
    args = p.parse_args(argv)
    if args.hours <= 0 or args.cores <= 0 or args.interval <= 0 or args.warmup_runs < 0:
        p.error("--hours, --cores and --interval must be positive, --warmup-runs not negative")
    if _is_inside(args.work, args.source):
        p.error(f"--work {args.work} is inside the checkout; corpora go outside it")
    return args


def _is_inside(path, parent):
    path, parent = os.path.realpath(path), os.path.realpath(parent)
    return path == parent or path.startswith(parent + os.sep)


def plans(args):
    share = args.hours * 3600 / len(args.target)
    out, work = os.path.abspath(args.out), os.path.abspath(args.work)
    targets_dir = os.path.join(args.source, "fuzz", "targets")
    result = []
    for spec in args.target:
        name, _, binary = spec.partition("=")
        seeds = os.path.join(args.source, "fuzz", "corpus", name)
        result.append(TargetPlan(
            name=name, binary=os.path.abspath(binary), seeds=seeds if os.path.isdir(seeds) else None,
            flags=flags_from_options(os.path.join(targets_dir, name + ".options")),
            share_seconds=share, cores=args.cores, work_dir=os.path.join(work, name),
            artifact_dir=os.path.join(out, "artifacts", name), log_path=os.path.join(out, "logs", name + ".log")))
    return result


def _write_csv(path, fields, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def _write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    args = parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    # A TERM (a CI timeout, the nightly stopping us) ends the current target
    # cleanly (target_run kills its process group) and still writes the outputs.
    signal.signal(signal.SIGTERM, _interrupt)
    target_plans = plans(args)
    settings = {"hours": args.hours, "cores": args.cores, "share_seconds": target_plans[0].share_seconds,
                "interval_seconds": args.interval, "warmup_runs": args.warmup_runs, "build": args.build, "out": out,
                "work": os.path.abspath(args.work), "planted_bug": os.environ.get("BPFDIFF_PLANTED_BUG", ""),
                "targets": [p.name for p in target_plans]}
    soak_start = time.monotonic()
    rows, jobs_rows, jobs_by_target, offsets, verdicts = [], [], {}, {}, []
    interrupted = None  # the target running when a TERM or Ctrl-C came
    with open(os.path.join(out, "soak.csv"), "w", newline="") as csv_file:
        writer = csv.DictWriter(csv_file, fieldnames=ROW_FIELDS)
        writer.writeheader()

        def on_row(row):
            rows.append(row)
            writer.writerow(row)
            csv_file.flush()

        for plan in target_plans:
            print(f"soak: {plan.name} for {plan.share_seconds:.0f} s with -fork={plan.cores}", flush=True)
            offsets[plan.name] = time.monotonic() - soak_start
            try:
                run = run_target(plan, soak_start, args.interval, on_row)
            except KeyboardInterrupt:
                print(f"soak: interrupted during {plan.name}; writing what was measured", flush=True)
                interrupted = plan.name
                break
            verdict = judge(run, run.watcher.findings, args.warmup_runs)
            verdicts.append(verdict)
            jobs_by_target[plan.name] = run.jobs()
            jobs_rows += [{"target": plan.name, "job": j.job, "runs": j.runs, "cumulative_runs": j.cumulative_runs,
                           "merged_at_seconds": j.merged_at, "peak_rss_mb": round(j.peak_rss_mb, 2),
                           "observed_seconds": round(j.observed_seconds, 1)} for j in jobs_by_target[plan.name]]
            _write_csv(os.path.join(out, "jobs.csv"), JOB_FIELDS, jobs_rows)
            print(f"soak: {plan.name}: {verdict.runs} runs, {verdict.divergences} divergences, "
                  f"{verdict.findings} findings, {verdict.timeouts} timeouts, "
                  f"peak RSS {verdict.peak_rss_mb:.1f} MB", flush=True)

    status = exit_status(verdicts)
    if interrupted and status == PASSED:
        status = COULD_NOT_RUN
    _write_csv(os.path.join(out, "jobs.csv"), JOB_FIELDS, jobs_rows)
    title = f"bpfdiff soak: {args.hours:g} h on {args.cores} cores"
    _write_text(os.path.join(out, "soak.svg"), soak_plot.render(rows, jobs_by_target, offsets, title))
    report = summary.text(settings, verdicts, status)
    if interrupted:
        report += (f"interrupted during {interrupted}: its rows are in soak.csv; it and the targets "
                   f"after it have no verdict\n")
    _write_text(os.path.join(out, "summary.txt"), report)
    _write_text(os.path.join(out, "soak.json"), summary.as_json(settings, verdicts, status))
    print()
    print(report, end="")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
