#!/usr/bin/env python3
"""Checks that ClusterFuzz would file one bug per kind of finding.

Given a directory of fuzz targets built with ASan and libFuzzer (an OSS-Fuzz
$OUT, or build/fuzz/fuzz/targets), it replays fixed inputs through
diff_fuzzer, pack_fuzzer and recursion_fuzzer (those present) with planted
bugs, in the environment OSS-Fuzz's runner gives a target (its ASAN_OPTIONS
and UBSAN_OPTIONS, plus ClusterFuzz's symbolize_inline_frames=false: it
computes states from the stack without inlined frames) and with the flags
of the target's .options, computes the crash state of each finding from
the real abort output (tests/fuzz/crash_states.py) and checks that:

  - one planted bug shown by several inputs gives one state;
  - planted bugs of different kinds give different states.

Nothing is fuzzed: every input is shipped, so the check gives the same
verdict on every run and every machine. (Fuzzing for a time, as it once
did, found different inputs on different runs, and the check passed or
failed by luck.)

diff_fuzzer: the programs of tests/fuzz/crash_state_programs/<bug>/, one
directory for each of its planted bugs that is not value-dependent, made
raw diff_fuzzer inputs by make_diff_seeds (fuzz/tools/make_seeds.cc, the
converter of .data vectors to seeds, asked for no structured seeds). Each
program shows its bug in another field of the outcome: the wrong value
reaches r0, the stack, a helper argument, the context, or ends the run
(crash_state_programs_test.py checks that each diverges in the field its
name claims). Required:

  - all the programs of one bug give one state: a kind must be the
    culprit instruction (the first after which the engines' registers or
    memory part) crossed with the JIT lowering, not the field the value
    reached (states keyed by that field fail here);
  - bugs of different areas (whose culprits are different instruction
    forms: jset, a local call, a probe load, xchg; or a JIT refusal) share
    no state. Two bugs of one area may share one: the two exception-table
    bugs both go wrong at a probe load, one kind by design.

pack_fuzzer and recursion_fuzzer: their seed corpus in OUT_DIR
(<target>_seed_corpus.zip). The bugs are chosen by one rule, from `bpfdiff
planted list`: of the target's bugs that are not value-dependent, the first
in the catalog, then the first of each other area in catalog order (then
the others, for a target whose bugs share an area), up to MAX_BUGS. Every
seed that shows the first bug (two at least) must give one state; then
each other bug, from the first seed that shows it, until one gives a state
the first did not. Two bugs may well show as the same kind (two pack bugs
that break one invariant are one kind, and one state, by design); what must
hold is that the kinds the bugs show are told apart, so the check fails
when every bug tried gives one state.

Usage: crash_states_check.py OUT_DIR [--bpfdiff BPFDIFF] [--make-seeds MAKE_DIFF_SEEDS]
                             [--programs DIR] [--targets a,b]
Exit status: 0 the states are as they should be, 1 they are not, 2 the
check could not run (no targets, no make_diff_seeds, a program raw mode
cannot carry or an input that shows no finding, fewer than two seeds
showing a bug).
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
PROGRAMS = CHECKOUT / 'tests/fuzz/crash_state_programs'

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
  env = {key: value for key, value in os.environ.items() if key != 'BPFDIFF_PLANTED_BUG'}
  try:
    listed = subprocess.run([bpfdiff, 'planted', 'list'], env=env, capture_output=True, text=True, check=False)
  except OSError as error:
    raise CheckError('%s planted list: %s (give the tool with --bpfdiff)' % (bpfdiff, error)) from error
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


def replay(out_dir, target, bug, path):
  """The log of the target run once on the input at `path`, `bug` planted."""
  command = [str(out_dir / target), *libfuzzer_options(out_dir, target), str(path)]
  run = subprocess.run(command, env=environment(out_dir, bug), capture_output=True, text=True, errors='replace',
                       check=False)
  return run.stderr


def state_of(log, target, what):
  crash_type, state = crash_states.parse(log, target)
  if crash_type != 'Abrt' or '\n' not in state:
    raise CheckError('%s: expected an ASan ABRT report with a stack, got type %r state %r; the log ends:\n%s' %
                     (what, crash_type, state, log[-2000:]))
  return state


def show(state):
  return ' / '.join(state.splitlines())


def digest(path):
  return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def raw_inputs(make_seeds, programs, work):
  """(program name, raw diff_fuzzer input) of every .data file in `programs`, by make_diff_seeds."""
  # No structured candidates: only the raw seeds of the vectors (and the
  # named seeds, which are not used).
  try:
    made = subprocess.run([str(make_seeds), str(work), str(programs), '0'], capture_output=True, text=True,
                          check=False)
  except OSError as error:
    raise CheckError('%s: %s (give the converter with --make-seeds)' % (make_seeds, error)) from error
  if made.returncode != 0:
    raise CheckError('%s %s failed (exit %d): %s' % (make_seeds, programs, made.returncode, made.stderr.strip()))
  inputs = []
  for program in sorted(programs.glob('*.data')):
    raw = work / ('raw-' + program.stem)
    if not raw.exists():
      # make_diff_seeds names what raw mode cannot carry after "left out:".
      left_out = made.stdout[made.stdout.rfind('raw seeds'):].strip()
      raise CheckError('%s: raw mode cannot carry it (maps, several programs, load options?): %s' %
                       (program, left_out))
    inputs.append((program.name, raw))
  return inputs


def check_diff_fuzzer(out_dir, rows, programs_dir, make_seeds, work):
  """Failures (strings) of diff_fuzzer's check, on the shipped programs."""
  target = 'diff_fuzzer'
  eligible = [row for row in rows if row[1] == target and not row[3]]
  areas = {row[0]: row[2] for row in eligible}
  if not programs_dir.is_dir():
    raise CheckError('%s: no such directory of programs (give it with --programs)' % programs_dir)
  present = {path.name for path in programs_dir.iterdir() if path.is_dir()}
  unknown = sorted(present - set(areas))
  if unknown:
    raise CheckError('%s: %s names no %s bug that is not value-dependent' % (programs_dir, unknown[0], target))
  bugs = [row[0] for row in eligible if row[0] in present]  # catalog order
  if len({areas[bug] for bug in bugs}) < 2:
    raise CheckError('%s: programs of fewer than two areas of bugs; nothing to tell apart' % programs_dir)
  states = {}  # bug -> [(program, state)]
  for bug in bugs:
    inputs = raw_inputs(make_seeds, programs_dir / bug, work / (target + '.' + bug))
    if len(inputs) < 2:
      raise CheckError('%s/%s: %d program(s); one state for one bug needs two' % (programs_dir, bug, len(inputs)))
    states[bug] = []
    for name, raw in inputs:
      what = '%s, %s, %s' % (target, bug, name)
      state = state_of(replay(out_dir, target, bug, raw), target, what)
      print('  %s: %s (input %s)' % (what, show(state), digest(raw)))
      states[bug].append((name, state))
  failures = []
  for bug in bugs:
    distinct = sorted({state for _name, state in states[bug]})
    if len(distinct) > 1:
      failures.append('%s: one bug (%s), %d programs, %d states: %s' %
                      (target, bug, len(states[bug]), len(distinct),
                       ' | '.join('%s: %s' % (name, show(state)) for name, state in states[bug])))
  sharing = {}  # state -> the bugs that gave it
  for bug in bugs:
    for _name, state in states[bug]:
      sharing.setdefault(state, [])
      if bug not in sharing[state]:
        sharing[state].append(bug)
  for state, holders in sharing.items():
    if len({areas[bug] for bug in holders}) > 1:
      failures.append('%s: bugs of %d areas share one state (%s): %s' %
                      (target, len({areas[bug] for bug in holders}), show(state),
                       ', '.join('%s (%s)' % (bug, areas[bug]) for bug in holders)))
  return failures


