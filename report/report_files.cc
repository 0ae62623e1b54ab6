#include "report/report_files.h"

#include <system_error>

#include "report/report_writers.h"
#include "support/files.h"

namespace bpfdiff::report {

Result<ReportFiles> WriteReportFiles(const ReportModel& model, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail("{}: {}", dir.string(), ec.message());
  const ReportFiles files{dir / "summary.txt", dir / "junit.xml", dir / "report.json", dir / "report.html"};
  // One set: a write that fails (a full disk) leaves last night's four
  // files as they were, never tonight's summary beside last night's page.
  const FileContents contents[] = {
      {files.summary, TextReport(model)},
      {files.junit, JunitReport(model)},
      {files.json, JsonReport(model)},
      {files.html, HtmlReport(model)},
  };
  if (auto written = WriteFiles(contents); !written) return written.error();
  return files;
}

}  // namespace bpfdiff::report
