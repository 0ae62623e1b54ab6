// JMP and JMP32: conditional and unconditional jumps, calls, tail calls and
// exit. Jump targets come from the offset table of the sizing pass.
#include <fmt/format.h>

#include "jit/context.h"
#include "jit/frame.h"

namespace bpfdiff::jit {
namespace {

using a64::AddSubOp;
using a64::Cond;
using a64::Reg;
using a64::Width;

Cond ConditionOf(uint8_t op) {
  switch (op) {
    case isa::kJmpJeq: return Cond::kEq;
    case isa::kJmpJgt: return Cond::kHi;
    case isa::kJmpJlt: return Cond::kLo;
    case isa::kJmpJge: return Cond::kHs;
    case isa::kJmpJle: return Cond::kLs;
    case isa::kJmpJset:
    case isa::kJmpJne: return Cond::kNe;
    case isa::kJmpJsgt: return Cond::kGt;
    case isa::kJmpJslt: return Cond::kLt;
    case isa::kJmpJsge: return Cond::kGe;
    default: return Cond::kLe;  // kJmpJsle
  }
}

bool IsSignedCondition(uint8_t op) {
  return op == isa::kJmpJsgt || op == isa::kJmpJsge || op == isa::kJmpJslt || op == isa::kJmpJsle;
}

Status BranchOutOfRange(uint32_t slot, int64_t bytes, std::string_view reach) {
  return Fail("instruction {}: jump of {} bytes is beyond the {} reach of its encoding", slot,
              bytes, reach);
}

// b target (imm26)
Status EmitBranch(JitContext& ctx, uint32_t slot, int64_t bytes) {
  if (ctx.writing() && !a64::IsBranchOffset26(bytes)) return BranchOutOfRange(slot, bytes, "128 MiB");
  ctx.Emit(a64::B(bytes));
  return {};
}

// if (dst OP src|imm) goto target: set the flags, then b.cond (imm19).
Status EmitConditional(JitContext& ctx, uint32_t slot, const isa::Insn& insn) {
  const bool is64 = isa::ClassOf(insn.opcode) == isa::kClassJmp;
  const Width w = is64 ? Width::kX : Width::kW;
  const Reg dst = Map(insn.dst);
  const uint8_t op = isa::OpOf(insn.opcode);
  const bool reg = isa::SourceOf(insn.opcode) == isa::kSrcX;
  const uint64_t value = is64 ? static_cast<uint64_t>(static_cast<int64_t>(insn.imm))
                              : static_cast<uint32_t>(insn.imm);
  const JitBugs& bugs = ctx.options.bugs;
  if (op == isa::kJmpJset) {
    // tst dst, src|imm
    if (reg && bugs.jset_clobbers_dst) {
      // PLANTED BUG: ands dst, dst, src sets the flags, and dst.
      ctx.Emit(a64::LogicalShiftedRegister(a64::LogicalRegOp::kAnds, w, dst, dst, Map(insn.src)));
    } else if (reg) {
      // (a planted bug tests all 64 bits in jmp32)
      ctx.Emit(a64::Tst(bugs.jmp32_jset_64bit ? Width::kX : w, dst, Map(insn.src)));
    } else if (uint32_t word = LogicalImmediateWord(ctx, a64::LogicalImmOp::kAnds, w, Reg::kZr, dst, value);
               word != a64::kBreakFault) {
      ctx.Emit(word);
    } else {
      EmitMovImm(ctx, w, kTmp1, value);
      ctx.Emit(a64::Tst(w, dst, kTmp1));
    }
  } else if (reg) {
    // cmp dst, src
    ctx.Emit(a64::Cmp(w, dst, Map(insn.src)));
  } else if (is64 && bugs.jsigned_imm_32bit && IsSignedCondition(op)) {
    // PLANTED BUG: the signed comparison made on the low 32 bits.
    EmitAddSubImm(ctx, a64::AddSubOp::kSubs, Width::kW, Reg::kZr, dst, insn.imm);
  } else if (is64 && bugs.jump_imm_zero_extended && !IsSignedCondition(op) && insn.imm < 0) {
    // PLANTED BUG: a negative constant zero-extended, not sign-extended.
    EmitMovImm(ctx, Width::kX, kTmp1, static_cast<uint32_t>(insn.imm));
    ctx.Emit(a64::Cmp(Width::kX, dst, kTmp1));
  } else {
    // cmp dst, imm: cmp or cmn with a 12-bit immediate when it fits.
    EmitAddSubImm(ctx, a64::AddSubOp::kSubs, w, Reg::kZr, dst, insn.imm);
  }
  const uint32_t target = slot + 1 + static_cast<uint32_t>(insn.offset);
  const int64_t bytes = ctx.BytesToSlot(target);
  if (ctx.writing() && !a64::IsBranchOffset19(bytes)) return BranchOutOfRange(slot, bytes, "1 MiB");
  ctx.Emit(a64::ConditionalBranchImmediate(ConditionOf(op), bytes));
  return {};
}

// bpf_tail_call(ctx, array, index), as the kernel emits it:
//   if (index >= array->map.max_entries) goto out;
//   if (tail_call_cnt >= MAX_TAIL_CALL_CNT) goto out;
//   tail_call_cnt++;
//   prog = array->ptrs[index]; if (!prog) goto out;
//   goto *(prog->bpf_func + PROLOGUE_OFFSET), with this frame's stack popped.
void EmitTailCall(JitContext& ctx) {
  const Reg array = Map(2);
  const Reg index = Map(3);
  const Reg prog = kTmp2;
  a64::Label out;
  EmitMovImm(ctx, Width::kX, kTmp1, ctx.env.map_max_entries_offset);
  ctx.Emit(a64::LoadStoreRegisterOffset(a64::LoadStoreOp::kLoad, a64::Size::k32, kTmp1, array, kTmp1));
  if (ctx.options.bugs.tail_call_index_64bit) {
    // PLANTED BUG: the index compared (and used) as 64 bits.
    ctx.Emit(a64::Cmp(Width::kX, index, kTmp1));
  } else {
    ctx.Emit(a64::Mov(Width::kW, index, index));  // the index is a u32
    ctx.Emit(a64::Cmp(Width::kW, index, kTmp1));
  }
  EmitBranch(ctx, out, a64::BranchIf(Cond::kHs));
  EmitMovImm(ctx, Width::kX, kTmp1, ctx.options.bugs.tail_call_limit_34 ? 34 : 33);  // MAX_TAIL_CALL_CNT
  ctx.Emit(a64::Cmp(Width::kX, kTailCallCount, kTmp1));
  EmitBranch(ctx, out, a64::BranchIf(Cond::kHs));
  ctx.Emit(a64::AddSubImmediate(AddSubOp::kAdd, Width::kX, kTailCallCount, kTailCallCount, 1));
  EmitMovImm(ctx, Width::kX, kTmp1, ctx.env.map_ptrs_offset);
  ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, kTmp1, array, kTmp1));
  ctx.Emit(a64::LslImm(Width::kX, prog, index, 3));
  ctx.Emit(a64::LoadStoreRegisterOffset(a64::LoadStoreOp::kLoad, a64::Size::k64, prog, kTmp1, prog));
  EmitBranch(ctx, out, a64::BranchIfZero(Width::kX, prog));
  EmitMovImm(ctx, Width::kX, kTmp1, ctx.env.prog_bpf_func_offset);
  ctx.Emit(a64::LoadStoreRegisterOffset(a64::LoadStoreOp::kLoad, a64::Size::k64, kTmp1, prog, kTmp1));
  ctx.Emit(a64::AddSubImmediate(AddSubOp::kAdd, Width::kX, kTmp1, kTmp1,
                                static_cast<uint32_t>(TailCallEntryOffset())));
  ctx.Emit(a64::AddSubImmediate(AddSubOp::kAdd, Width::kX, Reg::kSp, Reg::kSp, kBpfStackBytes));
  ctx.Emit(a64::Br(kTmp1));
  BindLabel(ctx, out);
}

