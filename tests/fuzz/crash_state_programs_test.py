#!/usr/bin/env python3
"""Checks the programs of tests/fuzz/crash_state_programs/ on bpfdiff itself.

That directory holds, for every planted diff_fuzzer bug that is not
value-dependent, small programs in which the bug's wrong value reaches
different fields of the outcome: <bug>/<field>.data, or
<bug>/<field>.<variant>.data for a second program of one field.
crash_states_check.py replays them through the ASan diff_fuzzer and wants
one ClusterFuzz crash state per bug whatever the field; this test makes sure
they say what their names claim, so that the check tests what it means to:

  - every such bug of `bpfdiff planted list` has a directory, and every
    directory is such a bug;
  - each bug has two programs or more, in three fields or more (but for the
    bugs in FEWER_FIELDS, which say why);
  - with the bug planted, `bpfdiff run --engine all` diverges (exit 1) and
    the first divergence it prints is in the field the file's name claims;
  - without it, every program passes `bpfdiff conformance --engine all`:
    every engine agrees and gives the file's `-- result`.

Usage: crash_state_programs_test.py BPFDIFF [PROGRAMS_DIR]
Exit status: 0 all hold, 1 one does not, 2 the test could not run.
"""

import os
import pathlib
import re
import subprocess
import sys

PROGRAMS = pathlib.Path(__file__).resolve().parent / 'crash_state_programs'

# A file's claimed field -> how `bpfdiff run` names a first divergence in it
# (harness/diff/compare.cc), after "divergence in ".
FIELDS = {
    'compilation': r'compilation: ',
    'end': r'end: ',
    'r0': r'r0: ',
    'helper-arg': r'helper call #\d+ \(\d+\) argument r[1-5]: ',
    'stack': r'stack frame \d+ at r10[-+]\d+: ',
    'context': r'context byte \d+: ',
}

# Bugs that cannot reach three fields, and why.
FEWER_FIELDS = {
    'extra-pass-grows': 'the JIT refuses every program the bug shows in, so nothing runs: only compilation differs',
}


class TestError(Exception):
  """The test could not run (exit 2)."""


def environment(bug=None):
  """This process's environment with BPFDIFF_PLANTED_BUG set to `bug`, or unset."""
  env = {key: value for key, value in os.environ.items() if key != 'BPFDIFF_PLANTED_BUG'}
  if bug is not None:
    env['BPFDIFF_PLANTED_BUG'] = bug
  return env


def bugs_needing_programs(bpfdiff):
  """diff_fuzzer's bugs that are not value-dependent, from the catalog."""
  listed = subprocess.run([bpfdiff, 'planted', 'list'], env=environment(), capture_output=True, text=True,
                          check=False)
  if listed.returncode != 0:
    raise TestError('%s planted list (exit %d): %s' % (bpfdiff, listed.returncode, listed.stderr.strip()))
  bugs = set()
  for line in listed.stdout.splitlines():
    fields = line.split('\t')
    if len(fields) >= 4 and fields[1] == 'diff_fuzzer' and fields[3] != 'value-dependent':
      bugs.add(fields[0])
  if not bugs:
    raise TestError('%s planted list names no diff_fuzzer bug that is not value-dependent' % bpfdiff)
  return bugs


def claimed_field(program):
  """The field a program's name claims: its name up to the first '.'."""
  return program.name.split('.')[0]


def first_divergence(output):
  """What follows "divergence in " on the first DIVERGENCE line, or None."""
  for line in output.splitlines():
    match = re.match(r'DIVERGENCE [^:]+: divergence in (.*)$', line)
    if match:
      return match.group(1)
  return None


def check_program(bpfdiff, bug, program):
  """Failures (strings) of one program run with its bug planted."""
  field = claimed_field(program)
  name = '%s/%s' % (bug, program.name)
  if field not in FIELDS:
    return ['%s: "%s" is no field this test knows (name the file after one of: %s)' %
            (name, field, ', '.join(sorted(FIELDS)))]
  run = subprocess.run([bpfdiff, 'run', '--engine', 'all', str(program)], env=environment(bug),
                       capture_output=True, text=True, check=False)
  if run.returncode == 2:
    raise TestError('%s: bpfdiff run could not run it: %s' % (name, run.stderr.strip()))
  divergence = first_divergence(run.stdout)
  if run.returncode != 1 or divergence is None:
    return ['%s: with %s planted, every engine agrees (exit %d); it must diverge in %s' %
            (name, bug, run.returncode, field)]
  if not re.match(FIELDS[field], divergence):
    return ['%s: with %s planted, the first divergence is in %s; the name claims %s' %
            (name, bug, divergence, field)]
  print('  %s: diverges in %s' % (name, divergence))
  return []


def check_without_bugs(bpfdiff, programs_dir, count):
  """Failures of the programs as conformance vectors, nothing planted."""
  run = subprocess.run([bpfdiff, 'conformance', '--suite', str(programs_dir), '--engine', 'all', '--quiet'],
                       env=environment(), capture_output=True, text=True, check=False)
  if run.returncode == 2:
    raise TestError('bpfdiff conformance could not run %s: %s' % (programs_dir, run.stderr.strip()))
  summary = re.search(r'^(\d+) passed, (\d+) failed, (\d+) skipped$', run.stdout, re.MULTILINE)
  if run.returncode != 0 or summary is None or int(summary.group(1)) != count:
    return ['without a planted bug, not every program agrees on every engine with its -- result '
            '(bpfdiff conformance exit %d):\n%s' % (run.returncode, run.stdout.strip())]
  print('  without a planted bug: %s' % summary.group(0))
  return []


def main(argv):
  if len(argv) not in (2, 3):
    print(__doc__.strip().splitlines()[-2], file=sys.stderr)
    return 2
  bpfdiff = argv[1]
  programs_dir = pathlib.Path(argv[2]) if len(argv) == 3 else PROGRAMS
  failures = []
  try:
    needed = bugs_needing_programs(bpfdiff)
    present = {path.name for path in programs_dir.iterdir() if path.is_dir()}
    failures += ['%s: no programs in %s/%s' % (bug, programs_dir, bug) for bug in sorted(needed - present)]
    failures += ['%s/%s: not a diff_fuzzer bug that is not value-dependent' % (programs_dir, bug)
                 for bug in sorted(present - needed)]
    count = 0
    for bug in sorted(needed & present):
      programs = sorted((programs_dir / bug).glob('*.data'))
      count += len(programs)
      fields = {claimed_field(program) for program in programs}
      if len(programs) < 2:
        failures.append('%s: %d program(s); one state for one bug needs two or more' % (bug, len(programs)))
      if len(fields) < 3 and bug not in FEWER_FIELDS:
        failures.append('%s: programs in %d field(s) (%s); three or more, or a reason in FEWER_FIELDS' %
                        (bug, len(fields), ', '.join(sorted(fields))))
      for program in programs:
        failures += check_program(bpfdiff, bug, program)
    failures += check_without_bugs(bpfdiff, programs_dir, count)
  except (TestError, OSError) as error:
    print('crash_state_programs_test: %s' % error, file=sys.stderr)
    return 2
  for failure in failures:
    print('FAIL %s' % failure)
  print('crash_state_programs_test: %s' % ('FAILED' if failures else 'every program diverges where it says'))
  return 1 if failures else 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
