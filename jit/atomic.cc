// BPF_ATOMIC in two lowerings, as the kernel emits them: FEAT_LSE atomics
// (st<op>, ld<op>al, swpal, casal), or load/store-exclusive loops with the
// barriers of the kernel's LL/SC variant.
#include "jit/context.h"

namespace bpfdiff::jit {
namespace {

using a64::AtomicOp;
using a64::MemOrder;
using a64::Reg;
using a64::Size;
using a64::Width;

// The address register: dst, or kTmp1 = dst + off. `keep_apart` is a
// register the lowering overwrites while the address is still needed (the
// LL/SC fetch forms load into src): when it is dst itself, the address is
// copied to kTmp1 first. The kernel's emit_ll_sc_atomic uses dst directly
// when off == 0, which loses the address when src == dst.
Reg EmitAddress(JitContext& ctx, Reg dst, int16_t offset, Reg keep_apart = Reg::kZr) {
  if (offset == 0 && dst == keep_apart) {
    ctx.Emit(a64::Mov(Width::kX, kTmp1, dst));
    return kTmp1;
  }
  if (offset == 0) return dst;
  const auto value = static_cast<uint64_t>(static_cast<int64_t>(offset));
  if (offset > 0 && offset < 4096) {
    ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kAdd, Width::kX, kTmp1, dst, static_cast<uint32_t>(offset)));
  } else if (offset < 0 && offset > -4096) {
    ctx.Emit(a64::AddSubImmediate(a64::AddSubOp::kSub, Width::kX, kTmp1, dst, static_cast<uint32_t>(-offset)));
  } else {
    EmitMovImm(ctx, Width::kX, kTmp1, value);
    ctx.Emit(a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kX, kTmp1, dst, kTmp1));
  }
  return kTmp1;
}

Status EmitLse(JitContext& ctx, const isa::Insn& insn, Size size, Width w, Reg address) {
  const Reg src = Map(insn.src);
  switch (insn.imm) {
    // lock *(u32/u64 *)(dst + off) <op>= src
    case isa::kAtomicAdd: ctx.Emit(a64::StAtomic(AtomicOp::kLdadd, size, MemOrder::kRelaxed, src, address)); break;
    case isa::kAtomicAnd:
      ctx.Emit(a64::Mvn(w, kTmp2, src));
      ctx.Emit(a64::StAtomic(AtomicOp::kLdclr, size, MemOrder::kRelaxed, kTmp2, address));
      break;
    case isa::kAtomicOr: ctx.Emit(a64::StAtomic(AtomicOp::kLdset, size, MemOrder::kRelaxed, src, address)); break;
    case isa::kAtomicXor: ctx.Emit(a64::StAtomic(AtomicOp::kLdeor, size, MemOrder::kRelaxed, src, address)); break;
    // src = atomic_fetch_<op>(dst + off, src)
    case isa::kAtomicAdd | isa::kAtomicFetch:
      ctx.Emit(a64::AtomicMemoryOperation(AtomicOp::kLdadd, size, MemOrder::kAcquireRelease, src, src, address));
      break;
    case isa::kAtomicAnd | isa::kAtomicFetch:
      ctx.Emit(a64::Mvn(w, kTmp2, src));
      ctx.Emit(a64::AtomicMemoryOperation(AtomicOp::kLdclr, size, MemOrder::kAcquireRelease, kTmp2, src, address));
      break;
    case isa::kAtomicOr | isa::kAtomicFetch:
      ctx.Emit(a64::AtomicMemoryOperation(AtomicOp::kLdset, size, MemOrder::kAcquireRelease, src, src, address));
      break;
    case isa::kAtomicXor | isa::kAtomicFetch:
      ctx.Emit(a64::AtomicMemoryOperation(AtomicOp::kLdeor, size, MemOrder::kAcquireRelease, src, src, address));
      break;
    // src = xchg(dst + off, src)
    case isa::kAtomicXchg:
      ctx.Emit(a64::AtomicMemoryOperation(AtomicOp::kSwp, size, MemOrder::kAcquireRelease, src, src, address));
      break;
    // r0 = cmpxchg(dst + off, r0, src)
    case isa::kAtomicCmpXchg:
      ctx.Emit(a64::CompareAndSwap(size, MemOrder::kAcquireRelease, Map(0), src, address));
      break;
    default: return Fail("unknown atomic operation 0x{:x}", insn.imm);
  }
  return {};
}

