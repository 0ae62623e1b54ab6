// The outcome of one run, in the same shape for every engine.
//
// Two outcomes are compared field by field (harness/diff/compare.h); everything an
// engine can get wrong that a program or the kernel could observe is here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oracle/guest_memory.h"

namespace bpfdiff {

enum class EndKind : uint8_t {
  kExit,         // the main program returned; r0 is valid
  kUnwind,       // helper 5 returned 0 and stopped the program (r0 = 0)
  kFault,        // an unhandled memory fault (fault is set)
  kTrap,         // executed an invalidated pack slot or a BRK (message says where)
  kHelperError,  // a helper refused its arguments, or callx named no helper
  kBudget,       // the instruction budget ran out
  kHarnessError, // the engine itself failed; never comparable
};
std::string_view EndKindName(EndKind kind);

struct FaultInfo {
  uint32_t insn = 0;     // BPF instruction index (of the program that faulted)
  uint32_t program = 0;  // which program (0 = main, k = tail-call target k)
  uint64_t address = 0;
  AccessKind kind = AccessKind::kRead;
  // The access was partly accessible (it crosses into a region it may not
  // touch). For a store the architecture leaves the bytes it may already
  // have written unknown, so memory is not comparable after it.
  bool partial = false;

  friend bool operator==(const FaultInfo&, const FaultInfo&) = default;
};

struct HelperCall {
  int32_t id = 0;
  std::array<uint64_t, 5> args{};
  uint64_t ret = 0;

  friend bool operator==(const HelperCall&, const HelperCall&) = default;
};

// The stack bytes of one run that both engines hold alike, when the frames
// depend on the path (StackGeometry::per_function): the BPF frames the run
// entered, less the bytes where a JIT's prologue saved its registers
// (oracle/frame_window.h). The interpreter's run makes it; a JIT's run of
// the same case is captured through it.
struct StackWindow {
  uint64_t low = 0;             // the window is [low, low + keep.size())
  std::vector<uint8_t> keep;    // 1: compared at the end of the run
  std::vector<uint8_t> stable;  // 1: never held a saved register, so compared at every boundary

  friend bool operator==(const StackWindow&, const StackWindow&) = default;
};

// Final contents of the writable guest memory a program can see.
struct MemorySnapshot {
  // kMaxCallDepth BPF frames, frame 0 first, low to high; or, when
  // window.keep is not empty, the window's bytes with those it does not
  // keep as 0.
  std::vector<uint8_t> stack;
  StackWindow window;
  std::vector<uint8_t> context;     // the input memory
  std::vector<uint8_t> map_values;  // every map's values area, in declaration order
  std::vector<uint8_t> arena;       // the arena's allocated pages

  friend bool operator==(const MemorySnapshot&, const MemorySnapshot&) = default;
};

// What one bpf_tail_call found, in the order the checks are made: the
// index against max_entries, the count against MAX_TAIL_CALL_CNT, the slot.
struct TailCallAttempt {
  enum class Result : uint8_t { kTaken, kIndexOutOfRange, kCountAtLimit, kEmptySlot };
  uint32_t index = 0;        // the low 32 bits of r3, which are all that count
  uint32_t max_entries = 0;
  bool upper_half = false;   // r3's upper 32 bits were not zero
  Result result = Result::kTaken;

  friend bool operator==(const TailCallAttempt&, const TailCallAttempt&) = default;
};

struct Outcome {
  EndKind end = EndKind::kHarnessError;
  uint64_t r0 = 0;
  std::optional<FaultInfo> fault;
  std::string message;  // for kTrap, kHelperError, kHarnessError: what happened
  // For kHelperError: the id of the helper that refused its arguments;
  // nullopt when the call named no helper (a callx whose register holds no
  // helper id). Not compared: the message says the same.
  std::optional<int32_t> refusing_helper;
  std::vector<HelperCall> helper_calls;
  std::vector<uint32_t> tail_calls;  // program index of each tail call taken
  // Every bpf_tail_call the run made, taken or not: the interpreter's
  // account, for the fuzzers' state coverage (the JITs leave it empty). Not
  // compared: tail_calls is.
  std::vector<TailCallAttempt> tail_call_attempts;
  MemorySnapshot memory;
  uint64_t steps = 0;  // instructions executed (engine-specific; not compared)
  // The run read memory whose bytes differ between engines by design: JIT
  // code, program objects, or the stack outside the BPF frames (where the
  // JIT keeps saved registers). Set by the interpreter; not compared, but a
  // divergence after it is not a JIT bug.
  bool read_engine_private = false;
  // The run read a program array's slots (GuestMemory::held_read), which
  // kernel-interp holds as the kernel does, pointing at its own programs.
  // Set by the interpreter; not compared.
  bool read_program_array_slots = false;

  // One line: "exit r0=0x1" / "fault at insn 3: read of 0x0" / ...
  std::string Summary() const;
  // Multi-line, for `bpfdiff run`: summary, helper trace, tail calls.
  std::string Describe() const;
};

std::string FormatHelperCall(const HelperCall& call);

}  // namespace bpfdiff
