#!/usr/bin/env python3
"""How the fuzz targets end when Unicorn fails, and their stats files.

Runs the replay builds of the targets (fuzz/targets/replay_main.cc: each
file named on the command line through LLVMFuzzerTestOneInput once) on
their seed corpora:

  - with BPFDIFF_UNICORN_FAULT=CALL[:SKIP], a target reports one harness
    failure naming the call and uc_strerror's text, writes its stats file,
    and exits with status 2: no finding banner, no abort, nothing more
    replayed, whether the failure comes at start-up (open, map) or during
    an input (start, after SKIP runs);
  - a malformed fault is refused with status 2 before anything runs;
  - BPFDIFF_FUZZ_STATS_JSON=DIR/NAME.%p.json gives each process a file of
    its own, named with its pid, as libFuzzer's -fork=N workers need.

Usage: target_exits_test.py CORPUS_ROOT TARGET_PATH...
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

CORPUS_ROOT = None
TARGETS = {}

# uc_strerror(UC_ERR_NOMEM) ends so; the machine adds " (injected)".
NOMEM = re.compile(r'\(UC_ERR_NOMEM\) \(injected\)')


def run(target, env_extra, inputs=None, timeout=300):
  env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin')}
  env.update(env_extra)
  files = inputs if inputs is not None else [str(CORPUS_ROOT / target)]
  return subprocess.run([TARGETS[target], *files], env=env, capture_output=True, text=True, errors='replace',
                        timeout=timeout, check=False)


class UnicornFaultTest(unittest.TestCase):

  def check_harness_failure(self, target, fault, call_text, stats_dir):
    stats = pathlib.Path(stats_dir) / ('%s.%s.json' % (target, fault.replace(':', '-')))
    # diff_fuzzer on Unicorn alone: on VIXL (its default where the build has
    # it) Unicorn runs only the inputs it checks.
    result = run(target, {'BPFDIFF_UNICORN_FAULT': fault, 'BPFDIFF_FUZZ_STATS_JSON': str(stats),
                          'BPFDIFF_EXECUTOR': 'unicorn'})
    what = '%s with BPFDIFF_UNICORN_FAULT=%s:\n%s' % (target, fault, result.stderr[-3000:])
    self.assertEqual(result.returncode, 2, what)
    failures = [line for line in result.stderr.splitlines() if 'harness failure' in line]
    self.assertEqual(len(failures), 1, what)
    self.assertTrue(failures[0].startswith('%s: harness failure, not a finding: unicorn: %s' % (target, call_text)),
                    what)
    self.assertRegex(failures[0], NOMEM)
    self.assertNotIn('====', result.stderr, 'a harness failure is not a finding')
    self.assertNotIn('replayed', result.stdout, 'the target stops at the failure')
    return stats

  def test_failures_at_start_up(self):
    with tempfile.TemporaryDirectory() as stats_dir:
      for target in ['diff_fuzzer', 'jit_determinism_fuzzer', 'pack_fuzzer', 'recursion_fuzzer']:
        with self.subTest(target=target, fault='open'):
          self.check_harness_failure(target, 'open', 'open: ', stats_dir)
        with self.subTest(target=target, fault='map'):
          self.check_harness_failure(target, 'map:2', 'map region ', stats_dir)

  def test_failures_while_running_an_input(self):
    with tempfile.TemporaryDirectory() as stats_dir:
      for target in ['diff_fuzzer', 'pack_fuzzer', 'recursion_fuzzer']:
        with self.subTest(target=target):
          self.check_harness_failure(target, 'start', 'start emulation at 0x', stats_dir)

  def test_a_failure_after_some_inputs_ran(self):
    with tempfile.TemporaryDirectory() as stats_dir:
      stats = self.check_harness_failure('diff_fuzzer', 'start:40', 'start emulation at 0x', stats_dir)
      written = json.loads(stats.read_text())
      self.assertGreater(written['inputs'], 0, 'inputs before the failure ran and were counted')

  def test_a_malformed_fault_is_refused(self):
    result = run('diff_fuzzer', {'BPFDIFF_UNICORN_FAULT': 'start:many'})
    self.assertEqual(result.returncode, 2)
    self.assertIn('diff_fuzzer: BPFDIFF_UNICORN_FAULT: ', result.stderr)
    self.assertNotIn('replayed', result.stdout)


class StatsPathTest(unittest.TestCase):

  def test_each_process_writes_its_own_file(self):
    seeds = sorted((CORPUS_ROOT / 'pack_fuzzer').iterdir())[:3]
    self.assertEqual(len(seeds), 3)
    with tempfile.TemporaryDirectory() as stats_dir:
      pattern = os.path.join(stats_dir, 'pack_fuzzer.%p.json')
      for count in [1, 2]:
        result = run('pack_fuzzer', {'BPFDIFF_FUZZ_STATS_JSON': pattern}, [str(s) for s in seeds[:count]])
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
      files = sorted(pathlib.Path(stats_dir).iterdir())
      self.assertEqual(len(files), 2, [f.name for f in files])
      inputs = []
      for stats in files:
        self.assertRegex(stats.name, r'^pack_fuzzer\.[0-9]+\.json$')
        written = json.loads(stats.read_text())
        self.assertEqual(written['target'], 'pack_fuzzer')
        inputs.append(written['inputs'])
      self.assertEqual(sorted(inputs), [1, 2])


def main():
  global CORPUS_ROOT  # pylint: disable=global-statement
  if len(sys.argv) < 3:
    print(__doc__.strip().splitlines()[-1], file=sys.stderr)
    return 2
  CORPUS_ROOT = pathlib.Path(sys.argv[1])
  for path in sys.argv[2:]:
    TARGETS[pathlib.Path(path).name] = path
  return 0 if unittest.main(argv=sys.argv[:1], exit=False).result.wasSuccessful() else 1


if __name__ == '__main__':
  sys.exit(main())
