#!/usr/bin/env bash
# Source coverage of the code under test from what the fuzz targets ran:
# builds the `coverage` preset (the targets as OSS-Fuzz's SANITIZER=coverage
# builds them), replays each target's shipped seeds and any extra corpus
# once (-runs=0), and writes, with llvm-profdata-14 and llvm-cov-14:
#
#   OUT/coverage.json   `llvm-cov export -summary-only`: per file line, branch
#                       and function counts (`bpfdiff report --coverage`)
#   OUT/html/index.html the line-by-line view, branches counted
#   OUT/summary.txt     `llvm-cov report` of the same files
#
# for jit/, oracle/, the pack code (harness/lifecycle, fuzz/pack) and the
# recursion code (harness/recursion, kernel/).
#
# Usage: ci/coverage.sh [--out DIR] [--jobs N] [--corpus-root DIR]
#                       [--fuzz-seconds S --fuzz-build DIR] TARGET...
#   --corpus-root DIR   also replay DIR/<target>/corpus (the nightly's corpus
#                       of tonight) when it exists
#   --fuzz-seconds S    first fuzz each target for S seconds from its seeds
#                       with the build in --fuzz-build (a libFuzzer build,
#                       e.g. build/release) into OUT/fuzz/<target>, and replay
#                       that corpus too: "what 60 s of fuzzing reach"
# Exits 0 when the files were written; 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"

out="" jobs=$(nproc) corpus_root="" fuzz_seconds=0 fuzz_build=""
targets=()
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --corpus-root) corpus_root=$2; shift 2 ;;
    --fuzz-seconds) fuzz_seconds=$2; shift 2 ;;
    --fuzz-build) fuzz_build=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "coverage: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]} > 0)) || { echo "coverage: name at least one fuzz target (see --help)" >&2; exit 2; }
[[ "$fuzz_seconds" =~ ^[0-9]+$ ]] || { echo "coverage: --fuzz-seconds must be a whole number" >&2; exit 2; }
if ((fuzz_seconds > 0)) && [[ ! -d "$fuzz_build" ]]; then
  echo "coverage: --fuzz-seconds needs --fuzz-build DIR, a libFuzzer build of the targets" >&2; exit 2
fi
if [[ -n "$fuzz_build" ]]; then fuzz_build="$(cd "$fuzz_build" && pwd)"; fi  # the fuzzing runs elsewhere
out="${out:-$(mktemp -d /tmp/bpfdiff-coverage.XXXXXX)}"
rm -rf "$out/profiles" "$out/html"
mkdir -p "$out/profiles"
out="$(cd "$out" && pwd)"

cmake --preset coverage >/dev/null
cmake --build --preset coverage -j "$jobs" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; echo "coverage: the coverage build failed; log in $out/build.log"; exit 1; }
build="$checkout/build/coverage"

objects=()
for target in "${targets[@]}"; do
  corpora=("$checkout/fuzz/corpus/$target")
  if [[ -n "$corpus_root" && -d "$corpus_root/$target/corpus" ]]; then corpora+=("$corpus_root/$target/corpus"); fi
  if ((fuzz_seconds > 0)); then
    fuzzed="$out/fuzz/$target"
    rm -rf "$fuzzed"; mkdir -p "$fuzzed/corpus"
    (cd "$fuzzed" && "$fuzz_build/fuzz/targets/$target" corpus "$checkout/fuzz/corpus/$target" \
       -max_total_time="$fuzz_seconds" -artifact_prefix="$fuzzed/" > log.txt 2>&1) ||
      { echo "coverage: fuzzing $target found something or failed; log in $fuzzed/log.txt"; exit 1; }
    corpora+=("$fuzzed/corpus")
  fi
  # Every input once, each process writing its own profile (%p); a target
  # that aborts on an input would stop here, so a finding fails the step.
  LLVM_PROFILE_FILE="$out/profiles/$target-%p.profraw" "$build/fuzz/targets/$target" -runs=0 "${corpora[@]}" \
    > "$out/$target.replay.log" 2>&1 ||
    { tail -20 "$out/$target.replay.log"; echo "coverage: $target failed replaying its corpus"; exit 1; }
  objects+=(-object "$build/fuzz/targets/$target")
done

llvm-profdata-14 merge -sparse "$out"/profiles/*.profraw -o "$out/merged.profdata"
sources=(jit oracle harness/lifecycle fuzz/pack harness/recursion kernel)
cov_args=(-instr-profile="$out/merged.profdata" "${objects[@]:1}" "${sources[@]/#/$checkout/}")
llvm-cov-14 export -summary-only "${cov_args[@]}" > "$out/coverage.json"
llvm-cov-14 report "${cov_args[@]}" > "$out/summary.txt"
llvm-cov-14 show -format=html -show-branches=count -output-dir="$out/html" "${cov_args[@]}" > /dev/null
tail -1 "$out/summary.txt"
echo "coverage: $out/coverage.json, $out/html/index.html"
