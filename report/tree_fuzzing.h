// What the night's fuzzing did with one Linux tree's kernel engines, read
// from the fuzz targets' stats and runs: diff_fuzzer.kernel runs the
// build's own tree, diff_fuzzer.trees every tree the build links
// (harness/diff/engines.h), and each counts the cases a tree compared
// ("compared by linux <version>") and the known findings it met (named
// with "@<version>" for a tree beside the build's own:
// fuzz/stats/stats_file.h). What the report's first table shows per tree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/report_model.h"

namespace bpfdiff::report {

struct TreeFuzzing {
  uint64_t compared = 0;  // cases its kernel engines compared, over every target
  // Known findings met, by name (without the tree), most first.
  std::vector<std::pair<std::string, uint64_t>> known;
  // The kinds of the findings a target ended in on this tree's engines
  // (fuzz/findings/divergence_kind.h: another tree's kind ends "on linux
  // <version>").
  std::vector<std::string> findings;
  bool empty() const { return compared == 0 && known.empty() && findings.empty(); }
};

// The version in a KernelTreeRun's tree line ("linux 6.1.192 at /path":
// "6.1.192"); "" when the line has none.
std::string TreeVersion(std::string_view tree_line);

// `version` is the tree's; `own` when it is the build's own tree (its
// engines carry no "@<version>").
TreeFuzzing FuzzingOfTree(std::string_view version, bool own, std::span<const FuzzTarget> fuzz);

}  // namespace bpfdiff::report
