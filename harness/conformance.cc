#include "harness/conformance.h"

#include <regex>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "harness/case_file.h"
#include "isa/program.h"
#include "support/files.h"

namespace bpfdiff {
namespace {

bool IsUnsupportedByJit(const std::string& message) {
  return message.find("legacy packet access") != std::string::npos;
}

TestResult RunOne(DifferentialRunner& runner, const std::filesystem::path& path,
                  const ConformanceOptions& options) {
  TestResult result{path.filename().string(), TestStatus::kPass, ""};
  auto file = ReadCaseFile(path);
  if (!file) return {result.name, TestStatus::kFail, file.message()};

  // Upstream's selection: the main program's forms decide.
  const isa::Requirements req = isa::RequirementsOf(file->source.programs.front());
  if (req.cpu > options.cpu) {
    return {result.name, TestStatus::kSkip, fmt::format("needs cpu {}", isa::CpuVersionName(req.cpu))};
  }
  if ((req.groups & ~options.groups) != 0) {
    return {result.name, TestStatus::kSkip,
            fmt::format("needs group {}", isa::GroupNames(req.groups & ~options.groups))};
  }

  CaseRun run = runner.Run(file->source);
  if (run.load_error) {
    // A program the load step rejects passes only if the file expects an error.
    if (file->expected.error &&
        (file->expected.error->empty() || *file->expected.error == *run.load_error)) {
      return result;
    }
    return {result.name, TestStatus::kFail, fmt::format("rejected at load: {}", *run.load_error)};
  }
  std::vector<std::string> skipped;
  for (const EngineRun& engine_run : run.runs) {
    if (!engine_run.outcome) {
      if (IsUnsupportedByJit(engine_run.prepare_error)) {
        skipped.push_back(fmt::format("{}: {}", engine_run.engine, engine_run.prepare_error));
        continue;
      }
      return {result.name, TestStatus::kFail,
              fmt::format("{} failed to compile: {}", engine_run.engine, engine_run.prepare_error)};
    }
    if (auto problem = CheckExpectations(file->expected, *engine_run.outcome)) {
      return {result.name, TestStatus::kFail, fmt::format("{}: {}", engine_run.engine, *problem)};
    }
    if (engine_run.verdict.kind == Verdict::Kind::kDivergence) {
      return {result.name, TestStatus::kFail, fmt::format("{}: {}", engine_run.engine, engine_run.verdict.Describe())};
    }
  }
  if (!skipped.empty() && skipped.size() == run.runs.size()) {
    return {result.name, TestStatus::kSkip, skipped.front()};
  }
  return result;
}

}  // namespace

Result<ConformanceSummary> RunConformance(const ConformanceOptions& options, std::ostream& out) {
  std::optional<std::regex> include, exclude;
  try {
    if (options.include) include.emplace(*options.include);
    if (options.exclude) exclude.emplace(*options.exclude);
  } catch (const std::regex_error& e) {
    return Fail("bad regular expression: {}", e.what());
  }
  std::vector<std::filesystem::path> files;
  for (const auto& suite : options.suites) {
    auto listed = ListFiles(suite, ".data");
    if (!listed) return listed.error();
    if (listed->empty()) return Fail("{}: no .data files", suite.string());
    files.insert(files.end(), listed->begin(), listed->end());
  }

  SandboxOptions sandbox_options;
  sandbox_options.pack_bugs = options.bugs.pack;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  auto engines = MakeEngines(**sandbox, options.engine, options.bugs.jit);
  if (!engines) return engines.error();
  DifferentialRunner runner(**sandbox, std::move(engines).value());

  ConformanceSummary summary;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    TestResult result;
    if ((include && !std::regex_search(name, *include)) || (exclude && std::regex_search(name, *exclude))) {
      result = {name, TestStatus::kSkip, "excluded by pattern"};
    } else {
      result = RunOne(runner, path, options);
    }
    switch (result.status) {
      case TestStatus::kPass:
        ++summary.passed;
        fmt::print(out, "PASS {}\n", name);
        break;
      case TestStatus::kFail:
        ++summary.failed;
        fmt::print(out, "FAIL {}: {}\n", name, result.reason);
        break;
      case TestStatus::kSkip:
        ++summary.skipped;
        fmt::print(out, "SKIP {}: {}\n", name, result.reason);
        break;
    }
    summary.results.push_back(std::move(result));
  }
  fmt::print(out, "{} passed, {} failed, {} skipped\n", summary.passed, summary.failed, summary.skipped);
  return summary;
}

}  // namespace bpfdiff
