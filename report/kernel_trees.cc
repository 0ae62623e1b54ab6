#include "report/kernel_trees.h"

#include <cctype>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report_inputs.h"

namespace bpfdiff::report {
namespace {

// The file's lines, without blank ones and trailing whitespace.
Result<std::vector<std::string>> ReadLines(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Fail("{}: cannot be read", path.string());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

Result<KernelTreeRun> LoadKernelTreeRun(const std::filesystem::path& directory) {
  KernelTreeRun run;
  auto tree = ReadLines(directory / "tree.txt");
  if (!tree) return Fail("kernel tree results {}: {}", directory.string(), tree.message());
  if (tree->empty()) return Fail("kernel tree results {}: tree.txt names no tree", directory.string());
  run.tree = tree->front();
  auto conformance = LoadConformance(directory / "conformance.json");
  if (!conformance) return Fail("kernel tree results {}: {}", directory.string(), conformance.message());
  run.conformance = std::move(conformance).value();
  if (std::filesystem::exists(directory / "test-bpf.json")) {
    auto test_bpf = LoadTestBpf(directory / "test-bpf.json");
    if (!test_bpf) return Fail("kernel tree results {}: {}", directory.string(), test_bpf.message());
    run.test_bpf = std::move(test_bpf).value();
  }
  if (std::filesystem::exists(directory / "known.txt")) {
    auto known = ReadLines(directory / "known.txt");
    if (!known) return Fail("kernel tree results {}: {}", directory.string(), known.message());
    run.known_findings = std::move(known).value();
  }
  if (std::filesystem::exists(directory / "known.json")) {
    auto known_runs = LoadConformance(directory / "known.json");
    if (!known_runs) return Fail("kernel tree results {}: {}", directory.string(), known_runs.message());
    run.known_runs = std::move(known_runs).value();
  }
  return run;
}

std::string KernelTreeRun::KnownStatus(std::string_view name) const {
  if (!known_runs) return "";
  const std::string file = std::string(name) + ".data";
  for (const TestResult& test : known_runs->results) {
    if (test.name != file) continue;
    std::vector<std::string> reproduced;
    bool ran = false;
    for (const EngineResult& engine : test.engines) {
      if (!engine.engine.starts_with("kernel-")) continue;  // the reference, bpfdiff's interpreter
      if (engine.status == TestStatus::kFail) reproduced.push_back(engine.engine);
      ran |= engine.status != TestStatus::kSkip;
    }
    if (!reproduced.empty()) return fmt::format("reproduces on {}", fmt::join(reproduced, ", "));
    return ran ? "does not reproduce (passed on every kernel engine that ran it)"
               : "not run (skipped by every kernel engine: the tree refuses it)";
  }
  return "not run (no reproducer of that name ran)";
}

}  // namespace bpfdiff::report
