#!/usr/bin/env bash
# A 15-second soak of two real libFuzzer targets of a build: it finds them,
# runs both, passes (an unmutated build), and leaves a CSV, an SVG, a summary
# and a JSON file that parse and agree; the corpora go to --work, outside
# the checkout.
# Usage: check_soak_short.sh SOAK_SH BUILD_DIR TARGET,TARGET
set -euo pipefail
soak=$1 build=$2 targets=$3
work="$(mktemp -d /tmp/bpfdiff-soak-short.XXXXXX)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Found in the build, not from a list.
listed="$("$soak" --list-targets --build "$build")" || fail "--list-targets exited $?"
for t in ${targets//,/ }; do grep -qx "$t" <<< "$listed" || fail "$t not found in $build: $listed"; done

status=0
"$soak" 0.004 --build "$build" --no-build --targets "$targets" --cores 2 --interval 2 \
  --out "$work/out" --work "$work/corpora" > "$work/stdout" 2>&1 || status=$?
[[ $status == 0 ]] || fail "soak exited $status: $(tail -30 "$work/stdout")"
grep -q "^bpfdiff soak: PASSED" "$work/stdout" || fail "summary not printed"

python3 - "$work/out" "$targets" <<'PY' || fail "the outputs do not parse or agree"
import csv, json, sys, xml.etree.ElementTree as ET
out, targets = sys.argv[1], sys.argv[2].split(",")
rows = list(csv.DictReader(open(f"{out}/soak.csv")))
assert rows, "soak.csv has no rows"
for t in targets:
    mine = [r for r in rows if r["target"] == t]
    assert len(mine) >= 3, f"{t}: {len(mine)} rows"
    assert int(mine[-1]["runs"]) > 0, f"{t}: no runs"
    assert max(float(r["worker_peak_rss_mb_max"]) for r in mine) > 1, f"{t}: no worker RSS sampled"
    for r in mine:
        float(r["soak_seconds"]); float(r["execs_per_second"])
        assert int(r["divergences"]) == 0 and int(r["findings"]) == 0 and int(r["timeouts"]) == 0, r
jobs = list(csv.DictReader(open(f"{out}/jobs.csv")))
assert jobs and all(float(j["peak_rss_mb"]) > 0 for j in jobs), "jobs.csv"
data = json.load(open(f"{out}/soak.json"))
assert data["status"] == "passed" and [t["target"] for t in data["targets"]] == targets, data
for t in data["targets"]:
    last = [r for r in rows if r["target"] == t["target"]][-1]
    assert t["runs"] == int(last["runs"]) and t["divergences"] == 0, t
root = ET.parse(f"{out}/soak.svg").getroot()
assert root.tag.endswith("svg")
assert len(list(root.iter("{http://www.w3.org/2000/svg}polyline"))) >= len(targets)
summary = open(f"{out}/summary.txt").read()
assert summary.startswith("bpfdiff soak: PASSED") and all(t in summary for t in targets), summary
PY
for t in ${targets//,/ }; do
  [[ -n "$(ls -A "$work/corpora/$t/corpus")" ]] || fail "no corpus written for $t in --work"
  [[ -s $work/out/logs/$t.log ]] || fail "no log for $t"
done

((failures == 0)) || { echo "$failures failure(s); soak output:"; cat "$work/stdout"; exit 1; }
echo "soak.short: passed"
