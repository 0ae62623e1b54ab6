#!/usr/bin/env bash
# A nightly killed at any point loses that night and nothing else: the
# next night runs as usual, its trend holds the nights that finished and no
# other, and no history entry is left half-written.
#
# Usage: killed_night_test.sh BUILD_DIR (a build with cli/bpfdiff; the
# nightly runs conformance and the report only, so it takes about a second,
# and is killed after a different delay each time).
set -euo pipefail
build=$(cd "$1" && pwd)
checkout=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/bpfdiff-killed-night.XXXXXX)
trap 'rm -rf "$work"' EXIT
history="$work/history"

# night N: one nightly into $work/night-N, in a process group of its own
# (setsid, run directly so that its pid is the group's) to be killed whole.
night() {
  BPFDIFF_NIGHTLY_BUILD="$build" BPFDIFF_NIGHTLY_FUZZ_SECONDS=0 BPFDIFF_NIGHTLY_PLANTED_SECONDS=0 \
    BPFDIFF_NIGHTLY_PLANTED_GATE=0 BPFDIFF_NIGHTLY_TEST_BPF=0 \
    BPFDIFF_NIGHTLY_OUT="$work/night-$1" BPFDIFF_NIGHTLY_HISTORY="$history" \
    exec setsid "$checkout/ci/nightly.sh" > "$work/night-$1.log" 2>&1
}

entries() {
  local count=0 f
  for f in "$history"/*.json; do [[ -e "$f" ]] && count=$((count + 1)); done
  echo "$count"
}

# Every history file that is there reads as a whole entry.
check_history() {
  local f
  for f in "$history"/*; do
    [[ -e "$f" ]] || continue
    python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); assert "timestamp" in e' "$f" 2>/dev/null ||
      { echo "FAIL: $f is not a whole history entry after a kill"; cat "$f"; exit 1; }
  done
}

finished=0 kills=0
n=0
for delay in 0.05 0.1 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.7 0.8 1.0 1.5; do
  n=$((n + 1))
  before=$(entries)
  (night "$n") &
  pid=$!
  sleep "$delay"
  killed=0
  kill -9 -- "-$pid" 2>/dev/null && killed=$((killed + 1))  # the nightly and what it runs
  wait "$pid" 2>/dev/null || true
  kills=$((kills + killed))
  check_history
  after=$(entries)
  if ((after > before)); then finished=$((finished + 1)); fi
  # Timestamps are whole seconds: a night that finished takes its own.
  sleep 1
done

# The next night runs normally, and its trend is the nights that finished.
n=$((n + 1))
if ! (night "$n"); then
  echo "FAIL: the night after the killed ones did not pass"; cat "$work/night-$n.log"; exit 1
fi
expected=$((finished + 1))
if ! grep -q "^trend over $expected night" "$work/night-$n.log"; then
  echo "FAIL: expected a trend over $expected nights ($finished finished before)"; cat "$work/night-$n.log"; exit 1
fi
if grep -q "history entry skipped" "$work/night-$n.log"; then
  echo "FAIL: a killed night left an entry that does not read"; cat "$work/night-$n.log"; exit 1
fi
if ((kills == 0)); then echo "FAIL: no night was still running when killed: the test proves nothing"; exit 1; fi
echo "killed_night_test: $kills of $((n - 1)) nights killed after 0.05 .. 1.5 s ($finished finished first), the next one passed with a trend over $expected nights"
