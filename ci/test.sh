#!/usr/bin/env bash
# Builds the developer preset (warnings are errors) and runs every test:
# GoogleTest suites, the conformance suites on every engine, and every fuzz
# target replaying its corpus; then builds everything again with GCC 12
# (warnings are errors too), which is what a plain `cmake -B build` uses on
# Debian. What .ci/run and the README call.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs"
cmake --preset gcc >/dev/null
cmake --build --preset gcc -j "$jobs"
