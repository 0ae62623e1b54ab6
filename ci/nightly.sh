#!/usr/bin/env bash
# The main job on embedded defaults: builds the release preset and writes the
# nightly report.
#
#  1. Conformance: our vectors and the shared upstream suite (when present) on
#     the interpreter and both JIT lowerings, whole outcomes compared. Extra
#     arguments go to `bpfdiff conformance`.
#  2. Fuzzing: diff_fuzzer, pack_fuzzer and recursion_fuzzer, each for
#     BPFDIFF_NIGHTLY_FUZZ_SECONDS (default 60; 0 skips this part) from the
#     shipped seeds, on a scratch copy of the corpus so the checkout is left
#     untouched. Each prints its own counters; a finding keeps its artifact in
#     the scratch directory, whose path the report prints.
#
# Exits 0 only when every part passed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${BPFDIFF_NIGHTLY_FUZZ_SECONDS:-60}"
targets=(bpfdiff)
if ((fuzz_seconds > 0)); then targets+=(diff_fuzzer pack_fuzzer recursion_fuzzer); fi

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target "${targets[@]}"

failed=0
echo "== conformance =="
suites=(--suite tests/conformance)
[[ -d ../shared/conformance/bpf_conformance ]] && suites+=(--suite ../shared/conformance/bpf_conformance)
build/release/harness/bpfdiff conformance "${suites[@]}" --engine all --include-groups callx "$@" || failed=1

if ((fuzz_seconds > 0)); then
  scratch="$(mktemp -d /tmp/bpfdiff-nightly.XXXXXX)"
  for target in diff_fuzzer pack_fuzzer recursion_fuzzer; do
    echo
    echo "== ${target}: ${fuzz_seconds} s from the shipped seeds =="
    mkdir -p "$scratch/$target/corpus"
    cp fuzz/corpus/"$target"/* "$scratch/$target/corpus/"
    options=()
    # The options files hold `key = value` lines under [libfuzzer].
    while IFS='=' read -r key value; do
      key="${key// /}" value="${value// /}"
      [[ -n "$key" && -n "$value" && "$key" != \[* ]] || continue
      [[ "$key" == dict ]] && value="$PWD/fuzz/$value"
      options+=("-$key=$value")
    done < "fuzz/$target.options"
    if (cd "$scratch/$target" &&
        "$OLDPWD/build/release/fuzz/$target" corpus "${options[@]}" \
          -max_total_time="$fuzz_seconds" -print_final_stats=1 > log.txt 2>&1); then
      # libFuzzer's total, then the target's last counters block (a line
      # of its own and the indented lines after it).
      awk '/^Done /{done=$0}
           /^(#diff_fuzzer stats|pack_fuzzer:)/{block=$0; next}
           /^  (poisoned|rejected):/{block=block "\n" $0}
           END{print done; if (block != "") print block}' "$scratch/$target/log.txt"
    else
      failed=1
      tail -40 "$scratch/$target/log.txt"
      echo "${target}: FINDING, artifacts and log in $scratch/$target"
    fi
  done
fi

echo
if ((failed)); then echo "nightly: FAILED"; else echo "nightly: all parts passed"; fi
exit "$failed"
