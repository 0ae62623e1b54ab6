#include "harness/diff/jit_engine.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/machine/jit_call.h"
#include "harness/machine/throw_kfunc.h"
#include "jit/code_rules.h"
#include "jit/registers.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

bool UsesCallbacks(const LoadedCase& loaded) {
  for (const auto& program : loaded.programs) {
    for (const isa::Insn& insn : program.program.insns) {
      if (insn.opcode == isa::kOpLddw && insn.src == isa::kPseudoFunc) return true;
    }
  }
  return false;
}

// bpf_throw's table (harness/machine/throw_kfunc.h) of these images: every
// function, and each program's exception callback. Empty when no program
// throws.
std::vector<ThrowTableEntry> ThrowTableOf(const LoadedCase& loaded, const std::vector<jit::CompiledProgram>& compiled) {
  std::vector<ThrowTableEntry> table;
  const bool throws = std::any_of(loaded.programs.begin(), loaded.programs.end(),
                                  [](const LoadedProgram& p) { return p.program.exception_callback != 0; });
  if (!throws) return table;
  for (size_t p = 0; p < compiled.size() && p < loaded.programs.size(); ++p) {
    const uint32_t callback_slot = loaded.programs[p].program.exception_callback;
    uint64_t callback = guest::kThrowNoCallback;
    for (const jit::CompiledSubprogram& sub : compiled[p].subprograms) {
      if (callback_slot != 0 && sub.first_slot == callback_slot) callback = sub.rx_image;
    }
    for (size_t s = 0; s < compiled[p].subprograms.size(); ++s) {
      const jit::CompiledSubprogram& sub = compiled[p].subprograms[s];
      table.push_back({sub.rx_image, sub.rx_image + 4ull * sub.code_words, s == 0 ? callback : 0});
    }
  }
  return table;
}

}  // namespace

JitEngine::JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu)
    : JitEngine(sandbox, MakeModelGenerator(sandbox, options), std::move(name), cpu) {}

JitEngine::JitEngine(Sandbox& sandbox, std::unique_ptr<CodeGenerator> generator, std::string name, int cpu)
    : sandbox_(sandbox), generator_(std::move(generator)), name_(std::move(name)), cpu_(cpu) {}

JitEngine::~JitEngine() { Release(); }

Status JitEngine::Prepare(const LoadedCase& loaded) {
  Release();
  loaded_ = &loaded;
  for (size_t i = 0; i < loaded.programs.size(); ++i) {
    if (auto refused = generator_->VerifierRefusal(loaded.programs[i].program)) {
      Release();
      not_comparable_ = fmt::format("{}: {}{}", name_, loaded.programs.size() == 1 ? "" : fmt::format("program {}: ", i),
                                    *refused);
      verifier_refused_ = true;
      return {};
    }
  }
  if (!loaded.programs.empty()) generator_->BeginCase(loaded.programs.front().program);
  for (size_t i = 0; i < loaded.programs.size(); ++i) {
    auto compiled = generator_->Compile(loaded.programs[i]);
    if (!compiled) {
      Release();
      return loaded.programs.size() == 1 ? compiled.error()
                                         : Fail("program {}: {}", i, compiled.message());
    }
    compiled_.push_back(std::move(compiled).value());
    // A word the architecture leaves CONSTRAINED UNPREDICTABLE is the JIT's
    // finding whatever the emulators make of it.
    if (auto bad = jit::FirstUnpredictableWord(compiled_.back())) {
      Release();
      return Fail("{}the JIT emitted {}", loaded.programs.size() == 1 ? "" : fmt::format("program {}: ", i), *bad);
    }
  }
  throw_table_ = ThrowTableOf(loaded, compiled_);
  if (throw_table_.size() > guest::kThrowTableMaxEntries) {
    Release();
    return Fail("the case's programs have more JIT'd functions than bpf_throw's table holds ({})",
                guest::kThrowTableMaxEntries);
  }
  auto conventions = generator_->Conventions(Pointers(compiled_));
  if (conventions) {
    conventions_ = *conventions;
    // A callback's frame lies below bpf_loop's, at no call depth's place:
    // the interpreter follows the run's path instead (per-function frames,
    // here each with the one prologue).
    if (!conventions_.geometry.per_function() && UsesCallbacks(loaded)) {
      conventions_.geometry.functions.push_back(
          {0, 0, conventions_.geometry.fp_below_entry_sp, conventions_.geometry.OwnStackBytes()});
    }
    // The interpreter runs the case without the JIT-only rewrites (an
    // inlined kptr_xchg is two slots where the source has one): it knows a
    // function by the source's slot of its entry.
    for (FunctionFrame& function : conventions_.geometry.functions) {
      const auto& source_slot = loaded.programs[function.program].source_slot;
      if (function.entry < source_slot.size()) function.entry = source_slot[function.entry];
    }
  } else {
    not_comparable_ = fmt::format("{}: {}", name_, conventions.message());
  }
  return {};
}

void JitEngine::Release() {
  // A free the kernel's code gets wrong leaves nothing behind (the
  // generator frees what it left) and is the lifecycle world's to report
  // (World::Free, jit-error-path); a case's outcome is settled by now.
  for (auto& program : compiled_) (void)generator_->Release(program);
  compiled_.clear();
  throw_table_.clear();
  loaded_ = nullptr;
  conventions_ = ModelConventions();
  not_comparable_.reset();
  verifier_refused_ = false;
}

