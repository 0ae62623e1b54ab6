#!/usr/bin/env python3
"""Checks that ClusterFuzz would file one bug per kind of finding.

Given a directory of fuzz targets built with ASan and libFuzzer (an OSS-Fuzz
$OUT, or build/fuzz/fuzz/targets), it runs diff_fuzzer, pack_fuzzer and
recursion_fuzzer (those present) with planted bugs, in the environment
OSS-Fuzz's runner gives a target (its ASAN_OPTIONS and UBSAN_OPTIONS, plus
ClusterFuzz's symbolize_inline_frames=false: it computes states from the
stack without inlined frames), computes the crash state of each finding
from the real abort output (tests/fuzz/crash_states.py) and checks that:

  - two planted bugs of different areas give two different states;
  - one planted bug found from two different inputs (fuzzing from an empty
    corpus with two libFuzzer seeds) gives one state, and each input
    replays to that state.

The bugs are chosen by one rule, from `bpfdiff planted list`: of the
target's bugs that are not value-dependent (a bug that shows for any
program running its code; a value-dependent one shows through whichever
part of the outcome the operands lead it to), the first in the catalog,
and the first after it of another area. The first is the one found twice.

Usage: crash_states_check.py OUT_DIR [--bpfdiff BPFDIFF] [--seconds N] [--targets a,b]
Exit status: 0 the states are as they should be, 1 they are not, 2 the
check could not run (no targets, a bug never found within N seconds).
"""

import argparse
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_states  # pylint: disable=wrong-import-position

CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ['diff_fuzzer', 'pack_fuzzer', 'recursion_fuzzer']

# OSS-Fuzz's base-runner (google/oss-fuzz infra/base-images/base-runner/
# Dockerfile), with ClusterFuzz's symbolize_inline_frames=false.
ASAN_OPTIONS = ('alloc_dealloc_mismatch=0:allocator_may_return_null=1:allocator_release_to_os_interval_ms=500:'
                'check_malloc_usable_size=0:detect_container_overflow=1:detect_odr_violation=0:detect_leaks=1:'
                'detect_stack_use_after_return=1:fast_unwind_on_fatal=0:handle_abort=1:handle_segv=1:'
                'handle_sigill=1:max_uar_stack_size_log=16:print_scariness=1:quarantine_size_mb=10:'
                'strict_memcmp=1:strip_path_prefix=/workspace/:symbolize=1:use_sigaltstack=1:'
                'dedup_token_length=3:symbolize_inline_frames=false')
UBSAN_OPTIONS = ('print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:strip_path_prefix=/workspace/:'
                 'symbolize=1:dedup_token_length=3:symbolize_inline_frames=false')


class CheckError(Exception):
  """The check could not run (exit 2)."""


def symbolizer(out_dir):
  """llvm-symbolizer: OSS-Fuzz copies one into $OUT; else the system's."""
  for candidate in [out_dir / 'llvm-symbolizer', shutil.which('llvm-symbolizer'),
                    shutil.which('llvm-symbolizer-14'), '/usr/lib/llvm-14/bin/llvm-symbolizer']:
    if candidate and os.access(candidate, os.X_OK):
      return str(candidate)
  raise CheckError('no llvm-symbolizer: ASan could not name the frames')


def environment(out_dir, bug):
  env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'BPFDIFF_PLANTED_BUG': bug}
  path = symbolizer(out_dir)
  env['ASAN_OPTIONS'] = ASAN_OPTIONS + ':external_symbolizer_path=' + path
  env['UBSAN_OPTIONS'] = UBSAN_OPTIONS + ':external_symbolizer_path=' + path
  return env


def libfuzzer_options(out_dir, target):
  """The [libfuzzer] section of TARGET.options, as -key=value flags."""
  options = []
  path = out_dir / (target + '.options')
  if not path.exists():
    return options
  section = None
  for line in path.read_text().splitlines():
    line = line.strip()
    if line.startswith('['):
      section = line.strip('[]')
    elif '=' in line and section == 'libfuzzer':
      key, value = (part.strip() for part in line.split('=', 1))
      if key == 'dict':
        value = str(out_dir / value)
      options.append('-%s=%s' % (key, value))
  return options


def catalog(bpfdiff):
  """(name, target, area, value-dependent) of every planted bug, in order."""
  listed = subprocess.run([bpfdiff, 'planted', 'list'], capture_output=True, text=True, check=False)
  if listed.returncode != 0:
    raise CheckError('%s planted list: %s' % (bpfdiff, listed.stderr.strip()))
  rows = []
  for line in listed.stdout.splitlines():
    fields = line.split('\t')
    if len(fields) >= 4:
      rows.append((fields[0], fields[1], fields[2], fields[3] == 'value-dependent'))
  return rows


