// The Linux trees a night ran the kernel's own code from, each with its
// kernel engines' conformance and its lib/test_bpf.c: what the report
// shows first. The nightly writes one directory per tree:
//
//   tree.txt          what `bpfdiff engines --kernel` printed for the
//                     build of that tree ("linux 6.1.192 at /path")
//   conformance.json  `bpfdiff conformance --engine kernel --json`
//   test-bpf.json     `bpfdiff test-bpf --engine kernel --json` (optional)
//   known.txt         the tree's known findings, left out of its
//                     conformance, one a line (optional;
//                     kernelsrc/known_findings.txt)
//   known.json        `bpfdiff conformance --include KNOWN --json`: the
//                     known findings' reproducers run on the tree's
//                     engines, apart (optional): which reproduce there
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/conformance/results.h"
#include "harness/test_bpf/results.h"
#include "report/known_findings_doc.h"
#include "support/result.h"

namespace bpfdiff::report {

struct KernelTreeRun {
  std::string tree;  // "linux 6.1.192 at /root/.cache/bpfdiff/linux-source-6.1"
  ConformanceSummary conformance;
  std::optional<TestBpfSummary> test_bpf;
  std::vector<std::string> known_findings;
  // What kernelsrc/SHIMS.md says of each (known_findings_doc.h), when the
  // report was given it: one entry per known finding it documents.
  std::vector<KnownFindingDoc> known_docs;
  // The known findings' reproducers run on the tree (known.json).
  std::optional<ConformanceSummary> known_runs;
  // Of known finding `name`, from known_runs, on the tree's kernel engines:
  // "reproduces on ENGINES", "does not reproduce (passed ...)", "not run
  // (skipped ...: the tree refuses it)"; "" without known_runs.
  std::string KnownStatus(std::string_view name) const;
  // Every test the tree's engines ran passed (the known findings were not
  // run), and test_bpf found nothing.
  bool Passed() const { return conformance.failed == 0 && (!test_bpf || test_bpf->AllPassed()); }
};

// One tree's directory, as above; an error naming the file that is missing
// or does not load.
Result<KernelTreeRun> LoadKernelTreeRun(const std::filesystem::path& directory);

}  // namespace bpfdiff::report
