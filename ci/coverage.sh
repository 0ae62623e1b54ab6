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
# recursion code (harness/recursion, kernel/). When the build compiled a
# Linux tree's files for the kernel engines (kernelsrc/; its
# compile_commands.json says which tree), also
#
#   OUT/kernel-coverage.json  `llvm-cov export -skip-expansions` of those
#                             files (the tree's arch/arm64/net/bpf_jit_comp.c
#                             and arch/arm64/lib/insn.c) and of kernelsrc/'s
#                             shims, with every function and its execution
#                             count (`bpfdiff report --kernel-coverage`)
#   OUT/kernel-summary.txt    `llvm-cov report -show-functions` of the tree's
#                             files
#
# with the tree's files and the shims in the line-by-line view too, and it
# prints "coverage: kernel tree: DIR". Only the kernel targets
# (diff_fuzzer_kernel, pack_fuzzer_kernel, trampoline_fuzzer) run that code.
# A target replays the seeds it is built for (the build's fuzz_targets.tsv:
# a kernel target replays its base target's).
#
# Usage: ci/coverage.sh [--out DIR] [--jobs N] [--corpus-root DIR]
#                       [--fuzz-seconds S --fuzz-build DIR] TARGET...
#   --corpus-root DIR   also replay DIR/<target>/corpus (the nightly's corpus
#                       of tonight) when it exists; for a kernel target
#                       <base>_kernel, DIR/<base>.kernel/corpus (the nightly
#                       names its run so)
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
rm -f "$out/kernel-coverage.json" "$out/kernel-summary.txt"  # a build without a tree writes none
mkdir -p "$out/profiles"
out="$(cd "$out" && pwd)"

cmake --preset coverage >/dev/null
cmake --build --preset coverage -j "$jobs" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; echo "coverage: the coverage build failed; log in $out/build.log"; exit 1; }
build="$checkout/build/coverage"

# The seeds a target replays: its own, or those the manifest's third column
# names (cmake/fuzz_target.cmake: a kernel target's are its base target's).
seeds_of() {
  local named
  named=$(awk -F'\t' -v name="$1" '$1 == name { print $3 }' "$build/fuzz_targets.tsv")
  echo "$checkout/fuzz/corpus/${named:-$1}"
}

objects=()
for target in "${targets[@]}"; do
  seeds=$(seeds_of "$target")
  corpora=("$seeds")
  tonight=("$target")
  if [[ $target == *_kernel ]]; then tonight+=("${target%_kernel}.kernel"); fi
  for name in "${tonight[@]}"; do
    if [[ -n "$corpus_root" && -d "$corpus_root/$name/corpus" ]]; then corpora+=("$corpus_root/$name/corpus"); fi
  done
  if ((fuzz_seconds > 0)); then
    fuzzed="$out/fuzz/$target"
    rm -rf "$fuzzed"; mkdir -p "$fuzzed/corpus"
    (cd "$fuzzed" && "$fuzz_build/fuzz/targets/$target" corpus "$seeds" \
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

# The Linux tree the build compiled, then the files it compiled from the
# tree and from kernelsrc/; nothing when the build has no tree.
kernel_files=$(python3 - "$build/compile_commands.json" "$checkout/kernelsrc/" <<'PY'
import json, re, sys
jit = "/arch/arm64/net/bpf_jit_comp.c"
entries = json.load(open(sys.argv[1]))
files = sorted({entry["file"] for entry in entries})
# The build's own tree, the one the fuzz targets link: its JIT is compiled
# with kernelsrc/tree-include (a further tree's with tree-include_<version>).
own = re.compile(r"kernelsrc/tree-include(\s|$)")
trees = [e["file"][: -len(jit)] for e in entries
         if e["file"].endswith(jit) and own.search(e.get("command") or " ".join(e.get("arguments", [])))]
if trees:
    tree = trees[0]
    print(tree)
    print("\n".join(f for f in files if f.startswith(tree + "/") or f.startswith(sys.argv[2])))
PY
)
kernel_sources=()
if [[ -n "$kernel_files" ]]; then
  tree=$(head -1 <<<"$kernel_files")
  mapfile -t kernel_sources < <(tail -n +2 <<<"$kernel_files")
  tree_sources=()
  for file in "${kernel_sources[@]}"; do
    if [[ $file == "$tree"/* ]]; then tree_sources+=("$file"); fi
  done
  kernel_args=(-instr-profile="$out/merged.profdata" "${objects[@]:1}")
  # Without the regions of each macro expansion: the tree's code is mostly
  # macros (A64_*), and they would make 80 MB of it.
  llvm-cov-14 export -skip-expansions "${kernel_args[@]}" "${kernel_sources[@]}" > "$out/kernel-coverage.json"
  llvm-cov-14 report -show-functions "${kernel_args[@]}" "${tree_sources[@]}" > "$out/kernel-summary.txt"
fi
llvm-cov-14 show -format=html -show-branches=count -output-dir="$out/html" "${cov_args[@]}" "${kernel_sources[@]}" \
  > /dev/null
tail -1 "$out/summary.txt"
echo "coverage: $out/coverage.json, $out/html/index.html"
if ((${#kernel_sources[@]} > 0)); then
  echo "coverage: kernel tree: $tree"
  echo "coverage: $out/kernel-coverage.json, $out/kernel-summary.txt"
fi