Outcome JitEngine::Run(uint64_t budget) {
  if (compiled_.empty()) {
    Outcome outcome;
    outcome.end = EndKind::kHarnessError;
    outcome.message = "nothing compiled";
    return outcome;
  }
  // The fast machine first; a fault it cannot pin to one instruction means
  // running the call again, from the same initial state, on a precise one.
  if (Machine* fast = sandbox_.fast_machine(); fast != nullptr && cpu_ == 0) {
    if (auto outcome = RunOn(*fast, budget)) return std::move(*outcome);
    sandbox_.env().ResetForRun(cpu_);
  }
  auto outcome = RunOn(sandbox_.machine(cpu_), budget);
  return std::move(*outcome);
}

CallPrograms JitEngine::InstallPrograms() {
  // The program objects a tail call reads point at this engine's images
  // (other engines prepared for the same case have their own).
  CallPrograms programs;
  for (size_t i = 0; i < compiled_.size(); ++i) {
    sandbox_.env().SetProgramEntry(i, compiled_[i].entry());
    programs.compiled.push_back(&compiled_[i]);
    programs.programs.push_back(&loaded_->programs[i].program);
  }
  // Its size was checked when the case was prepared.
  if (!throw_table_.empty()) (void)WriteThrowTable(sandbox_.env().memory(), throw_table_);
  programs.conventions = conventions_;
  return programs;
}

std::optional<Outcome> JitEngine::RunOn(Machine& machine, uint64_t budget) {
  GuestEnvironment& env = sandbox_.env();
  JitCall call(env, machine, cpu_, InstallPrograms());
  const uint64_t translated_before = machine.instructions_translated();
  call.Start(0, {env.context_address(), env.context_length(), 0, 0, 0}, budget);
  Outcome outcome = *call.Step();
  guest_work_.executed += machine.steps();
  guest_work_.translated += machine.instructions_translated() - translated_before;
  if (call.imprecise()) return std::nullopt;
  if (outcome.fault) {
    // Faults are reported at the slot of the source program, as the
    // interpreter (which may run the program without the JIT-only
    // rewrites) reports them.
    const auto& source_slot = loaded_->programs[outcome.fault->program].source_slot;
    if (outcome.fault->insn < source_slot.size()) outcome.fault->insn = source_slot[outcome.fault->insn];
  }
  return outcome;
}

namespace {

struct Boundary {
  uint64_t address;
  uint32_t program;
  uint32_t slot;
};

// Every boundary of every program, by address.
std::vector<Boundary> BoundariesOf(const std::vector<jit::CompiledProgram>& compiled) {
  std::vector<Boundary> boundaries;
  for (size_t p = 0; p < compiled.size(); ++p) {
    for (const auto& sub : compiled[p].subprograms) {
      for (uint32_t slot = sub.first_slot; slot < sub.end_slot; ++slot) {
        if (!HasBoundary(compiled[p], slot)) continue;
        boundaries.push_back({sub.rx_image + 4ull * sub.offsets[slot - sub.first_slot], static_cast<uint32_t>(p), slot});
      }
    }
  }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& a, const Boundary& b) { return a.address < b.address; });
  return boundaries;
}

}  // namespace

bool HasBoundary(const jit::CompiledProgram& program, uint32_t slot) {
  for (const auto& sub : program.subprograms) {
    if (slot < sub.first_slot || slot >= sub.end_slot) continue;
    const uint32_t i = slot - sub.first_slot;
    return sub.offsets[i] != sub.offsets[i + 1];
  }
  return false;
}

Outcome JitEngine::RunTraced(uint64_t budget, BoundaryTrace& trace) {
  if (compiled_.empty()) return Run(budget);
  const std::vector<Boundary> boundaries = BoundariesOf(compiled_);
  std::vector<uint64_t> addresses;
  addresses.reserve(boundaries.size());
  for (const auto& boundary : boundaries) addresses.push_back(boundary.address);

  // Always the precise machine: it stops before an instruction, with every
  // register exact.
  Machine& machine = sandbox_.machine(cpu_);
  GuestEnvironment& env = sandbox_.env();
  JitCall call(env, machine, cpu_, InstallPrograms());
  machine.set_stop_before(&addresses);
  call.Start(0, {env.context_address(), env.context_length(), 0, 0, 0}, budget);
  std::optional<Outcome> outcome;
  while (!(outcome = call.Step())) {
    const uint64_t pc = machine.ReadPc();
    const auto at = std::lower_bound(addresses.begin(), addresses.end(), pc);
    if (at == addresses.end() || *at != pc) continue;  // cannot happen: only boundaries stop a full Step
    const Boundary& boundary = boundaries[static_cast<size_t>(at - addresses.begin())];
    std::array<uint64_t, isa::kNumRegs> regs;
    for (unsigned r = 0; r < isa::kNumRegs; ++r) regs[r] = machine.ReadX(static_cast<int>(jit::Map(r)));
    trace.Record(boundary.program, boundary.slot, regs, call.helper_calls());
    // Past the limit the rest of the run goes at full speed.
    if (trace.full()) machine.set_stop_before(nullptr);
  }
  machine.set_stop_before(nullptr);
  return std::move(*outcome);
}

}  // namespace bpfdiff
