// The report's four forms, each a pure function of the model (one file
// each). The text is what the nightly prints; JUnit feeds CI dashboards;
// JSON is everything, merged; HTML is one self-contained page.
#pragma once

#include <string>

#include "report/report_model.h"

namespace bpfdiff::report {

// Short: counts per engine, failures only, the top not-comparable and
// rejected reasons, a line per fuzz target, the gate's failures, a line per
// planted bug of the benchmark with its regressions, the trend.
std::string TextReport(const ReportModel& model);

// A testsuite per engine (a testcase per test), one for the planted-bug
// gate, one for the benchmark and one per fuzz target. Parts the model lacks are left out,
// so `bpfdiff conformance --junit` writes the conformance suites alone.
std::string JunitReport(const ReportModel& model);

std::string JsonReport(const ReportModel& model);

// Inline CSS and JS only; every string from the inputs escaped.
std::string HtmlReport(const ReportModel& model);

}  // namespace bpfdiff::report
