// Loads and stores (LDX, ST, STX MEM) and lddw, with exception-table entries
// for the PROBE_MEM loads and for the arena's loads and stores (PROBE_MEM32).
//
// An access through r10 goes through SP instead, with the offset moved into
// the positive range that the unsigned-offset form encodes (the kernel does
// this since the prog pack era: r10 = SP + 512 in every frame).
#include "jit/context.h"
#include "jit/frame.h"

namespace bpfdiff::jit {
namespace {

using a64::LoadStoreOp;
using a64::Reg;
using a64::Size;
using a64::Width;

Size SizeOf(uint8_t opcode) {
  switch (isa::SizeOf(opcode)) {
    case isa::kSizeB: return Size::k8;
    case isa::kSizeH: return Size::k16;
    case isa::kSizeW: return Size::k32;
    default: return Size::k64;
  }
}

// rt <-> [base + offset]: the unsigned-offset form when it encodes,
// otherwise the offset in kTmp (a register-offset access on the original
// base, as the kernel does).
void EmitAccess(JitContext& ctx, LoadStoreOp op, Size size, Reg rt, Reg base, int32_t offset,
                Reg tmp) {
  Reg adjusted_base = base;
  int64_t adjusted_offset = offset;
  if (base == kFramePointer) {
    adjusted_base = Reg::kSp;
    adjusted_offset = static_cast<int64_t>(offset) + kBpfStackBytes;
  }
  if (a64::IsScaledOffset(adjusted_offset, size)) {
    ctx.Emit(a64::LoadStoreUnsignedImmediate(op, size, rt, adjusted_base, adjusted_offset));
    return;
  }
  EmitMovImm(ctx, Width::kX, tmp, static_cast<uint64_t>(static_cast<int64_t>(offset)));
  Reg index = tmp;
  if (ctx.options.bugs.ldrsw_offset_as_register && op == LoadStoreOp::kLoadSigned64 && size == Size::k32) {
    // PLANTED BUG: the offset's value where the register that holds it belongs.
    index = static_cast<Reg>(static_cast<uint32_t>(offset) & 31);
  }
  ctx.Emit(a64::LoadStoreRegisterOffset(op, size, rt, base, index));
}

}  // namespace

Status EmitLoadImm64(JitContext& ctx, uint32_t slot, const isa::Insn& insn, const isa::Insn& next) {
  if (insn.src == isa::kPseudoFunc) {
    // dst = the callback's entry: known in the extra pass, and loaded by a
    // sequence of one length, so that the image keeps its size.
    const uint32_t target = slot + 1 + static_cast<uint32_t>(insn.imm);
    const uint64_t address = (*ctx.subprogram_entries)[ctx.program.SubprogramOf(target)];
    const uint32_t first = ctx.idx;
    EmitAddressMov(ctx, Map(insn.dst), address);
    for (uint32_t w = first; w < ctx.idx; ++w) ctx.address_words.push_back(w);
    return {};
  }
  // dst = imm64
  EmitMovImm(ctx, Width::kX, Map(insn.dst), isa::Imm64(insn, next));
  return {};
}

namespace {

Status EmitArenaAccess(JitContext& ctx, uint32_t slot, const isa::Insn& insn) {
  const uint8_t cls = isa::ClassOf(insn.opcode);
  const Size size = SizeOf(insn.opcode);
  // kTmp2 = the arena's kernel address + the register (the 32-bit offset
  // the verifier leaves there), then the access at the offset, which may
  // fault: a load's fixup zeroes dst, a store's clears nothing (xzr).
  const Reg base = Map(cls == isa::kClassLdx ? insn.src : insn.dst);
  EmitMovImm(ctx, Width::kX, kTmp2, ctx.env.arena_kern_vm_start);
  ctx.Emit(a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kX, kTmp2, kTmp2, base));
  if (cls == isa::kClassLdx) {
    // dst = *(size *)(arena + src + off)
    EmitAccess(ctx, LoadStoreOp::kLoad, size, Map(insn.dst), kTmp2, insn.offset, kTmp1);
    return AddExceptionHandler(ctx, slot, Map(insn.dst), kTmp2);
  }
  if (cls == isa::kClassSt) {
    // *(size *)(arena + dst + off) = imm
    EmitMovImm(ctx, Width::kX, kTmp1, static_cast<uint64_t>(static_cast<int64_t>(insn.imm)));
    EmitAccess(ctx, LoadStoreOp::kStore, size, kTmp1, kTmp2, insn.offset, kTmp3);
  } else {
    // *(size *)(arena + dst + off) = src
    EmitAccess(ctx, LoadStoreOp::kStore, size, Map(insn.src), kTmp2, insn.offset, kTmp1);
  }
  return AddExceptionHandler(ctx, slot, Reg::kZr, kTmp2);
}

}  // namespace

Status EmitLoadStore(JitContext& ctx, uint32_t slot, const isa::Insn& insn) {
  const uint8_t cls = isa::ClassOf(insn.opcode);
  const Size size = SizeOf(insn.opcode);
  const Reg dst = Map(insn.dst);
  const Reg src = Map(insn.src);
  if (isa::ModeOf(insn.opcode) == isa::kModeProbeMem32) return EmitArenaAccess(ctx, slot, insn);
  if (cls == isa::kClassLdx) {
    // dst = *(size *)(src + off), zero- or sign-extended to 64 bits
    const uint8_t mode = isa::ModeOf(insn.opcode);
    const bool sign = mode == isa::kModeMemSx || mode == isa::kModeProbeMemSx ||
                      (ctx.options.bugs.ldx_sign_extended && size != Size::k64);  // planted bug
    const LoadStoreOp op = sign ? LoadStoreOp::kLoadSigned64 : LoadStoreOp::kLoad;
    EmitAccess(ctx, op, size, dst, src, insn.offset, kTmp1);
    if (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx) {
      return AddExceptionHandler(ctx, slot, dst, src);
    }
    return {};
  }
  if (cls == isa::kClassSt) {
    // *(size *)(dst + off) = imm
    EmitMovImm(ctx, Width::kX, kTmp1, static_cast<uint64_t>(static_cast<int64_t>(insn.imm)));
    EmitAccess(ctx, LoadStoreOp::kStore, size, kTmp1, dst, insn.offset, kTmp2);
    return {};
  }
  // *(size *)(dst + off) = src
  EmitAccess(ctx, LoadStoreOp::kStore, size, src, dst, insn.offset, kTmp1);
  return {};
}

}  // namespace bpfdiff::jit
