"""What a target left in its artifact folder, and which crashes are divergences.

libFuzzer names an artifact after what happened: crash-, timeout-, oom-,
leak-, slow-unit-<sha1>. The -fork parent's counters can lag one job
behind (a job's outcome is counted after its status line is printed), so
the artifacts are the record; the counters are a lower bound.

A crash is a divergence when replaying it prints the diff_fuzzer banner
`==== bpfdiff: DIVERGENCE ====`; any other `==== bpfdiff: ... ====`
banner (a pack invariant broken, ...) or a plain crash is another finding.
Replays run the same binary on the one file, in the soak's environment
(so a planted bug stays planted), and their output is kept beside the
artifact as <artifact>.replay.txt. At most MAX_REPLAYS per target: a
planted bug crashes every job, and each replay costs a process start.
"""

import os
import re
import subprocess
import time
from dataclasses import dataclass, field

KINDS = ("crash", "timeout", "oom", "leak", "slow-unit")
MAX_REPLAYS = 10
REPLAY_TIMEOUT_SECONDS = 120
_BANNER = re.compile(r"^==== bpfdiff: (.*?) ====", re.MULTILINE)


def artifacts_by_kind(artifact_dir):
    """kind -> sorted artifact paths (replay logs are not artifacts)."""
    found = {kind: [] for kind in KINDS}
    try:
        names = sorted(os.listdir(artifact_dir))
    except FileNotFoundError:
        return found
    for name in names:
        if name.endswith(".replay.txt"):
            continue
        for kind in KINDS:
            if name.startswith(kind + "-"):
                found[kind].append(os.path.join(artifact_dir, name))
                break
    return found


def classify_replay(output, exit_code):
    """What a replay's output says the crash was."""
    banner = _BANNER.search(output)
    if banner:
        return "divergence" if banner.group(1) == "DIVERGENCE" else banner.group(1).lower()
    return "crash" if exit_code != 0 else "did not reproduce"


@dataclass
class Findings:
    by_kind: dict
    crash_classes: dict = field(default_factory=dict)  # artifact path -> class
    replays_skipped: int = 0

    @property
    def divergences(self):
        return sum(1 for c in self.crash_classes.values() if c == "divergence")

    def count(self, kind):
        return len(self.by_kind.get(kind, []))


class ArtifactWatcher:
    """The findings of one target's artifact folder, brought up to date on
    each update(): new artifacts are counted and new crashes replayed (up
    to MAX_REPLAYS), so the CSV can show divergences as the soak goes."""

    def __init__(self, binary, artifact_dir):
        self.binary = binary
        self.artifact_dir = artifact_dir
        self.findings = Findings(artifacts_by_kind(artifact_dir))

    def update(self, final=False):
        """final: the target has stopped, every artifact is complete."""
        classes = self.findings.crash_classes
        self.findings = Findings(artifacts_by_kind(self.artifact_dir), crash_classes=classes)
        crashes = self.findings.by_kind["crash"]
        for path in crashes:
            if path not in classes and len(classes) < MAX_REPLAYS and (final or _settled(path)):
                classes[path] = _replay(self.binary, path)
        self.findings.replays_skipped = len(crashes) - len(classes)
        return self.findings


def _settled(path):
    """Not written in the last second: libFuzzer may still be writing it."""
    try:
        return time.time() - os.stat(path).st_mtime >= 1.0
    except FileNotFoundError:
        return False


def _replay(binary, path):
    env = dict(os.environ)
    env.pop("BPFDIFF_FUZZ_STATS_JSON", None)
    try:
        done = subprocess.run([binary, path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env, timeout=REPLAY_TIMEOUT_SECONDS)
        output, code = done.stdout.decode(errors="replace"), done.returncode
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace") + "\n(replay timed out)\n"
        code = -1
    with open(path + ".replay.txt", "w") as f:
        f.write(output)
    return classify_replay(output, code)
