#!/usr/bin/env bash
# The bug-finding benchmark: how long each planted bug (`bpfdiff planted
# list`) takes to be found by the fuzz target that must catch it, measured
# twice, each with a time limit:
#
#   from the seeds        the target's shipped corpus (fuzz/corpus/<target>)
#   from an empty corpus  one run per libFuzzer -seed value, median reported
#
# Each run is one libFuzzer process on one core (jobs run side by side,
# one per core given, each pinned with taskset). A run detects its bug when
# the target aborts with its own finding banner (libFuzzer's crash exit 77);
# the time is wall clock from the start of the process, startup included.
#
# Usage: ci/planted_benchmark.sh [options]
#   --build DIR         a build of the release preset (default build/release;
#                       built here when missing)
#   --limit SECONDS     per run (default 60)
#   --empty-seeds "S.." libFuzzer -seed values of the empty-corpus runs
#                       (default "1 2 3"; "" skips them)
#   --no-seeds          skip the runs from the seeds
#   --jobs N            runs side by side (default: the number of cores)
#   --bugs "a b ..."    only these bugs (default: every one)
#   --out DIR           where runs keep their logs and artifacts, and where
#                       planted.json goes (default a new /tmp/bpfdiff-planted.*)
#   --tabulate          run nothing: tabulate the runs already in --out DIR
#
# Writes DIR/planted.json (what `bpfdiff report --planted` reads) and prints
# the table. A measurement, not a check: a bug not detected within the limit
# is a result like any other (whether the harness can still catch each bug
# is ci/planted_gate.py's to say, deterministically; the nightly's report
# judges these times against the previous nights, report/planted_trend.h).
# Exits 0 when every run ran, whatever it detected; 1 when a run could not
# run (its target exited 2, a harness failure or a wrong setting, or could
# not be started), since that measured nothing; 2 on a wrong option.
set -euo pipefail
# The whole script is one compound command, read before any of it runs: a
# run that lasts minutes is not broken by an edit of this file under it
# (bash otherwise reads a script as it goes).
{
cd "$(dirname "$0")/.."
checkout="$PWD"

build="$checkout/build/release"
limit=60
empty_seeds="1 2 3"
from_seeds=1
jobs=$(nproc)
only=""
out=""
tabulate=0
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --empty-seeds) empty_seeds=$2; shift 2 ;;
    --no-seeds) from_seeds=0; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --bugs) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tabulate) tabulate=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "planted_benchmark: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$limit" =~ ^[0-9]+$ && "$limit" -gt 0 ]] || { echo "planted_benchmark: --limit must be a positive number of seconds" >&2; exit 2; }
[[ "$jobs" =~ ^[0-9]+$ && "$jobs" -gt 0 ]] || { echo "planted_benchmark: --jobs must be a positive number" >&2; exit 2; }
[[ $tabulate == 0 || -n "$out" ]] || { echo "planted_benchmark: --tabulate needs --out DIR" >&2; exit 2; }
out="${out:-$(mktemp -d /tmp/bpfdiff-planted.XXXXXX)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if [[ ! -x "$build/cli/bpfdiff" ]]; then
  [[ "$build" == "$checkout/build/release" ]] ||
    { echo "planted_benchmark: no bpfdiff in $build/cli (--build names a build as it is)" >&2; exit 2; }
  cmake --preset release >/dev/null
  cmake --build --preset release -j "$(nproc)" --target bpfdiff diff_fuzzer pack_fuzzer recursion_fuzzer \
    > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; echo "planted_benchmark: build failed"; exit 1; }
fi
build="$(cd "$build" && pwd)"  # the runs start in directories of their own
bpfdiff="$build/cli/bpfdiff"

# The catalog: name, target, area, value-dependent, fixed by, what.
declare -A target_of area_of vd_of fix_of
bugs=()
while IFS=$'\t' read -r bug target area vd fixed what; do
  if [[ -n "$only" && " $only " != *" $bug "* ]]; then continue; fi
  bugs+=("$bug")
  target_of[$bug]=$target area_of[$bug]=$area vd_of[$bug]=$vd fix_of[$bug]=$fixed
