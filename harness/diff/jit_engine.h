// An arm64 JIT, run in Unicorn, as an Engine: bpfdiff's model or the
// kernel's own (harness/diff/code_generator.h).
//
// Prepare() compiles every program of the case into the sandbox's pack.
// Run() points the guest program objects at this engine's images (for tail
// calls) and calls the main program (harness/machine/jit_call.h), on the fast
// machine when there is one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/diff/code_generator.h"
#include "harness/diff/engine.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "harness/machine/throw_kfunc.h"
#include "jit/jit.h"

namespace bpfdiff {

class JitEngine final : public Engine {
 public:
  // bpfdiff's model JIT with `options`.
  JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu = 0);
  JitEngine(Sandbox& sandbox, std::unique_ptr<CodeGenerator> generator, std::string name, int cpu = 0);
  ~JitEngine() override;

  std::string_view name() const override { return name_; }
  Status Prepare(const LoadedCase& loaded) override;
  Outcome Run(uint64_t budget) override;
  // On the precise machine, stopping where the offset table says each BPF
  // instruction's code starts (an instruction whose lowering is empty has
  // no boundary of its own: see HasBoundary).
  Outcome RunTraced(uint64_t budget, BoundaryTrace& trace) override;
  const std::vector<jit::CompiledProgram>* compiled_programs() const override { return &compiled_; }
  int cpu() const override { return cpu_; }
  EngineKind kind() const override { return EngineKind::kJit; }
  StackGeometry geometry() const override { return conventions_.geometry; }
  std::optional<std::string> not_comparable() const override { return not_comparable_; }
  bool verifier_refused() const override { return verifier_refused_; }
  std::span<const int32_t> inlined_helpers() const override { return generator_->InlinedHelpers(); }
  bool tail_call_restores_registers() const override { return conventions_.tail_call_restores_registers; }
  const kernelsrc::KernelLoader* loader() const override { return generator_->loader(); }
  void Release() override;
  GuestWork guest_work() const override { return guest_work_; }

  const std::vector<jit::CompiledProgram>& compiled() const { return compiled_; }

 private:
  // One run on `machine`; nullopt when a fast machine could not locate a
  // fault precisely.
  std::optional<Outcome> RunOn(Machine& machine, uint64_t budget);
  // Points the guest program objects at this engine's images (for tail
  // calls) and names the programs a call may reach.
  CallPrograms InstallPrograms();

  Sandbox& sandbox_;
  std::unique_ptr<CodeGenerator> generator_;
  std::string name_;
  int cpu_;
  const LoadedCase* loaded_ = nullptr;
  std::vector<jit::CompiledProgram> compiled_;
  std::vector<ThrowTableEntry> throw_table_;  // bpf_throw's, of compiled_ (empty: no program throws)
  CodeConventions conventions_ = ModelConventions();
  std::optional<std::string> not_comparable_;
  bool verifier_refused_ = false;
  GuestWork guest_work_;
};

// Whether the code of BPF slot `slot` of `program` is not empty (its
// lowering emitted at least one word), so that a run stepping at the
// offset table's boundaries stops before it. An instruction with an empty
// lowering shares its boundary with the next one; a last `exit` falls
// into the epilogue.
bool HasBoundary(const jit::CompiledProgram& program, uint32_t slot);

}  // namespace bpfdiff
