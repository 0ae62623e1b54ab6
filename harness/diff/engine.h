// An engine answers one question: run this case, tell me what happened.
//
// Engines share one Sandbox (one guest memory), so their outcomes are
// comparable. The caller installs the case in the environment, calls
// Prepare() once per engine, then for each run resets the environment and
// calls Run(). Engines know nothing of each other or of comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/jit.h"
#include "kernelsrc/kernel_loader.h"
#include "oracle/boundary_trace.h"
#include "oracle/environment.h"
#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"

namespace bpfdiff {

// What an engine is decides what it runs and how its budget counts:
//  - the interpreter runs the case as the load step leaves it for the
//    kernel's interpreter, and its budget counts BPF instructions;
//  - a JIT also runs the rewrites the kernel's verifier makes only for JITs
//    that ask for them (bpf_jit_supports_ptr_xchg(): `call kptr_xchg`
//    inlined as an atomic exchange, when a case enables it), and its budget
//    counts arm64 instructions.
enum class EngineKind : uint8_t { kInterpreter, kJit };

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  virtual EngineKind kind() const = 0;
  bool RunsJitOnlyRewrites() const { return kind() == EngineKind::kJit; }
  // Makes the engine ready to run `loaded` (for a JIT: compiles it). The
  // case must outlive the next Release().
  virtual Status Prepare(const LoadedCase& loaded) = 0;
  // One run of the main program from the environment's current state.
  virtual Outcome Run(uint64_t budget) = 0;
  // The same run, recording the state at every instruction boundary the
  // engine stops at (oracle/boundary_trace.h): much slower, for localizing
  // a divergence (harness/diff/localize.h). Programs and slots in the
  // trace and the outcome are those of the case as prepared.
  virtual Outcome RunTraced(uint64_t budget, BoundaryTrace& trace) = 0;
  // What a JIT made of the prepared case; nullptr for the interpreter.
  virtual const std::vector<jit::CompiledProgram>* compiled_programs() const { return nullptr; }
  // The simulated CPU the engine runs on (whose stack a run changes).
  virtual int cpu() const = 0;
  // Where the prepared case's BPF frames are (r10 of every call depth). The
  // reference runs again with a JIT's geometry when it differs from its own.
  virtual StackGeometry geometry() const = 0;
  // Lays the frames out as `geometry` for the runs that follow; false for
  // an engine whose frames are fixed by its code.
  virtual bool UseGeometry(const StackGeometry& geometry) {
    (void)geometry;
    return false;
  }
  // Why the prepared case's runs cannot be compared with the reference's
  // (it is prepared, and not run), or nullopt.
  virtual std::optional<std::string> not_comparable() const { return std::nullopt; }
  // Whether that is because the verifier that drives the engine's JIT
  // refuses the case for a feature the JIT lacks (CodeGenerator::
  // VerifierRefusal): the engine never runs such a case, by design.
  virtual bool verifier_refused() const { return false; }
  // Whether the engine's tail calls restore the caller's r6..r9 and
  // truncate r3 (CodeConventions::tail_call_restores_registers).
  virtual bool tail_call_restores_registers() const { return false; }
  // Who loaded the case's programs, on what CPU, when the engine varies it
  // (kernel-jit-cbpf: kernelsrc/kernel_loader.h); nullptr otherwise.
  virtual const kernelsrc::KernelLoader* loader() const { return nullptr; }
  // Helpers the engine's code performs inline whatever the case asks for:
  // their calls are not in its helper trace (CompareHelperWithInlined).
  virtual std::span<const int32_t> inlined_helpers() const { return {}; }
  // Whether the engine runs the program on this process's memory, as the
  // kernel runs it (kernel-interp): nothing catches a plain access that
  // faults, so it runs only a case whose reference ended without one.
  virtual bool RunsOnHostMemory() const { return false; }
  // Whether its outcomes list the tail calls taken (Outcome::tail_calls);
  // one that cannot observe them is compared on everything else, their
  // effects included.
  virtual bool ReportsTailCalls() const { return true; }
  // Whether the program arrays' slots hold its own pointers for its runs
  // (Outcome::read_program_array_slots): a run that read them is not
  // comparable with it.
  virtual bool HoldsOwnProgramArraySlots() const { return false; }
  // Frees what Prepare() made.
  virtual void Release() = 0;

  // Guest instructions the engine's runs executed, and those its emulator
  // translated first, since the engine was made (the cost model,
  // harness/diff/run_cost.h); none for the interpreter.
  struct GuestWork {
    uint64_t executed = 0;
    uint64_t translated = 0;
  };
  virtual GuestWork guest_work() const { return {}; }
};

}  // namespace bpfdiff
