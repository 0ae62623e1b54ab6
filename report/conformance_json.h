// Conformance results as JSON: what `bpfdiff conformance --json` writes and
// `bpfdiff report --conformance` reads back.
//
//   {"format": "bpfdiff-conformance-1", "engines": ["interp", "jit", ...],
//    "counts": {"passed": N, "failed": N, "skipped": N},
//    "per_engine": [{"engine": "jit", "passed": N, "failed": N, "skipped": N, "poisoned": N}, ...],
//    "tests": [{"name": "add.data", "suite": "DIR", "status": "pass", "reason": "",
//               "engines": [{"engine": "interp", "status": "pass", "reason": ""}, ...]}, ...]}
//
// status is one of pass, fail, skip, poisoned (see TestStatus).
#pragma once

#include <string_view>

#include "harness/conformance/runner.h"
#include "report/json_fields.h"

namespace bpfdiff::report {

Json ConformanceToJson(const ConformanceSummary& summary);

// `where` names the input in messages. The counts are recomputed from the
// tests, so a hand-edited file cannot disagree with itself.
Result<ConformanceSummary> ConformanceFromJson(const Json& json, std::string_view where);

}  // namespace bpfdiff::report
