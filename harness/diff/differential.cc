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
  if (auto refusal = KernelBranchOutOfRange(message)) {
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

EngineRun* CaseRun::FirstDivergence() {
  return const_cast<EngineRun*>(static_cast<const CaseRun&>(*this).FirstDivergence());
}

const std::vector<EngineRun>* CaseRun::RunsHolding(const EngineRun& run) const {
  const auto holds = [&](const std::vector<EngineRun>& list) {
    return !list.empty() && &run >= &list.front() && &run <= &list.back();
  };
  if (holds(runs)) return &runs;
  for (const auto& variant : variants) {
    if (holds(variant)) return &variant;
  }
  return nullptr;
}

const std::vector<uint8_t>* CaseRun::InputMemoryOf(const EngineRun& run) const {
  const std::vector<EngineRun>* list = RunsHolding(run);
  if (list == nullptr || list == &runs) return nullptr;
  const auto v = static_cast<size_t>(list - variants.data());
  return v < variant_memories.size() ? &variant_memories[v] : nullptr;
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
  const uint64_t load_start = SteadyNanos();
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
  cost_.Add(RunPhase::kLoad, SteadyNanos() - load_start);

  // Prepare every engine (compile), then run them one after another.
  const size_t count = std::min(engines_.size(), options.engine_limit);
  std::vector<size_t> prepared;
  std::vector<EngineRun> failed(count);
  for (size_t i = 0; i < count; ++i) {
    Engine& engine = *engines_[i];
    failed[i].engine = std::string(engine.name());
    failed[i].ran_jit_only_rewrites = result.loaded_without_jit_rewrites && engine.RunsJitOnlyRewrites();
    const uint64_t prepare_start = SteadyNanos();
    const uint64_t text_start = sandbox_.patcher().busy_nanos();
    const Status status = engine.Prepare(result.LoadedFor(engine.RunsJitOnlyRewrites()));
    ChargeWithText(engine.kind() == EngineKind::kInterpreter ? RunPhase::kInterpreter : RunPhase::kJitCompile,
                   prepare_start, text_start);
    if (!status) {
      failed[i].prepare_error = status.message();
      failed[i].verdict = RefusalVerdict(i, engine.name(), status.message(), loaded_case);
      continue;
    }
    if (auto why = engine.not_comparable()) {
      failed[i].verdict = {Verdict::Kind::kNotComparable, "", *why};
      failed[i].verifier_refused = engine.verifier_refused();
      engine.Release();
      continue;
    }
    prepared.push_back(i);
  }
  // When every JIT prepared lays its frames out alike, and not as the
  // reference does (the kernel's engines alone), the reference runs with
  // theirs from the start: once per input memory, not once with its own
  // frames and again with theirs.
  Engine& reference = *engines_.front();
  const StackGeometry reference_own = reference.geometry();
  const std::optional<StackGeometry> shared = SharedJitGeometry(prepared);
  const bool relaid_once = shared && !(*shared == reference_own) && reference.UseGeometry(*shared);
  result.runs = RunEngines(result, prepared, failed, options, /*first=*/true);
  for (const auto& memory : options.input_variants) {
    if (memory.size() != loaded_case.memory.size()) continue;
    env.ReplaceContext(memory);
    result.variants.push_back(RunEngines(result, prepared, failed, options, /*first=*/false));
    result.variant_memories.push_back(memory);
  }
  if (relaid_once) reference.UseGeometry(reference_own);
  const uint64_t release_start = SteadyNanos();
  const uint64_t text_start = sandbox_.patcher().busy_nanos();
  for (size_t i : prepared) engines_[i]->Release();
  ChargeWithText(RunPhase::kRelease, release_start, text_start);
  return result;
}

std::optional<StackGeometry> DifferentialRunner::SharedJitGeometry(const std::vector<size_t>& prepared) const {
  if (prepared.empty() || prepared.front() != 0 || engines_.front()->kind() != EngineKind::kInterpreter) {
    return std::nullopt;
  }
  std::optional<StackGeometry> shared;
  for (size_t i : prepared) {
    if (i == 0 || engines_[i]->kind() != EngineKind::kJit) continue;  // kernel-interp's frames are its own
    const StackGeometry geometry = engines_[i]->geometry();
    if (shared && !(*shared == geometry)) return std::nullopt;
    shared = geometry;
  }
  return shared;
}

void DifferentialRunner::ChargeWithText(RunPhase phase, uint64_t start, uint64_t text_start) {
  const uint64_t total = SteadyNanos() - start;
  const uint64_t text = std::min(total, sandbox_.patcher().busy_nanos() - text_start);
  cost_.Add(phase, total - text);
  cost_.Add(RunPhase::kPackText, text);
}

Verdict DifferentialRunner::CompareWithReference(const CaseRun& case_run, const EngineRun& reference,
                                                 const Outcome& x, const EngineRun& run,
                                                 std::span<const int32_t> inlined_by_code) const {
  const Outcome& y = *run.outcome;
  // Helper calls one side performs inline: those the case's JIT-only
  // rewrites inline, and those the engine's code always does.
  std::vector<int32_t> inlined(inlined_by_code.begin(), inlined_by_code.end());
  if (reference.ran_jit_only_rewrites != run.ran_jit_only_rewrites) {
    const auto rewritten = case_run.loaded->options.JitInlinedHelpers();
    inlined.insert(inlined.end(), rewritten.begin(), rewritten.end());
  }
  // An engine that cannot see its tail calls is compared on their effects.
  std::optional<Outcome> with_reference_tail_calls;
  if (!run.reports_tail_calls && x.tail_calls != y.tail_calls) {
    with_reference_tail_calls = y;
    with_reference_tail_calls->tail_calls = x.tail_calls;
  }
  const Outcome& candidate = with_reference_tail_calls ? *with_reference_tail_calls : y;
  Verdict verdict = inlined.empty()
                        ? Compare(x, candidate, reference.engine, run.engine)
                        : CompareHelperWithInlined(x, candidate, reference.engine, run.engine, inlined);
  if (verdict.kind != Verdict::Kind::kDivergence) return verdict;
  // The helper form of the case is the stricter one: a read of a register
  // that a call left undefined is one even where the rewrite keeps it.
  if (const auto& clobbered_read = case_run.LoadedFor(false).clobbered_read) {
    // The engines may legitimately disagree on a register a call left undefined.
    return {Verdict::Kind::kNotComparable, "", *clobbered_read};
  }
  if (const auto& entry_read = case_run.LoadedFor(false).read_at_tail_call_entry;
      entry_read && run.tail_call_restores_registers) {
    return {Verdict::Kind::kNotComparable, "", *entry_read};
  }
  if (x.read_program_array_slots && run.holds_own_program_array_slots) {
    return {Verdict::Kind::kNotComparable, "",
            fmt::format("the program read a program array's slots, which {} holds as the kernel does (pointers to "
                        "its own programs)",
                        run.engine)};
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
                                                      std::vector<EngineRun> runs, const RunOptions& options,
                                                      bool first) {
  GuestEnvironment& env = sandbox_.env();
  const EngineRun& reference = runs.front();
  // BPF instructions the reference interpreter ran, for the JITs' budgets.
  std::optional<uint64_t> interpreted_steps;
  // The reference's runs with the frames of a JIT that lays them out
  // otherwise (the kernel's), one per geometry.
  std::vector<std::pair<StackGeometry, Outcome>> relaid;
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
    run.geometry = engines_[i]->geometry();
    // The reference's run with this engine's frames comes first: with
    // per-function frames, the engine's stack is taken through the window
    // that run's path gives.
    const Outcome* against = i != 0 && reference.outcome ? &*reference.outcome : nullptr;
    if (against != nullptr && !(run.geometry == engines_[0]->geometry())) {
      auto it = std::find_if(relaid.begin(), relaid.end(), [&](const auto& r) { return r.first == run.geometry; });
      if (it == relaid.end()) {
        Engine& ref = *engines_[0];
        const StackGeometry own = ref.geometry();
        if (!ref.UseGeometry(run.geometry)) {
          run.verdict = {Verdict::Kind::kNotComparable, "",
                         fmt::format("{} cannot lay its frames out as {} does", reference.engine, run.engine)};
          continue;
        }
        const uint64_t relaid_start = SteadyNanos();
        env.ResetForRun(ref.cpu());
        relaid.emplace_back(run.geometry, ref.Run(options.interp_budget));
        cost_.Add(RunPhase::kInterpreter, SteadyNanos() - relaid_start);
        ref.UseGeometry(own);
        it = relaid.end() - 1;
      }
      against = &it->second;
    }
    if (i != 0 && engines_[i]->RunsOnHostMemory() &&
        (against == nullptr || (against->end != EndKind::kExit && against->end != EndKind::kUnwind &&
                                against->end != EndKind::kHelperError))) {
      // Nothing would catch the fault of a plain access, and a wild store
      // would land in this process.
      run.verdict = {Verdict::Kind::kNotComparable, "",
                     fmt::format("{} ended with {}: {} runs only what ends without a fault (the kernel's "
                                 "interpreter has no fixup for a plain access, and its verifier loads no "
                                 "program that makes one fault)",
                                 reference.engine, against ? against->Summary() : "no outcome", run.engine)};
      continue;
    }
    run.reports_tail_calls = engines_[i]->ReportsTailCalls();
    run.holds_own_program_array_slots = engines_[i]->HoldsOwnProgramArraySlots();
    const auto inlined = engines_[i]->inlined_helpers();
    run.inlined_by_code.assign(inlined.begin(), inlined.end());
    run.tail_call_restores_registers = engines_[i]->tail_call_restores_registers();
    run.loader = engines_[i]->loader();
    const uint64_t run_start = SteadyNanos();
    const Engine::GuestWork work_before = engines_[i]->guest_work();
    env.ResetForRun(engines_[i]->cpu());
    run.outcome = engines_[i]->Run(budget);
    if (against != nullptr && run.geometry.per_function()) run.outcome->memory = env.Capture(against->memory.window);
    const Engine::GuestWork work_after = engines_[i]->guest_work();
    if (interpreter) {
      cost_.Add(RunPhase::kInterpreter, SteadyNanos() - run_start);
    } else {
      cost_.Add(first ? RunPhase::kEmulatorFirst : RunPhase::kEmulatorLater, SteadyNanos() - run_start);
      ++(first ? cost_.first_runs : cost_.later_runs);
      cost_.guest_executed += work_after.executed - work_before.executed;
      cost_.guest_translated += work_after.translated - work_before.translated;
    }
    if (i == 0 && interpreter) interpreted_steps = run.outcome->steps;
    if (against == nullptr) continue;
    const uint64_t compare_start = SteadyNanos();
    run.verdict = CompareWithReference(case_run, reference, *against, run, run.inlined_by_code);
    if (run.loader != nullptr && run.verdict.kind == Verdict::Kind::kDivergence) {
      run.verdict.detail += fmt::format(" (loaded as: {})", run.loader->name);
    }
    cost_.Add(RunPhase::kCompare, SteadyNanos() - compare_start);
  }
  return runs;
}

}  // namespace bpfdiff
