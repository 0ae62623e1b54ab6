// The interpreter's calls: local calls (a new frame), helper calls and
// callx, exit (from a frame or from the program), and tail calls (internal
// to oracle/interpreter.cc).
#pragma once

#include <algorithm>
#include <cstring>
#include <utility>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "oracle/interpreter/program_run.h"
#include "oracle/interpreter/width.h"

namespace bpfdiff::interp {

// The frame of a call that returns to `return_pc`: the caller's registers,
// r10 and function. The caller checks the depth.
inline ProgramRun::Frame& ProgramRun::PushFrame(uint32_t return_pc) {
  Frame& frame = frames_[depth_++];
  frame.return_pc = return_pc;
  frame.function = function_;
  std::memcpy(frame.saved, r_, sizeof frame.saved);
  frame.fp = r_[isa::kFramePointer];
  frame.loop = false;
  return frame;
}

// A local call: a new frame with its own 512 bytes below a new r10.
[[gnu::noinline]] inline StepResult ProgramRun::LocalCall(const isa::Insn& insn, uint32_t pc) {
  if (depth_ + 1 >= isa::kMaxCallDepth) return Finish(EndKind::kHarnessError, 0, "local calls nest deeper than the limit");
  const Frame& frame = PushFrame(pc + 1);
  const uint32_t target = pc + 1 + static_cast<uint32_t>(insn.imm);
  if (window_) {
    function_ = target;
    EnterFunction(options_.geometry.CalleeFramePointer(frame.fp, static_cast<uint32_t>(program_index_), target));
  } else {
    r_[isa::kFramePointer] = frame.fp - options_.geometry.call_frame_bytes;
  }
  return Next(target);
}

// bpf_loop(nr_loops = r1, callback = r2, ctx = r3, flags = r4), as
// kernel/bpf/bpf_iter.c: -EINVAL for any flag, -E2BIG past BPF_MAX_LOOPS;
// else the callback runs (i, ctx, 0, 0, 0) for i = 0, 1, ... until it
// returns other than 0 (the result is i + 1) or i reaches nr_loops (the
// result is nr_loops). r2 is a token of lddw_func (the load step lets no
// other value reach a call of bpf_loop). Each run of the callback is a
// frame below bpf_loop's own (guest::kLoopHelperFrameBytes), as the
// engines' bpf_loop (harness/machine/loop_helper.h) makes it, which leaves
// its mark in r0 too, and whose own frame (its saved state) holds bytes the
// interpreter does not.
[[gnu::noinline]] inline StepResult ProgramRun::LoopCall(uint32_t pc) {
  const uint64_t callback = r_[2] - guest::kCallbackTokenBase;
  const isa::Program& program = loaded_.programs[program_index_].program;
  const auto& starts = program.subprogram_starts;
  if (r_[2] < guest::kCallbackTokenBase || callback >= program.size() ||
      !std::binary_search(starts.begin(), starts.end(), static_cast<uint32_t>(callback))) {
    return Finish(EndKind::kHarnessError, 0, "bpf_loop: r2 is no function of lddw_func");
  }
  const uint32_t iterations = U32(r_[1]);
  if (r_[4] != 0 || iterations > guest::kMaxLoops) {
    r_[0] = static_cast<uint64_t>(r_[4] != 0 ? -kEINVAL : -kE2BIG);
    return Next(pc + 1);
  }
  // bpf_loop's own frame, below the caller's stack: the engines' bpf_loop
  // saves its state there, as a prologue saves registers (FrameWindow).
  const uint64_t helper_frame =
      r_[isa::kFramePointer] - options_.geometry.CallerStackBytes() - guest::kLoopHelperFrameBytes;
  if (window_) window_->Enter(helper_frame, 0, guest::kLoopHelperFrameBytes);
  if (iterations == 0) {
    if (window_) window_->Leave();
    r_[0] = 0;
    return Next(pc + 1);
  }
  if (depth_ + 1 >= isa::kMaxCallDepth) return Finish(EndKind::kHarnessError, 0, "callbacks nest deeper than the limit");
  Frame& frame = PushFrame(pc + 1);
  frame.loop = true;
  frame.callback = static_cast<uint32_t>(callback);
  frame.iterations = iterations;
  frame.index = 0;
  frame.callback_ctx = r_[3];
  return EnterCallback(frame);
}

// The callback of `loop` for iteration loop.index: r1 = index, r2 = ctx,
// r3..r5 = 0, r6..r9 the caller's (bpf_loop keeps them), r0 what the
// engines' bpf_loop leaves in x7.
inline StepResult ProgramRun::EnterCallback(const Frame& loop) {
  r_[0] = guest::kLoopHelperClobber | 7;
  r_[1] = loop.index;
  r_[2] = loop.callback_ctx;
  r_[3] = r_[4] = r_[5] = 0;
  function_ = loop.callback;
  const uint64_t below = loop.fp - options_.geometry.CallerStackBytes() - guest::kLoopHelperFrameBytes;
  if (window_) {
    EnterFunction(below - options_.geometry.PrologueBytes(static_cast<uint32_t>(program_index_), loop.callback));
  } else {
    r_[isa::kFramePointer] = below - options_.geometry.fp_below_entry_sp;
  }
  return Next(loop.callback);
}

// r0 = helper(r1, ..., r5); callx takes the helper id from dst.
[[gnu::noinline]] inline StepResult ProgramRun::HelperCall(const isa::Insn& insn, uint64_t dst, uint32_t pc) {
  const uint64_t id = insn.opcode == isa::kOpCallX ? dst : static_cast<uint64_t>(insn.imm);
  if (insn.opcode == isa::kOpCallX && id > guest::kMaxHelperId) {
    return Finish(EndKind::kHelperError, 0, BadCallxMessage());
  }
  HelperResult result = InvokeHelper(static_cast<int64_t>(id), helpers_, {r_[1], r_[2], r_[3], r_[4], r_[5]},
                                     outcome_.helper_calls);
  if (result.kind == HelperResult::Kind::kUnwind) return Finish(EndKind::kUnwind, 0);
  if (result.kind == HelperResult::Kind::kError) {
    outcome_.refusing_helper = static_cast<int32_t>(id);
    return Finish(EndKind::kHelperError, 0, std::move(result.error));
  }
  r_[0] = result.value;
  return Next(pc + 1);
}

// bpf_throw(cookie = r1): every frame is left, and the program's exception
// callback runs in the program's own frame (the JITs' callback takes the
// thrower's frame record chain to it and sets its r10 where the program's
// was): r1 = the cookie, r2..r5 bpf_throw's (0, the frame record, 0, 0:
// the JITs' x1..x4, which the verifier lets no callback read), r6..r9 as
// they were at the throw (bpf_throw keeps them, as C code does), r0 what
// the engines' bpf_throw leaves in x7. Its exit ends the run. The load step
// lets no callback of bpf_loop throw, so no bpf_loop frame is left here.
[[gnu::noinline]] inline StepResult ProgramRun::Throw() {
  const isa::Program& program = loaded_.programs[program_index_].program;
  if (program.exception_callback == 0) {
    return Finish(EndKind::kHarnessError, 0, "bpf_throw in a program without an exception callback");
  }
  const uint64_t program_fp = depth_ > 0 ? frames_[0].fp : r_[isa::kFramePointer];
  while (depth_ > 0) {
    if (frames_[depth_ - 1].loop) return Finish(EndKind::kHarnessError, 0, "bpf_throw from a callback of bpf_loop");
    --depth_;
    if (window_) window_->Leave();
  }
  r_[0] = guest::kThrowKfuncClobber | 7;
  r_[2] = r_[3] = r_[4] = r_[5] = 0;
  r_[isa::kFramePointer] = program_fp;
  function_ = program.exception_callback;
  return Next(program.exception_callback);
}

// From a local call: the caller's registers come back, r0 is the result.
// From the program: the run ends with r0.
[[gnu::noinline]] inline StepResult ProgramRun::Exit() {
  if (depth_ == 0) return Finish(EndKind::kExit, r_[0]);
  Frame& top = frames_[depth_ - 1];
  if (top.loop) {
    // A callback returned to bpf_loop: the next iteration, unless it
    // asked to stop (any r0 but 0: bpf_loop tests all 64 bits) or this was
    // the last.
    if (window_) window_->Leave();
    ++top.index;
    if (r_[0] == 0 && top.index < top.iterations) {
      // The callback restored r6..r9 (callee-saved) for bpf_loop.
      std::memcpy(&r_[6], &top.saved[6], 4 * sizeof(uint64_t));
      return EnterCallback(top);
    }
    r_[0] = top.index;
  }
  const Frame& frame = frames_[--depth_];
  const uint64_t result = r_[0];
  std::memcpy(r_, frame.saved, sizeof frame.saved);
  r_[0] = result;
  r_[isa::kFramePointer] = frame.fp;
  function_ = frame.function;
  if (window_) window_->Leave();  // the callee's frame, or bpf_loop's
  return Next(frame.return_pc);
}

// bpf_tail_call(ctx, map = r2, index = r3): falls through when the index is
// out of the map, the count reached MAX_TAIL_CALL_CNT or the slot is empty;
// otherwise runs that program in this frame.
[[gnu::noinline]] inline StepResult ProgramRun::TailCall(uint32_t pc) {
  const uint64_t map = r_[2];
  const uint32_t slot = U32(r_[3]);
  const uint8_t* max_entries = memory_.Translate(map + guest::kMapMaxEntriesOffset, 4, AccessKind::kRead);
  if (max_entries == nullptr) return Fault(pc, map + guest::kMapMaxEntriesOffset, 4, AccessKind::kRead);
  TailCallAttempt& attempt = outcome_.tail_call_attempts.emplace_back();
  attempt.index = slot;
  attempt.max_entries = static_cast<uint32_t>(ReadSized(max_entries, 4));
  attempt.upper_half = (r_[3] >> 32) != 0;
  if (slot >= attempt.max_entries) {
    attempt.result = TailCallAttempt::Result::kIndexOutOfRange;
    return Next(pc + 1);
  }
  if (tail_call_count_ >= guest::kMaxTailCalls) {
    attempt.result = TailCallAttempt::Result::kCountAtLimit;
    return Next(pc + 1);
  }
  ++tail_call_count_;
  const uint64_t entry = map + guest::kMapPtrsOffset + uint64_t{slot} * 8;
  // The slot is the tail call's to read, not the program's: every engine
  // reads its own there (GuestMemory::held_read).
  const uint8_t* prog_ptr = memory_.Inspect(entry, 8, AccessKind::kRead);
  if (prog_ptr == nullptr) return Fault(pc, entry, 8, AccessKind::kRead);
  const uint64_t prog = ReadSized(prog_ptr, 8);
  if (prog == 0) {
    attempt.result = TailCallAttempt::Result::kEmptySlot;
    return Next(pc + 1);
  }
  // The program object's index is the harness's bookkeeping, not the
  // program's read (GuestMemory::Inspect).
  const uint8_t* target_index = memory_.Inspect(prog + guest::kProgIndexOffset, 4, AccessKind::kRead);
  if (target_index == nullptr) return Fault(pc, prog + guest::kProgIndexOffset, 4, AccessKind::kRead);
  const size_t from = program_index_;
  program_index_ = ReadSized(target_index, 4);
  if (program_index_ >= loaded_.programs.size()) {
    return Finish(EndKind::kHarnessError, 0, "prog_array names a program the case does not have");
  }
  if (window_) {
    // The kernel pops this function's registers and enters the target past
    // its tail-call entry, which pushes the target's own.
    window_->Leave();
    EnterFunction(options_.geometry.TailCallFramePointer(r_[isa::kFramePointer], static_cast<uint32_t>(from),
                                                         function_, static_cast<uint32_t>(program_index_)));
  }
  function_ = 0;
  outcome_.tail_calls.push_back(static_cast<uint32_t>(program_index_));
  code_ = loaded_.programs[program_index_].program.insns.data();
  if (executed_ != nullptr) executed_ = (*options_.executed)[program_index_].data();
  return {0, Flow::kNewProgram};
}

}  // namespace bpfdiff::interp
