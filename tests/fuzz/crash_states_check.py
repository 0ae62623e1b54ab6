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
then the first of each other area in catalog order (then the others, for a
target whose bugs share an area), up to MAX_BUGS, until
one gives a state the first did not. Two bugs may well show as the same
kind of finding (two JIT bugs that both corrupt the stack frame are one
kind, and one state, by design); what must hold is that the kinds the
bugs show are told apart, so the check fails when every bug tried gives
one state. The first bug is found twice, from an empty corpus with libFuzzer -seed=1
and -seed=2. When both runs end on one input (the empty input, which
libFuzzer runs first whatever its seed, shows the bug), the second input
is the first shipped seed that shows it, else what fuzzing from the seeds
with -seed=2 finds.

A limit of the kinds, which this check makes visible rather than hides: a
kind is the field that diverged (with the instruction class at fault when
a fault is involved), and one JIT bug can reach different fields in
different programs (a clobbered register may end in r0 or be spilled to
the stack first). Two such inputs file as two states; a state keyed by
the first instruction at which the engines' registers part would not.

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
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_states  # pylint: disable=wrong-import-position

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / 'ci'))
from libfuzzer_options import flags_from_options  # pylint: disable=wrong-import-position

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
  """The [libfuzzer] section of TARGET.options in OUT_DIR, as -key=value flags."""
  return flags_from_options(str(out_dir / (target + '.options')))


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


MAX_BUGS = 4


def pick_bugs(rows, target):
  """The target's first bug that is not value-dependent, then the first of each other area, then the rest."""
  eligible = [row for row in rows if row[1] == target and not row[3]]
  picked, areas = [], set()
  for row in eligible:
    if row[2] not in areas:
      picked.append(row[0])
      areas.add(row[2])
  # A target whose bugs are all of one area (recursion_fuzzer's): the rest
  # in catalog order.
  picked += [row[0] for row in eligible if row[0] not in picked]
  return picked[:MAX_BUGS] if len(picked) >= 2 else None


def find(out_dir, target, bug, seed, seconds, work, from_seeds=False):
  """Fuzzes from an empty corpus (or the target's seeds) until the bug is found: (input bytes, log)."""
  run_dir = work / ('%s.%s.seed%d' % (target, bug, seed))
  (run_dir / 'corpus').mkdir(parents=True)
  seeds = out_dir / ('%s_seed_corpus.zip' % target)
  if from_seeds:
    if not seeds.exists():
      raise CheckError('%s: no %s to fuzz from' % (target, seeds.name))
    with zipfile.ZipFile(seeds) as archive:
      archive.extractall(run_dir / 'corpus')
  command = [str(out_dir / target), str(run_dir / 'corpus'), *libfuzzer_options(out_dir, target),
             '-seed=%d' % seed, '-max_total_time=%d' % seconds, '-artifact_prefix=%s/' % run_dir]
  run = subprocess.run(command, cwd=run_dir, env=environment(out_dir, bug), capture_output=True, text=True,
                       errors='replace', check=False)
  crashes = sorted(run_dir.glob('crash-*'))
  if not crashes:
    raise CheckError('%s with %s (seed %d) found nothing in %d s (exit %d); its log ends:\n%s' %
                     (target, bug, seed, seconds, run.returncode, run.stderr[-2000:]))
  return crashes[0].read_bytes(), run.stderr, crashes[0]


def find_in_seeds(out_dir, target, bug, seconds, work):
  """The first shipped seed that shows the bug, else fuzzing from the seeds with -seed=2.


  libFuzzer runs the empty input first whatever its -seed, so a bug the
  empty input shows is found from that one input by every fuzzing run; a
  seed that shows it too is a second input."""
  seeds_dir = work / ('%s.%s.seeds' % (target, bug))
  seeds = out_dir / ('%s_seed_corpus.zip' % target)
  if not seeds.exists():
    raise CheckError('%s: no %s to take a second input from' % (target, seeds.name))
  with zipfile.ZipFile(seeds) as archive:
    archive.extractall(seeds_dir)
  for seed in sorted(p for p in seeds_dir.rglob('*') if p.is_file()):
    log = replay(out_dir, target, bug, seed)
    if 'ERROR: AddressSanitizer' in log:
      return seed.read_bytes(), log, seed
  return find(out_dir, target, bug, 2, seconds, work, from_seeds=True)


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
    return ['%s: the catalog has no two bugs that are not value-dependent' % target]
  first = bugs[0]
  failures = []
  states = {}
  inputs = {}
  runs = [(first, 1, False), (first, 2, False)] + [(bug, 1, False) for bug in bugs[1:]]
  for bug, seed, from_seeds in runs:
    if bug != first and any(state != states[(first, 1)] for state in states.values()):
      break  # two kinds told apart already
    data, log, artifact = find(out_dir, target, bug, seed, seconds, work)
    if (bug, seed) == (first, 2) and data == inputs[(first, 1)]:
      # The empty input, which libFuzzer runs first whatever its seed,
      # shows the bug: the second input comes from the shipped seeds.
      from_seeds = True
      data, log, artifact = find_in_seeds(out_dir, target, bug, seconds, work)
    what = '%s, %s, seed %d%s' % (target, bug, seed, ' from the shipped seeds' if from_seeds else '')
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
  others = [bug for (bug, _seed) in states if bug != first]
  if all(states[(bug, 1)] == states[(first, 1)] for bug in others):
    failures.append('%s: %d bugs (%s), one state: %s' %
                    (target, 1 + len(others), ', '.join([first] + others), show(states[(first, 1)])))
  return failures


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('out_dir', type=pathlib.Path)
  parser.add_argument('--bpfdiff', default=str(CHECKOUT / 'build/dev/cli/bpfdiff'),
                      help='the bpfdiff tool, for `bpfdiff planted list` (default: the dev build)')
  parser.add_argument('--seconds', type=int, default=300, help='how long to fuzz for each bug at most')
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
