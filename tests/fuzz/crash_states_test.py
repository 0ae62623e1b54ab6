#!/usr/bin/env python3
"""Tests of crash_states.py, ClusterFuzz's crash state rules.

Each crash_state_fixtures/NAME.log has NAME.json with the fuzz target it
came from (or null), the crash type and the crash state that ClusterFuzz's
own parser (google/clusterfuzz@77584976, StackParser.parse) gives for it;
they were checked with that parser when written. The real_*.log fixtures
are aborts of our own targets, as the fuzz preset builds them, with
OSS-Fuzz's ASAN_OPTIONS and symbolize_inline_frames=false.
"""

import json
import pathlib
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import crash_states  # pylint: disable=wrong-import-position

FIXTURES = HERE / 'crash_state_fixtures'


class FixtureTest(unittest.TestCase):

  def test_every_fixture(self):
    logs = sorted(FIXTURES.glob('*.log'))
    self.assertGreater(len(logs), 5)
    for log in logs:
      with self.subTest(fixture=log.name):
        expected = json.loads(log.with_suffix('.json').read_text())
        crash_type, state = crash_states.parse(log.read_text(), expected['fuzz_target'])
        self.assertEqual(crash_type, expected['type'])
        self.assertEqual(state, expected['state'])

  def test_every_fixture_has_its_expectation(self):
    for log in FIXTURES.glob('*.log'):
      self.assertTrue(log.with_suffix('.json').exists(), log.name)


class FrameTest(unittest.TestCase):

  def test_names_are_cut_at_the_first_paren_or_bracket(self):
    self.assertEqual(crash_states.frame_name('bpfdiff::fuzz::(anonymous namespace)::DivergenceInR0(void (*)()) x.cc:1:2'),
                     'bpfdiff::fuzz::DivergenceInR0')
    self.assertEqual(crash_states.frame_name('std::__1::vector<int>::operator[](unsigned long) v:1:2'),
                     'std::__1::vector<int>::operator')
    # A template argument list with a '(' cuts the name short: why the
    # frames are not templates over their kinds.
    self.assertEqual(crash_states.frame_name('void bpfdiff::Report<(bpfdiff::Kind)3>() x.cc:1:2'),
                     'void bpfdiff::Report<')
    self.assertEqual(crash_states.frame_name('diff_fuzzer.cc /src/fuzz/targets/diff_fuzzer.cc:72:5'), 'diff_fuzzer.cc')

  def test_the_entry_point_is_named_after_its_file(self):
    line = '    #6 0x55d0c19f0c3a in LLVMFuzzerTestOneInput /src/bpfdiff/fuzz/targets/diff_fuzzer.cc:72:5'
    self.assertEqual(crash_states.frame_text(line), 'diff_fuzzer.cc /src/bpfdiff/fuzz/targets/diff_fuzzer.cc:72:5')
    line = '    #2 0x55d0c1a3b2f1 in LLVMFuzzerTestOneInput (/out/pack_fuzzer+0x12f2f1)'
    self.assertEqual(crash_states.frame_text(line), 'LLVMFuzzerTestOneInput (/out/pack_fuzzer+0x12f2f1)')
    self.assertIsNone(crash_states.frame_text('first divergence (jit): divergence in r0'))

  def test_ignored_frames(self):
    ignored = crash_states._ignored  # pylint: disable=protected-access
    for frame in ['raise', 'abort', 'abort stdlib/./stdlib/abort.c:79:7', 'raise (/lib/x86_64-linux-gnu/libc.so.6+0x3bfb1)',
                  '__pthread_kill_implementation nptl/./nptl/pthread_kill.c:44:76',
                  'fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/out/t+0x1)',
                  'main (/out/t+0x1)', '__libc_start_main csu/../csu/libc-start.c:360:3',
                  '__sanitizer_print_stack_trace (/out/t+0x1)', 'check_assertion() x.cc:1:1', 'ab']:
      self.assertTrue(ignored(frame), frame)
    # raise with a file is kept (glibc with debug info), as ClusterFuzz keeps it.
    for frame in ['raise signal/../sysdeps/posix/raise.c:26:13',
                  'bpfdiff::fuzz::(anonymous namespace)::DivergenceInR0(void (*)()) x.cc:1:2',
                  'diff_fuzzer.cc /src/fuzz/targets/diff_fuzzer.cc:72:5']:
      self.assertFalse(ignored(frame), frame)


if __name__ == '__main__':
  unittest.main()
