"""The planted-bug gate: every planted bug is still caught, deterministically.

For each bug of `bpfdiff planted list`, its fuzz target replays the bug's
fixed reproducer (tests/planted/reproducers/<bug>, the input bytes that
target takes) twice:

  with the bug     BPFDIFF_PLANTED_BUG=<bug>: the target must report a
                   finding (its "==== " banner and a failing exit status
                   that is not 2, which is a harness failure or a wrong
                   setting, fuzz/targets/target_settings.h)
  without it       the environment as given: the target must replay the
                   input cleanly (exit 0, no banner)

One replay each, no fuzzing and no time limit that decides anything: the
same build and reproducers give the same verdict on every run and every
machine. What a finding says (its kind, its frames) is not checked, only
that there is one: those lines change with the code; a finding does not.
A bug without a reproducer, or a file there that names no bug, fails the
gate too: a new planted bug needs its reproducer.

The run without the bug inherits the environment on purpose: a night run
with BPFDIFF_PLANTED_BUG=<name> (a negative control of the whole night)
makes the replays of <name>'s reproducers find it, and the gate fails, as
the night must.

Works with either kind of target build: the libFuzzer targets of the
release preset (a file argument runs that file once) and the plain replay
mains of builds without libFuzzer (gcc, dev), which ctest uses.

  python3 ci/planted_gate.py --build DIR [--reproducers DIR] [--json FILE]
                             [--logs DIR] [--bugs "a b"] [--jobs N]

  --build DIR        a build tree: DIR/cli/bpfdiff and DIR/fuzz/targets/<target>
  --reproducers DIR  default tests/planted/reproducers of this checkout
  --json FILE        the results, for `bpfdiff report --planted-gate`
  --logs DIR         keep every replay's output there (<bug>.with.txt,
                     <bug>.without.txt); without it a failure's output
                     is printed
  --bugs "a b"       only these bugs (and no check for unclaimed files)
  --jobs N           replays side by side (default 1)

Exits 0 when every bug passed, 1 when one did not, 2 when it could not run
(no such build, a catalog that does not list).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

# A replay is one input: seconds even under a sanitizer on a loaded
# machine. Reaching this is a hang, which fails the bug.
REPLAY_TIMEOUT_SECONDS = 300
HARNESS_FAILURE_EXIT = 2
_BANNER = re.compile(r"^==== ", re.MULTILINE)
GATE_FORMAT = "bpfdiff-planted-gate-1"


@dataclass
class Replay:
    result: str  # "finding", "clean", "no finding", "error"
    exit_code: int
    seconds: float
    output: str


@dataclass
class BugCheck:
    bug: str
    target: str
    reproducer: str = ""
    with_bug: Replay = None
    without_bug: Replay = None
    problem: str = ""  # why it failed; empty when it passed

    @property
    def passed(self):
        return not self.problem


@dataclass
class Gate:
    checks: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # not of one bug
    planted_in_environment: str = ""

    @property
    def passed(self):
        return not self.problems and all(c.passed for c in self.checks)


def catalog(bpfdiff):
    """[(bug, target)] from `bpfdiff planted list`."""
    listed = subprocess.run([bpfdiff, "planted", "list"], capture_output=True, text=True)
    if listed.returncode != 0:
        raise RuntimeError(f"{bpfdiff} planted list exited {listed.returncode}: {listed.stderr.strip()}")
    rows = []
    for line in listed.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0]:
            rows.append((fields[0], fields[1]))
    if not rows:
        raise RuntimeError(f"{bpfdiff} planted list listed no bug")
    return rows


def bug_of(file_name):
    """The bug a reproducer's file is for: its name up to the first dot."""
    return file_name.split(".", 1)[0]


def reproducers_by_bug(directory):
    """bug -> [paths]; files whose names start with a dot are not ours."""
    found = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.startswith(".") or not os.path.isfile(path):
            continue
        found.setdefault(bug_of(name), []).append(path)
    return found


