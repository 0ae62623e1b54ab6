// Writing a report's files into its output directory.
#pragma once

#include <filesystem>

#include "report/report_model.h"

namespace bpfdiff::report {

struct ReportFiles {
  std::filesystem::path summary, junit, json, html;
};

// DIR/summary.txt, DIR/junit.xml, DIR/report.json and DIR/report.html,
// creating DIR. All four are replaced, or (on an error, which names the
// file) none of them: see WriteFiles in support/files.h.
Result<ReportFiles> WriteReportFiles(const ReportModel& model, const std::filesystem::path& dir);

}  // namespace bpfdiff::report
