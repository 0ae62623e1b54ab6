#!/usr/bin/env bash
# check_needed.sh BINARY [--forbid PATTERN]... [--require PATTERN]...
#
# Prints the shared libraries BINARY needs (readelf -d, NEEDED) and fails
# when one matches a --forbid pattern, or no one matches a --require
# pattern (grep -E patterns). The link test of the layout: no fuzz target
# and not the report carries LLVM, and Unicorn only where code runs.
set -euo pipefail
binary=$1; shift
[[ -x "$binary" ]] || { echo "check_needed: $binary: not an executable"; exit 1; }
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$(basename "$binary") NEEDED: $(echo $needed)"
status=0
while (($#)); do
  kind=$1 pattern=$2; shift 2
  matches=$(grep -E -- "$pattern" <<<"$needed" || true)
  case $kind in
    --forbid)
      if [[ -n "$matches" ]]; then echo "FAIL: $(basename "$binary") needs $(echo $matches), which it must not"; status=1; fi ;;
    --require)
      if [[ -z "$matches" ]]; then echo "FAIL: $(basename "$binary") needs nothing matching $pattern"; status=1; fi ;;
    *) echo "check_needed: unknown option $kind"; exit 2 ;;
  esac
done
exit $status
