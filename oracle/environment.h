// The guest environment of a case: every region of guest_layout.h mapped in
// one GuestMemory, a case's maps, program objects and input memory installed
// in it, and the means to put it back into its initial state before each run
// and to capture what a run left in it.
//
// One environment serves every engine of a comparison (the Unicorn machine
// maps the same host buffers), which is what makes pointers comparable.
#pragma once

#include <algorithm>
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

// One function's frame in a JIT whose prologues differ (the kernel's saves
// only the callee-saved registers a function uses): the bytes its prologue
// pushes between the SP it is entered with and its r10.
struct FunctionFrame {
  uint32_t program = 0;  // the case's program (0 = main, k = tail-call target k)
  uint32_t entry = 0;    // the function's first BPF slot in it
  uint64_t prologue_bytes = 0;
  uint64_t stack_bytes = isa::kStackSize;  // the BPF stack it reserves below its r10

  friend bool operator==(const FunctionFrame&, const FunctionFrame&) = default;
};

// Where the BPF frame pointer (r10) of each call lies relative to the stack
// pointer the program is entered with. This is a fact of the JIT's prologue
// (see jit/frame.h); the interpreter takes it as input so that its r10
// equals the JIT's on every frame.
//
// bpfdiff's model lays every function's frame out alike, so r10 is a
// function of the call depth alone (FramePointer). The kernel's JIT does
// not: with `functions` set, r10 depends on the path the run took, and only
// the interpreter, which follows it, knows it (EntryFramePointer and the
// steps from there).
struct StackGeometry {
  StackGeometry() = default;
  StackGeometry(uint64_t fp_below, uint64_t call_frame) : fp_below_entry_sp(fp_below), call_frame_bytes(call_frame) {}

  uint64_t fp_below_entry_sp = 0;  // FP(0) = entry_sp - fp_below_entry_sp
  uint64_t call_frame_bytes = 0;   // FP(d + 1) = FP(d) - call_frame_bytes
  uint64_t entry_below_top = 0;    // entry_sp = StackTop(cpu) - entry_below_top
  // Each function's own prologue, when they differ; empty when every
  // function's is fp_below_entry_sp.
  std::vector<FunctionFrame> functions;

  bool per_function() const { return !functions.empty(); }
  uint64_t EntrySp(int cpu) const { return guest::StackTop(cpu) - entry_below_top; }
  // Bytes the prologue of `program`'s function at `entry` pushes.
  uint64_t PrologueBytes(uint32_t program, uint32_t entry) const {
    for (const FunctionFrame& f : functions) {
      if (f.program == program && f.entry == entry) return f.prologue_bytes;
    }
    return fp_below_entry_sp;
  }
  // The BPF stack the function at `entry` of `program` owns below its r10.
  uint64_t StackBytes(uint32_t program, uint32_t entry) const {
    for (const FunctionFrame& f : functions) {
      if (f.program == program && f.entry == entry) return std::min<uint64_t>(f.stack_bytes, isa::kStackSize);
    }
    return OwnStackBytes();
  }
  // The caller's r10 less the SP its callee is entered with (its BPF stack).
  uint64_t CallerStackBytes() const { return call_frame_bytes - fp_below_entry_sp; }
  // The BPF stack below each r10 that a frame owns, and that its
  // comparison holds: what the code reserves, at most MAX_BPF_STACK (below
  // that, an interrupt or a callee may write).
  uint64_t OwnStackBytes() const { return std::min<uint64_t>(CallerStackBytes(), isa::kStackSize); }

  // r10 of call depth `depth`, when every function's frame is alike.
  uint64_t FramePointer(int cpu, int depth) const {
    return EntrySp(cpu) - fp_below_entry_sp - call_frame_bytes * static_cast<uint64_t>(depth);
  }
  // r10 of program `program` entered at the stack's entry SP.
  uint64_t EntryFramePointer(int cpu, uint32_t program) const {
    return EntrySp(cpu) - PrologueBytes(program, 0);
  }
  // r10 of the function at `entry` called from a frame whose r10 is `caller_fp`.
  uint64_t CalleeFramePointer(uint64_t caller_fp, uint32_t program, uint32_t entry) const {
    return caller_fp - CallerStackBytes() - PrologueBytes(program, entry);
  }
  // r10 after a tail call from the function at `from_entry` of `from` to
  // program `to`: the kernel pops the caller's registers and enters the
  // target past its tail-call entry, where it pushes its own.
  uint64_t TailCallFramePointer(uint64_t fp, uint32_t from, uint32_t from_entry, uint32_t to) const {
    return fp + PrologueBytes(from, from_entry) - PrologueBytes(to, 0);
  }
  // The same frames for a call on `cpu` entered with SP = `entry_sp`
  // rather than the stack top (a call nested in an interrupt or a
  // trampoline, on a stack of its own).
  StackGeometry EnteredAt(int cpu, uint64_t entry_sp) const {
    StackGeometry geometry = *this;
    geometry.entry_below_top = guest::StackTop(cpu) - entry_sp;
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
  // With a per-function geometry the frames depend on the run's path: the
  // stack is left empty, for the caller to capture with the window that the
  // interpreter's run of the same path gives (below).
  MemorySnapshot Capture(int cpu, const StackGeometry& geometry) const;
  // The same regions with the stack taken through `window` (outcome.h).
  MemorySnapshot Capture(const StackWindow& window) const;
  // Digests of the same regions, region by region (boundary_trace.h).
  MemoryDigest Digest(int cpu, const StackGeometry& geometry) const;
  MemoryDigest Digest(const StackWindow& window) const;

  // The conformance calling convention: r1 = input memory, r2 = its length.
  uint64_t context_address() const { return context_address_; }
  uint64_t context_length() const { return context_length_; }

  HelperState& helper_state(int cpu) { return helper_state_[static_cast<size_t>(cpu)]; }

  // Bytes at the top of each CPU's stack that Reset() zeroes: room for every
  // frame of the deepest call chain plus the JIT's saved registers.
  static constexpr uint64_t kResetStackBytes = 16 * 1024;

 private:
  void ResetShared();  // input memory and map values
  void CaptureShared(MemorySnapshot& snapshot) const;  // input memory, map values and the arena
  void DigestShared(MemoryDigest& digest) const;
  GuestEnvironment() = default;

  GuestMemory memory_;
  uint64_t context_address_ = 0;
  uint64_t context_length_ = 0;
  std::vector<uint8_t> initial_context_;
  uint64_t values_bytes_ = 0;
  // The most bytes of the values region any case installed so far used:
  // zeroed on every Install, so that a case whose maps are smaller never
  // reads (through a probe load past its values, say) what an earlier,
  // larger case left there. Its outcome must not depend on what ran
  // before it.
  uint64_t values_high_water_ = 0;
  std::vector<uint8_t> initial_values_;
  HelperState helper_state_[guest::kMaxCpus];
};

}  // namespace bpfdiff
