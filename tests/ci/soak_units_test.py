#!/usr/bin/env python3
"""The soak's pieces (ci/soak/) on fixed inputs, and its driver on a scripted
stand-in for a libFuzzer -fork parent.

Usage: soak_units_test.py CI_SOAK_DIR
"""

import csv
import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
import xml.etree.ElementTree as ElementTree

SOAK_DIR = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
if SOAK_DIR is None:
    sys.exit("usage: soak_units_test.py CI_SOAK_DIR")
sys.path.insert(0, SOAK_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(SOAK_DIR)))  # ci/libfuzzer_options.py

import findings  # noqa: E402
import fork_status  # noqa: E402
import rss_trend  # noqa: E402
import soak_plot  # noqa: E402
import summary  # noqa: E402
import workers  # noqa: E402
from libfuzzer_options import flags_from_options  # noqa: E402
from target_run import TargetPlan, TargetRun, SeenJob  # noqa: E402
from verdict import COULD_NOT_RUN, FAILED, PASSED, exit_status, judge  # noqa: E402

LLVM14_LINE = "#2680: cov: 13714 ft: 13340 corp: 557 exec/s 65 oom/timeout/crash: 0/1/2 time: 40s job: 9 dft_time: 0"
NEWER_LINE = "#5000: cov: 14000 ft: 13500 corp: 600 exec/s: 70 oom/timeout/crash: 3/0/0 time: 61s job: 12 dft_time: 0"


class ForkStatusTest(unittest.TestCase):
    def test_llvm14_format(self):
        s = fork_status.parse_status_line(LLVM14_LINE + "\n")
        self.assertEqual((s.runs, s.cov, s.features, s.corpus, s.execs_per_second), (2680, 13714, 13340, 557, 65))
        self.assertEqual((s.ooms, s.timeouts, s.crashes, s.seconds, s.job), (0, 1, 2, 40, 9))

    def test_newer_format(self):
        s = fork_status.parse_status_line(NEWER_LINE)
        self.assertEqual((s.runs, s.execs_per_second, s.ooms, s.seconds, s.job), (5000, 70, 3, 61, 12))

    def test_other_lines_are_not_status(self):
        for line in ["INFO: -fork=2: 74 seed inputs, starting to fuzz in /tmp/x",
                     "#1024\tpulse  cov: 10 ft: 12 corp: 3/40b exec/s: 512 rss: 75Mb",
                     "  NEW_FUNC: 0x5625 in LLVMFuzzerTestOneInput",
                     "==123== ERROR: libFuzzer: deadly signal", ""]:
            self.assertIsNone(fork_status.parse_status_line(line), line)

    def test_job_runs_are_differences_of_the_cumulative_count(self):
        lines = [LLVM14_LINE.replace("#2680", "#100").replace("job: 9", "job: 1"),
                 LLVM14_LINE.replace("#2680", "#350").replace("job: 9", "job: 3"),
                 NEWER_LINE.replace("#5000", "#600").replace("job: 12", "job: 2")]
        jobs = fork_status.finished_jobs([fork_status.parse_status_line(l) for l in lines])
        self.assertEqual([(j.job, j.runs, j.cumulative_runs) for j in jobs], [(1, 100, 100), (3, 250, 350), (2, 250, 600)])


class WorkersTest(unittest.TestCase):
    def test_job_from_the_features_dir_flag(self):
        args = ["/b/diff_fuzzer", "-max_len=4096", "-features_dir=/tmp/w/libFuzzerTemp.FuzzWithFork7.dir/F12",
                "/tmp/w/libFuzzerTemp.FuzzWithFork7.dir/C12"]
        self.assertEqual(workers.job_of(args), 12)
        self.assertIsNone(workers.job_of(["/b/diff_fuzzer", "-merge_inner=1", "-merge_control_file=/tmp/m"]))

    def test_memory_lines(self):
        text = "Name:\tdiff_fuzzer\nVmPeak:\t  900 kB\nVmHWM:\t   63000 kB\nVmRSS:\t   61000 kB\n"
        self.assertEqual(workers.memory_kb(text), (61000, 63000))
        self.assertIsNone(workers.memory_kb("Name:\tzombie\nState:\tZ (zombie)\n"))

    def test_descendants_from_a_fake_proc(self):
        with tempfile.TemporaryDirectory() as proc:
            for pid, ppid, comm in [(10, 1, "fuzzer"), (11, 10, "sh"), (12, 11, "diff fuzzer) x"), (13, 1, "other"),
                                    (14, 12, "child")]:
                os.makedirs(f"{proc}/{pid}")
                with open(f"{proc}/{pid}/stat", "w") as f:
                    f.write(f"{pid} ({comm}) S {ppid} 1 1 0 -1\n")
            table = workers.parent_pids(proc)
            self.assertEqual(table[12], 11)
            self.assertEqual(sorted(workers.descendants(10, table)), [11, 12, 14])

    def test_this_process_has_memory(self):
        self.assertGreater(workers.process_rss_kb(os.getpid()), 0)


