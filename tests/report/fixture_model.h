// The report model loaded from tests/report/fixtures: four tests on three
// engines (one failure, one skip whose name holds markup, one not
// comparable on both JITs), stats for two of three fuzz targets, three
// planted bugs (one not detected by the benchmark, and not caught by the
// gate).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

#include "report/report_inputs.h"

namespace bpfdiff::report {

inline std::filesystem::path Fixture(std::string_view name) {
  return std::filesystem::path(BPFDIFF_REPORT_FIXTURES) / name;
}

// `name` in a directory of this process's own under the test temp
// directory, removed when the process ends: two test runs on one machine
// (two checkouts' ctest at once) must not share the files they write.
inline std::filesystem::path ScratchPath(std::string_view name) {
  static const struct Root {
    std::filesystem::path path = std::filesystem::path(testing::TempDir()) /
                                 ("bpfdiff-report-test-" + std::to_string(::getpid()));
    Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
      std::filesystem::create_directories(path, ignored);
    }
    ~Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } root;
  return root.path / name;
}

inline ReportModel FixtureModel() {
  ReportInputs inputs;
  inputs.conformance = Fixture("conformance.json");
  inputs.fuzz_stats = {Fixture("diff_fuzzer_stats.json"), Fixture("pack_fuzzer_stats.json")};
  inputs.fuzz_runs = Fixture("fuzz_runs.json");
  inputs.planted = Fixture("planted.json");
  inputs.planted_gate = Fixture("planted_gate.json");
  auto model = LoadReportInputs(inputs);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.message());
  model->timestamp = "2024-05-01T03:00:00Z";
  return std::move(model).value();
}

}  // namespace bpfdiff::report