def replay(binary, reproducer, bug, scratch):
    """One run of `binary` on `reproducer`; `bug` switched on unless None."""
    env = dict(os.environ)
    env.pop("BPFDIFF_FUZZ_STATS_JSON", None)  # a replay's counters are nobody's
    if bug is not None:
        env["BPFDIFF_PLANTED_BUG"] = bug
    # A crash is written as an artifact by libFuzzer: into scratch, not the
    # checkout. The replay mains ignore flags.
    command = [binary, f"-artifact_prefix={scratch}/", reproducer]
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=REPLAY_TIMEOUT_SECONDS)
        output = done.stdout.decode(errors="replace")
        exit_code = done.returncode
    except subprocess.TimeoutExpired as timeout:
        output = (timeout.stdout or b"").decode(errors="replace")
        output += f"\nplanted_gate: killed after {REPLAY_TIMEOUT_SECONDS} s\n"
        return Replay("error", -9, time.monotonic() - start, output)
    except OSError as error:
        return Replay("error", -1, time.monotonic() - start, f"planted_gate: cannot run {binary}: {error}\n")
    seconds = time.monotonic() - start
    banner = _BANNER.search(output) is not None
    if exit_code == HARNESS_FAILURE_EXIT or (exit_code == 0 and banner):
        result = "error"
    elif exit_code != 0 and banner:
        result = "finding"
    elif exit_code == 0:
        result = "clean"
    else:
        result = "error"  # a crash without our banner is not a finding of ours
    return Replay(result, exit_code, seconds, output)


def how(r):
    """'exit 77, 0.3 s' (a signal as its name)."""
    code = f"signal {-r.exit_code}" if r.exit_code < 0 else f"exit {r.exit_code}"
    return f"{code}, {r.seconds:.1f} s"


def check_bug(check, build, scratch_root):
    binary = os.path.join(build, "fuzz", "targets", check.target)
    if not os.access(binary, os.X_OK):
        check.problem = f"no fuzz target {check.target} in {build}/fuzz/targets"
        return check
    scratch = tempfile.mkdtemp(prefix=f"{check.bug}.", dir=scratch_root)
    check.with_bug = replay(binary, check.reproducer, check.bug, scratch)
    check.without_bug = replay(binary, check.reproducer, None, scratch)
    w, wo = check.with_bug, check.without_bug
    if w.result != "finding":
        check.problem = (f"its reproducer is not caught with the bug switched on ({how(w)}, "
                         f"{'no finding banner' if w.result == 'clean' else 'not a finding of ours'})")
    elif wo.result != "clean":
        planted = os.environ.get("BPFDIFF_PLANTED_BUG")
        check.problem = (f"its reproducer is not clean without the bug ({how(wo)}"
                         + (f"; BPFDIFF_PLANTED_BUG={planted} is set for this run" if planted else "") + ")")
    return check


def run_gate(build, reproducers, only, jobs):
    gate = Gate(planted_in_environment=os.environ.get("BPFDIFF_PLANTED_BUG", ""))
    bugs = catalog(os.path.join(build, "cli", "bpfdiff"))
    files = reproducers_by_bug(reproducers)
    names = {bug for bug, _ in bugs}
    if only:
        unknown = sorted(set(only) - names)
        if unknown:
            raise RuntimeError(f"not planted bugs: {' '.join(unknown)} (see bpfdiff planted list)")
        bugs = [(bug, target) for bug, target in bugs if bug in only]
    else:
        for bug in sorted(set(files) - names):
            gate.problems.append(f"{', '.join(files[bug])}: names no planted bug (bpfdiff planted list)")
    to_run = []
    for bug, target in bugs:
        check = BugCheck(bug, target)
        gate.checks.append(check)
        paths = files.get(bug, [])
        if len(paths) != 1:
            check.problem = (f"no reproducer {reproducers}/{bug} (see tests/planted/README.md)" if not paths
                             else f"{len(paths)} reproducers, one expected: {', '.join(paths)}")
            continue
        check.reproducer = paths[0]
        to_run.append(check)
    with tempfile.TemporaryDirectory(prefix="bpfdiff-planted-gate.") as scratch_root:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(lambda c: check_bug(c, build, scratch_root), to_run))
    return gate