Status EmitLlSc(JitContext& ctx, const isa::Insn& insn, Size size, Width w, Reg address) {
  const Reg src = Map(insn.src);
  using a64::LogicalRegOp;
  auto op_word = [&](int32_t op, Reg rd, Reg rn, Reg rm) {
    switch (op & ~isa::kAtomicFetch) {
      case isa::kAtomicAdd: return a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, w, rd, rn, rm);
      case isa::kAtomicAnd: return a64::LogicalShiftedRegister(LogicalRegOp::kAnd, w, rd, rn, rm);
      case isa::kAtomicOr: return a64::LogicalShiftedRegister(LogicalRegOp::kOrr, w, rd, rn, rm);
      default: return a64::LogicalShiftedRegister(LogicalRegOp::kEor, w, rd, rn, rm);
    }
  };
  auto cbnz_back = [&](int words) {
    ctx.Emit(a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbnz, Width::kW, kTmp3, -4 * words));
  };
  switch (insn.imm) {
    case isa::kAtomicAdd:
    case isa::kAtomicAnd:
    case isa::kAtomicOr:
    case isa::kAtomicXor:
      // loop: tmp2 = *p; tmp2 OP= src; if (!store(p, tmp2)) goto loop
      ctx.Emit(a64::Ldxr(size, kTmp2, address));
      ctx.Emit(op_word(insn.imm, kTmp2, kTmp2, src));
      ctx.Emit(a64::Stxr(size, kTmp3, kTmp2, address));
      cbnz_back(3);
      return {};
    case isa::kAtomicAdd | isa::kAtomicFetch:
    case isa::kAtomicAnd | isa::kAtomicFetch:
    case isa::kAtomicOr | isa::kAtomicFetch:
    case isa::kAtomicXor | isa::kAtomicFetch:
      // ax = src; loop: src = *p; tmp2 = src OP ax; store-release; dmb ish
      ctx.Emit(a64::Mov(w, kAux, src));
      ctx.Emit(a64::Ldxr(size, src, address));
      ctx.Emit(op_word(insn.imm, kTmp2, src, kAux));
      ctx.Emit(a64::Stlxr(size, kTmp3, kTmp2, address));
      cbnz_back(3);
      ctx.Emit(a64::Dmb(a64::BarrierOption::kIsh));
      return {};
    case isa::kAtomicXchg:
      // tmp2 = src; loop: src = *p; store-release tmp2; dmb ish
      ctx.Emit(a64::Mov(w, kTmp2, src));
      ctx.Emit(a64::Ldxr(size, src, address));
      ctx.Emit(a64::Stlxr(size, kTmp3, kTmp2, address));
      cbnz_back(2);
      ctx.Emit(a64::Dmb(a64::BarrierOption::kIsh));
      return {};
    case isa::kAtomicCmpXchg: {
      // tmp2 = r0; loop: r0 = *p; if (r0 != tmp2) goto out; store-release src; out: dmb ish
      const Reg r0 = Map(0);
      ctx.Emit(a64::Mov(w, kTmp2, r0));
      ctx.Emit(a64::Ldxr(size, r0, address));
      ctx.Emit(a64::LogicalShiftedRegister(LogicalRegOp::kEor, w, kTmp3, r0, kTmp2));
      ctx.Emit(a64::CompareAndBranchImmediate(a64::CompareBranchOp::kCbnz, w, kTmp3, 4 * 4));
      ctx.Emit(a64::Stlxr(size, kTmp3, src, address));
      cbnz_back(4);
      ctx.Emit(a64::Dmb(a64::BarrierOption::kIsh));
      return {};
    }
    default: return Fail("unknown atomic operation 0x{:x}", insn.imm);
  }
}