def seeds_of(out_dir, target, work):
  """The shipped seeds of `target` (its seed zip in OUT_DIR), in name order."""
  archive_path = out_dir / ('%s_seed_corpus.zip' % target)
  if not archive_path.exists():
    raise CheckError('%s: no %s to take inputs from' % (target, archive_path.name))
  seeds_dir = work / (target + '.seeds')
  with zipfile.ZipFile(archive_path) as archive:
    archive.extractall(seeds_dir)
  return sorted(path for path in seeds_dir.rglob('*') if path.is_file())


def shows(out_dir, target, bug, seed):
  """The state the seed gives with `bug` planted, or None when it shows no finding."""
  log = replay(out_dir, target, bug, seed)
  crash_type, _state = crash_states.parse(log, target)
  if not crash_type:
    return None
  return state_of(log, target, '%s, %s, %s' % (target, bug, seed.name))


def first_showing(out_dir, target, bug, seeds):
  """(the first seed that shows `bug`, its state), or (None, None)."""
  for seed in seeds:
    state = shows(out_dir, target, bug, seed)
    if state is not None:
      return seed, state
  return None, None


def check_seeded_target(out_dir, target, rows, work):
  """Failures (strings) of pack_fuzzer's or recursion_fuzzer's check, on the shipped seeds."""
  bugs = pick_bugs(rows, target)
  if bugs is None:
    return ['%s: the catalog has no two bugs that are not value-dependent' % target]
  seeds = seeds_of(out_dir, target, work)
  first = bugs[0]
  shown = []
  for seed in seeds:
    state = shows(out_dir, target, first, seed)
    if state is not None:
      print('  %s, %s, %s: %s (input %s)' % (target, first, seed.name, show(state), digest(seed)))
      shown.append((seed.name, state))
  if len(shown) < 2:
    raise CheckError('%s: %d of its %d shipped seeds show %s; one state for one bug needs two inputs' %
                     (target, len(shown), len(seeds), first))
  failures = []
  first_states = sorted({state for _name, state in shown})
  if len(first_states) > 1:
    failures.append('%s: one bug (%s), %d inputs, %d states: %s' %
                    (target, first, len(shown), len(first_states),
                     ' | '.join('%s: %s' % (name, show(state)) for name, state in shown)))
  tried = [first]
  told_apart = False
  for bug in bugs[1:]:
    seed, state = first_showing(out_dir, target, bug, seeds)
    if seed is None:
      print('  %s, %s: no shipped seed shows it' % (target, bug))
      continue
    print('  %s, %s, %s: %s (input %s)' % (target, bug, seed.name, show(state), digest(seed)))
    tried.append(bug)
    if state not in first_states:
      told_apart = True
      break  # two kinds told apart
  if not told_apart:
    failures.append('%s: %d bugs (%s), one state: %s' %
                    (target, len(tried), ', '.join(tried), show(shown[0][1])))
  return failures


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('out_dir', type=pathlib.Path)
  parser.add_argument('--bpfdiff', default=str(CHECKOUT / 'build/dev/cli/bpfdiff'),
                      help='the bpfdiff tool, for `bpfdiff planted list` (default: the dev build)')
  parser.add_argument('--make-seeds', type=pathlib.Path,
                      help='make_diff_seeds, to make raw inputs of the programs (default: the one of '
                      '--bpfdiff\'s build, BUILD/fuzz/make_diff_seeds)')
  parser.add_argument('--programs', type=pathlib.Path, default=PROGRAMS,
                      help='the diff_fuzzer programs, one directory per bug (default: %(default)s)')
  parser.add_argument('--targets', default=','.join(TARGETS), help='which targets to check, of those present')
  args = parser.parse_args(argv[1:])
  make_seeds = args.make_seeds or pathlib.Path(args.bpfdiff).resolve().parent.parent / 'fuzz' / 'make_diff_seeds'
  try:
    asked = args.targets.split(',')
    unknown = [t for t in asked if t not in TARGETS]
    if unknown:
      raise CheckError('--targets: the check knows no target %s (it knows %s)' % (unknown[0], ', '.join(TARGETS)))
    present = [t for t in asked if os.access(args.out_dir / t, os.X_OK)]
    if not present:
      raise CheckError('no fuzz target of %s in %s' % (args.targets, args.out_dir))
    rows = catalog(args.bpfdiff)
    failures = []
    with tempfile.TemporaryDirectory(prefix='crash-states.') as work:
      for target in present:
        print('%s:' % target)
        if target == 'diff_fuzzer':
          failures += check_diff_fuzzer(args.out_dir.resolve(), rows, args.programs.resolve(), make_seeds,
                                        pathlib.Path(work))
        else:
          failures += check_seeded_target(args.out_dir.resolve(), target, rows, pathlib.Path(work))
  except CheckError as error:
    print('crash_states_check: %s' % error, file=sys.stderr)
    return 2
  for failure in failures:
    print('FAIL %s' % failure)
  print('crash_states_check: %s' % ('FAILED' if failures else 'one state per bug, %d targets' % len(present)))
  return 1 if failures else 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
