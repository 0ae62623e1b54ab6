#include "harness/conformance/runner.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "harness/conformance/case_file.h"
#include "harness/diff/kernel_refusals.h"
#include "harness/diff/engines.h"
#include "harness/diff/interp_engine.h"
#include "isa/program.h"
#include "support/files.h"

namespace bpfdiff {
namespace {

// The same status and reason on every engine: the test was decided before
// any engine ran (selection, a file that does not parse, a load rejection).
TestResult Uniform(TestResult result, const std::vector<std::string>& engines, TestStatus status,
                   std::string reason) {
  result.status = status;
  result.reason = reason;
  for (const auto& engine : engines) result.engines.push_back({engine, status, reason});
  return result;
}

// For an engine whose frames are not bpfdiff's model's (the kernel's JIT):
// the interpreter's run of the case with that engine's frames.
Outcome InterpretWithFramesOf(DifferentialRunner& runner, const CaseRun& case_run, const EngineRun& run) {
  InterpreterEngine interp(runner.sandbox());
  interp.UseGeometry(run.geometry);
  (void)interp.Prepare(case_run.LoadedFor(false));
  runner.sandbox().env().ResetForRun(interp.cpu());
  return interp.Run(RunOptions{}.interp_budget);
}

EngineResult JudgeEngine(DifferentialRunner& runner, const EngineRun& run, const CaseRun& case_run,
                         const CaseFile& file) {
  if (!run.outcome) {
    if (run.verifier_refused) {
      // The kernel's verifier does not load it for this engine: a
      // refusal, as the kernel's own.
      return {run.engine, TestStatus::kSkip, fmt::format("refused, as the kernel's verifier would: {}", run.verdict.detail)};
    }
    if (run.prepare_error.empty()) return {run.engine, TestStatus::kNotComparable, run.WhyNotRun()};
    if (auto refusal = KernelAlsoRefuses(*case_run.loaded)) {
      return {run.engine, TestStatus::kSkip, fmt::format("refused, as the kernel's JIT would: {}", refusal->name)};
    }
    return {run.engine, TestStatus::kFail, fmt::format("failed to compile: {}", run.prepare_error)};
  }
  const Expectations expected =
      ExpectationsForEngine(file.expected, run.ran_jit_only_rewrites, case_run.loaded->options, run.inlined_by_code);
  if (auto problem = CheckExpectations(expected, *run.outcome)) {
    if (run.geometry == Sandbox::Geometry()) return {run.engine, TestStatus::kFail, *problem};
    // A file may expect what only bpfdiff's frame layout gives (an r10
    // value, a stack address in a helper's argument). With this engine's
    // frames the interpreter decides whether the file holds at all; if not,
    // the engine is checked against that run instead.
    const Outcome interp = InterpretWithFramesOf(runner, case_run, run);
    const Expectations interp_expected = ExpectationsForEngine(file.expected, false, case_run.loaded->options);
    if (!CheckExpectations(interp_expected, interp)) return {run.engine, TestStatus::kFail, *problem};
    const Verdict verdict = run.inlined_by_code.empty()
                                ? Compare(interp, *run.outcome, "interp", run.engine)
                                : CompareHelperWithInlined(interp, *run.outcome, "interp", run.engine, run.inlined_by_code);
    if (verdict.kind == Verdict::Kind::kDivergence) {
      return {run.engine, TestStatus::kFail,
              fmt::format("{} (checked against the interpreter with {}'s frames: the file's expectation assumes "
                          "bpfdiff's)",
                          verdict.Describe(), run.engine)};
    }
    return {run.engine, TestStatus::kNotComparable,
            fmt::format("the file's expectation assumes bpfdiff's frame layout; with {}'s frames it agrees with the "
                        "interpreter",
                        run.engine)};
  }
  switch (run.verdict.kind) {
    case Verdict::Kind::kDivergence:
      return {run.engine, TestStatus::kFail, run.verdict.Describe()};
    case Verdict::Kind::kNotComparable:
      return {run.engine, TestStatus::kNotComparable, run.verdict.detail};
    case Verdict::Kind::kMatch:
      break;
  }
  return {run.engine, TestStatus::kPass, ""};
}

// The test's status from its engines' (see TestResult::status); a failure's
// reason names the first failing engine.
void DecideFromEngines(TestResult& result) {
  const auto failed = std::find_if(result.engines.begin(), result.engines.end(),
                                   [](const EngineResult& e) { return e.status == TestStatus::kFail; });
  if (failed != result.engines.end()) {
    result.status = TestStatus::kFail;
    result.reason = fmt::format("{}: {}", failed->engine, failed->reason);
    return;
  }
  const bool all_skipped = std::all_of(result.engines.begin(), result.engines.end(),
                                       [](const EngineResult& e) { return e.status == TestStatus::kSkip; });
  if (all_skipped && !result.engines.empty()) {
    result.status = TestStatus::kSkip;
    result.reason = fmt::format("{}: {}", result.engines.front().engine, result.engines.front().reason);
    return;
  }
  result.status = TestStatus::kPass;
}

TestResult RunOne(DifferentialRunner& runner, const std::vector<std::string>& engines, TestResult result,
                  const std::filesystem::path& path, const ConformanceOptions& options) {
  auto file = ReadCaseFile(path);
  if (!file) return Uniform(std::move(result), engines, TestStatus::kFail, file.message());

  // Upstream's selection: the main program's forms decide.
  const isa::Requirements req = isa::RequirementsOf(file->source.programs.front());
  if (req.cpu > options.cpu) {
    return Uniform(std::move(result), engines, TestStatus::kSkip,
                   fmt::format("needs cpu {}", isa::CpuVersionName(req.cpu)));
  }
  if ((req.groups & ~options.groups) != 0) {
    return Uniform(std::move(result), engines, TestStatus::kSkip,
                   fmt::format("needs group {}", isa::GroupNames(req.groups & ~options.groups)));
  }

  CaseRun run = runner.Run(file->source);
  if (run.load_error) {
    // A program the load step rejects passes only if the file expects an error.
    if (file->expected.error &&
        (file->expected.error->empty() || *file->expected.error == *run.load_error)) {
      return Uniform(std::move(result), engines, TestStatus::kPass, "");
    }
    return Uniform(std::move(result), engines, TestStatus::kFail,
                   fmt::format("rejected at load: {}", *run.load_error));
  }
  for (const EngineRun& engine_run : run.runs) {
    result.engines.push_back(JudgeEngine(runner, engine_run, run, *file));
  }
  DecideFromEngines(result);
  return result;
}

void PrintResult(std::ostream& out, const TestResult& result, ConformanceListing listing) {
  switch (result.status) {
    case TestStatus::kFail:
      fmt::print(out, "FAIL {}: {}\n", result.name, result.reason);
      break;
    case TestStatus::kPass:
    case TestStatus::kNotComparable:
      if (listing == ConformanceListing::kEveryTest) fmt::print(out, "PASS {}\n", result.name);
      break;
    case TestStatus::kSkip:
      if (listing == ConformanceListing::kEveryTest) fmt::print(out, "SKIP {}: {}\n", result.name, result.reason);
      break;
  }
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
  std::vector<std::pair<std::filesystem::path, std::string>> files;  // file, its suite
  for (const auto& suite : options.suites) {
    auto listed = ListFiles(suite, ".data");
    if (!listed) return listed.error();
    if (listed->empty()) return Fail("{}: no .data files", suite.string());
    for (auto& file : *listed) files.emplace_back(std::move(file), suite.string());
  }

  SandboxOptions sandbox_options;
  sandbox_options.pack_bugs = options.bugs.pack;
  sandbox_options.unicorn_fault = options.unicorn_fault;
  sandbox_options.keep_unchanged_translations = true;  // a slot is freed and reloaded per case
  sandbox_options.machine_factory = options.machine_factory;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  auto engines = MakeEngines(**sandbox, options.engine, options.bugs.jit);
  if (!engines) return engines.error();
  ConformanceSummary summary;
  for (const auto& engine : *engines) summary.engines.emplace_back(engine->name());
  DifferentialRunner runner(**sandbox, std::move(engines).value());

  for (const auto& [path, suite] : files) {
    TestResult result;
    result.name = path.filename().string();
    result.suite = suite;
    if ((include && !std::regex_search(result.name, *include)) ||
        (exclude && std::regex_search(result.name, *exclude))) {
      result = Uniform(std::move(result), summary.engines, TestStatus::kSkip, "excluded by pattern");
    } else {
      result = RunOne(runner, summary.engines, std::move(result), path, options);
    }
    if (auto failure = (*sandbox)->UnicornFailure()) {
      return Fail("{}: could not run: {}", path.string(), *failure);
    }
    switch (result.status) {
      case TestStatus::kPass:
      case TestStatus::kNotComparable:
        ++summary.passed;
        break;
      case TestStatus::kFail:
        ++summary.failed;
        break;
      case TestStatus::kSkip:
        ++summary.skipped;
        break;
    }
    PrintResult(out, result, options.listing);
    summary.results.push_back(std::move(result));
  }
  if (const std::string_view executor = (*sandbox)->machine(0).executor(); executor != "unicorn") {
    fmt::print(out, "executor: {}\n", executor);
  }
  if (summary.engines.size() > 1) {
    for (const auto& c : summary.PerEngine()) {
      fmt::print(out, "{}: {} passed, {} failed, {} skipped, {} not comparable\n", c.engine, c.passed, c.failed,
                 c.skipped, c.not_comparable);
    }
  }
  fmt::print(out, "{} passed, {} failed, {} skipped\n", summary.passed, summary.failed, summary.skipped);
  return summary;
}

}  // namespace bpfdiff
