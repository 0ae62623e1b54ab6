#!/usr/bin/env bash
# `bpfdiff report` and `bpfdiff conformance --json/--junit/--quiet` through
# the command line: exit statuses (0 passed, 1 a failure, 2 bad input), the
# files written, and the history carried from one night to the next.
# Usage: check_report_command.sh BPFDIFF FIXTURES OWN_VECTORS
set -euo pipefail
bpfdiff=$1 fixtures=$2 vectors=$3
work="$(mktemp -d /tmp/bpfdiff-report-command.XXXXXX)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_status STATUS COMMAND...: runs COMMAND, checks its exit status.
expect_status() {
  local want=$1 got=0
  shift
  "$@" > "$work/stdout" 2> "$work/stderr" || got=$?
  [[ $got == "$want" ]] || fail "exit $got, expected $want: $* ($(head -c 300 "$work/stderr"))"
}

# Bad input: exit 2 with a message naming the problem.
expect_status 2 "$bpfdiff" report --conformance "$work/missing.json" --out "$work/out"
grep -q "missing.json" "$work/stderr" || fail "missing file not named: $(cat "$work/stderr")"
echo '{"format": ' > "$work/malformed.json"
expect_status 2 "$bpfdiff" report --conformance "$work/malformed.json" --out "$work/out"
grep -q "not valid JSON" "$work/stderr" || fail "malformed JSON not reported: $(cat "$work/stderr")"
expect_status 2 "$bpfdiff" report --conformance "$fixtures/conformance.json" --timestamp yesterday --out "$work/out"
expect_status 2 "$bpfdiff" report --conformance "$fixtures/conformance.json"   # no --out
[[ ! -e "$work/out" ]] || fail "bad input still wrote $work/out"

# A part that does not read (a fuzz target killed before it wrote its
# stats) is left out and named, and the night's other parts are still
# reported: exit 2, every file written, the note in the summary.
expect_status 2 "$bpfdiff" report --conformance "$fixtures/conformance.json" \
  --fuzz-stats "$work/malformed.json" --timestamp 2024-04-30T03:00:00Z --out "$work/partial"
grep -q "malformed.json: not valid JSON; left out of the report" "$work/stderr" || fail "left-out part not named on stderr"
grep -q "input left out: .*malformed.json" "$work/partial/summary.txt" || fail "left-out part not noted in the summary"
[[ -s "$work/partial/report.html" ]] || fail "a bad part lost the whole report"

# The fixtures hold a conformance failure and an undetected planted bug: exit 1, every file.
expect_status 1 "$bpfdiff" report --conformance "$fixtures/conformance.json" \
  --fuzz-stats "$fixtures/diff_fuzzer_stats.json" --fuzz-runs "$fixtures/fuzz_runs.json" \
  --planted "$fixtures/planted.json" --timestamp 2024-05-01T03:00:00Z --out "$work/out"
for f in summary.txt junit.xml report.json report.html history/20240501T030000Z.json; do
  [[ -s "$work/out/$f" ]] || fail "no $f"
done
grep -q "^bpfdiff nightly report 2024-05-01T03:00:00Z: FAILED" "$work/stdout" || fail "summary not printed"
grep -q "^report: $work/out/report.html" "$work/stdout" || fail "HTML path not printed"
grep -q "pack_fuzzer        no stats" "$work/out/summary.txt" || fail "a run without stats is not 'no stats'"

# Everything passed: exit 0; the previous night shows in the trend.
cat > "$work/passing.json" <<'JSON'
{"format": "bpfdiff-conformance-1", "engines": ["interp"],
 "tests": [{"name": "a.data", "status": "pass", "engines": [{"engine": "interp", "status": "pass"}]}]}
JSON
expect_status 0 "$bpfdiff" report --conformance "$work/passing.json" --timestamp 2024-05-02T03:00:00Z \
  --history "$work/out/history" --out "$work/out2"
grep -q "all parts passed" "$work/out2/summary.txt" || fail "passing report does not say so"
grep -q "trend over 2 nights" "$work/out2/summary.txt" || fail "previous night missing from the trend"
grep -q "only bpfdiff's own vectors ran" "$work/out2/summary.txt" || fail "no upstream suite, and the summary does not say so"

# The planted bugs: a bug the gate did not catch fails the night; a bug the
# benchmark did not detect within its limit, on a first night, does not.
expect_status 1 "$bpfdiff" report --conformance "$work/passing.json" --planted-gate "$fixtures/planted_gate.json" \
  --timestamp 2024-05-02T03:10:00Z --history "$work/gate-history" --out "$work/gate"
grep -q "FAIL recursion-rctx-wrong-bits (recursion_fuzzer)" "$work/gate/summary.txt" || fail "the gate's failure not named"
expect_status 0 "$bpfdiff" report --conformance "$work/passing.json" --planted "$fixtures/planted_v2.json" \
  --timestamp 2024-05-02T03:20:00Z --history "$work/benchmark-history" --out "$work/benchmark"
