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
// The reasons file: '#' comment lines and blank lines, then one
// `function-name: reason` a line.
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

// Why a function of the tree is never run, by function name.
using UncoveredReasons = std::map<std::string, std::string, std::less<>>;

struct NeverRunFunction {
  std::string name;    // as in the source, without llvm-cov's "file:" prefix of a static function
  uint64_t line = 0;   // where its code starts
  std::string reason;  // from the reasons file; empty when none is recorded
};

struct KernelFileCoverage {
  std::string path;  // relative to the tree, e.g. "arch/arm64/net/bpf_jit_comp.c"
  CoverageCounts counts;
  std::vector<NeverRunFunction> never_run;  // by line
};

struct KernelCoverage {
  std::filesystem::path tree;             // the tree the build compiled
  std::vector<KernelFileCoverage> files;  // least covered first (lines, then branches)
  // Names the reasons file gives a reason for that no file leaves unrun:
  // functions that run now, or that the tree no longer has. Their lines
  // can go.
  std::vector<std::string> reasons_not_needed;
  std::string html;  // where llvm-cov's HTML view is (its index.html), for links ("" if none)
};

// The reasons file's text; `where` (its path) names the line in messages.
Result<UncoveredReasons> ParseUncoveredReasons(std::string_view text, std::string_view where);
Result<UncoveredReasons> LoadUncoveredReasons(const std::filesystem::path& path);

// From llvm-cov export JSON with its functions; `tree` is the root the
// tree's paths are under.
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
