#!/usr/bin/env bash
# planted_shared_library.sh [TARGET]: the OSS-Fuzz check must fail when a
# fuzz target needs a shared library that base-runner does not have. Plants
# libunicorn.so in TARGET's link (default asm_fuzzer, which needs no
# Unicorn at all) with ci/oss-fuzz/check.sh --plant, checks that target
# alone, and passes only when the check fails on that target's NEEDED list
# and names the library. Reuses the check's default $WORK:
# after ci/oss-fuzz/check.sh only the one target relinks. Its $OUT is
# build/oss-fuzz/planted-out; the next check relinks the target clean.
set -uo pipefail
checkout=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:-asm_fuzzer}
output=$("$checkout/ci/oss-fuzz/check.sh" --plant "$target" --only "$target" \
           --out "$checkout/build/oss-fuzz/planted-out" 2>&1)
status=$?
echo "$output"
if ((status == 0)); then
  echo "planted_shared_library: FAIL: the check passed with libunicorn.so planted in $target"
  exit 1
fi
if ! grep -Eq "^  NEEDED +FAIL .*not in base-runner: .*libunicorn\.so" <<<"$output"; then
  echo "planted_shared_library: FAIL: the check failed (exit $status), but not on $target's NEEDED libunicorn.so"
  exit 1
fi
echo "planted_shared_library: ok: the check failed on the planted libunicorn.so (exit $status)"