done < <("$bpfdiff" planted list)
((${#bugs[@]} > 0)) || { echo "planted_benchmark: no planted bug to measure" >&2; exit 2; }
for bug in "${bugs[@]}"; do
  [[ -x "$build/fuzz/targets/${target_of[$bug]}" ]] || { echo "planted_benchmark: no ${target_of[$bug]} in $build" >&2; exit 2; }
done

# The first line of a run's finding, from its log.
first_line_of() {
  # What diverged or broke: diff_fuzzer's "first divergence" line, else
  # the first line after the banner.
  awk '/^==== /{banner = 1; getline; first = $0; next}
       banner && /^first divergence/{print; found = 1; exit}
       END{if (!found && banner) print first}' "$1/log.txt" | cut -c1-200 > "$1/first_line"
}

# One run: run_one BUG MODE SEED (MODE seeds|empty) -> DIR/result
# (detected seconds exit_code), DIR/first_line, DIR/log.txt.
run_one() {
  local bug=$1 mode=$2 seed=$3 slot=$4
  local target=${target_of[$bug]}
  local dir="$out/runs/$bug/$mode${seed:+-$seed}"
  rm -rf "$dir"; mkdir -p "$dir/corpus"
  local options=()
  mapfile -t options < <(python3 "$checkout/ci/libfuzzer_options.py" "$checkout/fuzz/targets/$target.options")
  local inputs=(corpus)
  [[ $mode == seeds ]] && inputs+=("$checkout/fuzz/corpus/$target")
  [[ -n "$seed" ]] && options+=("-seed=$seed")
  local start end status=0
  start=$(date +%s.%N)
  (cd "$dir" && BPFDIFF_PLANTED_BUG="$bug" taskset -c "$slot" "$build/fuzz/targets/$target" "${inputs[@]}" \
     "${options[@]}" -max_total_time="$limit" -artifact_prefix="$dir/" > log.txt 2>&1) || status=$?
  end=$(date +%s.%N)
  local detected=false
  # A finding: libFuzzer's crash exit after the target's own banner.
  if [[ $status == 77 ]] && grep -q '^==== ' "$dir/log.txt"; then detected=true; fi
  local seconds; seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  echo "$detected $seconds $status" > "$dir/result"
  first_line_of "$dir"
}

# The runs, `jobs` at a time, each on a core of its own.
runs=()
for bug in "${bugs[@]}"; do
  ((from_seeds)) && runs+=("$bug seeds")
  for seed in $empty_seeds; do runs+=("$bug empty $seed"); done
done
cores=$(nproc)
if ((tabulate)); then
  # The logs are kept; what is read from them may have changed.
  for run in "${runs[@]}"; do
    read -r bug mode seed <<<"$run"
    dir="$out/runs/$bug/$mode${seed:+-$seed}"
    [[ -f "$dir/log.txt" ]] && first_line_of "$dir"
  done
else
  echo "planted_benchmark: ${#bugs[@]} bugs, ${#runs[@]} runs of at most ${limit} s, $jobs at a time; logs in $out/runs"
  slot_pids=()
  for ((j = 0; j < jobs; ++j)); do slot_pids+=(0); done
  for run in "${runs[@]}"; do
    # Wait for a free slot.
    while :; do
      for ((j = 0; j < jobs; ++j)); do
        pid=${slot_pids[$j]}
        if [[ $pid == 0 ]] || ! kill -0 "$pid" 2>/dev/null; then break 2; fi
      done
      sleep 0.2
    done
    read -r bug mode seed <<<"$run"
    run_one "$bug" "$mode" "${seed:-}" $((j % cores)) &
    slot_pids[$j]=$!
  done
  wait
fi

json_string() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; printf '"%s"' "$s"; }
result_of() { cat "$out/runs/$1/$2/result" 2>/dev/null || echo "false 0 -1"; }

json="{\"format\": \"bpfdiff-planted-2\", \"limit_seconds\": $limit, \"empty_seeds\": [$(echo $empty_seeds | sed 's/ /, /g')], \"bugs\": ["
first=1 could_not_run=()
# Exit 2: the target's harness failure or a wrong setting
# (fuzz/targets/target_settings.h); 126 and up: not started, or killed.
ran() { (($1 != 2 && ($1 < 126 || $1 == 77))); }
for bug in "${bugs[@]}"; do
  ((first)) || json+=","
  first=0
  json+="{\"bug\": $(json_string "$bug"), \"target\": $(json_string "${target_of[$bug]}"),"
  json+=" \"area\": $(json_string "${area_of[$bug]}"), \"fixed_by\": $(json_string "${fix_of[$bug]}"),"
  json+=" \"value_dependent\": $([[ ${vd_of[$bug]} == value-dependent ]] && echo true || echo false),"
  json+=" \"artifacts\": $(json_string "$out/runs/$bug")"
  line=""
  if ((from_seeds)); then
    read -r detected seconds status <<<"$(result_of "$bug" seeds)"
    ran "$status" || could_not_run+=("$bug/seeds (exit $status)")
    line=$(cat "$out/runs/$bug/seeds/first_line" 2>/dev/null || true)
    json+=", \"from_seeds\": {\"detected\": $detected, \"seconds\": $seconds, \"exit_code\": $status}"
  fi
  json+=", \"from_empty\": ["
  sep=""
  for seed in $empty_seeds; do
    read -r detected seconds status <<<"$(result_of "$bug" "empty-$seed")"
    ran "$status" || could_not_run+=("$bug/empty-$seed (exit $status)")
    [[ -n "$line" ]] || line=$(cat "$out/runs/$bug/empty-$seed/first_line" 2>/dev/null || true)
    json+="$sep{\"seed\": $seed, \"detected\": $detected, \"seconds\": $seconds, \"exit_code\": $status}"
    sep=", "
  done
  json+="], \"first_line\": $(json_string "$line")}"
done
json+="]}"
echo "$json" > "$out/planted.json"

"$bpfdiff" planted table "$out/planted.json"
echo "planted.json: $out/planted.json"
if ((${#could_not_run[@]} > 0)); then
  echo "planted_benchmark: ${#could_not_run[@]} runs could not run, logs in $out/runs: ${could_not_run[*]}"
  exit 1
fi

exit
}
