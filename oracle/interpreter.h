// The reference interpreter: the oracle every JIT output is compared with.
//
// Exact RFC 9669 semantics over the shared guest address space: every load
// and store goes through GuestMemory, so an access outside the regions, or
// against their permissions, ends the run with a fault that names the
// instruction, address and access kind, as the JIT's kernel would report it.
// PROBE_MEM loads read 0 on such an address and go on, as the kernel's
// exception-table fixup makes them.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "oracle/boundary_trace.h"
#include "oracle/environment.h"
#include "oracle/load.h"
#include "oracle/outcome.h"

namespace bpfdiff {

struct InterpreterOptions {
  uint64_t budget = 1'000'000;  // BPF instructions per run
  int cpu = 0;
  StackGeometry geometry;
  // When set, executed[program][slot] is set to 1 for every instruction
  // that runs (opcode-table coverage for the fuzzers); sized by the caller.
  std::vector<std::vector<uint8_t>>* executed = nullptr;
  // When set, the state before every instruction is recorded in it (the
  // lockstep localization of a divergence; never on the fuzzing path).
  BoundaryTrace* trace = nullptr;
  // Stack bytes outside the program's frames that every engine holds
  // alike, [low, high): a BPF trampoline's context, which the trampoline
  // writes before it calls the program (oracle/trampoline.h). Reading or
  // writing them is not engine-private.
  uint64_t shared_stack_low = 0;
  uint64_t shared_stack_high = 0;
};

class Interpreter {
 public:
  Interpreter(GuestEnvironment& env, const LoadedCase& loaded, const InterpreterOptions& options)
      : env_(env), loaded_(loaded), options_(options) {}

  // Runs the main program with the conformance convention (r1 = input
  // memory, r2 = its length) on the environment as it is now; the caller
  // resets the environment first. Captures memory into the outcome.
  Outcome Run();

  // Runs program `index` with r1..r5 = args; does not capture memory.
  Outcome RunProgram(size_t index, const std::array<uint64_t, 5>& args);

 private:
  GuestEnvironment& env_;
  const LoadedCase& loaded_;
  InterpreterOptions options_;
};

}  // namespace bpfdiff
