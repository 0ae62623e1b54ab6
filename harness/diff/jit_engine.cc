#include "harness/diff/jit_engine.h"

#include "harness/machine/jit_call.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {

JitEngine::JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu)
    : sandbox_(sandbox),
      jit_(sandbox.pack(), Sandbox::JitEnvironment(), options),
      name_(std::move(name)),
      cpu_(cpu) {}

JitEngine::~JitEngine() { Release(); }

Status JitEngine::Prepare(const LoadedCase& loaded) {
  Release();
  loaded_ = &loaded;
  for (size_t i = 0; i < loaded.programs.size(); ++i) {
    auto compiled = jit_.Compile(loaded.programs[i].program);
    if (!compiled) {
      Release();
      return loaded.programs.size() == 1 ? compiled.error()
                                         : Fail("program {}: {}", i, compiled.message());
    }
    compiled_.push_back(std::move(compiled).value());
  }
  return {};
}

void JitEngine::Release() {
  for (auto& program : compiled_) jit_.Release(program);
  compiled_.clear();
  loaded_ = nullptr;
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

std::optional<Outcome> JitEngine::RunOn(Machine& machine, uint64_t budget) {
  GuestEnvironment& env = sandbox_.env();
  // The program objects a tail call reads point at this engine's images
  // (other engines prepared for the same case have their own).
  CallPrograms programs;
  for (size_t i = 0; i < compiled_.size(); ++i) {
    env.SetProgramEntry(i, compiled_[i].entry());
    programs.compiled.push_back(&compiled_[i]);
    programs.programs.push_back(&loaded_->programs[i].program);
  }
  JitCall call(env, machine, cpu_, std::move(programs));
  call.Start(0, {env.context_address(), env.context_length(), 0, 0, 0}, budget);
  Outcome outcome = *call.Step();
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

}  // namespace bpfdiff
