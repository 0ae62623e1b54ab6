// One run of one program by the interpreter: the registers, the local-call
// frames, the tail-call count and the outcome being built (internal to
// oracle/interpreter.cc).
//
// The instruction classes are split as jit/ splits them: alu.h and jump.h
// hold the pure semantics; memory.h (loads, stores, atomics, legacy packet
// loads) and calls.h (local and helper calls, exit, tail calls) the member
// functions that touch guest memory or control flow. The hot paths (ALU,
// jumps, loads and stores) are inlined into the dispatch loop (Execute);
// calls, atomics and faults stay out of line, so that the loop stays small.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "isa/insn.h"
#include "oracle/environment.h"
#include "oracle/frame_window.h"
#include "oracle/interpreter.h"
#include "oracle/load.h"
#include "oracle/outcome.h"

namespace bpfdiff::interp {

// What an instruction did to the run: go on at `next`, or the run ended
// (its outcome is complete). Eight bytes, returned in a register: the loop
// keeps pc in a register instead of passing it around by reference.
enum class Flow : uint8_t {
  kNext,
  kNewProgram,  // a tail call: the code is another program's
  kEnded,
};
struct StepResult {
  uint32_t next;
  Flow flow;
};
constexpr StepResult Next(uint32_t pc) { return {pc, Flow::kNext}; }
inline constexpr StepResult kEnded{0, Flow::kEnded};

class ProgramRun {
 public:
  ProgramRun(GuestEnvironment& env, const LoadedCase& loaded, const InterpreterOptions& options, size_t index,
             const std::array<uint64_t, 5>& args);

  // Fetch, decode, execute until the program ends.
  Outcome Execute();

 private:
  // The loop, with or without recording every boundary in options_.trace
  // (two instantiations, so that the untraced loop pays nothing for it).
  template <bool kTraced>
  Outcome ExecuteLoop();
  void RecordBoundary(uint32_t pc);

  // One local-call frame: where to return and the caller's registers.
  // bpf_loop's frame is one too: its callback returns to it, once per
  // iteration, and it returns to the caller when the loop ends.
  struct Frame {
    uint32_t return_pc;
    uint32_t function;   // the caller's first slot
    uint64_t saved[10];  // r0..r9 of the caller (r0 is replaced by the callee's)
    uint64_t fp;         // the caller's r10
    bool loop = false;   // bpf_loop's
    uint32_t callback = 0;                // loop: the callback's first slot
    uint32_t iterations = 0, index = 0;   // loop: nr_loops, and the iteration running
    uint64_t callback_ctx = 0;            // loop: its r2
  };

  // The instruction at `pc`. pc is the loop's local, not a member, so that
  // it stays in a register.
  StepResult Step(const isa::Insn& insn, uint32_t pc);
  StepResult Jump(const isa::Insn& insn, uint64_t dst, uint64_t src, uint32_t pc);
  StepResult OtherJump(const isa::Insn& insn, uint64_t dst, uint32_t pc);

  // memory.h
  StepResult Load(const isa::Insn& insn, uint64_t& dst, uint64_t src, uint32_t pc);
  StepResult Store(const isa::Insn& insn, uint64_t dst, uint64_t src, uint32_t pc);
  StepResult AtomicUpdate(const isa::Insn& insn, uint64_t dst, uint64_t src, uint32_t pc);
  StepResult LegacyPacketLoad(const isa::Insn& insn, uint64_t src, uint32_t pc);
  // Whether [address, address + size) on the stack lies outside every BPF
  // frame (bytes the engines lay out differently by design), for a read or
  // a write (the two differ only with per-function frames: FrameWindow).
  bool OutsideFrames(uint64_t address, uint64_t size, bool write) const;
  // The program wrote [address, address + size) (per-function frames).
  void Wrote(uint64_t address, uint64_t size) {
    if (window_) window_->Written(address, size);
  }
  // r10 of a function entered now, and what FrameWindow records of it.
  void EnterFunction(uint64_t fp);

  // calls.h
  Frame& PushFrame(uint32_t return_pc);
  StepResult LocalCall(const isa::Insn& insn, uint32_t pc);
  StepResult LoopCall(uint32_t pc);
  StepResult EnterCallback(const Frame& loop);
  StepResult HelperCall(const isa::Insn& insn, uint64_t dst, uint32_t pc);
  StepResult Throw();
  StepResult Exit();
  StepResult TailCall(uint32_t pc);

  // Ending the run.
  StepResult Finish(EndKind end, uint64_t r0, std::string message = {});
  StepResult EndWithFault(const FaultInfo& info);
  // An access that faults: reported at its first inaccessible byte, as a CPU does.
  StepResult Fault(uint32_t pc, uint64_t address, uint64_t size, AccessKind kind);

  GuestEnvironment& env_;
  GuestMemory& memory_;
  const LoadedCase& loaded_;
  const InterpreterOptions& options_;
  HelperContext helpers_;
  Outcome outcome_;
  // The stack bytes a program may see: the BPF frames of every call depth.
  uint64_t deepest_frame_ = 0, stack_top_ = 0;
  bool outside_ = false;  // the program touched stack bytes outside its frames
  // With per-function frames (StackGeometry::per_function): the frames this
  // run's path entered, and the first slot of the function running.
  std::optional<FrameWindow> window_;
  uint32_t function_ = 0;

  uint64_t r_[isa::kNumRegs] = {};
  Frame frames_[isa::kMaxCallDepth];
  int depth_ = 0;
  int tail_call_count_ = 0;
  size_t program_index_;
  const isa::Insn* code_;
  uint8_t* executed_;

};

}  // namespace bpfdiff::interp