// The lowering of one atomic in the configured flavour (LSE or LL/SC).
Status EmitAtomicBody(JitContext& ctx, const isa::Insn& insn, bool is64) {
  const Size size = is64 ? Size::k64 : Size::k32;
  const Width w = is64 ? Width::kX : Width::kW;
  if (isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic) {
    // An arena atomic: kTmp1 = the arena's kernel address + dst + off; the
    // atomic may fault and then does nothing (its entry clears no
    // register). Only with LSE, as the kernel's JIT (bpf_jit_supports_insn):
    // a loop would fault at more than one word.
    if (ctx.options.atomics != AtomicLowering::kLse) return Fail("an arena atomic needs the LSE lowering");
    const Reg offset_address = EmitAddress(ctx, Map(insn.dst), insn.offset);
    EmitMovImm(ctx, Width::kX, kTmp2, ctx.env.arena_kern_vm_start);
    ctx.Emit(a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kX, kTmp1, offset_address, kTmp2));
    return EmitLse(ctx, insn, size, w, kTmp1);
  }
  if (ctx.options.atomics == AtomicLowering::kLse) {
    return EmitLse(ctx, insn, size, w, EmitAddress(ctx, Map(insn.dst), insn.offset));
  }
  // The fetch forms and xchg load the old value into src (cmpxchg into r0)
  // inside the loop, while the address is still needed.
  const bool loads_src = (insn.imm & isa::kAtomicFetch) != 0 && insn.imm != isa::kAtomicCmpXchg;
  const Reg overwritten = insn.imm == isa::kAtomicCmpXchg ? Map(0) : loads_src ? Map(insn.src) : Reg::kZr;
  const Reg address = EmitAddress(ctx, Map(insn.dst), insn.offset,
                                  ctx.options.bugs.llsc_address_overwritten ? Reg::kZr : overwritten);
  return EmitLlSc(ctx, insn, size, w, address);
}

}  // namespace

Status EmitAtomic(JitContext& ctx, uint32_t slot, const isa::Insn& original) {
  const JitBugs& bugs = ctx.options.bugs;
  isa::Insn insn = original;
  // PLANTED BUG: xchg dispatched as a fetch-add.
  if (bugs.xchg_as_fetch_add && insn.imm == isa::kAtomicXchg) insn.imm = isa::kAtomicAdd | isa::kAtomicFetch;
  const bool is64 = isa::SizeOf(insn.opcode) == isa::kSizeDW;
  if (isa::ModeOf(insn.opcode) == isa::kModeProbeAtomic) {
    if (auto status = EmitAtomicBody(ctx, insn, is64); !status) return status;
    return AddExceptionHandler(ctx, slot, Reg::kZr, kTmp1);
  }
  if (is64 || insn.imm != isa::kAtomicCmpXchg || !bugs.cmpxchg32_r0_upper_kept) {
    return EmitAtomicBody(ctx, insn, is64);
  }
  // PLANTED BUG: after a 32-bit cmpxchg, r0 keeps its upper half; the old
  // value goes into its low half only (bfxil into a copy of r0).
  ctx.Emit(a64::Mov(Width::kX, kAux, Map(0)));
  if (auto status = EmitAtomicBody(ctx, insn, is64); !status) return status;
  ctx.Emit(a64::Bitfield(a64::BitfieldOp::kBfm, Width::kX, kAux, Map(0), 0, 31));
  ctx.Emit(a64::Mov(Width::kX, Map(0), kAux));
  return {};
}

}  // namespace bpfdiff::jit
