// The arm64 JIT, run in Unicorn, as an Engine.
//
// Prepare() compiles every program of the case into the sandbox's pack and
// records their entries in the guest program objects (for tail calls). Run()
// calls the main program on one CPU and turns what the machine reports into
// an Outcome: a fault is resolved as the kernel resolves it, from the
// exception table in RX memory; a fault with no entry is an unhandled kernel
// fault at the BPF instruction the pc maps to; a BRK is a trap.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/engine.h"
#include "harness/sandbox.h"
#include "jit/jit.h"

namespace bpfdiff {

class JitEngine final : public Engine, private ExecutionObserver {
 public:
  JitEngine(Sandbox& sandbox, const jit::JitOptions& options, std::string name, int cpu = 0);
  ~JitEngine() override;

  std::string_view name() const override { return name_; }
  Status Prepare(const LoadedCase& loaded) override;
  Outcome Run(uint64_t budget) override;
  void Release() override;

  const std::vector<jit::CompiledProgram>& compiled() const { return compiled_; }

  // How many runs had to be repeated on a precise machine.
  uint64_t precise_reruns() const { return precise_reruns_; }

  // Another observer to forward executed blocks to (the lifecycle checks).
  void set_observer(ExecutionObserver* observer) { forward_ = observer; }

  // Finds the program and subprogram whose code holds `pc`.
  struct Location {
    size_t program;
    const jit::CompiledSubprogram* subprogram;
  };
  std::optional<Location> Locate(uint64_t pc) const;

 private:
  void OnBlock(int cpu, uint64_t address, uint32_t size) override;
  // One run on `machine`; nullopt when a fast machine could not locate a
  // fault precisely.
  std::optional<Outcome> RunOn(Machine& machine, uint64_t budget);
  Outcome Finish(Outcome outcome);
  // The outcome of a fault with no exception-table entry, or a CPU exception.
  Outcome Unhandled(Outcome outcome, const MachineStop& stop);

  Sandbox& sandbox_;
  jit::Jit jit_;
  std::string name_;
  int cpu_;
  const LoadedCase* loaded_ = nullptr;
  std::vector<jit::CompiledProgram> compiled_;
  std::vector<uint32_t> tail_calls_;
  ExecutionObserver* forward_ = nullptr;
  Machine* machine_ = nullptr;  // the machine of the current run
  uint64_t previous_block_end_ = 0;
  uint64_t precise_reruns_ = 0;
};

}  // namespace bpfdiff
