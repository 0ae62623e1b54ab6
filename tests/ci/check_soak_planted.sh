#!/usr/bin/env bash
# The soak fails on a divergence: with a planted JIT bug that diff_fuzzer
# finds at once (BPFDIFF_PLANTED_BUG), a short soak of diff_fuzzer exits 1
# and counts the divergence, whose artifact and replay are in --out. And it
# exits 2 when it cannot run: bad arguments, a build with no libFuzzer
# target, a target that never starts (an unknown planted bug).
# Usage: check_soak_planted.sh SOAK_SH BUILD_DIR BPFDIFF
set -euo pipefail
soak=$1 build=$2 bpfdiff=$3
bug=alu32-add-no-zext
work="$(mktemp -d /tmp/bpfdiff-soak-planted.XXXXXX)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$bpfdiff" planted list | awk -F '\t' -v bug="$bug" '$1 == bug && $2 == "diff_fuzzer" { found = 1 } END { exit !found }' ||
  fail "$bug is no longer diff_fuzzer's planted bug (bpfdiff planted list)"

status=0
BPFDIFF_PLANTED_BUG=$bug "$soak" 0.0025 --build "$build" --no-build --targets diff_fuzzer --interval 2 \
  --out "$work/out" --work "$work/corpora" > "$work/stdout" 2>&1 || status=$?
[[ $status == 1 ]] || fail "planted $bug: soak exited $status, expected 1"
grep -q "^bpfdiff soak: FAILED" "$work/stdout" || fail "no FAILED summary"
grep -q "planted bug: $bug" "$work/stdout" || fail "the summary does not name the planted bug"
python3 - "$work/out/soak.json" <<'PY' || fail "soak.json does not count the divergence"
import json, sys
target = json.load(open(sys.argv[1]))["targets"][0]
assert target["target"] == "diff_fuzzer" and target["divergences"] >= 1, target
assert any("divergence" in f for f in target["failures"]), target
PY
ls "$work/out/artifacts/diff_fuzzer"/crash-*.replay.txt > /dev/null 2>&1 || fail "no crash artifact with its replay"
grep -lq "==== bpfdiff: DIVERGENCE" "$work/out/artifacts/diff_fuzzer"/crash-*.replay.txt 2> /dev/null ||
  fail "no replay shows the divergence"

expect_2() {
  local what=$1 got=0
  shift
  "$@" > "$work/err" 2>&1 || got=$?
  [[ $got == 2 ]] || fail "$what: exit $got, expected 2 ($(head -c 300 "$work/err"))"
}
expect_2 "no HOURS" "$soak" --build "$build" --no-build
expect_2 "HOURS 0" "$soak" 0 --build "$build" --no-build
expect_2 "an unknown target" "$soak" 0.001 --build "$build" --no-build --targets no_such_fuzzer
mkdir -p "$work/empty/fuzz/targets"
expect_2 "no libFuzzer target" "$soak" 0.001 --build "$work/empty" --no-build
BPFDIFF_PLANTED_BUG=no-such-bug expect_2 "an unknown planted bug" \
  "$soak" 0.001 --build "$build" --no-build --targets diff_fuzzer --out "$work/out2" --work "$work/corpora2"
grep -q "could not run" "$work/err" || fail "an unknown planted bug: 'could not run' not said"

((failures == 0)) || { echo "$failures failure(s); planted soak output:"; cat "$work/stdout"; exit 1; }
echo "soak.planted: passed"
