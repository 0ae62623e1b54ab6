// The arm64 JIT, run in Unicorn, as an Engine.
//
// Prepare() compiles every program of the case into the sandbox's pack.
// Run() points the guest program objects at this engine's images (for tail
// calls) and calls the main program (harness/machine/jit_call.h), on the fast
// machine when there is one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/diff/engine.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"

namespace bpfdiff {

class JitEngine final : public Engine {
 public:
  JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu = 0);
  ~JitEngine() override;

  std::string_view name() const override { return name_; }
  Status Prepare(const LoadedCase& loaded) override;
  Outcome Run(uint64_t budget) override;
  int cpu() const override { return cpu_; }
  EngineKind kind() const override { return EngineKind::kJit; }
  void Release() override;

  const std::vector<jit::CompiledProgram>& compiled() const { return compiled_; }

 private:
  // One run on `machine`; nullopt when a fast machine could not locate a
  // fault precisely.
  std::optional<Outcome> RunOn(Machine& machine, uint64_t budget);

  Sandbox& sandbox_;
  jit::Jit jit_;
  std::string name_;
  int cpu_;
  const LoadedCase* loaded_ = nullptr;
  std::vector<jit::CompiledProgram> compiled_;
};

}  // namespace bpfdiff