class RssTrendTest(unittest.TestCase):
    def test_exact_line(self):
        # 20 MB per million runs, no noise.
        f = rss_trend.fit([(x, 50 + 20e-6 * x) for x in (0, 100_000, 200_000, 400_000, 800_000)])
        self.assertAlmostEqual(f.slope, 20.0, places=6)
        self.assertAlmostEqual(f.stderr, 0.0, places=6)
        self.assertEqual(f.verdict, "fail")

    def test_flat_passes(self):
        f = rss_trend.fit([(x, 60.0 + (0.01 if x % 2 else 0)) for x in range(0, 2_000_000, 100_000)])
        self.assertEqual(f.verdict, "pass")

    def test_too_few_points_or_no_spread_is_inconclusive(self):
        self.assertEqual(rss_trend.fit([(1, 1), (2, 2), (3, 3)]).verdict, "inconclusive")
        self.assertEqual(rss_trend.fit([(5, 1), (5, 2), (5, 3), (5, 4)]).verdict, "inconclusive")

    def test_unresolved_slope_is_inconclusive_not_a_failure(self):
        # Noise of a few MB over a few thousand runs: hundreds of MB per
        # million runs, but not resolved.
        f = rss_trend.fit([(1000, 50), (2000, 53), (3000, 49), (4000, 54)])
        self.assertGreater(f.slope, 10)
        self.assertEqual(f.verdict, "inconclusive")

    def test_warmup_and_short_jobs_are_left_out(self):
        job = rss_trend.JobMemory  # job, runs, cumulative runs, merged at, peak MB, observed seconds
        jobs = [job(1, 100, 100, 2.0, 40.0, 9.0),  # still warming up: a steep climb, left out
                job(2, 5_000, 5_100, 10.0, 180.0, 9.0),  # still warming up
                job(3, 20_000, 25_100, 30.0, 190.0, 2.0),  # its peak seen for 2 s only: left out
                job(4, 20_000, 45_100, 50.0, 183.0, 9.0), job(5, 30_000, 75_100, 70.0, 183.1, 9.0),
                job(6, 40_000, 115_100, 90.0, 183.0, 9.0), job(7, 50_000, 165_100, 99.0, 183.1, 9.0)]
        trend, leak, left_out = rss_trend.trend_and_leak(jobs)
        self.assertEqual((trend.points, leak.points, left_out), (4, 4, 3))
        self.assertEqual((trend.verdict, leak.verdict), ("pass", "pass"))
        # Counting the warm-up in, the same jobs look like a leak.
        _, with_warmup, _ = rss_trend.trend_and_leak(jobs, warmup_runs=0)
        self.assertGreater(with_warmup.slope, rss_trend.LIMIT_MB_PER_MILLION_RUNS)


