// Line and branch coverage of the code under test (the JIT, the
// interpreter, the pack and recursion code), per file and per area, from
// the seeds and the night's fuzzing: what the nightly measures with the
// `coverage` preset and `llvm-cov-14 export -summary-only`.
//
// The input is llvm-cov's export format (version 2.0.1 with LLVM 14):
//   {"data": [{"files": [{"filename": "/abs/path/jit/alu.cc",
//      "summary": {"lines": {"count": N, "covered": N, ...},
//                  "branches": {"count": N, "covered": N, ...},
//                  "functions": {"count": N, "covered": N, ...}, ...}}, ...],
//     "totals": {...}}], "type": "llvm.coverage.json.export", "version": "..."}
// Only files under the checkout's areas are kept (Area below); paths are
// made relative to the checkout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::report {

struct CoverageCounts {
  uint64_t lines = 0, lines_covered = 0;
  uint64_t branches = 0, branches_covered = 0;
  uint64_t functions = 0, functions_covered = 0;

  void Add(const CoverageCounts& other);
  // Percentages; nullopt when there is nothing to cover.
  std::optional<double> LinePercent() const;
  std::optional<double> BranchPercent() const;
};

struct FileCoverage {
  std::string path;  // relative to the checkout, e.g. "jit/alu.cc"
  std::string area;  // "jit", "oracle", "pack" or "recursion"
  CoverageCounts counts;
};

struct AreaCoverage {
  std::string area;
  std::vector<std::string> rooms;  // the folders it covers
  CoverageCounts counts;
};

struct SourceCoverage {
  std::vector<FileCoverage> files;  // least covered first (lines, then branches)
  std::vector<AreaCoverage> areas;  // in Areas() order
  CoverageCounts total;             // of the areas
  std::string html;                 // where llvm-cov's HTML view is, for a link ("" if none)
};

// The areas and their folders, in the order reports show them.
const std::vector<AreaCoverage>& Areas();
// The area of a checkout-relative path; nullopt outside every area.
std::optional<std::string> AreaOf(std::string_view relative_path);

// llvm-cov's export, read the same way by both coverages: its "data"
// elements, once the export's type is checked (`where` names the input).
Result<std::reference_wrapper<const Json>> ExportData(const Json& json, std::string_view where);
// A file of one data element that lies under a root: its path relative to
// the root, and its summary's counts.
struct ExportedFile {
  std::string relative;
  CoverageCounts counts;
};
// The files of data element `d` (`export_data`) under `root` that `keep`
// accepts (by relative path; a file not kept is not read further).
Result<std::vector<ExportedFile>> ExportedFilesUnder(const Json& export_data, size_t d, const std::filesystem::path& root,
                                                     const std::function<bool(std::string_view)>& keep,
                                                     std::string_view where);
// `filename` relative to `root` ("jit/alu.cc"), or nullopt outside it.
std::optional<std::string> RelativePath(const std::string& filename, const std::filesystem::path& root);
// Whether `a` is less covered than `b`: by lines, then by branches, nothing
// to cover counting as fully covered. Reports list files in this order.
bool LessCovered(const CoverageCounts& a, const CoverageCounts& b);

// From llvm-cov export JSON; `checkout` is the root the paths are under.
Result<SourceCoverage> SourceCoverageFromJson(const Json& json, const std::filesystem::path& checkout,
                                              std::string_view where);
Result<SourceCoverage> LoadSourceCoverage(const std::filesystem::path& path, const std::filesystem::path& checkout);

}  // namespace bpfdiff::report
