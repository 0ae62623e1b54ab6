#!/usr/bin/env bash
# Builds the developer preset (warnings are errors) and runs every test:
# GoogleTest suites, the conformance suites on every engine, and every fuzz
# target replaying its corpus. Then the OSS-Fuzz build, checked as OSS-Fuzz
# checks it (ci/oss-fuzz/check.sh: the fuzz targets alone, with clang-14,
# libc++ and ASan, each run under `env -i` and its shared libraries
# checked; $OUT is left in build/oss-fuzz/out), and that check failing on a
# shared library planted in one target; and with those targets, two planted
# bugs give two ClusterFuzz crash states and one bug found from two inputs
# gives one (tests/fuzz/crash_states_check.py). Then builds everything again with
# GCC 12 (warnings are errors too), which is what a plain `cmake -B build`
# uses on Debian. What .ci/run and the README call.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs"
ci/oss-fuzz/check.sh
tests/oss_fuzz/planted_shared_library.sh
python3 tests/fuzz/crash_states_check.py build/oss-fuzz/out --bpfdiff build/dev/cli/bpfdiff
cmake --preset gcc >/dev/null
cmake --build --preset gcc -j "$jobs"
