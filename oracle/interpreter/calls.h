// The interpreter's calls: local calls (a new frame), helper calls and
// callx, exit (from a frame or from the program), and tail calls (internal
// to oracle/interpreter.cc).
#pragma once

#include <cstring>
#include <utility>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "oracle/interpreter/program_run.h"
#include "oracle/interpreter/width.h"

namespace bpfdiff::interp {

// A local call: a new frame with its own 512 bytes below a new r10.
[[gnu::noinline]] inline StepResult ProgramRun::LocalCall(const isa::Insn& insn, uint32_t pc) {
  if (depth_ + 1 >= isa::kMaxCallDepth) return Finish(EndKind::kHarnessError, 0, "local calls nest deeper than the limit");
  Frame& frame = frames_[depth_++];
  frame.return_pc = pc + 1;
  frame.function = function_;
  std::memcpy(frame.saved, r_, sizeof frame.saved);
  frame.fp = r_[isa::kFramePointer];
  const uint32_t target = pc + 1 + static_cast<uint32_t>(insn.imm);
  if (window_) {
    function_ = target;
    EnterFunction(options_.geometry.CalleeFramePointer(frame.fp, static_cast<uint32_t>(program_index_), target));
  } else {
    r_[isa::kFramePointer] = options_.geometry.FramePointer(options_.cpu, depth_);
  }
  return Next(target);
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

// From a local call: the caller's registers come back, r0 is the result.
// From the program: the run ends with r0.
[[gnu::noinline]] inline StepResult ProgramRun::Exit() {
  if (depth_ == 0) return Finish(EndKind::kExit, r_[0]);
  const Frame& frame = frames_[--depth_];
  const uint64_t result = r_[0];
  std::memcpy(r_, frame.saved, sizeof frame.saved);
  r_[0] = result;
  r_[isa::kFramePointer] = frame.fp;
  function_ = frame.function;
  if (window_) window_->Leave();
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
  const uint8_t* prog_ptr = memory_.Translate(entry, 8, AccessKind::kRead);
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
