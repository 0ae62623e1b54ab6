#include "harness/diff/differential.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/diff/kernel_refusals.h"

namespace bpfdiff {
namespace {

// An engine that could not prepare a case the load step accepted. A
// refusal the kernel's JIT would make too is not comparable; otherwise the
// reference failing leaves nothing to compare, and any other engine
// refusing is a finding: the kernel's JIT compiles what its verifier
// accepts.
Verdict RefusalVerdict(size_t engine_index, std::string_view engine, const std::string& message,
                       const LoadedCase& loaded) {
  if (auto refusal = KernelAlsoRefuses(loaded)) {
    return {Verdict::Kind::kNotComparable, "", fmt::format("{} refused, as the kernel's would: {}", engine, refusal->name)};
  }
  if (engine_index == 0) {
    return {Verdict::Kind::kNotComparable, "", fmt::format("{} (the reference) could not prepare: {}", engine, message)};
  }
  return {Verdict::Kind::kDivergence, "compilation", fmt::format("{} refused: {}", engine, message)};
}

}  // namespace

std::string EngineRun::WhyNotRun() const {
  if (!prepare_error.empty()) return "could not compile: " + prepare_error;
  return "not run: " + verdict.detail;
}

const EngineRun* CaseRun::FirstDivergence() const {
  for (const auto& run : runs) {
    if (run.verdict.kind == Verdict::Kind::kDivergence) return &run;
  }
  for (const auto& variant : variants) {
    for (const auto& run : variant) {
      if (run.verdict.kind == Verdict::Kind::kDivergence) return &run;
    }
  }
  return nullptr;
}

std::vector<std::string> CaseRun::NotComparableReasons() const {
  std::vector<std::string> reasons;
  for (const auto& run : runs) {
    if (run.verdict.kind == Verdict::Kind::kNotComparable) reasons.push_back(run.verdict.detail);
  }
  return reasons;
}

CaseRun DifferentialRunner::Run(const CaseSource& source, const RunOptions& options) {
  sandbox_.pack().set_hole_state(hole_state_);
  CaseRun result;
  auto loaded = LoadCase(source);
  if (!loaded) {
    result.load_error = loaded.message();
    return result;
  }
  result.loaded = std::move(loaded).value();
  const LoadedCase& loaded_case = *result.loaded;
  if (source.options.HasJitOnlyRewrites()) {
    // The rewrites only ever add to a program, so what loaded with them
    // loads without; the check stays, so that a load step that breaks the
    // rule says so instead of running half a case.
    auto without = LoadCase(source, source.options.WithoutJitOnlyRewrites());
    if (!without) {
      result.load_error = "without the JIT-only rewrites: " + without.message();
      return result;
    }
    result.loaded_without_jit_rewrites = std::move(without).value();
  }
  GuestEnvironment& env = sandbox_.env();
  // Both forms of the case have the same maps, programs and memory.
  env.Install(loaded_case);

  // Prepare every engine (compile), then run them one after another.
  const size_t count = std::min(engines_.size(), options.engine_limit);
  std::vector<size_t> prepared;
  std::vector<EngineRun> failed(count);
  for (size_t i = 0; i < count; ++i) {
    Engine& engine = *engines_[i];
    failed[i].engine = std::string(engine.name());
    failed[i].ran_jit_only_rewrites = result.loaded_without_jit_rewrites && engine.RunsJitOnlyRewrites();
    if (auto status = engine.Prepare(result.LoadedFor(engine.RunsJitOnlyRewrites())); !status) {
      failed[i].prepare_error = status.message();
      failed[i].verdict = RefusalVerdict(i, engine.name(), status.message(), loaded_case);
      continue;
    }
    prepared.push_back(i);
  }
  result.runs = RunEngines(result, prepared, failed, options);
  for (const auto& memory : options.input_variants) {
    if (memory.size() != loaded_case.memory.size()) continue;
    env.ReplaceContext(memory);
    result.variants.push_back(RunEngines(result, prepared, failed, options));
    result.variant_memories.push_back(memory);
  }
  for (size_t i : prepared) engines_[i]->Release();
  return result;
}

Verdict DifferentialRunner::CompareWithReference(const CaseRun& case_run, const EngineRun& reference,
                                                 const EngineRun& run) const {
  const Outcome& x = *reference.outcome;
  const Outcome& y = *run.outcome;
  Verdict verdict = reference.ran_jit_only_rewrites == run.ran_jit_only_rewrites
                        ? Compare(x, y, reference.engine, run.engine)
                        : CompareHelperWithInlined(x, y, reference.engine, run.engine,
                                                   case_run.loaded->options.JitInlinedHelpers());
  if (verdict.kind != Verdict::Kind::kDivergence) return verdict;
  // The helper form of the case is the stricter one: a read of a register
  // that a call left undefined is one even where the rewrite keeps it.
  if (const auto& clobbered_read = case_run.LoadedFor(false).clobbered_read) {
    // The engines may legitimately disagree on a register a call left undefined.
    return {Verdict::Kind::kNotComparable, "", *clobbered_read};
  }
  if (x.read_engine_private) {
    return {Verdict::Kind::kNotComparable, "",
            "the program touched bytes that differ between engines by design (JIT code, "
            "program objects, or the stack outside the BPF frames)"};
  }
  return verdict;
}

std::vector<EngineRun> DifferentialRunner::RunEngines(const CaseRun& case_run,
                                                      const std::vector<size_t>& prepared,
                                                      std::vector<EngineRun> runs, const RunOptions& options) {
  GuestEnvironment& env = sandbox_.env();
  const EngineRun& reference = runs.front();
  // BPF instructions the reference interpreter ran, for the JITs' budgets.
  std::optional<uint64_t> interpreted_steps;
  for (size_t i : prepared) {
    EngineRun& run = runs[i];
    run.verdict = {};
    if (i != 0 && reference.outcome && reference.outcome->end == EndKind::kBudget) {
      // Nothing to compare with: do not spend the (much larger) JIT budget.
      run.verdict = {Verdict::Kind::kNotComparable, "", reference.engine + " ran out of its instruction budget"};
      continue;
    }
    const bool interpreter = engines_[i]->kind() == EngineKind::kInterpreter;
    const uint64_t budget = interpreter ? options.interp_budget
                                        : interpreted_steps.value_or(options.interp_budget) * options.jit_budget_factor +
                                              options.jit_budget_base;
    env.ResetForRun(engines_[i]->cpu());
    run.outcome = engines_[i]->Run(budget);
    if (i == 0 && interpreter) interpreted_steps = run.outcome->steps;
    if (i != 0 && reference.outcome) run.verdict = CompareWithReference(case_run, reference, run);
  }
  return runs;
}

}  // namespace bpfdiff
