#!/usr/bin/env python3
"""ci/planted_gate.py on a stand-in build: a `bpfdiff` that lists a fixed
catalog and a fuzz target whose verdict each reproducer's bytes script.
Nothing here fuzzes or times anything: every case gives one verdict.

Usage: planted_gate_test.py CI_DIR
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

CI_DIR = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
if CI_DIR is None:
    sys.exit("usage: planted_gate_test.py CI_DIR")
GATE = os.path.join(CI_DIR, "planted_gate.py")

CATALOG = "bug-a\tfake_fuzzer\tarea\t-\tfix\twhat\nbug-b\tfake_fuzzer\tarea\t-\tfix\twhat\n"

# The stand-in target replays its one file argument (it ignores flags, as
# the replay mains do). The file's first line says what to do when
# BPFDIFF_PLANTED_BUG names the bug on its second line, the third what to
# do otherwise: "clean", "finding" (banner, abort), "finding-other-words"
# (another banner text: only the banner's start is read), "harness"
# (exit 2), "crash" (abort without a banner), "banner-exit-0".
FAKE_TARGET = textwrap.dedent("""\
    #!/usr/bin/env python3
    import os, sys
    path = [a for a in sys.argv[1:] if not a.startswith("-")][0]
    lines = open(path).read().split("\\n")
    with_bug, bug, without = lines[0], lines[1], lines[2]
    action = with_bug if os.environ.get("BPFDIFF_PLANTED_BUG") == bug else without
    sys.stdout.flush()
    if action == "clean":
        print("replayed 1 inputs")
        sys.exit(0)
    if action in ("finding", "finding-other-words"):
        print("==== bpfdiff: DIVERGENCE ====" if action == "finding" else "==== something else ====")
        print("finding kind: whatever the code says today")
        sys.stdout.flush()
        os.abort()
    if action == "harness":
        print("==== bpfdiff: DIVERGENCE ====")  # even with a banner, exit 2 is no finding
        sys.exit(2)
    if action == "crash":
        sys.stdout.flush()
        os.abort()
    if action == "banner-exit-0":
        print("==== bpfdiff: DIVERGENCE ====")
        sys.exit(0)
    """)


def executable(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class GateTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory(prefix="planted-gate-test.")
        self.build = os.path.join(self.work.name, "build")
        self.reproducers = os.path.join(self.work.name, "reproducers")
        os.makedirs(self.reproducers)
        executable(os.path.join(self.build, "cli", "bpfdiff"),
                   "#!/bin/sh\n[ \"$1 $2\" = 'planted list' ] || exit 2\nprintf '" + CATALOG.replace("\t", "\\t")
                   .replace("\n", "\\n") + "'\n")
        executable(os.path.join(self.build, "fuzz", "targets", "fake_fuzzer"), FAKE_TARGET)
        self.reproduce("bug-a", "finding", "clean")
        self.reproduce("bug-b", "finding", "clean")

    def tearDown(self):
        self.work.cleanup()

    def reproduce(self, bug, with_bug, without, name=None):
        with open(os.path.join(self.reproducers, name or bug), "w") as f:
            f.write(f"{with_bug}\n{bug}\n{without}\n")

    def gate(self, *extra, env=None):
        json_path = os.path.join(self.work.name, "gate.json")
        environment = {k: v for k, v in os.environ.items() if k != "BPFDIFF_PLANTED_BUG"}
        environment.update(env or {})
        done = subprocess.run([sys.executable, GATE, "--build", self.build, "--reproducers", self.reproducers,
                               "--json", json_path, *extra], capture_output=True, text=True, env=environment,
                              timeout=120)
        results = None
        if os.path.exists(json_path):
            with open(json_path) as f:
                results = json.load(f)
        return done, results

    def problems(self, results):
        return {b["bug"]: b["problem"] for b in results["bugs"] if not b["passed"]}

    def test_every_bug_caught_and_clean_passes(self):
        done, results = self.gate()
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("planted gate: 2 of 2 planted bugs caught", done.stdout)
        self.assertEqual(results["format"], "bpfdiff-planted-gate-1")
        self.assertTrue(results["passed"])
        self.assertEqual(results["bugs"][0]["with_bug"]["result"], "finding")
        self.assertEqual(results["bugs"][0]["without_bug"]["result"], "clean")
        self.assertIsNone(results["planted_in_environment"])

    def test_a_finding_is_its_banner_whatever_its_words(self):
        self.reproduce("bug-a", "finding-other-words", "clean")
        done, _ = self.gate()
        self.assertEqual(done.returncode, 0, done.stdout)

    def test_a_reproducer_no_longer_caught_fails(self):
        self.reproduce("bug-b", "clean", "clean")
        done, results = self.gate()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertEqual(list(self.problems(results)), ["bug-b"])
        self.assertIn("not caught with the bug switched on", self.problems(results)["bug-b"])
        self.assertIn("FAIL  bug-b", done.stdout)
        self.assertIn("| replayed 1 inputs", done.stdout)  # the failed replay's output, without --logs

    def test_a_reproducer_that_finds_without_its_bug_fails(self):
        self.reproduce("bug-a", "finding", "finding")
        done, results = self.gate()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("not clean without the bug", self.problems(results)["bug-a"])

    def test_a_harness_failure_or_a_crash_without_banner_is_no_finding(self):
        for action in ("harness", "crash", "banner-exit-0"):
            with self.subTest(action=action):
                self.reproduce("bug-a", action, "clean")
                done, results = self.gate()
                self.assertEqual(done.returncode, 1, done.stdout)
                self.assertEqual(results["bugs"][0]["with_bug"]["result"], "error")

    def test_a_bug_without_a_reproducer_fails(self):
        os.remove(os.path.join(self.reproducers, "bug-b"))
        done, results = self.gate()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("no reproducer", self.problems(results)["bug-b"])

    def test_two_reproducers_for_one_bug_fail(self):
        self.reproduce("bug-b", "finding", "clean", name="bug-b.pack")
        done, results = self.gate()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("2 reproducers, one expected", self.problems(results)["bug-b"])

    def test_a_file_that_names_no_bug_fails(self):
        self.reproduce("bug-gone", "finding", "clean")
        done, results = self.gate()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertEqual(len(results["problems"]), 1)
        self.assertIn("bug-gone: names no planted bug", results["problems"][0])
        done, _ = self.gate("--bugs", "bug-a")  # a chosen few: the others' files are not judged
        self.assertEqual(done.returncode, 0, done.stdout)

    def test_a_night_with_a_bug_planted_throughout_fails(self):
        done, results = self.gate(env={"BPFDIFF_PLANTED_BUG": "bug-a"})
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertEqual(results["planted_in_environment"], "bug-a")
        self.assertEqual(list(self.problems(results)), ["bug-a"])
        self.assertIn("BPFDIFF_PLANTED_BUG=bug-a is set", self.problems(results)["bug-a"])

    def test_logs_are_kept_when_asked(self):
        logs = os.path.join(self.work.name, "logs")
        done, _ = self.gate("--logs", logs, "--jobs", "2")
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertEqual(sorted(os.listdir(logs)),
                         ["bug-a.with.txt", "bug-a.without.txt", "bug-b.with.txt", "bug-b.without.txt"])

    def test_what_cannot_run_exits_2(self):
        done, _ = self.gate("--bugs", "no-such-bug")
        self.assertEqual(done.returncode, 2)
        self.assertIn("not planted bugs: no-such-bug", done.stderr)
        os.remove(os.path.join(self.build, "cli", "bpfdiff"))
        done, _ = self.gate()
        self.assertEqual(done.returncode, 2)
        self.assertIn("bpfdiff", done.stderr)


if __name__ == "__main__":
    unittest.main()
