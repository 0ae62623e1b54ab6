#!/usr/bin/env bash
# The main job on embedded defaults: builds the release preset and runs the
# nightly conformance report: our vectors and the shared upstream suite (when
# present) on the interpreter and both JIT lowerings, whole outcomes
# compared. Extra arguments go to `bpfdiff conformance`.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target bpfdiff
suites=(--suite tests/conformance)
[[ -d ../shared/conformance/bpf_conformance ]] && suites+=(--suite ../shared/conformance/bpf_conformance)
exec build/release/harness/bpfdiff conformance "${suites[@]}" --engine all --include-groups callx "$@"
