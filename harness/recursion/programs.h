// The attached programs of a schedule, as BPF code both engines run.
//
// Each ProgramSpec becomes a small loop (docs/recursion.md shows it): it
// mixes its argument, the CPU number (helper 8) and the loop counter through
// the stack, and where the spec says, calls the trigger helper for another
// attached program:
//
//   r1 = target program, r2 = an argument; call 0xfe   (kTriggerHelper)
//
// The trigger helper exists only for this harness; the oracle's helper table
// does not know it. How each engine sees it:
//
//  - the JIT compiles the call as any helper call; the machine traps it
//    (Machine::set_trapped_helpers) and the runner fires the target's
//    trampoline right there, in the caller's context and on its stack, then
//    completes the call with r0 = 0;
//  - the interpreter runs the program with each trigger call replaced by
//    `r0 = 0`: the helper's only effect on the calling program is that
//    return value. The nested invocation is not part of the caller's
//    outcome; it is an invocation of its own, checked against its own
//    interpreter run and against the recursion model.
//
// Both sides therefore agree on r0, the helper trace (the trigger appears in
// neither) and the end of every program run. A call clobbers r1..r5 and
// `r0 = 0` does not; the load step's clobbered-read analysis is run on the
// programs with the trigger as a real helper call, so no program that reads
// r1..r5 after a trigger gets through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/recursion/schedule.h"
#include "oracle/load.h"

namespace bpfdiff::recursion {

inline constexpr int32_t kTriggerHelper = 0xfe;

// The program in bpfdiff assembly (docs/assembly.md), triggers as `call 254`.
std::string ProgramAssembly(const ProgramSpec& spec, int index);

struct AttachedPrograms {
  LoadedCase jit;     // what the JIT compiles: trigger calls kept
  LoadedCase interp;  // what the interpreter runs: trigger calls as r0 = 0
  // Per program, the targets of its trigger calls in the order it makes them.
  std::vector<std::vector<int>> expected_triggers;
};

Result<AttachedPrograms> LoadPrograms(const std::vector<ProgramSpec>& specs);

}  // namespace bpfdiff::recursion
