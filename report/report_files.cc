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
  const std::pair<const std::filesystem::path&, std::string> contents[] = {
      {files.summary, TextReport(model)},
      {files.junit, JunitReport(model)},
      {files.json, JsonReport(model)},
      {files.html, HtmlReport(model)},
  };
  for (const auto& [path, text] : contents) {
    if (auto written = WriteFile(path, text); !written) return written.error();
  }
  return files;
}

}  // namespace bpfdiff::report
