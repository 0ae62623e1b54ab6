#!/usr/bin/env bash
# What .ci/run and the README call. Builds everything with GCC 12 (the
# compiler a plain `cmake -B build` uses on Debian; warnings are errors,
# -O1 with assertions) and runs every test: GoogleTest suites, the
# conformance suites on every engine, every fuzz target replaying its
# corpus, the operand-magnitude sweep, the layering and link checks. Then
# the OSS-Fuzz build, checked as OSS-Fuzz checks it (ci/oss-fuzz/check.sh:
# the fuzz targets alone, with clang-14, libc++ and ASan, each run under
# `env -i` and its shared libraries checked; $OUT is left in
# build/oss-fuzz/out); that check failing on a shared library planted in one
# target; and, with those targets, the ClusterFuzz crash states of planted
# bugs replayed from shipped inputs, nothing fuzzed: one state for one bug
# whichever field of the outcome its programs reach, other states for bugs
# of other kinds (tests/fuzz/crash_states_check.py; the gcc build's
# make_diff_seeds makes raw diff_fuzzer inputs of the programs in
# tests/fuzz/crash_state_programs/).
#
# The clang `dev` preset is the developers' build; clang compiles the fuzz
# targets here, in the OSS-Fuzz check. One full build per compiler keeps the
# command under 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake --preset gcc >/dev/null
cmake --build --preset gcc -j "$jobs"
ctest --preset gcc -j "$jobs"
ci/oss-fuzz/check.sh
tests/oss_fuzz/planted_shared_library.sh
python3 tests/fuzz/crash_states_check.py build/oss-fuzz/out --bpfdiff build/gcc/cli/bpfdiff --make-seeds build/gcc/fuzz/make_diff_seeds
