// Prologue, epilogue, calls, constants and local labels.
#include <cassert>

#include "jit/context.h"
#include "jit/frame.h"

namespace bpfdiff::jit {

using a64::Indexing;
using a64::PairOp;
using a64::Reg;
using a64::Width;

FrameGeometry Geometry() { return {kSavedRegisterBytes, kSavedRegisterBytes + kBpfStackBytes}; }

uint64_t TailCallEntryOffset() { return kPrologueOffsetWords * 4; }

namespace {

uint32_t Push(Reg a, Reg b) {  // stp a, b, [sp, #-16]!
  return a64::LoadStorePair(PairOp::kStore, Width::kX, a, b, Reg::kSp, -16, Indexing::kPreIndex);
}
uint32_t Pop(Reg a, Reg b) {  // ldp a, b, [sp], #16
  return a64::LoadStorePair(PairOp::kLoad, Width::kX, a, b, Reg::kSp, 16, Indexing::kPostIndex);
}

}  // namespace

void EmitPrologue(JitContext& ctx) {
  [[maybe_unused]] const uint32_t start = ctx.idx;
  ctx.Emit(a64::Mov(Width::kX, Reg::kX9, a64::kLr));  // mov x9, lr: the fentry patch site
  ctx.Emit(a64::Nop());                                // POKE_OFFSET
  ctx.Emit(Push(a64::kFp, a64::kLr));                  // frame record
  ctx.Emit(a64::MovSp(Width::kX, a64::kFp, Reg::kSp));
  ctx.Emit(Push(Map(6), Map(7)));                      // callee-saved r6..r9, r10, tcc
  ctx.Emit(Push(Map(8), Map(9)));
  ctx.Emit(Push(kFramePointer, kTailCallCount));
  ctx.Emit(Push(Reg::kX27, Reg::kX28));
  ctx.Emit(a64::MovSp(Width::kX, kFramePointer, Reg::kSp));  // r10 = sp
  if (ctx.is_main) {
    // tail_call_cnt = 0; a tail call enters right after this.
    ctx.Emit(a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, kTailCallCount, 0, 0));
    assert(ctx.idx - start == kPrologueOffsetWords);
  }
  // The BPF stack.
  ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kSub, Width::kX, Reg::kSp, Reg::kSp, kBpfStackBytes));
}

void EmitEpilogue(JitContext& ctx) {
  ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kAdd, Width::kX, Reg::kSp, Reg::kSp, kBpfStackBytes));
  ctx.Emit(Pop(Reg::kX27, Reg::kX28));
  ctx.Emit(Pop(kFramePointer, kTailCallCount));
  ctx.Emit(Pop(Map(8), Map(9)));
  ctx.Emit(Pop(Map(6), Map(7)));
  ctx.Emit(Pop(a64::kFp, a64::kLr));
  ctx.Emit(a64::Mov(Width::kX, Reg::kX0, Map(0)));  // return r0 in x0
  ctx.Emit(a64::Ret());
}

void EmitMovImm(JitContext& ctx, Width width, Reg rd, uint64_t value) {
  if (!ctx.writing()) {
    ctx.idx += static_cast<uint32_t>(a64::MoveImmediateLength(width, value));
    return;
  }
  ctx.Emit(a64::MoveImmediate(width, rd, value));
}

void EmitAddressMov(JitContext& ctx, Reg rd, uint64_t address) {
  using a64::MoveWideOp;
  // Addresses in the guest layout fit in 48 bits; anything else cannot be
  // encoded in three words.
  if (address >> 48 != 0) {
    ctx.Emit(a64::kBreakFault);
    ctx.Emit(a64::kBreakFault);
    ctx.Emit(a64::kBreakFault);
    return;
  }
  ctx.Emit(a64::MoveWideImmediate(MoveWideOp::kMovz, Width::kX, rd, address & 0xffff, 0));
  ctx.Emit(a64::MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, (address >> 16) & 0xffff, 16));
  ctx.Emit(a64::MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, (address >> 32) & 0xffff, 32));
}

void EmitCall(JitContext& ctx, uint64_t target) {
  EmitAddressMov(ctx, kTmp1, target);
  ctx.Emit(a64::Blr(kTmp1));
}

void Label::BranchFrom(JitContext& ctx, Kind kind, a64::Cond cond, Width width, Reg reg) {
  assert(count_ < pending_.size());
  pending_[count_++] = {ctx.idx, kind, cond, width, reg};
  ctx.Emit(a64::Nop());  // patched by Bind() in the writing pass
}

void Label::Bind(JitContext& ctx) {
  if (!ctx.writing()) return;
  for (size_t i = 0; i < count_; ++i) {
    const Pending& p = pending_[i];
    const int64_t bytes = (static_cast<int64_t>(ctx.idx) - p.idx) * 4;
    uint32_t word = a64::kBreakFault;
    switch (p.kind) {
      case Kind::kCond: word = a64::ConditionalBranchImmediate(p.cond, bytes); break;
      case Kind::kCbz:
        word = a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbz, p.width, p.reg, bytes);
        break;
      case Kind::kCbnz:
        word = a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbnz, p.width, p.reg, bytes);
        break;
      case Kind::kB: word = a64::B(bytes); break;
    }
    ctx.image[p.idx] = word;
  }
}

}  // namespace bpfdiff::jit
