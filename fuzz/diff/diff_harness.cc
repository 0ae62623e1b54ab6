#include "fuzz/diff/diff_harness.h"

#include <algorithm>

#include <fmt/format.h>

#include "fuzz/findings/three_way.h"
#include "fuzz/generator/generator.h"
#include "harness/conformance/export.h"
#include "harness/diff/code_generator.h"
#include "harness/diff/engines.h"
#include "isa/disassembler.h"

namespace bpfdiff::fuzz {

Result<std::unique_ptr<DiffHarness>> DiffHarness::Create(const PlantedBugs& bugs, UnicornFault unicorn_fault,
                                                         std::string_view engines_choice,
                                                         MachineFactory machine_factory) {
  const bool kernel = engines_choice == kKernelEngines || engines_choice == kTreeEngines ||
                      (engines_choice.starts_with(kKernelEngines) && engines_choice.find('@') != std::string_view::npos);
  if (engines_choice != kAllEngines && !kernel) {
    return Fail("engines '{}': {}, {}, {}@<version> or {}", engines_choice, kAllEngines, kKernelEngines,
                kKernelEngines, kTreeEngines);
  }
  std::unique_ptr<DiffHarness> harness(new DiffHarness());
  SandboxOptions options;
  options.pack_bugs = bugs.pack;
  options.unicorn_fault = unicorn_fault;
  options.keep_unchanged_translations = true;  // a slot is freed and reloaded per case
  options.machine_factory = machine_factory;
  auto sandbox = Sandbox::Create(options);
  if (!sandbox) return sandbox.error();
  harness->sandbox_ = std::move(sandbox).value();
  // Both choices are the interpreter, (kernel: the kernel's interpreter,)
  // then one JIT in the LSE lowering, (kernel: the blinded and the classic
  // loader's,) then the LL/SC lowering: OptionsFor's engine limit counts on
  // that order.
  auto engines = MakeEngines(*harness->sandbox_, engines_choice, bugs.jit);
  if (!engines) return engines.error();
  // Every engine, the interpreter first: the reference, whose coverage counts.
  static_cast<InterpreterEngine&>(*engines->front()).set_coverage(&harness->executed_);
  harness->runner_ = std::make_unique<DifferentialRunner>(*harness->sandbox_, std::move(engines).value());
  harness->kernel_verifier_forms_ = kernel;
  // Each tree's kernel rows come together (MakeEngines): a tree is one
  // kernel interpreter.
  for (const auto& engine : harness->runner_->engines()) {
    const std::string_view name = engine->name();
    if (name == "kernel-interp" || name.starts_with("kernel-interp@")) ++harness->kernel_trees_;
  }
  return harness;
}

bool HasAtomics(const CaseSource& source) {
  for (const auto& program : source.programs) {
    for (const auto& insn : program) {
      if (isa::ClassOf(insn.opcode) == isa::kClassStx && isa::ModeOf(insn.opcode) == isa::kModeAtomic) return true;
      if (insn.opcode == isa::kOpCall && insn.src == 0 && insn.imm == kHelperKptrXchg) {
        return true;  // kptr_xchg may be inlined as an atomic exchange
      }
    }
  }
  return false;
}

bool SampledForClassicLoader(const CaseSource& source) {
  // The loader is the fingerprint modulo 12: the upper half is another
  // choice.
  return !source.programs.empty() && (ProgramFingerprint(source.programs.front()) >> 32) % 4 == 0;
}

bool SampledForBlinding(const CaseSource& source) {
  // The loader is the fingerprint modulo 3; bit 40 is another choice.
  return !source.programs.empty() && ((ProgramFingerprint(source.programs.front()) >> 40) & 1) == 0;
}

RunOptions DiffHarness::OptionsFor(const CaseSource& source, size_t variants) const {
  RunOptions options;
  const bool atomics = HasAtomics(source);
  if (kernel_verifier_forms_) {
    // The kernel engines in order: interp, kernel-interp, kernel-jit,
    // kernel-jit-blind, kernel-jit-cbpf, kernel-jit-llsc,
    // kernel-jit-llsc-blind. The kernel's interpreter runs every program:
    // it is the second reference, and a run costs it microseconds. With
    // several trees each row comes once per tree (interp, kernel-interp,
    // kernel-interp@6.1.192, kernel-jit, kernel-jit@6.1.192, ...): every
    // tree runs the same rows of a case.
    const size_t rows = atomics                            ? 7
                        : SampledForClassicLoader(source) ? 5
                        : SampledForBlinding(source)      ? 4
                                                          : 3;
    options.engine_limit = 1 + (rows - 1) * std::max<size_t>(kernel_trees_, 1);
  } else {
    options.engine_limit = atomics ? 3 : 2;
  }
  // Generated programs terminate by construction, but nested loops in
  // nested calls can still run long; that many steps prove nothing more.
  options.interp_budget = 200'000;
  // Other input memories: the same bytes rotated and flipped, so that the
  // variants are a function of the input (reproducible).
  for (size_t v = 1; v <= variants && !source.memory.empty(); ++v) {
    std::vector<uint8_t> memory = source.memory;
    for (size_t i = 0; i < memory.size(); ++i) {
      memory[i] = static_cast<uint8_t>(source.memory[(i + v) % memory.size()] ^ (0x5a * v));
    }
    options.input_variants.push_back(std::move(memory));
  }
  return options;
}

CaseRun DiffHarness::RunCase(const CaseSource& source, size_t variants) {
  return runner_->Run(source, OptionsFor(source, variants));
}

Localization DiffHarness::Localize(const CaseRun& run) {
  // The variants' memories are in the run; the budgets are the case's.
  RunOptions options;
  options.interp_budget = OptionsFor({}, 0).interp_budget;
  return LocalizeFirstDivergence(*runner_, run, options);
}

DiffHarness::InputRun DiffHarness::RunInput(std::span<const uint8_t> input, size_t variants) {
  InputRun result;
  const uint64_t decode_start = SteadyNanos();
  result.source = DecodeFuzzInput(input);
  if (result.source && kernel_verifier_forms_ && !ToKernelVerifierForms(*result.source)) result.source.reset();
  runner_->cost().Add(RunPhase::kDecode, SteadyNanos() - decode_start);
  if (result.source) result.run = RunCase(*result.source, variants);
  return result;
}

std::string DescribeDivergence(const CaseSource& source, const CaseRun& run, const Localization* localization) {
  std::string out;
  for (size_t p = 0; p < source.programs.size(); ++p) {
    out += fmt::format("program {}:\n{}", p, isa::DisassembleForDisplay(source.programs[p]));
  }
  auto describe_runs = [&](const std::vector<EngineRun>& runs, std::string_view title) {
    out += fmt::format("{}:\n", title);
    for (const auto& engine_run : runs) {
      if (engine_run.outcome) {
        out += fmt::format("  {}: {}", engine_run.engine, engine_run.outcome->Describe());
      } else {
        out += fmt::format("  {}: {}\n", engine_run.engine, engine_run.WhyNotRun());
      }
    }
  };
  describe_runs(run.runs, "outcomes");
  for (size_t v = 0; v < run.variants.size(); ++v) describe_runs(run.variants[v], fmt::format("input variant {}", v + 1));
  if (const EngineRun* diverged = run.FirstDivergence()) {
    out += fmt::format("first divergence ({}): {}\n", diverged->engine, diverged->verdict.Describe());
    if (auto three_way = ThreeWayVerdict(run, *diverged)) out += fmt::format("against both interpreters: {}\n", *three_way);
    if (auto trees = TreeVerdict(run, *diverged)) out += fmt::format("across trees: {}\n", *trees);
  }
  if (localization != nullptr && run.loaded) out += DescribeLocalization(*localization, *run.loaded);
  if (!run.runs.empty() && run.runs.front().outcome) {
    out += "as a .data regression test (expectations are the interpreter's):\n";
    out += ExportCase(source, *run.runs.front().outcome, "Found by bpfdiff's differential fuzzer.");
  }
  return out;
}

}  // namespace bpfdiff::fuzz
