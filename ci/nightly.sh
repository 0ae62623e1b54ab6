#!/usr/bin/env bash
# The main job on embedded defaults: builds the release preset, runs every
# part, and writes the nightly report.
#
#  1. Conformance: our vectors (tests/conformance), and the upstream
#     bpf_conformance suite when BPFDIFF_UPSTREAM_SUITE names a checkout's
#     tests/ directory, on the interpreter and both JIT lowerings, whole
#     outcomes compared. Without it the report says plainly that only our
#     own vectors ran. Extra arguments go to `bpfdiff conformance`. When
#     the build has the kernel's own JIT (kernelsrc/), the same suites on
#     interp, kernel-jit, kernel-jit-cbpf and kernel-jit-llsc too, naming the tree; its known
#     findings (kernelsrc/known_findings.txt) are reported, not run. Then
#     the tree's lib/test_bpf.c (`bpfdiff test-bpf`) on the interpreter
#     and every kernel engine, shown as a table per engine; a failure or a
#     divergence fails the night (BPFDIFF_NIGHTLY_TEST_BPF, default 1; 0
#     skips). Then the same for every further tree the build links beside
#     its own (kernel@<version>: by default Linux 6.1, which ci/setup.sh
#     extracts into ~/.cache/bpfdiff/linux-source-6.1), and for each tree
#     of BPFDIFF_NIGHTLY_TREES (directories, space-separated; default
#     none), with a bpfdiff built against it in build/tree-<name>. The
#     report opens with a row per tree and engine.
#  2. Fuzzing: each of BPFDIFF_NIGHTLY_FUZZ_TARGETS for
#     BPFDIFF_NIGHTLY_FUZZ_SECONDS (default 60; 0 skips fuzzing and
#     coverage) with libFuzzer's -fork over BPFDIFF_NIGHTLY_CORES workers
#     (default: every core), from the shipped seeds and the corpus kept
#     between nights in BPFDIFF_NIGHTLY_CORPUS (default
#     ~/.cache/bpfdiff/corpus/<target>, outside the checkout). Each worker
#     writes its counters (BPFDIFF_FUZZ_STATS_JSON with %p); the report adds
#     them up. New inputs that add coverage are merged (-merge=1) into the
#     kept corpus; README says how to fold it into fuzz/corpus. A target
#     named TARGET.kernel runs TARGET with BPFDIFF_ENGINES=kernel; when the
#     build has the kernel's own JIT and the list is the default,
#     diff_fuzzer.kernel and pack_fuzzer.kernel run too: the kernel's JIT
#     against the interpreter (its known findings counted, not reported:
#     fuzz/findings/known_kernel_findings.h), and in the pack lifecycle.
#     A target named TARGET.trees runs TARGET with BPFDIFF_ENGINES=trees:
#     the kernel engines of every tree the build links, on the same
#     programs; when the build links more than one tree and the list is
#     the default, diff_fuzzer.trees runs too (a divergence says which
#     tree is wrong: fuzz/findings/three_way.h, TreeVerdict).
#  3. Source coverage (BPFDIFF_NIGHTLY_COVERAGE, default 1; 0 skips): the
#     `coverage` preset's targets replay the seeds and tonight's corpus;
#     llvm-cov gives line and branch coverage of jit/, oracle/ and the pack
#     and recursion code per file, and a line-by-line HTML view. When the
#     build has the kernel's JIT, its targets (diff_fuzzer_kernel,
#     pack_fuzzer_kernel, trampoline_fuzzer) replay too, and the report
#     shows first the coverage of the Linux tree's files they compile, with
#     the functions never run, the lines never run in functions that run,
#     and why (kernelsrc/uncovered.txt).
#  4. The planted-bug gate (ci/planted_gate.py; BPFDIFF_NIGHTLY_PLANTED_GATE,
#     default 1; 0 skips): every planted bug's fixed reproducer
#     (tests/planted/reproducers) replayed by the fuzz target that must
#     catch it, once with the bug switched on (a finding is due) and once
#     without (it must be clean). Deterministic: it decides whether the
#     harness still catches every planted bug. A bug it does not catch
#     fails the night.
#  5. The bug-finding benchmark (ci/planted_benchmark.sh), a measurement:
#     each planted bug against the fuzz target that must catch it, from the
#     seeds and from an empty corpus (libFuzzer -seed values
#     BPFDIFF_NIGHTLY_PLANTED_EMPTY_SEEDS, default "1 2 3"; "" runs from the
#     seeds only), each run at most BPFDIFF_NIGHTLY_PLANTED_SECONDS (default
#     30; 0 skips). Times and detections are reported with their trend; a
#     bug not detected within the limit is reported, not failed. The night
#     fails only on a regression against the history beyond the tolerance
#     of report/planted_trend.h: a bug detected from the seeds in each of
#     the last 5 nights (each within half the limit) and not tonight, or the
#     bugs detected from an empty corpus falling more than 3 below the
#     median of the last 7 nights with tonight's settings (once there are
#     3). A first night cannot regress. A run that could not run (its
#     target exited 2) fails the night too: nothing was measured.
#  6. A soak of BPFDIFF_NIGHTLY_SOAK_HOURS (default 0: skipped; ci/soak.sh).
#  7. `bpfdiff report`: summary.txt (printed), junit.xml, report.json and
#     report.html in BPFDIFF_NIGHTLY_OUT (default a new /tmp/bpfdiff-nightly.*),
#     and tonight's entry in BPFDIFF_NIGHTLY_HISTORY (default
#     ~/.cache/bpfdiff/nightly-history), from which the trend is drawn.
#
# BPFDIFF_PLANTED_BUG=<name> switches a planted bug on for the whole night
# (a negative control of the night itself): every part runs with it, and
# the gate's replays without their bug find it, so the night fails.
#
# BPFDIFF_NIGHTLY_BUILD names a build to use as it is (its cli/bpfdiff and
# fuzz/targets/*) instead of building the release preset.
#
# A night killed half-way leaves its output directory incomplete and no
# history entry: the next night runs as usual and its trend skips the lost
# one (tonight's entry is the last thing written). Fuzzers run in scratch
# directories under the output directory; the checkout is left untouched.
# Exits 0 only when every part passed; 1 otherwise, naming where the
# artifacts are; 2 when a setting is wrong.
set -euo pipefail
# The whole script is one compound command, read before any of it runs: a
# run that lasts minutes is not broken by an edit of this file under it
# (bash otherwise reads a script as it goes).
{
cd "$(dirname "$0")/.."
checkout="$PWD"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff"

read -r -a fuzz_targets <<<"${BPFDIFF_NIGHTLY_FUZZ_TARGETS:-diff_fuzzer jit_determinism_fuzzer pack_fuzzer recursion_fuzzer}"
fuzz_seconds="${BPFDIFF_NIGHTLY_FUZZ_SECONDS:-60}"
cores="${BPFDIFF_NIGHTLY_CORES:-$(nproc)}"
kept_corpus="${BPFDIFF_NIGHTLY_CORPUS:-$cache/corpus}"
coverage="${BPFDIFF_NIGHTLY_COVERAGE:-1}"
planted_gate="${BPFDIFF_NIGHTLY_PLANTED_GATE:-1}"
test_bpf="${BPFDIFF_NIGHTLY_TEST_BPF:-1}"
planted_seconds="${BPFDIFF_NIGHTLY_PLANTED_SECONDS:-30}"
planted_empty_seeds="${BPFDIFF_NIGHTLY_PLANTED_EMPTY_SEEDS-1 2 3}"
soak_hours="${BPFDIFF_NIGHTLY_SOAK_HOURS:-0}"
upstream_suite="${BPFDIFF_UPSTREAM_SUITE:-}"
# Linux trees besides those the build holds (its own, and the further ones
# it links beside it: kernel@<version>), each built apart.
read -r -a trees <<<"${BPFDIFF_NIGHTLY_TREES:-}"
build="${BPFDIFF_NIGHTLY_BUILD:-}"
out="${BPFDIFF_NIGHTLY_OUT:-$(mktemp -d /tmp/bpfdiff-nightly.XXXXXX)}"
history="${BPFDIFF_NIGHTLY_HISTORY:-$cache/nightly-history}"

bad_setting() { echo "nightly: $*" >&2; exit 2; }
[[ "$fuzz_seconds" =~ ^[0-9]+$ ]] || bad_setting "BPFDIFF_NIGHTLY_FUZZ_SECONDS must be a whole number of seconds"
[[ "$planted_seconds" =~ ^[0-9]+$ ]] || bad_setting "BPFDIFF_NIGHTLY_PLANTED_SECONDS must be a whole number of seconds"
[[ "$cores" =~ ^[1-9][0-9]*$ ]] || bad_setting "BPFDIFF_NIGHTLY_CORES must be a positive number"
[[ "$coverage" == 0 || "$coverage" == 1 ]] || bad_setting "BPFDIFF_NIGHTLY_COVERAGE must be 0 or 1"
[[ "$planted_gate" == 0 || "$planted_gate" == 1 ]] || bad_setting "BPFDIFF_NIGHTLY_PLANTED_GATE must be 0 or 1"
[[ "$test_bpf" == 0 || "$test_bpf" == 1 ]] || bad_setting "BPFDIFF_NIGHTLY_TEST_BPF must be 0 or 1"
[[ "$soak_hours" =~ ^[0-9]*\.?[0-9]+$ ]] || bad_setting "BPFDIFF_NIGHTLY_SOAK_HOURS must be a number of hours"
for tree in "${trees[@]}"; do
  [[ -f "$tree/arch/arm64/net/bpf_jit_comp.c" ]] ||
    bad_setting "BPFDIFF_NIGHTLY_TREES names $tree, which is no Linux tree (no arch/arm64/net/bpf_jit_comp.c)"
done
if [[ -n "$upstream_suite" && ! -d "$upstream_suite" ]]; then
  bad_setting "BPFDIFF_UPSTREAM_SUITE=$upstream_suite is not a directory (a checkout of bpf_conformance's tests/)"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The release build, or the one given.
fuzzing=$((fuzz_seconds > 0))
if [[ -z "$build" ]]; then
  build="$checkout/build/release"
  build_targets() {
    cmake --build --preset release -j "$cores" --target "$@" >> "$out/build.log" 2>&1 ||
      { tail -40 "$out/build.log"; echo "nightly: FAILED to build; log in $out/build.log"; exit 1; }
  }
  cmake --preset release >/dev/null
  build_targets bpfdiff
  targets=()
  if ((fuzzing)); then targets+=("${fuzz_targets[@]%%.*}"); fi
  # The gate's and the benchmark's: each planted bug's target, as the catalog says.
  if ((planted_gate || planted_seconds > 0)); then
    mapfile -t -O "${#targets[@]}" targets < <("$build/cli/bpfdiff" planted list | cut -f2)
  fi
  if ((${#targets[@]} > 0)); then
    mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)
    build_targets "${targets[@]}"
  fi
fi
[[ -d "$build" ]] || bad_setting "BPFDIFF_NIGHTLY_BUILD=$build is not a directory"
build="$(cd "$build" && pwd)"  # the fuzzers run in directories of their own
bpfdiff="$build/cli/bpfdiff"
[[ -x "$bpfdiff" ]] || bad_setting "no bpfdiff in $build/cli"

# The kernel's JIT against the interpreter and in the pack lifecycle, and
# the trampolines its arch code builds, when the build has it and the
# targets are the default ones.
kernel_jit=0
if "$bpfdiff" engines --kernel >/dev/null 2>&1; then kernel_jit=1; fi
if [[ -z "${BPFDIFF_NIGHTLY_FUZZ_TARGETS:-}" ]] && ((kernel_jit)); then
  fuzz_targets+=(diff_fuzzer.kernel pack_fuzzer.kernel trampoline_fuzzer)
  # Every tree's JIT on the same programs, when the build links several.
  if "$bpfdiff" engines | grep -q '^kernel-jit@'; then fuzz_targets+=(diff_fuzzer.trees); fi
fi
# What the coverage build replays, each once: tonight's targets, a
# TARGET.kernel as that build's TARGET_kernel (TARGET built to run the
# kernel's engines), and, when the build has the kernel's JIT, its three
# targets whatever the list: only they run the tree's code.
# (A TARGET.trees is not replayed: the coverage build holds one tree.)
coverage_targets=("${fuzz_targets[@]/%.kernel/_kernel}")
coverage_targets=("${coverage_targets[@]/%.trees/_kernel}")
if ((kernel_jit)); then coverage_targets+=(diff_fuzzer_kernel pack_fuzzer_kernel trampoline_fuzzer); fi
mapfile -t coverage_targets < <(printf '%s\n' "${coverage_targets[@]}" | sort -u)

failed=0
night_start=$SECONDS
part_times=""
# part_took NAME START: NAME took since START (whole seconds), for the closing line.
part_took() { part_times+="${part_times:+, }$1 $((SECONDS - $2)) s"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
json_string() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

# The [libfuzzer] options of a target's .options file, as flags.
target_options() { python3 "$checkout/ci/libfuzzer_options.py" "$checkout/fuzz/targets/$1.options"; }

# A finding is libFuzzer's crash exit (77, after the target's abort) with
# the target's own banner in the log (with -fork, inside the worker's log
# that the parent prints); any other failure is an error.
is_finding() { [[ $1 == 77 ]] && grep -q '^==== ' "$2/log.txt"; }

# The last -fork status line's oom/timeout/crash counts: "O T C".
fork_counts() {
  grep -Eo 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' "$1" | tail -1 | awk -F'[ /]' '{print $4, $5, $6}'
}

echo "== conformance =="
part_start=$SECONDS
suites=(--suite tests/conformance)
report_args=(--out "$out" --history "$history")
if [[ -n "$upstream_suite" ]]; then
  suites+=(--suite "$upstream_suite")
  report_args+=(--upstream-suite "$upstream_suite")
else
  echo "nightly: BPFDIFF_UPSTREAM_SUITE is not set: only bpfdiff's own vectors run (see README)"
fi
"$bpfdiff" conformance "${suites[@]}" --engine all --include-groups callx --quiet \
  --json "$out/conformance.json" --junit "$out/conformance-junit.xml" "$@" || failed=1
report_args+=(--conformance "$out/conformance.json")
# The kernel's own JIT, when this build read a Linux tree: the same suites on
# interp, kernel-jit, kernel-jit-cbpf and kernel-jit-llsc. Its known findings
# (kernelsrc/known_findings.txt) are reported and fail nothing; a new
# divergence fails the night.
known=$(grep -v '^#' kernelsrc/known_findings.txt | paste -sd '|')
# tree_results DIR BPFDIFF GROUP TREE_LINE ARGS...: one tree's results, as
# the report's first table reads them (report/kernel_trees.h): the tree
# (TREE_LINE, "linux 6.1.192 at PATH"), its kernel engines (GROUP: kernel
# for the build's own, kernel@6.1.192 for a tree linked beside it) on the
# suites (the known findings left out and listed), and its lib/test_bpf.c.
tree_results() {
  local dir=$1 tool=$2 group=$3 tree_line=$4
  shift 4
  mkdir -p "$dir"
  echo "$tree_line" > "$dir/tree.txt"
  grep -v '^#' kernelsrc/known_findings.txt | sed -e 's/^\^//' -e 's/\[\.\]data\$$//' > "$dir/known.txt"
  echo "nightly: $tree_line: known findings, left out of its conformance and run apart: $known (kernelsrc/SHIMS.md)"
  "$tool" conformance "${suites[@]}" --engine "$group" --include-groups callx --quiet \
    ${known:+--exclude "$known"} --json "$dir/conformance.json" "$@" || failed=1
  # The known findings' reproducers on this tree, apart: which reproduce
  # here (a failure is the finding, and fails nothing).
  if [[ -n $known ]]; then
    local known_status=0
    "$tool" conformance --suite "$checkout/tests/conformance" --engine "$group" --include-groups callx --quiet \
      --include "$known" --json "$dir/known.json" > "$dir/known.log" 2>&1 || known_status=$?
    if ((known_status > 1)); then
      echo "nightly: the known findings' reproducers did not run on $tree_line; log in $dir/known.log"
      failed=1
    fi
  fi
  if ((test_bpf)); then
    echo "== test_bpf (lib/test_bpf.c of $tree_line) =="
    "$tool" test-bpf --engine "$group" --json "$dir/test-bpf.json" || failed=1
  fi
  report_args+=(--tree-results "$dir")
}
# What SHIMS.md says of each known finding: its reproducer and the commits
# it cites, shown with the trees' rows.
report_args+=(--known-findings-doc "$checkout/kernelsrc/SHIMS.md")
if kernel_tree=$("$bpfdiff" engines --kernel); then
  echo "nightly: the kernel's JIT: $kernel_tree" | tee "$out/kernel-tree.txt"
  tree_results "$out/trees/1" "$bpfdiff" kernel "$kernel_tree" "$@"
  [[ -s "$out/trees/1/test-bpf.json" ]] && report_args+=(--test-bpf "$out/trees/1/test-bpf.json")
else
  echo "nightly: the kernel's JIT: $kernel_tree"
fi
# Every further tree the build links beside its own (by default 6.1 beside
# 6.12: cmake/kernel_source.cmake), through its engines in the same bpfdiff
# (kernel@<version>).
tree_number=1
while IFS=$'\t' read -r version tree_line; do
  [[ -n $version ]] || continue
  tree_number=$((tree_number + 1))
  echo "== the kernel's code of $tree_line (kernel@$version) =="
  tree_results "$out/trees/$tree_number" "$bpfdiff" "kernel@$version" "$tree_line" "$@"
done < <("$bpfdiff" engines --trees)
# Every tree of BPFDIFF_NIGHTLY_TREES: bpfdiff built against it beside the
# night's build (build/tree-<name>, the release preset's settings), then
# the same results. A tree that does not build fails the night, the
# build's own words (a missing file or service, named) in the log.
for tree in "${trees[@]}"; do
  tree_number=$((tree_number + 1))
  tree_build="$checkout/build/tree-$(basename "$tree")"
  echo "== the kernel's code of $tree (build $tree_build) =="
  if cmake --preset release -B "$tree_build" -DBPFDIFF_KERNEL_SOURCE="$tree" >> "$out/build.log" 2>&1 &&
     cmake --build "$tree_build" -j "$cores" --target bpfdiff >> "$out/build.log" 2>&1; then
    tree_results "$out/trees/$tree_number" "$tree_build/cli/bpfdiff" kernel \
      "$("$tree_build/cli/bpfdiff" engines --kernel)" "$@"
  else
    tail -20 "$out/build.log"
    echo "nightly: FAILED to build bpfdiff against $tree; log in $out/build.log"
    failed=1
  fi
done
part_took conformance "$part_start"

if ((fuzzing)); then
  part_start=$SECONDS
  runs="["
  mkdir -p "$out/fuzz/stats"
  for target in "${fuzz_targets[@]}"; do
    base="${target%%.*}" engines=""
    [[ $target == *.kernel ]] && engines=kernel
    [[ $target == *.trees ]] && engines=trees
    binary="$build/fuzz/targets/$base"
    [[ -x "$binary" ]] || bad_setting "no fuzz target $base in $build/fuzz/targets"
    echo "== ${target}: ${fuzz_seconds} s on ${cores} workers (-fork) =="
    dir="$out/fuzz/$target" kept="$kept_corpus/$target"
    mkdir -p "$dir/corpus" "$kept"
    mapfile -t options < <(target_options "$base")
    start="$(now)" status=0
    # New inputs go to the first directory; -fork merges the others in.
    (cd "$dir" && BPFDIFF_ENGINES="$engines" BPFDIFF_FUZZ_STATS_JSON="$out/fuzz/stats/$target.%p.json" \
       "$binary" -fork="$cores" corpus "$kept" "$checkout/fuzz/corpus/$base" "${options[@]}" \
       -max_total_time="$fuzz_seconds" -artifact_prefix="$dir/" > log.txt 2>&1) || status=$?
    read -r ooms timeouts _ <<<"$(fork_counts "$dir/log.txt")"
    ooms=${ooms:-0} timeouts=${timeouts:-0}
    if is_finding "$status" "$dir"; then result=finding
    elif ((status != 0)); then result=error
    elif ((timeouts > 0)); then result=timeout
    elif ((ooms > 0)); then result=oom
    else result=clean
    fi
    if [[ $result != clean ]]; then
      failed=1
      tail -40 "$dir/log.txt"
      echo "${target}: ${result^^}, artifacts and log in $dir"
    fi
    # What tonight found that adds coverage, kept for the next nights.
    BPFDIFF_ENGINES="$engines" "$binary" -merge=1 "$kept" "$dir/corpus" > "$dir/merge.log" 2>&1 ||
      { echo "${target}: merging tonight's corpus into $kept failed; log in $dir/merge.log"; failed=1; }
    grep -h 'MERGE-OUTER: [0-9]* new files' "$dir/merge.log" | sed "s|^|  $target: |" || true
    # The finding's kind (each target prints "finding kind: ..."): the key
    # it files under, by which the report groups the night's findings.
    kind=""
    [[ $result == finding ]] && kind=$(grep -m1 -h '^finding kind: ' "$dir/log.txt" | cut -c15-)
    [[ $runs == "[" ]] || runs+=","
    runs+="{\"target\": $(json_string "$target"), \"result\": \"$result\", \"exit_code\": $status,"
    [[ -n $kind ]] && runs+=" \"finding_kind\": $(json_string "$kind"),"
    runs+=" \"timeouts\": $timeouts, \"ooms\": $ooms,"
    runs+=" \"seconds\": $(elapsed "$start"), \"artifacts\": $(json_string "$dir")}"
  done
  echo "$runs]" > "$out/fuzz-runs.json"
  report_args+=(--fuzz-runs "$out/fuzz-runs.json")
  for stats in "$out"/fuzz/stats/*.json; do [[ -s "$stats" ]] && report_args+=(--fuzz-stats "$stats"); done
  part_took fuzzing "$part_start"

  if ((coverage)); then
    echo "== source coverage: the seeds and tonight's corpus, replayed by the coverage build =="
    part_start=$SECONDS
    if ci/coverage.sh --out "$out/coverage" --jobs "$cores" --corpus-root "$out/fuzz" "${coverage_targets[@]}" \
         > "$out/coverage.log" 2>&1; then
      report_args+=(--coverage "$out/coverage/coverage.json" --coverage-root "$checkout"
                    --coverage-html "coverage/html/index.html")
      # The Linux tree's files, when the coverage build compiled a tree.
      coverage_tree=$(sed -n 's/^coverage: kernel tree: //p' "$out/coverage.log")
      if [[ -s "$out/coverage/kernel-coverage.json" && -n "$coverage_tree" ]]; then
        report_args+=(--kernel-coverage "$out/coverage/kernel-coverage.json" --kernel-tree "$coverage_tree"
                      --uncovered-reasons "$checkout/kernelsrc/uncovered.txt")
      fi
    else
      tail -20 "$out/coverage.log"
      echo "nightly: source coverage FAILED; log in $out/coverage.log"
      failed=1
    fi
    part_took coverage "$part_start"
  fi
fi

if ((planted_gate)); then
  echo "== planted-bug gate: every planted bug's reproducer, replayed with the bug and without =="
  part_start=$SECONDS
  python3 ci/planted_gate.py --build "$build" --jobs "$cores" --json "$out/planted-gate.json" \
    --logs "$out/planted-gate" || failed=1
  [[ -s "$out/planted-gate.json" ]] && report_args+=(--planted-gate "$out/planted-gate.json")
  part_took gate "$part_start"
fi

if ((planted_seconds > 0)); then
  # A measurement: its misses are judged by `bpfdiff report` against the
  # history; only a run that could not run fails the night here.
  echo "== bug-finding benchmark: every planted bug, at most ${planted_seconds} s a run =="
  part_start=$SECONDS
  ci/planted_benchmark.sh --build "$build" --limit "$planted_seconds" --empty-seeds "$planted_empty_seeds" \
    --jobs "$cores" --out "$out/planted" || failed=1
  [[ -s "$out/planted/planted.json" ]] && report_args+=(--planted "$out/planted/planted.json")
  part_took benchmark "$part_start"
fi

if [[ "$soak_hours" != 0 ]]; then
  echo "== soak: ${soak_hours} h =="
  part_start=$SECONDS
  ci/soak.sh "$soak_hours" --build "$build" --cores "$cores" --out "$out/soak" || failed=1
  part_took soak "$part_start"
fi

echo
"$bpfdiff" report "${report_args[@]}" || failed=1
echo
echo "nightly: ${part_times:-no part ran}; $((SECONDS - night_start)) s in all after the build"
if ((failed)); then echo "nightly: FAILED; artifacts in $out"; else echo "nightly: all parts passed ($out)"; fi
exit "$failed"

exit
}
