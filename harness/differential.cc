#include "harness/differential.h"

#include <algorithm>

#include "harness/interp_engine.h"
#include "harness/jit_engine.h"

namespace bpfdiff {

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

std::vector<std::string> CaseRun::PoisonReasons() const {
  std::vector<std::string> reasons;
  for (const auto& run : runs) {
    if (run.verdict.kind == Verdict::Kind::kPoisoned) reasons.push_back(run.verdict.detail);
  }
  return reasons;
}

CaseRun DifferentialRunner::Run(const CaseSource& source, const RunOptions& options) {
  CaseRun result;
  auto loaded = LoadCase(source);
  if (!loaded) {
    result.load_error = loaded.message();
    return result;
  }
  result.loaded = std::move(loaded).value();
  const LoadedCase& loaded_case = *result.loaded;
  GuestEnvironment& env = sandbox_.env();
  env.Install(loaded_case);

  // Prepare every engine (compile), then run them one after another.
  const size_t count = std::min(engines_.size(), options.engine_limit);
  std::vector<size_t> prepared;
  std::vector<EngineRun> failed(count);
  for (size_t i = 0; i < count; ++i) {
    Engine& engine = *engines_[i];
    failed[i].engine = std::string(engine.name());
    if (auto status = engine.Prepare(loaded_case); !status) {
      failed[i].prepare_error = status.message();
      failed[i].verdict = {Verdict::Kind::kPoisoned, "",
                           std::string(engine.name()) + " could not prepare: " + status.message()};
      continue;
    }
    prepared.push_back(i);
  }
  result.runs = RunEngines(loaded_case, prepared, failed, options);
  for (const auto& memory : options.input_variants) {
    if (memory.size() != loaded_case.memory.size()) continue;
    env.ReplaceContext(memory);
    result.variants.push_back(RunEngines(loaded_case, prepared, failed, options));
  }
  for (size_t i : prepared) engines_[i]->Release();
  return result;
}

std::vector<EngineRun> DifferentialRunner::RunEngines(const LoadedCase& loaded,
                                                      const std::vector<size_t>& prepared,
                                                      std::vector<EngineRun> runs, const RunOptions& options) {
  GuestEnvironment& env = sandbox_.env();
  uint64_t reference_steps = 0;
  for (size_t i : prepared) {
    EngineRun& run = runs[i];
    run.verdict = {};
    if (i != 0 && runs.front().outcome && runs.front().outcome->end == EndKind::kBudget) {
      // Nothing to compare with: do not spend the (much larger) JIT budget.
      run.verdict = {Verdict::Kind::kPoisoned, "", runs.front().engine + " ran out of its instruction budget"};
      continue;
    }
    env.ResetForRun(engines_[i]->cpu());
    const uint64_t budget = i == 0 ? options.interp_budget
                                   : reference_steps * options.jit_budget_factor + options.jit_budget_base;
    run.outcome = engines_[i]->Run(budget);
    if (i == 0) {
      reference_steps = run.outcome->steps;
    } else if (runs.front().outcome) {
      run.verdict = Compare(*runs.front().outcome, *run.outcome, runs.front().engine, run.engine);
      if (run.verdict.kind == Verdict::Kind::kDivergence && loaded.clobbered_read) {
        // The engines may legitimately disagree on a register a call left undefined.
        run.verdict = {Verdict::Kind::kPoisoned, "", *loaded.clobbered_read};
      } else if (run.verdict.kind == Verdict::Kind::kDivergence && runs.front().outcome->read_engine_private) {
        run.verdict = {Verdict::Kind::kPoisoned, "",
                       "the program touched bytes that differ between engines by design (JIT code, "
                       "program objects, or the stack outside the BPF frames)"};
      }
    }
  }
  return runs;
}

Result<std::vector<std::unique_ptr<Engine>>> MakeEngines(Sandbox& sandbox, std::string_view which,
                                                         const jit::JitBugs& bugs) {
  std::vector<std::unique_ptr<Engine>> engines;
  jit::JitOptions lse{jit::AtomicLowering::kLse, bugs};
  jit::JitOptions llsc{jit::AtomicLowering::kLlSc, bugs};
  if (which == "interp") {
    engines.push_back(std::make_unique<InterpreterEngine>(sandbox));
  } else if (which == "jit") {
    engines.push_back(std::make_unique<JitEngine>(sandbox, lse, "jit"));
  } else if (which == "jit-llsc") {
    engines.push_back(std::make_unique<JitEngine>(sandbox, llsc, "jit-llsc"));
  } else if (which == "all") {
    engines.push_back(std::make_unique<InterpreterEngine>(sandbox));
    engines.push_back(std::make_unique<JitEngine>(sandbox, lse, "jit"));
    engines.push_back(std::make_unique<JitEngine>(sandbox, llsc, "jit-llsc"));
  } else {
    return Fail("unknown engine '{}' (interp, jit, jit-llsc or all)", which);
  }
  return engines;
}

}  // namespace bpfdiff
