#!/usr/bin/env bash
# Renders the report made from the fixtures in headless Chromium: the DOM
# after the page's script ran must hold the engines x tests matrix (a row
# per test, a cell per engine and test), the filter's count (which only the
# script writes), the planted-bug gate and benchmark, fuzz, coverage and
# trend tables; the
# screenshot must be a PNG of the window's size with more than a blank
# page's worth of content.
# Usage: check_html_in_chromium.sh BPFDIFF FIXTURES
set -euo pipefail
bpfdiff=$1 fixtures=$2
width=1280 height=1800
chromium="$(command -v chromium || command -v chromium-browser || true)"
[[ -n "$chromium" ]] || { echo "FAIL: chromium not found (ci/setup.sh installs it)"; exit 1; }

work="$(mktemp -d /tmp/bpfdiff-report-html.XXXXXX)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cp -r "$fixtures/history" "$work/history"
status=0
"$bpfdiff" report --conformance "$fixtures/conformance.json" \
  --fuzz-stats "$fixtures/diff_fuzzer_stats.json" --fuzz-stats "$fixtures/pack_fuzzer_stats.json" \
  --fuzz-runs "$fixtures/fuzz_runs.json" --planted "$fixtures/planted.json" --planted-gate "$fixtures/planted_gate.json" \
  --history "$work/history" --timestamp 2024-05-01T03:00:00Z --out "$work/out" > "$work/report.log" 2>&1 || status=$?
[[ $status == 1 ]] || { cat "$work/report.log"; echo "FAIL: bpfdiff report exited $status, expected 1"; exit 1; }

# A fresh profile per run; root needs --no-sandbox; nothing may reach for
# the network (CI machines have none: the connections would be refused, many
# at a time); the timeout keeps a hung browser from hanging ctest.
run_chromium() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-quic \
    --user-data-dir="$work/profile" "$@" 2>> "$work/chromium.log"
}
run_chromium --dump-dom "file://$work/out/report.html" > "$work/dom.html" ||
  { tail -20 "$work/chromium.log"; echo "FAIL: chromium --dump-dom"; exit 1; }
run_chromium --screenshot="$work/shot.png" --window-size="$width,$height" "file://$work/out/report.html" ||
  { tail -20 "$work/chromium.log"; echo "FAIL: chromium --screenshot"; exit 1; }

# section ID: the DOM of <table id="ID"> up to its </table>, one line.
section() { tr -d '\n' < "$work/dom.html" | grep -o "<table id=\"$1\">.*" | sed 's#</table>.*#</table>#'; }
count() { grep -o "$1" | wc -l; }

matrix="$(section matrix)"
[[ $(count '<tr data-status=' <<< "$matrix") == 4 ]] || fail "matrix: expected 4 test rows"
[[ $(count '<td class="cell s-' <<< "$matrix") == 12 ]] || fail "matrix: expected 4 x 3 engine cells"
[[ $(count '<th>jit-llsc</th>' <<< "$matrix") == 1 ]] || fail "matrix: no jit-llsc column"
grep -q '<td class="cell s-fail" title="r0 differs: interp 0x1, jit-llsc 0x2">FAIL</td>' <<< "$matrix" ||
  fail "matrix: the failing cell is missing"
grep -q 'callx-&lt;script&gt;alert(1)&lt;/script&gt;.data' <<< "$matrix" || fail "matrix: escaped name missing"
[[ $(grep -o '<script' "$work/dom.html" | wc -l) == 1 ]] || fail "a script element came from the inputs"
# Written only by the page's script: it ran, filtered to the failures and counted.
grep -q '<span id="matrix-shown">showing 1 of 4 tests</span>' "$work/dom.html" ||
  fail "the filter script did not run (no 'showing 1 of 4 tests')"
[[ $(count 'style="display: none;"' <<< "$matrix") == 3 ]] || fail "the filter did not hide the 3 passing rows"

planted="$(section planted)"
[[ $(count '<tr><td>' <<< "$planted") == 3 ]] || fail "planted: expected 3 rows"
grep -q '<td class="num s-skip" title="no earlier night measured it: not judged">no</td>' <<< "$planted" ||
  fail "planted: the undetected bug is not shown as a measurement"
gate="$(section planted-gate)"
[[ $(count '<tr><td>' <<< "$gate") == 3 ]] || fail "planted-gate: expected 3 rows"
[[ $(count '<td class="s-fail">' <<< "$gate") == 1 ]] || fail "planted-gate: the bug not caught is not shown"
[[ $(count '<tr><td>' <<< "$(section fuzz)") == 3 ]] || fail "fuzz: expected 3 rows"
coverage="$(section coverage)"
grep -q '<td class="num">174</td><td class="num">172</td><td class="num">168</td>' <<< "$coverage" ||
  fail "coverage: diff_fuzzer's numbers missing"
grep -q '<code>ldabs b</code>' <<< "$coverage" || fail "coverage: forms not completed missing"
[[ $(count '<svg class="spark"' <<< "$(section trend)") == 7 ]] || fail "trend: expected 7 sparklines"
[[ $(count '<tr><td>2024-' <<< "$(section nights)") == 4 ]] || fail "trend: expected 3 previous nights and tonight"

# The PNG: signature, the window's size in IHDR, and more bytes than a blank
# page of that size compresses to (about 10 KB; the report is over 100 KB).
png="$work/shot.png"
[[ -s "$png" ]] || { echo "FAIL: no screenshot"; exit 1; }
[[ $(od -A n -t x1 -N 8 "$png" | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "screenshot is not a PNG"
read -r w h < <(od -A n -t u1 -j 16 -N 8 "$png" |
  awk '{print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8}')
[[ "$w" == "$width" && "$h" == "$height" ]] || fail "screenshot is ${w}x${h}, expected ${width}x${height}"
size=$(stat -c %s "$png")
((size > 40000)) || fail "screenshot is $size bytes: blank or nearly so"

if ((failures)); then
  echo "$failures check(s) failed; the DOM was:"
  head -c 4000 "$work/dom.html"
  exit 1
fi
echo "report.html in chromium: all checks passed (screenshot $size bytes)"
