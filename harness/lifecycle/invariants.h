// The invariants of the prog pack lifecycle, each with a name, and what a
// broken one reports: the CPU, the pc, the slot and the operation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bpfdiff::lifecycle {

enum class Invariant : uint8_t {
  kFreedSlotInvalid,     // after a free, every word of the slot is AARCH64_BREAK_FAULT
  kOwnership,            // a CPU fetches only from the program it runs (or its tail-call targets)
  kNoOverwriteInUse,     // no slot is written while a CPU runs the program in it
  kIcacheDiscipline,     // no CPU executes code written since the last clean+invalidate
  kOneCacheOpPerRange,   // finalize: one copy, then bulk flushes (one or two); free: one fill, one flush
  kExtableStructure,     // one entry per PROBE_MEM load, pointing at it, sorted
  kAccounting,           // bitmaps match live allocations, no chunk in two; no empty pack; no RW buffer left
  kStaleEntryTraps,      // calling a freed program's entry traps on its first instruction
  kOutcome,              // the JIT'd call's outcome equals the interpreter's
  kPackHolesInvalid,     // every chunk of a pack that no program holds is AARCH64_BREAK_FAULT
  kSlotAsWritten,        // after finalize: the header, BRK around the image, the code as the JIT emitted it
  kJitErrorPath,         // a compile whose service failed frees what it holds; a JITed program's images are live
  kArchitectureRules,    // no emitted word is CONSTRAINED UNPREDICTABLE (jit/code_rules.h)
};

std::string_view InvariantName(Invariant invariant);

struct Violation {
  Invariant invariant;
  int cpu = -1;           // -1: not about one CPU
  uint64_t pc = 0;
  std::string slot;       // "program 3 at 0x10000040 (+0x80)"
  std::string operation;  // the operation that broke it
  std::string detail;

  std::string Describe() const;
};

}  // namespace bpfdiff::lifecycle
