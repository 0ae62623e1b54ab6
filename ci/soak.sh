#!/usr/bin/env bash
# The soak: every libFuzzer target of a build under -fork for HOURS, watched
# for divergences, findings, timeouts and the growth of its workers' memory.
#
#   ci/soak.sh HOURS [--cores N] [--out DIR] [--work DIR] [--build DIR] [--no-build]
#                    [--targets A,B,...] [--interval SECONDS] [--warmup-runs N] [--list-targets]
#
# HOURS may be fractional (0.05 is 3 minutes). The targets run one after
# another, HOURS/number-of-targets each, with -fork=N over --cores N
# (default: nproc); ci/soak/soak.py says why not side by side.
#
# --build DIR  the build tree (default build/release). Unless --no-build, it
#              is configured with the release preset when it has no CMake
#              cache yet, and `all_fuzzers` is (re)built in it.
# The targets are found in the build, not listed here: the build's
# fuzz_targets.tsv when it has one, else the inputs of the `all_fuzzers`
# target (ninja -t query), else every executable in DIR/fuzz/targets; of
# those, the ones linked with libFuzzer's driver. --targets keeps a subset
# of them; --list-targets prints them (from the build as it is: no build
# step) and exits.
#
# --out DIR    summary.txt (also printed), soak.csv (a row per target every
#              --interval seconds, default 30), jobs.csv, soak.svg, soak.json,
#              logs/ and artifacts/<target>/ (crash, timeout and OOM inputs,
#              each crash with its replay's output) (default: a new
#              /tmp/bpfdiff-soak.*)
# --work DIR   the corpora the soak grows, outside the checkout (default: a
#              new /tmp/bpfdiff-soak-work.*); the shipped seeds in
#              fuzz/corpus/<target> are read, never written.
#
# Exit status: 0 passed; 1 a divergence or other finding, a timeout, or an
# RSS slope above 10 MB per million runs (ci/soak/rss_trend.py: how it is
# fitted; jobs of fewer than --warmup-runs runs, default 10000, are still
# warming up and left out); 2 could not run (bad arguments, no build, no
# libFuzzer target, a target that never ran), unless something failed.
# BPFDIFF_PLANTED_BUG passes through to the targets: a planted bug's
# findings fail the soak too. Stop it with SIGTERM or Ctrl-C: the running
# target's processes are ended and what was measured is still written.
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"

die() { echo "soak: $*" >&2; exit 2; }
# The comment above, as the help.
usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0; }

hours="" cores="$(nproc)" out="" work="" build="" no_build=0 only="" interval=30 warmup=10000 list=0
while (($#)); do
  case $1 in
    --cores|--out|--work|--build|--targets|--interval|--warmup-runs)
      (($# >= 2)) || die "$1 needs a value"
      case $1 in
        --cores) cores=$2 ;; --out) out=$2 ;; --work) work=$2 ;; --build) build=$2 ;;
        --targets) only=$2 ;; --interval) interval=$2 ;; --warmup-runs) warmup=$2 ;;
      esac
      shift 2 ;;
    --no-build) no_build=1; shift ;;
    --list-targets) list=1 no_build=1; shift ;;
    -h|--help) usage ;;
    -*) die "unknown option $1" ;;
    *) [[ -z $hours ]] || die "one HOURS only (got $hours and $1)"; hours=$1; shift ;;
  esac
done
if ((!list)); then
  [[ $hours =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v h="$hours" 'BEGIN { exit !(h > 0) }' ||
    die "HOURS must be a positive number (0.05 is 3 minutes), not '${hours}'"
fi
[[ $cores =~ ^[1-9][0-9]*$ ]] || die "--cores must be a positive whole number, not '$cores'"
build="${build:-$checkout/build/release}"

if ((!no_build)); then
  out="${out:-$(mktemp -d /tmp/bpfdiff-soak.XXXXXX)}"
  mkdir -p "$out"
  if [[ ! -f $build/CMakeCache.txt ]]; then
    (cd "$checkout" && cmake --preset release -B "$build") > "$out/build.log" 2>&1 ||
      die "could not configure $build with the release preset; log in $out/build.log"
  fi
  cmake --build "$build" --target all_fuzzers -j "$cores" >> "$out/build.log" 2>&1 ||
    die "could not build all_fuzzers in $build; log in $out/build.log"
fi
[[ -d $build ]] || die "no build tree at $build"
build="$(cd "$build" && pwd)"

# discover: NAME=PATH for each libFuzzer target of the build.
discover() {
  local candidates=() path
  if [[ -f $build/fuzz_targets.tsv ]]; then  # cmake/fuzz_target.cmake's manifest: NAME<tab>PATH
    while IFS=$'\t' read -r _ path; do candidates+=("$path"); done < "$build/fuzz_targets.tsv"
  elif [[ -f $build/build.ninja ]] && command -v ninja > /dev/null; then
    while read -r path; do candidates+=("$build/$path"); done < <(
      ninja -C "$build" -t query all_fuzzers 2> /dev/null |
        awk '/^  input:/ { inputs = 1; next } /^  [a-z]+:/ { inputs = 0 } inputs { print $1 }')
  fi
  if ((${#candidates[@]} == 0)); then candidates=("$build"/fuzz/targets/*); fi
  for path in "${candidates[@]}"; do
    [[ -f $path && -x $path ]] || continue
    # libFuzzer's driver (and so -fork) is linked in: a replay-main build has no such string.
    grep -qa 'fuzzing in separate process' "$path" || continue
    echo "$(basename "$path")=$path"
  done
}
mapfile -t found < <(discover)
((${#found[@]} > 0)) ||
  die "no libFuzzer targets in $build (configure it with BPFDIFF_LIBFUZZER, e.g. the release preset)"

targets=()
if [[ -n $only ]]; then
  IFS=, read -ra wanted <<< "$only"
  for name in "${wanted[@]}"; do
    match=""
    for pair in "${found[@]}"; do [[ ${pair%%=*} == "$name" ]] && match=$pair; done
    [[ -n $match ]] || die "no libFuzzer target '$name' in $build (there are: ${found[*]%%=*})"
    targets+=("$match")
  done
else
  targets=("${found[@]}")
fi
if ((list)); then
  for pair in "${targets[@]}"; do echo "${pair%%=*}"; done
  exit 0
fi

out="${out:-$(mktemp -d /tmp/bpfdiff-soak.XXXXXX)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="${work:-$(mktemp -d /tmp/bpfdiff-soak-work.XXXXXX)}"
target_args=()
for pair in "${targets[@]}"; do target_args+=(--target "$pair"); done
# -B: no __pycache__ in the checkout.
exec python3 -B "$checkout/ci/soak/soak.py" --hours "$hours" --cores "$cores" --out "$out" --work "$work" \
  --source "$checkout" --build "$build" --interval "$interval" --warmup-runs "$warmup" "${target_args[@]}"