def replay_json(r):
    if r is None:
        return None
    return {"result": r.result, "exit_code": r.exit_code, "seconds": round(r.seconds, 3)}


def gate_json(gate):
    return {
        "format": GATE_FORMAT,
        "passed": gate.passed,
        "planted_in_environment": gate.planted_in_environment or None,
        "problems": gate.problems,
        "bugs": [{"bug": c.bug, "target": c.target, "reproducer": c.reproducer, "passed": c.passed,
                  "problem": c.problem, "with_bug": replay_json(c.with_bug),
                  "without_bug": replay_json(c.without_bug)} for c in gate.checks],
    }


def keep_logs(gate, logs):
    os.makedirs(logs, exist_ok=True)
    for c in gate.checks:
        for suffix, r in (("with", c.with_bug), ("without", c.without_bug)):
            if r is not None:
                with open(os.path.join(logs, f"{c.bug}.{suffix}.txt"), "w") as f:
                    f.write(r.output)


def print_gate(gate, logs):
    width = max((len(c.bug) for c in gate.checks), default=0)
    for c in gate.checks:
        if c.passed:
            print(f"  ok    {c.bug:<{width}}  {c.target:<17} caught with the bug ({how(c.with_bug)}), "
                  f"clean without ({how(c.without_bug)})")
            continue
        print(f"  FAIL  {c.bug:<{width}}  {c.target:<17} {c.problem}")
        failed = c.with_bug if c.with_bug and c.with_bug.result != "finding" else c.without_bug
        if failed is None:
            continue
        if logs:
            print(f"        output in {logs}/{c.bug}.{'with' if failed is c.with_bug else 'without'}.txt")
        else:
            for line in failed.output.splitlines()[-15:]:
                print(f"        | {line}")
    for problem in gate.problems:
        print(f"  FAIL  {problem}")
    passed = sum(c.passed for c in gate.checks)
    print(f"planted gate: {passed} of {len(gate.checks)} planted bugs caught by replaying their reproducers "
          f"(and clean without the bug){'' if not gate.problems else f'; {len(gate.problems)} other problems'}: "
          f"{'PASSED' if gate.passed else 'FAILED'}")


def main():
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--reproducers", default=os.path.join(checkout, "tests", "planted", "reproducers"))
    parser.add_argument("--json")
    parser.add_argument("--logs")
    parser.add_argument("--bugs", default="")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    if args.jobs < 1:
        print("planted_gate: --jobs must be a positive number", file=sys.stderr)
        return 2
    build = os.path.abspath(args.build)  # replays run in scratch directories
    reproducers = os.path.abspath(args.reproducers)
    if not os.path.isdir(reproducers):
        print(f"planted_gate: {reproducers}: not a directory of reproducers", file=sys.stderr)
        return 2
    try:
        gate = run_gate(build, reproducers, set(args.bugs.split()), args.jobs)
    except (RuntimeError, OSError) as error:
        print(f"planted_gate: {error}", file=sys.stderr)
        return 2
    if gate.planted_in_environment:
        print(f"planted_gate: BPFDIFF_PLANTED_BUG={gate.planted_in_environment} is set: the replays without "
              "their bug run with it")
    if args.logs:
        keep_logs(gate, args.logs)
    print_gate(gate, args.logs)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(gate_json(gate), f, indent=1)
            f.write("\n")
        os.replace(args.json + ".tmp", args.json)
    return 0 if gate.passed else 1


if __name__ == "__main__":
    sys.exit(main())
