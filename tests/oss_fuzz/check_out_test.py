#!/usr/bin/env python3
"""The rules of ci/oss-fuzz/check_out.py (the OSS-Fuzz check's per-target
part) on inputs whose answer is known: what base-runner provides, how an
.options file reads, which targets the CMake files declare.

  check_out_test.py --source-dir DIR

The whole check, with a real target and a planted shared library, is
tests/oss_fuzz/planted_shared_library.sh (ci/test.sh runs it).
"""
import argparse
import importlib.util
import os
import sys
import unittest

check_out = None
LIBFUZZER_FLAGS = {"max_len", "timeout", "rss_limit_mb", "dict", "len_control", "runs"}


class NeededLibraries(unittest.TestCase):

  def test_what_an_oss_fuzz_target_needs_passes(self):
    # google/oss-fuzz PR #7942: a real target's ldd.
    needed = ["libm.so.6", "libpthread.so.0", "librt.so.1", "libdl.so.2", "libgcc_s.so.1",
              "libc.so.6", "ld-linux-x86-64.so.2"]
    self.assertEqual(check_out.needed_problems(needed), [])

  def test_distribution_libraries_fail(self):
    needed = ["libunicorn.so.2", "libm.so.6", "libfmt.so.9", "libLLVM-14.so.1", "libc.so.6"]
    self.assertEqual(check_out.needed_problems(needed),
                     ["libunicorn.so.2", "libfmt.so.9", "libLLVM-14.so.1"])

  def test_c_plus_plus_runtimes_fail(self):
    # Neither is in base-runner to rely on: libc++ is static on OSS-Fuzz,
    # and the bots' libstdc++ is not base-runner's.
    self.assertEqual(check_out.needed_problems(["libc++.so.1", "libstdc++.so.6", "libz.so.1"]),
                     ["libc++.so.1", "libstdc++.so.6", "libz.so.1"])

  def test_a_name_is_matched_whole(self):
    self.assertEqual(check_out.needed_problems(["libc.so.6.evil", "xlibm.so.6"]),
                     ["libc.so.6.evil", "xlibm.so.6"])


class OptionsFiles(unittest.TestCase):

  def test_libfuzzer_section_becomes_flags(self):
    args, problems = check_out.parse_options(
        "[libfuzzer]\nmax_len = 4096\ndict = a.dict\n[asan]\ndetect_leaks=0\n", LIBFUZZER_FLAGS)
    self.assertEqual(problems, [])
    self.assertEqual(args, ["-max_len=4096", "-dict=a.dict"])

  def test_a_file_that_does_not_parse(self):
    args, problems = check_out.parse_options("max_len = 4096\n", LIBFUZZER_FLAGS)
    self.assertEqual(args, [])
    self.assertEqual(len(problems), 1)
    self.assertIn("does not parse", problems[0])

  def test_a_key_given_twice(self):
    _, problems = check_out.parse_options("[libfuzzer]\ntimeout = 1\ntimeout = 2\n",
                                          LIBFUZZER_FLAGS)
    self.assertIn("does not parse", problems[0])

  def test_a_flag_libfuzzer_does_not_know(self):
    _, problems = check_out.parse_options("[libfuzzer]\nmax_length = 10\n", LIBFUZZER_FLAGS)
    self.assertEqual(problems, ["[libfuzzer] max_length: not a flag of this libFuzzer"])

  def test_a_section_clusterfuzz_does_not_read(self):
    _, problems = check_out.parse_options("[libfuzer]\nmax_len = 10\n", LIBFUZZER_FLAGS)
    self.assertEqual(problems, ["unknown section [libfuzer]"])


class DeclaredTargets(unittest.TestCase):

  def test_every_declaration_of_fuzz_targets_is_found(self):
    declared = check_out.declared_targets(SOURCE_DIR)
    # In fuzz/targets/, report/fuzz/ and cli/plugin/fuzz/.
    self.assertLessEqual({"diff_fuzzer", "asm_fuzzer", "pack_fuzzer", "report_json_fuzzer", "plugin_fuzzer"},
                         declared)
    self.assertNotIn("bpfdiff_fuzz_target", declared)
    self.assertNotIn("name", declared)  # cmake/fuzz_target.cmake's function(bpfdiff_fuzz_target name)


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--source-dir", required=True)
  args, rest = parser.parse_known_args()
  SOURCE_DIR = os.path.abspath(args.source_dir)
  spec = importlib.util.spec_from_file_location(
      "check_out", os.path.join(SOURCE_DIR, "ci", "oss-fuzz", "check_out.py"))
  check_out = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(check_out)
  unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