class OptionsAndArtifactsTest(unittest.TestCase):
    def test_options_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.options")
            with open(path, "w") as f:
                f.write("[libfuzzer]\nmax_len = 4096\ndict = t.dict\n\n[asan]\ndetect_leaks = 0\n")
            self.assertEqual(flags_from_options(path), ["-max_len=4096", f"-dict={d}/t.dict"])
            self.assertEqual(flags_from_options(os.path.join(d, "missing.options")), [])

    def test_artifact_kinds_and_replay_classes(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ["crash-aa", "crash-aa.replay.txt", "timeout-bb", "oom-cc", "slow-unit-dd", "notes"]:
                open(os.path.join(d, name), "w").close()
            kinds = findings.artifacts_by_kind(d)
            self.assertEqual([os.path.basename(p) for p in kinds["crash"]], ["crash-aa"])
            self.assertEqual((len(kinds["timeout"]), len(kinds["oom"]), len(kinds["slow-unit"])), (1, 1, 1))
        self.assertEqual(findings.classify_replay("x\n==== bpfdiff: DIVERGENCE ====\nr0", 134), "divergence")
        self.assertEqual(findings.classify_replay("==== bpfdiff: PACK INVARIANT BROKEN (2 CPUs, operation 3) ====", 1),
                         "pack invariant broken (2 cpus, operation 3)")
        self.assertEqual(findings.classify_replay("==1== ERROR: AddressSanitizer", 1), "crash")
        self.assertEqual(findings.classify_replay("Executed x in 1 ms", 0), "did not reproduce")


def _run_with(statuses, seen=None, started=True, share=100.0):
    plan = TargetPlan(name="t", binary="/bin/true", seeds=None, flags=[], share_seconds=share, cores=2,
                      work_dir="/tmp/w", artifact_dir="/tmp/a", log_path="/tmp/l")
    run = TargetRun(plan, statuses=[fork_status.parse_status_line(s) for s in statuses], started=started)
    run.seen = seen or {}
    run.seconds = share
    return run


def _status(runs, job, seconds, crashes=0, timeouts=0):
    return (f"#{runs}: cov: 1 ft: 1 corp: 1 exec/s 1 oom/timeout/crash: 0/{timeouts}/{crashes} "
            f"time: {seconds}s job: {job} dft_time: 0")


class VerdictTest(unittest.TestCase):
    def test_clean_run_passes(self):
        v = judge(_run_with([_status(100, 1, 2)]), findings.Findings(findings.artifacts_by_kind("/nonexistent")))
        self.assertEqual((v.failures, v.could_not_run, v.runs), ([], None, 100))
        self.assertEqual(exit_status([v]), PASSED)

    def test_divergence_fails(self):
        found = findings.Findings({**findings.artifacts_by_kind("/nonexistent"), "crash": ["/a/crash-1"]},
                                  crash_classes={"/a/crash-1": "divergence"})
        v = judge(_run_with([_status(100, 1, 2)]), found)
        self.assertEqual((v.divergences, v.findings), (1, 1))
        self.assertIn("divergence", v.failures[0])
        self.assertEqual(exit_status([v]), FAILED)

    def test_a_timeout_counted_only_by_the_parent_fails(self):
        v = judge(_run_with([_status(100, 1, 2, timeouts=1)]), findings.Findings(findings.artifacts_by_kind("/x")))
        self.assertEqual(v.timeouts, 1)
        self.assertEqual(exit_status([v]), FAILED)

    def test_growing_rss_fails(self):
        # Jobs of growing length whose peak grows 30 MB per million of their runs.
        statuses, seen, total = [], {}, 0
        for job in range(1, 11):
            runs = job * 50_000
            total += runs
            statuses.append(_status(total, job, 30 + job * 10))
            seen[job] = SeenJob(first_seen=0.0, last_seen=10.0, hwm_kb=int((50 + 30e-6 * runs) * 1024))
        v = judge(_run_with(statuses, seen), findings.Findings(findings.artifacts_by_kind("/x")))
        self.assertEqual(v.leak.verdict, "fail")
        self.assertTrue(any("inside a job" in f for f in v.failures), v.failures)
        self.assertEqual(exit_status([v]), FAILED)

    def test_could_not_run_unless_something_failed(self):
        none = findings.Findings(findings.artifacts_by_kind("/x"))
        never = judge(_run_with([], started=False), none)
        no_job = judge(_run_with([]), none)
        self.assertIn("never started", never.could_not_run)
        self.assertIn("no job finished", no_job.could_not_run)
        self.assertEqual(exit_status([never]), COULD_NOT_RUN)
        self.assertEqual(exit_status([]), COULD_NOT_RUN)
        failed = judge(_run_with([_status(1, 1, 1, timeouts=1)]), none)
        self.assertEqual(exit_status([never, failed]), FAILED)


class PlotAndSummaryTest(unittest.TestCase):
    def test_svg_parses_and_names_every_target(self):
        rows = [{"target": t, "soak_seconds": s, "workers": 2, "worker_peak_rss_mb_max": 50 + s / 10,
                 "execs_per_second": 100.0} for t, s in [("a", 0), ("a", 30), ("b", 60), ("b", 90)]]
        jobs = {"a": [rss_trend.JobMemory(1, 10, 10, 5.0, 52.0, 5.0)]}
        svg = soak_plot.render(rows, jobs, {"a": 0.0, "b": 60.0}, "soak <test> & co")
        root = ElementTree.fromstring(svg)
        self.assertTrue(root.tag.endswith("svg"))
        texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
        self.assertIn("a", texts)
        self.assertIn("b", texts)
        self.assertIn("soak <test> & co", texts)
        self.assertEqual(len(list(root.iter("{http://www.w3.org/2000/svg}circle"))), 1)

    def test_summary_and_json(self):
        v = judge(_run_with([_status(100, 1, 2)]), findings.Findings(findings.artifacts_by_kind("/x")))
        settings = {"hours": 0.5, "cores": 2, "share_seconds": 1800, "warmup_runs": 10000, "build": "b",
                    "out": "/o", "work": "/w", "planted_bug": "",
                    "targets": ["t"]}
        text = summary.text(settings, [v], PASSED)
        self.assertTrue(text.startswith("bpfdiff soak: PASSED"))
        self.assertIn("unmutated", text)
        data = json.loads(summary.as_json(settings, [v], PASSED))
        self.assertEqual((data["status"], data["targets"][0]["runs"]), ("passed", 100))


# A stand-in for a libFuzzer binary: in -fork mode it prints the start line
# and fixed status lines (LLVM 14's format, then the newer one), and leaves
# a crash artifact when FAKE_CRASH is set; given one file (a replay), it
# prints diff_fuzzer's divergence banner and aborts.
FAKE_FUZZER = textwrap.dedent("""\
    #!/usr/bin/env python3
    import os, sys, time
    args = sys.argv[1:]
    if len(args) == 1 and os.path.isfile(args[0]):
        print("==== bpfdiff: DIVERGENCE ====\\nr0 differs")
        sys.exit(134)
    if os.environ.get("FAKE_NEVER_STARTS"):
        print("fake: BPFDIFF_PLANTED_BUG: unknown bug")
        sys.exit(2)
    prefix = next(a.split("=", 1)[1] for a in args if a.startswith("-artifact_prefix="))
    print("INFO: -fork=2: 3 seed inputs, starting to fuzz in /tmp/fake", flush=True)
    lines = ["{LLVM14}".replace("#2680", "#1000").replace("job: 9", "job: 1").replace("0/1/2", "0/0/0"),
             "{NEWER}".replace("#5000", "#3000").replace("job: 12", "job: 2").replace("3/0/0", "0/0/0")]
    for line in lines:
        time.sleep(0.3)
        print(line, flush=True)
    if os.environ.get("FAKE_CRASH"):
        with open(prefix + "crash-0123", "w") as f:
            f.write("input")
    print("INFO: exiting: 0 time: 1s", flush=True)
    """).replace("{LLVM14}", LLVM14_LINE).replace("{NEWER}", NEWER_LINE)


class DriverTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.dir.name, "fake_fuzzer")
        with open(self.fake, "w") as f:
            f.write(FAKE_FUZZER)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IXUSR)
        self.source = os.path.join(self.dir.name, "checkout")
        os.makedirs(os.path.join(self.source, "fuzz", "targets"))

    def tearDown(self):
        self.dir.cleanup()

    def soak(self, **env):
        out = os.path.join(self.dir.name, "out")
        done = subprocess.run(
            [sys.executable, "-B", os.path.join(SOAK_DIR, "soak.py"), "--target", f"fake={self.fake}",
             "--hours", "0.0005", "--cores", "2", "--out", out, "--work", os.path.join(self.dir.name, "work"),
             "--source", self.source, "--interval", "0.5"],
            env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=50)
        return done.returncode, done.stdout.decode(), out

    def test_status_lines_of_both_formats_reach_the_csv(self):
        code, output, out = self.soak()
        self.assertEqual(code, PASSED, output)
        with open(os.path.join(out, "soak.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(rows[-1]["runs"], "3000")
        self.assertEqual(rows[-1]["jobs_merged"], "2")
        with open(os.path.join(out, "soak.json")) as f:
            self.assertEqual(json.load(f)["targets"][0]["runs"], 3000)
        ElementTree.parse(os.path.join(out, "soak.svg"))

    def test_a_planted_divergence_fails_the_soak(self):
        code, output, out = self.soak(FAKE_CRASH="1")
        self.assertEqual(code, FAILED, output)
        with open(os.path.join(out, "soak.json")) as f:
            target = json.load(f)["targets"][0]
        self.assertEqual((target["divergences"], target["findings"]), (1, 1))
        with open(os.path.join(out, "soak.csv")) as f:
            last = list(csv.DictReader(f))[-1]
        self.assertEqual((last["divergences"], last["findings"], last["fork_crashes"]), ("1", "1", "0"))
        self.assertIn("1 divergence", output)
        self.assertTrue(os.path.isfile(os.path.join(out, "artifacts", "fake", "crash-0123.replay.txt")))

    def test_a_target_that_never_starts_could_not_run(self):
        code, output, _ = self.soak(FAKE_NEVER_STARTS="1")
        self.assertEqual(code, COULD_NOT_RUN, output)
        self.assertIn("never started", output)

    def test_work_inside_the_checkout_is_refused(self):
        done = subprocess.run(
            [sys.executable, "-B", os.path.join(SOAK_DIR, "soak.py"), "--target", f"fake={self.fake}", "--hours", "1",
             "--cores", "1", "--out", os.path.join(self.dir.name, "o"),
             "--work", os.path.join(self.source, "fuzz", "corpus"), "--source", self.source],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(done.returncode, 2)
        self.assertIn("inside the checkout", done.stdout.decode())


if __name__ == "__main__":
    unittest.main(verbosity=2)
