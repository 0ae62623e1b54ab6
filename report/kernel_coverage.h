// Coverage of the Linux tree's own files that the kernel engines compile
// (arch/arm64/net/bpf_jit_comp.c, arch/arm64/lib/insn.c): per file its
// lines, branches and functions, and the functions no input ran, each with
// why when someone has found out (kernelsrc/uncovered.txt). The tree's code
// is what bpfdiff tests; the source coverage of our own model
// (source_coverage.h) is a different question.
//
// The input is `llvm-cov-14 export` without -summary-only (ci/coverage.sh
// writes it as kernel-coverage.json): source_coverage.h's shape, plus
//   "functions": [{"name": "emit_bti" or "path/bpf_jit_comp.c:emit_bti",
//                  "count": N, "regions": [[line start, col start, line end,
//                  col end, count, file id, expanded file id, kind], ...],
//                  "filenames": ["/tree/arch/arm64/net/bpf_jit_comp.c", ...]}]
// beside "files" in each "data" element. Only files under the tree are kept,
// their paths made relative to it; a function belongs to its filenames[0].
//
// The reasons file: '#' comment lines and blank lines, then one reason a
// line, of either form:
//   function-name: reason            a function never run
//   function-name "fragment": reason  the lines left uncovered inside a
//                                     function that runs, where one of
//                                     those lines holds `fragment`, or
//                                     else their guard does (the source
//                                     from the second counted line before
//                                     them: the condition of an error
//                                     path, and what it tests)
// A fragment is source text rather than a line number, so that a reason
// holds in every tree whose code says the same (6.1's lines are not
// 6.12's) and stops matching when the code it explains changes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/source_coverage.h"
#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::report {

// Why some lines of a function that runs are never run.
struct LineReason {
  std::string function;
  std::string fragment;  // source text one of the lines holds
  std::string reason;
};

struct UncoveredReasons {
  // Why a function of the tree is never run, by function name.
  std::map<std::string, std::string, std::less<>> functions;
  std::vector<LineReason> lines;  // in the file's order
};

struct NeverRunFunction {
  std::string name;    // as in the source, without llvm-cov's "file:" prefix of a static function
  uint64_t line = 0;   // where its code starts
  std::string reason;  // from the reasons file; empty when none is recorded
};

// Lines never run, one after another (no line that ran between them),
// inside one function that runs: an error path, a case no input takes.
struct UncoveredStretch {
  std::string function;
  uint64_t first_line = 0, last_line = 0;
  uint64_t lines = 0;    // uncovered lines in it (comments and blank lines between are not lines)
  uint64_t guard_line = 0;  // the second counted line before it, where its guard starts (0: none)
  std::string text;      // the first uncovered line's source, trimmed
  std::string reason;    // from the reasons file; empty when none is recorded
};

struct KernelFileCoverage {
  std::string path;  // relative to the tree, e.g. "arch/arm64/net/bpf_jit_comp.c"
  CoverageCounts counts;
  std::vector<NeverRunFunction> never_run;      // by line
  std::vector<UncoveredStretch> uncovered;      // by line; the lines of functions never run are not here
  // Why the stretches have no source text and no reasons: the tree's file
  // could not be read where the report was made. Empty otherwise.
  std::string source_error;

  uint64_t UncoveredLinesExplained() const;
  uint64_t UncoveredLines() const;
};

struct KernelCoverage {
  std::filesystem::path tree;             // the tree the build compiled
  std::vector<KernelFileCoverage> files;  // least covered first (lines, then branches)
  // Reasons no file needs: functions that run now, or that the tree no
  // longer has; fragments no uncovered line holds (`function "fragment"`).
  // Their lines can go.
  std::vector<std::string> reasons_not_needed;
  std::string html;  // where llvm-cov's HTML view is (its index.html), for links ("" if none)
};

// The reasons file's text; `where` (its path) names the line in messages.
Result<UncoveredReasons> ParseUncoveredReasons(std::string_view text, std::string_view where);
Result<UncoveredReasons> LoadUncoveredReasons(const std::filesystem::path& path);

// From llvm-cov export JSON with its functions and each file's segments;
// `tree` is the root the tree's paths are under, whose files are read for
// the text of the lines never run.
Result<KernelCoverage> KernelCoverageFromJson(const Json& json, const std::filesystem::path& tree,
                                              const UncoveredReasons& reasons, std::string_view where);
Result<KernelCoverage> LoadKernelCoverage(const std::filesystem::path& path, const std::filesystem::path& tree,
                                          const UncoveredReasons& reasons);

// The page of llvm-cov's HTML view that shows `file` of the tree (at
// `line`, when given): llvm-cov writes the view of /a/b.c to
// coverage/a/b.c.html beside its index.html. Empty when `html_index` is
// not such an index.
std::string LineViewLink(std::string_view html_index, const std::filesystem::path& tree, std::string_view file,
                         std::optional<uint64_t> line = std::nullopt);

}  // namespace bpfdiff::report
