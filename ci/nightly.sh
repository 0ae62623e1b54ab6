#!/usr/bin/env bash
# The main job on embedded defaults: builds the release preset, runs every
# part, and writes the nightly report.
#
#  1. Conformance: our vectors and the shared upstream suite (when present) on
#     the interpreter and both JIT lowerings, whole outcomes compared; results
#     per engine as JSON and JUnit. Extra arguments go to `bpfdiff conformance`.
#  2. Fuzzing: diff_fuzzer, pack_fuzzer and recursion_fuzzer, each for
#     BPFDIFF_NIGHTLY_FUZZ_SECONDS (default 60; 0 skips this part) from the
#     shipped seeds; each writes its counters to BPFDIFF_FUZZ_STATS_JSON.
#  3. Planted-bug self-check: each planted bug (`bpfdiff planted list`) against the
#     fuzz target that must catch it, from the shipped seeds, for at most
#     BPFDIFF_NIGHTLY_PLANTED_SECONDS (default 60; 0 skips this part). A bug
#     not caught in time fails the night: the harness has gone blind.
#  4. `bpfdiff report`: summary.txt (printed), junit.xml, report.json and
#     report.html in BPFDIFF_NIGHTLY_OUT (default a new /tmp/bpfdiff-nightly.*),
#     and tonight's entry in BPFDIFF_NIGHTLY_HISTORY (default
#     ~/.cache/bpfdiff/nightly-history), from which the trend is drawn.
#
# Fuzzers run in scratch directories under the output directory (new corpus
# entries and crash artifacts land there): the checkout is left untouched.
# Exits 0 only when every part passed; otherwise 1, naming where the
# artifacts are.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"

fuzz_targets=(diff_fuzzer pack_fuzzer recursion_fuzzer)

fuzz_seconds="${BPFDIFF_NIGHTLY_FUZZ_SECONDS:-60}"
planted_seconds="${BPFDIFF_NIGHTLY_PLANTED_SECONDS:-60}"
out="${BPFDIFF_NIGHTLY_OUT:-$(mktemp -d /tmp/bpfdiff-nightly.XXXXXX)}"
history="${BPFDIFF_NIGHTLY_HISTORY:-${XDG_CACHE_HOME:-$HOME/.cache}/bpfdiff/nightly-history}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

targets=(bpfdiff)
if ((fuzz_seconds > 0 || planted_seconds > 0)); then targets+=("${fuzz_targets[@]}"); fi
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; echo "nightly: FAILED to build; log in $out/build.log"; exit 1; }
bpfdiff="$checkout/build/release/cli/bpfdiff"

# Planted bug -> the fuzz target that must catch it, from the one registry
# (harness/planted/planted_bugs.cc).
planted_bugs=()
while IFS=$'\t' read -r bug target _; do planted_bugs+=("$bug:$target"); done < <("$bpfdiff" planted list)
((${#planted_bugs[@]} > 0)) || { echo "nightly: FAILED: \`bpfdiff planted list\` named no bug"; exit 1; }

failed=0
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
json_string() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

# run_fuzzer TARGET DIR SECONDS: the target from its shipped seeds for
# SECONDS in DIR (new inputs go to DIR/corpus, artifacts to DIR/, the log to
# DIR/log.txt); returns the fuzzer's exit status.
run_fuzzer() {
  local target=$1 dir=$2 seconds=$3 key value
  local options=()
  # The options files hold `key = value` lines under [libfuzzer].
  while IFS='=' read -r key value; do
    key="${key// /}" value="${value// /}"
    [[ -n "$key" && -n "$value" && "$key" != \[* ]] || continue
    [[ "$key" == dict ]] && value="$checkout/fuzz/targets/$value"
    options+=("-$key=$value")
  done < "$checkout/fuzz/targets/$target.options"
  mkdir -p "$dir/corpus"
  (cd "$dir" && "$checkout/build/release/fuzz/targets/$target" corpus "$checkout/fuzz/corpus/$target" "${options[@]}" \
     -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$dir/" > log.txt 2>&1)
}

# A finding is libFuzzer's crash exit (77, after the target's abort) with
# the target's own banner in the log; any other failure is an error.
is_finding() { [[ $1 == 77 ]] && grep -q '^==== ' "$2/log.txt"; }

echo "== conformance =="
suites=(--suite tests/conformance)
[[ -d ../shared/conformance/bpf_conformance ]] && suites+=(--suite ../shared/conformance/bpf_conformance)
"$bpfdiff" conformance "${suites[@]}" --engine all --include-groups callx --quiet \
  --json "$out/conformance.json" --junit "$out/conformance-junit.xml" "$@" || failed=1

report_args=(--conformance "$out/conformance.json" --out "$out" --history "$history")
if ((fuzz_seconds > 0)); then
  runs="["
  for target in "${fuzz_targets[@]}"; do
    echo "== ${target}: ${fuzz_seconds} s from the shipped seeds =="
    dir="$out/fuzz/$target" stats="$out/fuzz/$target.stats.json"
    mkdir -p "$dir"
    start="$(now)" status=0
    BPFDIFF_FUZZ_STATS_JSON="$stats" run_fuzzer "$target" "$dir" "$fuzz_seconds" || status=$?
    if ((status == 0)); then result=clean
    elif is_finding "$status" "$dir"; then result=finding
    else result=error
    fi
    if [[ $result != clean ]]; then
      failed=1
      tail -40 "$dir/log.txt"
      echo "${target}: ${result^^}, artifacts and log in $dir"
    fi
    [[ -s "$stats" ]] && report_args+=(--fuzz-stats "$stats")
    [[ $runs == "[" ]] || runs+=","
    runs+="{\"target\": $(json_string "$target"), \"result\": \"$result\", \"exit_code\": $status,"
    runs+=" \"seconds\": $(elapsed "$start"), \"artifacts\": $(json_string "$dir")}"
  done
  echo "$runs]" > "$out/fuzz-runs.json"
  report_args+=(--fuzz-runs "$out/fuzz-runs.json")
fi

if ((planted_seconds > 0)); then
  echo "== planted-bug self-check: ${#planted_bugs[@]} bugs, at most ${planted_seconds} s each =="
  checks="["
  for pair in "${planted_bugs[@]}"; do
    bug="${pair%%:*}" target="${pair#*:}" dir="$out/planted/${pair%%:*}"
    mkdir -p "$dir"
    start="$(now)" status=0
    BPFDIFF_PLANTED_BUG="$bug" run_fuzzer "$target" "$dir" "$planted_seconds" || status=$?
    seconds="$(elapsed "$start")"
    if is_finding "$status" "$dir"; then detected=true; else detected=false; failed=1; fi
    [[ $checks == "[" ]] || checks+=","
    checks+="{\"bug\": $(json_string "$bug"), \"target\": $(json_string "$target"), \"detected\": $detected,"
    checks+=" \"seconds\": $seconds, \"limit_seconds\": $planted_seconds, \"exit_code\": $status,"
    checks+=" \"artifacts\": $(json_string "$dir")}"
  done
  echo "$checks]" > "$out/planted.json"
  report_args+=(--planted "$out/planted.json")
fi

echo
"$bpfdiff" report "${report_args[@]}" || failed=1
echo
if ((failed)); then echo "nightly: FAILED; artifacts in $out"; else echo "nightly: all parts passed ($out)"; fi
exit "$failed"
