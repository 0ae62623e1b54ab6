// lib/test_bpf.c's results as JSON: what `bpfdiff test-bpf --json` writes
// and `bpfdiff report --test-bpf` reads back.
//
//   {"format": "bpfdiff-test-bpf-1", "tree": "6.12.118",
//    "suites": {"test_bpf": [TALLY, ...], "test_tail_calls": [TALLY, ...]},
//    "left_out": [{"reason": "...", "cases": N}, ...],
//    "failures": [{"suite": "test_bpf", "index": N, "name": "...", "engine": "...",
//                  "reason": "...", "kernel_verdict": true}, ...]}
//
// TALLY: {"engine": E, "passed": N, "failed": N, "jited": N, "run": N,
//         "agreed": N, "diverged": N, "not_comparable": N}
#pragma once

#include <string_view>

#include "harness/test_bpf/results.h"
#include "support/json_fields.h"

namespace bpfdiff::report {

Json TestBpfToJson(const TestBpfSummary& summary);
// `where` names the input in messages.
Result<TestBpfSummary> TestBpfFromJson(const Json& json, std::string_view where);

}  // namespace bpfdiff::report
