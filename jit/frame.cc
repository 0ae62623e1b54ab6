// Prologue, epilogue, calls, constants and local labels.

#include "jit/frame.h"

#include "jit/a64/immediates.h"
#include "jit/context.h"

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
  const uint32_t start = ctx.idx;
  ctx.Emit(a64::Mov(Width::kX, Reg::kX9, a64::kLr));  // mov x9, lr: the fentry patch site
  ctx.Emit(a64::Nop());                                // POKE_OFFSET
  if (ctx.is_exception_callback) {
    // bpf_throw hands the frame record of the program's function in x2:
    // every register is saved below it (each function pushes all), so the
    // callback takes that frame as it is, and its epilogue returns for the
    // program.
    ctx.Emit(a64::MovSp(Width::kX, a64::kFp, Reg::kX2));
    ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kSub, Width::kX, Reg::kSp, a64::kFp,
                                  kSavedRegisterBytes - 16));
    ctx.Emit(a64::MovSp(Width::kX, kFramePointer, Reg::kSp));
    ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kSub, Width::kX, Reg::kSp, Reg::kSp, kBpfStackBytes));
    return;
  }
  ctx.Emit(Push(a64::kFp, a64::kLr));                  // frame record
  ctx.Emit(a64::MovSp(Width::kX, a64::kFp, Reg::kSp));
  ctx.Emit(Push(Map(6), Map(7)));                      // callee-saved r6..r9, r10, tcc
  ctx.Emit(Push(Map(8), Map(9)));
  ctx.Emit(Push(kFramePointer, kTailCallCount));
  ctx.Emit(Push(Reg::kX27, Reg::kX28));
  // r10 = sp (a planted bug forgets it in subprograms: r10 stays the caller's)
  if (ctx.is_main || !ctx.options.bugs.subprogram_fp_unset) ctx.Emit(a64::MovSp(Width::kX, kFramePointer, Reg::kSp));
  if (ctx.is_main) {
    // tail_call_cnt = 0; a tail call enters right after this.
    ctx.Emit(a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, kTailCallCount, 0, 0));
    // A tail call enters at PROLOGUE_OFFSET: a prologue of another length
    // is refused by validation, in every build.
    if (ctx.idx - start != kPrologueOffsetWords) ctx.Emit(a64::kBreakFault);
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

void EmitAddSubImm(JitContext& ctx, a64::AddSubOp op, Width width, Reg rd, Reg rn, int32_t imm) {
  using a64::AddSubOp;
  const auto opposite = [](AddSubOp o) {
    switch (o) {
      case AddSubOp::kAdd: return AddSubOp::kSub;
      case AddSubOp::kAdds: return AddSubOp::kSubs;
      case AddSubOp::kSub: return AddSubOp::kAdd;
      case AddSubOp::kSubs: return AddSubOp::kAdds;
    }
    return o;
  };
  const auto emit_immediate = [&](AddSubOp o, uint32_t value) {
    const bool shifted = value > 0xfff;
    ctx.Emit(a64::AddSubImmediate(o, width, rd, rn, shifted ? value >> 12 : value, shifted));
  };
  const auto as_u32 = static_cast<uint32_t>(imm);
  const auto negated = static_cast<uint32_t>(-static_cast<int64_t>(imm));
  if (a64::IsAddSubImmediate(as_u32)) {
    emit_immediate(op, as_u32);
  } else if (a64::IsAddSubImmediate(negated)) {
    emit_immediate(opposite(op), negated);
  } else {
    EmitMovImm(ctx, width, kTmp1, width == Width::kX ? static_cast<uint64_t>(int64_t{imm}) : as_u32);
    ctx.Emit(a64::AddSubShiftedRegister(op, width, rd, rn, kTmp1));
  }
}

void EmitAddressMov(JitContext& ctx, Reg rd, uint64_t address) {
  // Addresses in the guest layout fit in 48 bits; anything else cannot be
  // encoded in three words, and the sentinels make validation refuse it.
  ctx.Emit(a64::MoveAddress48(rd, address));
}

void EmitCall(JitContext& ctx, uint64_t target) {
  EmitAddressMov(ctx, kTmp1, target);
  ctx.Emit(a64::Blr(kTmp1));
}

void EmitBranch(JitContext& ctx, a64::Label& label, const a64::BranchShape& shape) {
  ctx.Emit(label.BranchFrom(ctx.idx, shape));
}

void BindLabel(JitContext& ctx, a64::Label& label) {
  label.Bind(ctx.idx, [&ctx](uint32_t idx, uint32_t word) {
    if (ctx.writing()) ctx.image[idx] = word;
  });
}

}  // namespace bpfdiff::jit