// callx dst: dst holds a helper id. Out-of-range ids go to the harness's
// bad-callx stub, which ends the run with a helper error.
void EmitCallx(JitContext& ctx, Reg target) {
  a64::Label bad, done;
  ctx.Emit(a64::CmpImm(Width::kX, target, static_cast<uint32_t>(ctx.env.max_helper_id)));
  EmitBranch(ctx, bad, a64::BranchIf(Cond::kHi));
  EmitAddressMov(ctx, kTmp1, ctx.env.helper_base);
  ctx.Emit(a64::AddSubShiftedRegister(AddSubOp::kAdd, Width::kX, kTmp1, kTmp1, target,
                                      a64::Shift::kLsl, 3));
  ctx.Emit(a64::Blr(kTmp1));
  EmitBranch(ctx, done, a64::BranchAlways());
  BindLabel(ctx, bad);
  EmitCall(ctx, ctx.env.bad_callx_stub);
  BindLabel(ctx, done);
}

}  // namespace

Status EmitJump(JitContext& ctx, uint32_t slot, const isa::Insn& insn) {
  switch (insn.opcode) {
    case isa::kClassJmp | isa::kJmpJa:
      // goto pc + offset
      return EmitBranch(ctx, slot, ctx.BytesToSlot(slot + 1 + static_cast<uint32_t>(insn.offset)));
    case isa::kClassJmp32 | isa::kJmpJa:
      // gotol pc + imm
      return EmitBranch(ctx, slot, ctx.BytesToSlot(slot + 1 + static_cast<uint32_t>(insn.imm)));
    case isa::kOpExit:
      // return: fall through into the epilogue when this is the last slot
      if (slot + 1 == ctx.end_slot) return {};
      return EmitBranch(ctx, slot, ctx.BytesToEpilogue());
    case isa::kOpCall:
      if (insn.src == isa::kPseudoCall) {
        // r0 = subprogram(r1..r5): its address is known in the extra pass.
        const uint32_t target = slot + 1 + static_cast<uint32_t>(insn.imm);
        const size_t callee = ctx.program.SubprogramOf(target);
        const uint64_t address = (*ctx.subprogram_entries)[callee];
        const uint32_t first = ctx.idx;
        EmitCall(ctx, address);
        // The movz/movk/movk that build the address (EmitAddressMov always
        // emits three words, so the image keeps its size in the extra pass).
        for (uint32_t w = first; w < first + 3; ++w) ctx.address_words.push_back(w);
      } else if (insn.src == isa::kPseudoKfuncCall) {
        // r0 = kfunc(r1..r5): bpf_throw, which never returns.
        EmitCall(ctx, ctx.env.KfuncTarget(insn.imm));
      } else {
        // r0 = helper(r1..r5)
        EmitCall(ctx, ctx.env.CallTarget(insn.imm));
        if (ctx.options.bugs.helper_return_sign_extended) {
          ctx.Emit(a64::Sxtw(Map(0), Reg::kX0));  // PLANTED BUG: r0 = (s32)x0
          return {};
        }
      }
      ctx.Emit(a64::Mov(Width::kX, Map(0), Reg::kX0));
      return {};
    case isa::kOpCallX:
      EmitCallx(ctx, Map(insn.dst));
      // PLANTED BUG (helper_return_sign_extended): r0 = (s32)x0
      ctx.Emit(ctx.options.bugs.helper_return_sign_extended ? a64::Sxtw(Map(0), Reg::kX0)
                                                             : a64::Mov(Width::kX, Map(0), Reg::kX0));
      return {};
    case isa::kOpTailCall: EmitTailCall(ctx); return {};
    default: return EmitConditional(ctx, slot, insn);
  }
}

}  // namespace bpfdiff::jit
