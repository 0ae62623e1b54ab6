// The Linux trees a night ran the kernel's own code from, each with its
// kernel engines' conformance and its lib/test_bpf.c: what the report
// shows first. The nightly writes one directory per tree:
//
//   tree.txt          what `bpfdiff engines --kernel` printed for the
//                     build of that tree ("linux 6.1.192 at /path")
//   conformance.json  `bpfdiff conformance --engine kernel --json`
//   test-bpf.json     `bpfdiff test-bpf --engine kernel --json` (optional)
//   known.txt         the tree's known findings, not run, one a line
//                     (optional; kernelsrc/known_findings.txt)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/conformance/results.h"
#include "harness/test_bpf/results.h"
#include "support/result.h"

namespace bpfdiff::report {

struct KernelTreeRun {
  std::string tree;  // "linux 6.1.192 at /root/.cache/bpfdiff/linux-source-6.1"
  ConformanceSummary conformance;
  std::optional<TestBpfSummary> test_bpf;
  std::vector<std::string> known_findings;
  // Every test the tree's engines ran passed (the known findings were not
  // run), and test_bpf found nothing.
  bool Passed() const { return conformance.failed == 0 && (!test_bpf || test_bpf->AllPassed()); }
};

// One tree's directory, as above; an error naming the file that is missing
// or does not load.
Result<KernelTreeRun> LoadKernelTreeRun(const std::filesystem::path& directory);

}  // namespace bpfdiff::report
