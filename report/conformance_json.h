// Conformance results as JSON: what `bpfdiff conformance --json` writes and
// `bpfdiff report --conformance` reads back.
//
//   {"format": "bpfdiff-conformance-2", "engines": ["interp", "jit", ...],
//    "counts": {"passed": N, "failed": N, "skipped": N},
//    "per_engine": [{"engine": "jit", "passed": N, "failed": N, "skipped": N, "not_comparable": N}, ...],
//    "tests": [{"name": "add.data", "suite": "DIR", "status": "pass", "reason": "",
//               "engines": [{"engine": "interp", "status": "pass", "reason": ""}, ...]}, ...]}
//
// status is one of pass, fail, skip, not_comparable (see TestStatus); the
// reader also takes version 1, which said poisoned for not_comparable.
#pragma once

#include <string_view>

#include "harness/conformance/results.h"
#include "support/json_fields.h"

namespace bpfdiff::report {

Json ConformanceToJson(const ConformanceSummary& summary);

// `where` names the input in messages. The counts are recomputed from the
// tests, so a hand-edited file cannot disagree with itself.
Result<ConformanceSummary> ConformanceFromJson(const Json& json, std::string_view where);

}  // namespace bpfdiff::report