grep -q "against the history: no regression" "$work/benchmark/summary.txt" || fail "the benchmark's verdict not said"
grep -q '"planted_from_seeds"' "$work/benchmark-history/20240502T032000Z.json" ||
  fail "tonight's per-bug times are not kept for the next nights"
# After five nights that detected jset-clobbers-dst from the seeds in a
# second, tonight's miss is a regression: exit 1, named.
mkdir -p "$work/regress-history"
for day in 1 2 3 4 5; do
  echo "{\"timestamp\": \"2024-04-0${day}T03:00:00Z\", \"planted_limit_seconds\": 60,
        \"planted_from_seeds\": {\"jset-clobbers-dst\": 1.0}}" > "$work/regress-history/2024040${day}T030000Z.json"
done
expect_status 1 "$bpfdiff" report --conformance "$work/passing.json" --planted "$fixtures/planted_v2.json" \
  --timestamp 2024-05-02T03:30:00Z --history "$work/regress-history" --out "$work/regress"
grep -q "REGRESSION: jset-clobbers-dst not detected from the seeds" "$work/regress/summary.txt" ||
  fail "a regression against the history is not named"

# The upstream suite named, and source coverage with its HTML view linked.
expect_status 0 "$bpfdiff" report --conformance "$work/passing.json" --timestamp 2024-05-02T04:00:00Z \
  --upstream-suite /somewhere/bpf_conformance/tests --coverage "$fixtures/coverage.json" --coverage-root /checkout \
  --coverage-html coverage/index.html --out "$work/out4"
! grep -q "only bpfdiff's own vectors ran" "$work/out4/summary.txt" || fail "--upstream-suite not taken"
grep -q "^source coverage" "$work/out4/summary.txt" || fail "--coverage not in the summary"
grep -q 'href="coverage/index.html"' "$work/out4/report.html" || fail "--coverage-html not linked"
# Coverage whose paths are not under --coverage-root is left out and named.
expect_status 2 "$bpfdiff" report --conformance "$work/passing.json" --timestamp 2024-05-02T05:00:00Z \
  --coverage "$fixtures/coverage.json" --coverage-root /elsewhere --out "$work/out5"
grep -q "coverage.json.*left out of the report" "$work/stderr" || fail "unusable coverage not named"
# The kernel tree's coverage, with the reasons functions are never run, comes
# first; without the tree it is left out and named.
expect_status 0 "$bpfdiff" report --conformance "$work/passing.json" --timestamp 2024-05-02T06:00:00Z \
  --kernel-coverage "$fixtures/kernel_coverage.json" --kernel-tree /tree --uncovered-reasons "$fixtures/uncovered.txt" \
  --coverage "$fixtures/coverage.json" --coverage-root /checkout --coverage-html coverage/html/index.html \
  --out "$work/out6"
grep -q "^kernel tree coverage (/tree)" "$work/out6/summary.txt" || fail "--kernel-coverage not in the summary"
grep -q "no reason recorded: bpf_arch_text_invalidate:251" "$work/out6/summary.txt" ||
  fail "a function never run without a reason not named"
grep -q 'insn.c.html#L1521">aarch64_insn_gen_dsb</a>' "$work/out6/report.html" ||
  fail "a function never run not linked to llvm-cov's line"
expect_status 2 "$bpfdiff" report --conformance "$work/passing.json" --timestamp 2024-05-02T07:00:00Z \
  --kernel-coverage "$fixtures/kernel_coverage.json" --out "$work/out7"
grep -q "kernel_coverage.json: no kernel tree given (--kernel-tree.*left out of the report" "$work/stderr" ||
  fail "kernel coverage without its tree not named: $(cat "$work/stderr")"

# conformance --json/--junit/--quiet on our own vectors (pass or fail, the
# files hold one test per .data file, and --quiet prints no PASS line).
tests=$(find "$vectors" -name '*.data' | wc -l)
status=0
"$bpfdiff" conformance --suite "$vectors" --engine all --include-groups callx --quiet \
  --json "$work/c.json" --junit "$work/c.xml" > "$work/stdout" 2>&1 || status=$?
[[ $status == 0 || $status == 1 ]] || fail "conformance exited $status: $(tail -5 "$work/stdout")"
! grep -q "^PASS " "$work/stdout" || fail "--quiet printed PASS lines"
grep -q "^jit-llsc: " "$work/stdout" || fail "no per-engine counts"
[[ $(grep -c '"name": ' "$work/c.json") == "$tests" ]] || fail "c.json does not hold $tests tests"
[[ $(grep -c '<testcase ' "$work/c.xml") == $((tests * 3)) ]] || fail "c.xml does not hold $tests tests x 3 engines"
# The report passes or fails as conformance did.
expect_status "$status" "$bpfdiff" report --conformance "$work/c.json" --out "$work/out3" --timestamp 2024-05-03T03:00:00Z
[[ -s "$work/out3/report.html" ]] || fail "no report from conformance --json"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "report command: all checks passed"
