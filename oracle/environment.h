// The guest environment of a case: every region of guest_layout.h mapped in
// one GuestMemory, a case's maps, program objects and input memory installed
// in it, and the means to put it back into its initial state before each run
// and to capture what a run left in it.
//
// One environment serves every engine of a comparison (the Unicorn machine
// maps the same host buffers), which is what makes pointers comparable.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "oracle/guest_layout.h"
#include "oracle/guest_memory.h"
#include "oracle/helpers.h"
#include "oracle/load.h"
#include "oracle/outcome.h"

namespace bpfdiff {

struct MemoryDigest;

// Where the BPF frame pointer (r10) of each call depth lies relative to the
// stack pointer the program is entered with. This is a fact of the JIT's
// prologue (see jit/frame.h); the interpreter takes it as input so that its
// r10 equals the JIT's on every frame.
struct StackGeometry {
  uint64_t fp_below_entry_sp = 0;  // FP(0) = entry_sp - fp_below_entry_sp
  uint64_t call_frame_bytes = 0;   // FP(d + 1) = FP(d) - call_frame_bytes

  uint64_t FramePointer(int cpu, int depth) const {
    return guest::StackTop(cpu) - fp_below_entry_sp - call_frame_bytes * static_cast<uint64_t>(depth);
  }
  // The same frames for a call on `cpu` entered with SP = `entry_sp`
  // rather than the stack top (a call nested in an interrupt or a
  // trampoline, on a stack of its own).
  StackGeometry EnteredAt(int cpu, uint64_t entry_sp) const {
    StackGeometry geometry = *this;
    geometry.fp_below_entry_sp = guest::StackTop(cpu) - entry_sp + fp_below_entry_sp;
    return geometry;
  }
  friend bool operator==(const StackGeometry&, const StackGeometry&) = default;
};

class GuestEnvironment {
 public:
  // Maps every region of guest_layout.h, for guest::kMaxCpus CPUs.
  static Result<std::unique_ptr<GuestEnvironment>> Create();

  GuestMemory& memory() { return memory_; }

  // Installs a loaded case: map objects and values, program objects, input
  // memory. Records the initial image that Reset() restores.
  void Install(const LoadedCase& loaded);

  // Replaces the input memory's initial bytes (same length as installed):
  // another input for the same programs.
  void ReplaceContext(const std::vector<uint8_t>& memory);

  // Records the JIT'd entry of program `index` in its GuestProg object (what
  // a tail call through a prog_array jumps to).
  void SetProgramEntry(size_t index, uint64_t rx_address);

  // Puts the writable state a run can change back to the installed image:
  // input memory, map values, the top of every CPU's stack, helper state.
  void Reset();

  // Resets what one CPU's run may change and nothing else: the top of its
  // stack and its helper state (for schedules where other CPUs are mid-run).
  void ResetCpu(int cpu) { ResetCpu(cpu, guest::StackTop(cpu)); }
  // The same for a run entered with SP = `stack_top`, leaving the stack
  // above it as it is (the frames of a call that an interrupt nests in).
  void ResetCpu(int cpu, uint64_t stack_top);

  // Reset() for a run on `cpu` alone: input memory, map values, and that
  // CPU's stack top and helper state (a quarter of Reset's memset).
  void ResetForRun(int cpu);

  // What a run left: the BPF frames of `cpu`'s stack, input memory, values.
  MemorySnapshot Capture(int cpu, const StackGeometry& geometry) const;
  // Digests of the same regions, region by region (boundary_trace.h).
  MemoryDigest Digest(int cpu, const StackGeometry& geometry) const;

  // The conformance calling convention: r1 = input memory, r2 = its length.
  uint64_t context_address() const { return context_address_; }
  uint64_t context_length() const { return context_length_; }

  HelperState& helper_state(int cpu) { return helper_state_[static_cast<size_t>(cpu)]; }

  // Bytes at the top of each CPU's stack that Reset() zeroes: room for every
  // frame of the deepest call chain plus the JIT's saved registers.
  static constexpr uint64_t kResetStackBytes = 16 * 1024;

 private:
  void ResetShared();  // input memory and map values
  GuestEnvironment() = default;

  GuestMemory memory_;
  uint64_t context_address_ = 0;
  uint64_t context_length_ = 0;
  std::vector<uint8_t> initial_context_;
  uint64_t values_bytes_ = 0;
  std::vector<uint8_t> initial_values_;
  HelperState helper_state_[guest::kMaxCpus];
};

}  // namespace bpfdiff
