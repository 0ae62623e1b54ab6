// Running one case on several engines over one sandbox and comparing every
// outcome with the reference engine's (the first).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/diff/compare.h"
#include "harness/diff/engine.h"
#include "harness/diff/run_cost.h"
#include "harness/machine/sandbox.h"
#include "oracle/load.h"

namespace bpfdiff {

struct EngineRun {
  std::string engine;
  std::optional<Outcome> outcome;  // nullopt: the engine did not run (see WhyNotRun)
  std::string prepare_error;       // the engine could not prepare (compile) the case
  // The engine ran the case with the JIT-only rewrites (CaseRun::loaded)
  // while the case has some (see LoadOptions::HasJitOnlyRewrites).
  bool ran_jit_only_rewrites = false;
  // The engine's frames (r10 of every call depth) and the helpers its code
  // performs inline (Engine::geometry, Engine::inlined_helpers).
  StackGeometry geometry = Sandbox::Geometry();
  std::vector<int32_t> inlined_by_code;
  bool tail_call_restores_registers = false;  // Engine::tail_call_restores_registers
  const kernelsrc::KernelLoader* loader = nullptr;  // Engine::loader, a row of a static table
  // Not comparable because the verifier that drives its JIT refuses the
  // case for what the JIT lacks (Engine::verifier_refused).
  bool verifier_refused = false;
  // Engine::ReportsTailCalls: false, and its outcome's tail_calls are not
  // compared.
  bool reports_tail_calls = true;
  bool holds_own_program_array_slots = false;  // Engine::HoldsOwnProgramArraySlots
  Verdict verdict;                 // against the reference (kMatch for the reference)

  // For a run without an outcome, why, in one line: "could not compile:
  // <message>", or "not run: <reason>" when there was nothing to compare
  // its run with (the reference ran out of its budget).
  std::string WhyNotRun() const;
};

struct CaseRun {
  std::optional<std::string> load_error;  // the case did not load: nothing ran
  std::optional<LoadedCase> loaded;       // as the JITs run it: every rewrite the case asks for
  // When the case asks for rewrites the kernel makes only for JITs (see
  // LoadOptions::HasJitOnlyRewrites), the case without them: what the
  // interpreter runs.
  std::optional<LoadedCase> loaded_without_jit_rewrites;
  const LoadedCase& LoadedFor(bool runs_jit_only_rewrites) const {
    return runs_jit_only_rewrites || !loaded_without_jit_rewrites ? *loaded : *loaded_without_jit_rewrites;
  }
  std::vector<EngineRun> runs;            // [0] is the reference
  // Runs of the same compiled programs on other input memories
  // (RunOptions::input_variants), one list of runs per variant.
  std::vector<std::vector<EngineRun>> variants;
  std::vector<std::vector<uint8_t>> variant_memories;  // the input memory of each variant
  // The first divergence among the runs, if any.
  const EngineRun* FirstDivergence() const;
  EngineRun* FirstDivergence();
  // The list `run` (an element of `runs` or of a variant) belongs to, and
  // the input memory it ran on (nullptr: the case's own). nullptr when it
  // is in none of them.
  const std::vector<EngineRun>* RunsHolding(const EngineRun& run) const;
  const std::vector<uint8_t>* InputMemoryOf(const EngineRun& run) const;
  // The reasons of the verdicts that are not comparable.
  std::vector<std::string> NotComparableReasons() const;
};

struct RunOptions {
  uint64_t interp_budget = 1'000'000;
  // JIT budget: this many arm64 instructions per interpreted instruction,
  // plus a constant, so that only a JIT that loops where the interpreter
  // does not runs out. Per instruction the interpreter ran before it, or
  // per instruction of interp_budget when no interpreter ran first (a JIT
  // alone gets the interpreter's budget in its own unit).
  uint64_t jit_budget_factor = 64;
  uint64_t jit_budget_base = 100'000;
  // Run only the first this many engines (the fuzzers skip the LL/SC
  // lowering for programs without atomics: its code is the same as LSE's).
  size_t engine_limit = ~size_t{0};
  // More input memories (each as long as the case's) to run the already
  // compiled programs on: cheap runs, since the code is translated once.
  std::vector<std::vector<uint8_t>> input_variants;
};

class DifferentialRunner {
 public:
  DifferentialRunner(Sandbox& sandbox, std::vector<std::unique_ptr<Engine>> engines)
      : sandbox_(sandbox), engines_(std::move(engines)), hole_state_(sandbox.pack().hole_state()) {}

  // Every case starts from the same pack layout state (see
  // jit::ProgPack::hole_state), so that its outcome and verdict are the same
  // whatever ran before it in the process.
  CaseRun Run(const CaseSource& source, const RunOptions& options = {});

 private:
  // One run of every prepared engine from the installed state; compares
  // each with the first.
  // `first`: the case's first runs (the JITs' code is new to the emulator),
  // not those on another input memory.
  std::vector<EngineRun> RunEngines(const CaseRun& case_run, const std::vector<size_t>& prepared,
                                    std::vector<EngineRun> failed, const RunOptions& options, bool first);
  // The verdict on `run` against `reference` (both ran): Compare(), or
  // CompareHelperWithInlined() when one of them ran the JIT-only rewrites;
  // a divergence the engines may show by design is not comparable.
  // `x` is the reference's outcome with the frames of `run`'s engine.
  Verdict CompareWithReference(const CaseRun& case_run, const EngineRun& reference, const Outcome& x,
                               const EngineRun& run, std::span<const int32_t> inlined_by_code) const;

 public:
  std::vector<std::unique_ptr<Engine>>& engines() { return engines_; }
  Sandbox& sandbox() { return sandbox_; }
  // The pack layout state every case starts from.
  uint64_t hole_state() const { return hole_state_; }
  // Where the time of every case run so far went (run_cost.h). The caller
  // adds what happens before Run (decoding an input).
  RunCost& cost() { return cost_; }
  const RunCost& cost() const { return cost_; }

 private:
  // The frames every prepared engine but the reference (an interpreter,
  // prepared first) lays out, when they are the same for all; nullopt
  // otherwise, or with no such engine.
  std::optional<StackGeometry> SharedJitGeometry(const std::vector<size_t>& prepared) const;
  // Charges the time since `start` to `phase`, less the text patcher's work
  // since `text_start`, which goes to kPackText.
  void ChargeWithText(RunPhase phase, uint64_t start, uint64_t text_start);

  Sandbox& sandbox_;
  std::vector<std::unique_ptr<Engine>> engines_;
  uint64_t hole_state_;  // the pack's, when the runner was made
  RunCost cost_;
};

}  // namespace bpfdiff
