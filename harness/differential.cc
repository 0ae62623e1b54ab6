#include "harness/differential.h"

#include "harness/interp_engine.h"
#include "harness/jit_engine.h"

namespace bpfdiff {

const EngineRun* CaseRun::FirstDivergence() const {
  for (const auto& run : runs) {
    if (run.verdict.kind == Verdict::Kind::kDivergence) return &run;
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

  uint64_t reference_steps = 0;
  for (size_t i = 0; i < engines_.size(); ++i) {
    Engine& engine = *engines_[i];
    EngineRun run;
    run.engine = std::string(engine.name());
    if (auto status = engine.Prepare(loaded_case); !status) {
      run.prepare_error = status.message();
      run.verdict = {Verdict::Kind::kPoisoned, "", std::string(engine.name()) + " could not prepare: " + status.message()};
      result.runs.push_back(std::move(run));
      continue;
    }
    env.Reset();
    const uint64_t budget = i == 0 ? options.interp_budget
                                   : reference_steps * options.jit_budget_factor + options.jit_budget_base;
    run.outcome = engine.Run(budget);
    engine.Release();
    if (i == 0) {
      reference_steps = run.outcome->steps;
    } else if (result.runs.front().outcome) {
      run.verdict = Compare(*result.runs.front().outcome, *run.outcome, result.runs.front().engine, run.engine);
      if (run.verdict.kind == Verdict::Kind::kDivergence && loaded_case.clobbered_read) {
        // The engines may legitimately disagree on a register a call left undefined.
        run.verdict = {Verdict::Kind::kPoisoned, "", *loaded_case.clobbered_read};
      }
    }
    result.runs.push_back(std::move(run));
  }
  return result;
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