def pick_bugs(rows, target):
  """The target's first bug that is not value-dependent, and the first after it of another area."""
  eligible = [row for row in rows if row[1] == target and not row[3]]
  if not eligible:
    return None
  first = eligible[0]
  other = next((row for row in eligible[1:] if row[2] != first[2]), None)
  return (first[0], other[0]) if other else None


def find(out_dir, target, bug, seed, seconds, work):
  """Fuzzes from an empty corpus until the bug is found: (input bytes, log)."""
  run_dir = work / ('%s.%s.seed%d' % (target, bug, seed))
  (run_dir / 'corpus').mkdir(parents=True)
  command = [str(out_dir / target), str(run_dir / 'corpus'), *libfuzzer_options(out_dir, target),
             '-seed=%d' % seed, '-max_total_time=%d' % seconds, '-artifact_prefix=%s/' % run_dir]
  run = subprocess.run(command, cwd=run_dir, env=environment(out_dir, bug), capture_output=True, text=True,
                       errors='replace', check=False)
  crashes = sorted(run_dir.glob('crash-*'))
  if not crashes:
    raise CheckError('%s with %s (seed %d) found nothing in %d s (exit %d); its log ends:\n%s' %
                     (target, bug, seed, seconds, run.returncode, run.stderr[-2000:]))
  return crashes[0].read_bytes(), run.stderr, crashes[0]


def replay(out_dir, target, bug, artifact):
  """The log of the target run once on `artifact`."""
  run = subprocess.run([str(out_dir / target), str(artifact)], env=environment(out_dir, bug),
                       capture_output=True, text=True, errors='replace', check=False)
  return run.stderr


def state_of(log, target, what):
  crash_type, state = crash_states.parse(log, target)
  if crash_type != 'Abrt' or '\n' not in state:
    raise CheckError('%s: expected an ASan ABRT report with a stack, got type %r state %r' %
                     (what, crash_type, state))
  return state


def show(state):
  return ' / '.join(state.splitlines())


def check_target(out_dir, target, rows, seconds, work):
  """Failures (strings) of one target's check."""
  bugs = pick_bugs(rows, target)
  if bugs is None:
    return ['%s: the catalog has no two bugs of different areas that are not value-dependent' % target]
  first, second = bugs
  failures = []
  states = {}
  inputs = {}
  for bug, seed in [(first, 1), (first, 2), (second, 1)]:
    data, log, artifact = find(out_dir, target, bug, seed, seconds, work)
    what = '%s, %s, seed %d' % (target, bug, seed)
    state = state_of(log, target, what)
    replayed = state_of(replay(out_dir, target, bug, artifact), target, what + ', replayed')
    print('  %s: %s (input %s)' % (what, show(state), hashlib.sha1(data).hexdigest()[:12]))
    if replayed != state:
      failures.append('%s: the input replays to another state: %s' % (what, show(replayed)))
    states[(bug, seed)] = state
    inputs[(bug, seed)] = data
  if inputs[(first, 1)] == inputs[(first, 2)]:
    raise CheckError('%s: %s was found from the same input with both seeds; nothing shows for two inputs' %
                     (target, first))
  if states[(first, 1)] != states[(first, 2)]:
    failures.append('%s: one bug (%s), two inputs, two states: %s | %s' %
                    (target, first, show(states[(first, 1)]), show(states[(first, 2)])))
  if states[(first, 1)] == states[(second, 1)]:
    failures.append('%s: two bugs (%s, %s), one state: %s' % (target, first, second, show(states[(first, 1)])))
  return failures


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('out_dir', type=pathlib.Path)
  parser.add_argument('--bpfdiff', default=str(CHECKOUT / 'build/dev/cli/bpfdiff'),
                      help='the bpfdiff tool, for `bpfdiff planted list` (default: the dev build)')
  parser.add_argument('--seconds', type=int, default=120, help='how long to fuzz for each bug at most')
  parser.add_argument('--targets', default=','.join(TARGETS), help='which targets to check, of those present')
  args = parser.parse_args(argv[1:])
  try:
    present = [t for t in args.targets.split(',') if os.access(args.out_dir / t, os.X_OK)]
    if not present:
      raise CheckError('no fuzz target of %s in %s' % (args.targets, args.out_dir))
    rows = catalog(args.bpfdiff)
    failures = []
    with tempfile.TemporaryDirectory(prefix='crash-states.') as work:
      for target in present:
        print('%s:' % target)
        failures += check_target(args.out_dir.resolve(), target, rows, args.seconds, pathlib.Path(work))
  except CheckError as error:
    print('crash_states_check: %s' % error, file=sys.stderr)
    return 2
  for failure in failures:
    print('FAIL %s' % failure)
  print('crash_states_check: %s' % ('FAILED' if failures else 'one state per bug, %d targets' % len(present)))
  return 1 if failures else 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
