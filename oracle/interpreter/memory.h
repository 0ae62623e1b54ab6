// The interpreter's memory classes: LDX (with PROBE_MEM and sign-extending
// forms), ST and STX, atomics, and the legacy packet loads (internal to
// oracle/interpreter.cc).
#pragma once

#include "oracle/guest_layout.h"
#include "oracle/interpreter/program_run.h"
#include "oracle/interpreter/width.h"

namespace bpfdiff::interp {

// An atomic read-modify-write on `p` (4 or 8 bytes); returns the old value.
// For cmpxchg, `expected` is r0.
inline uint64_t AtomicRmw(uint8_t* p, unsigned size, int32_t op, uint64_t operand, uint64_t expected) {
  const uint64_t old = ReadSized(p, size);
  const uint64_t mask = size == 4 ? 0xffffffffULL : ~0ULL;
  uint64_t result = old;
  switch (op & ~isa::kAtomicFetch) {
    case isa::kAtomicAdd: result = old + operand; break;
    case isa::kAtomicOr: result = old | operand; break;
    case isa::kAtomicAnd: result = old & operand; break;
    case isa::kAtomicXor: result = old ^ operand; break;
    case isa::kAtomicXchg & ~isa::kAtomicFetch: result = operand; break;
    case isa::kAtomicCmpXchg & ~isa::kAtomicFetch:
      result = (old & mask) == (expected & mask) ? operand : old;
      break;
  }
  WriteSized(p, size, result & mask);
  return old & mask;
}

inline bool ProgramRun::OutsideFrames(uint64_t address, uint64_t size, bool write) const {
  const Region* region = memory_.last_region();
  if (region == nullptr || region->base != guest::kStackBase) return false;
  if (address >= options_.shared_stack_low && address + size <= options_.shared_stack_high) return false;
  if (window_) return write ? window_->WriteIsPrivate(address, size) : window_->ReadIsPrivate(address, size);
  if (address < deepest_frame_ || address + size > stack_top_) return true;
  for (int depth = 0; depth < isa::kMaxCallDepth; ++depth) {
    const uint64_t fp = options_.geometry.FramePointer(options_.cpu, depth);
    if (address >= fp - isa::kStackSize && address + size <= fp) return false;
  }
  return true;
}

// The base an access adds its register to: the arena's kernel address for
// the arena forms (PROBE_MEM32, PROBE_ATOMIC), else 0.
constexpr uint64_t ArenaBase(uint8_t mode) {
  return mode == isa::kModeProbeMem32 || mode == isa::kModeProbeAtomic ? guest::kArenaKernStart : 0;
}

// dst = *(size *)(src + offset), zero- or sign-extended. A PROBE_MEM or
// PROBE_MEM32 load of an address it may not read gives 0: the
// exception-table fixup.
[[gnu::always_inline]] inline StepResult ProgramRun::Load(const isa::Insn& insn, uint64_t& dst, uint64_t src, uint32_t pc) {
  const uint8_t mode = isa::ModeOf(insn.opcode);
  const unsigned size = isa::SizeBytes(insn.opcode);
  const uint64_t address = ArenaBase(mode) + src + SExt32(insn.offset);
  const uint8_t* p = memory_.Translate(address, size, AccessKind::kRead);
  const bool probe = mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx || mode == isa::kModeProbeMem32;
  const bool sign = mode == isa::kModeMemSx || mode == isa::kModeProbeMemSx;
  if (p == nullptr) {
    if (!probe) return Fault(pc, address, size, AccessKind::kRead);
    dst = 0;
    return Next(pc + 1);
  }
  outside_ |= OutsideFrames(address, size, false);
  const uint64_t value = ReadSized(p, size);
  dst = sign ? SignExtend(value, size) : value;
  return Next(pc + 1);
}

// *(size *)(dst + offset) = imm (ST) | src (STX). An arena store
// (PROBE_MEM32) where it may not write does nothing: the fixup.
[[gnu::always_inline]] inline StepResult ProgramRun::Store(const isa::Insn& insn, uint64_t dst, uint64_t src, uint32_t pc) {
  const unsigned size = isa::SizeBytes(insn.opcode);
  const uint8_t mode = isa::ModeOf(insn.opcode);
  const uint64_t address = ArenaBase(mode) + dst + SExt32(insn.offset);
  uint8_t* p = memory_.Translate(address, size, AccessKind::kWrite);
  if (p == nullptr) return mode == isa::kModeProbeMem32 ? Next(pc + 1) : Fault(pc, address, size, AccessKind::kWrite);
  outside_ |= OutsideFrames(address, size, true);
  WriteSized(p, size, isa::ClassOf(insn.opcode) == isa::kClassSt ? SExt32(insn.imm) : src);
  Wrote(address, size);
  return Next(pc + 1);
}

// An atomic must be naturally aligned; it reads before it writes, so
// memory it may not read faults as a read. The fetch forms put the old
// value in src, cmpxchg in r0. An arena atomic (PROBE_ATOMIC) that would
// fault, misaligned or not, does nothing: the fixup (the kernel's
// alignment fault goes through the exception table too).
[[gnu::noinline]] inline StepResult ProgramRun::AtomicUpdate(const isa::Insn& insn, uint64_t dst, uint64_t src, uint32_t pc) {
  const unsigned size = isa::SizeBytes(insn.opcode);
  const uint8_t mode = isa::ModeOf(insn.opcode);
  const uint64_t address = ArenaBase(mode) + dst + SExt32(insn.offset);
  const bool arena = mode == isa::kModeProbeAtomic;
  if (address % size != 0) {
    if (arena) return Next(pc + 1);
    return EndWithFault(FaultInfo{pc, static_cast<uint32_t>(program_index_), address, AccessKind::kMisaligned, false});
  }
  uint8_t* p = memory_.Translate(address, size, AccessKind::kWrite);
  if (p == nullptr) {
    if (arena) return Next(pc + 1);
    const bool readable = memory_.Accessible(address, size, AccessKind::kRead);
    return Fault(pc, address, size, readable ? AccessKind::kWrite : AccessKind::kRead);
  }
  outside_ |= OutsideFrames(address, size, false) || OutsideFrames(address, size, true);
  const uint64_t old = AtomicRmw(p, size, insn.imm, src, r_[0]);
  Wrote(address, size);
  if (insn.imm == isa::kAtomicCmpXchg) {
    r_[0] = old;
  } else if (insn.imm & isa::kAtomicFetch) {
    r_[insn.src] = old;
  }
  return Next(pc + 1);
}

// Legacy packet access: r0 = ntoh(*(packet + [src +] imm)); the program
// returns 0 when the access is outside the packet.
[[gnu::noinline]] inline StepResult ProgramRun::LegacyPacketLoad(const isa::Insn& insn, uint64_t src, uint32_t pc) {
  const unsigned size = isa::SizeBytes(insn.opcode);
  const int64_t offset = isa::ModeOf(insn.opcode) == isa::kModeInd ? S32(U32(src) + U32(SExt32(insn.imm))) : insn.imm;
  if (offset < 0 || static_cast<uint64_t>(offset) + size > env_.context_length()) return Finish(EndKind::kExit, 0);
  const uint8_t* p = memory_.HostPointer(env_.context_address() + static_cast<uint64_t>(offset), size);
  r_[0] = size == 1 ? p[0] : ByteSwap(ReadSized(p, size), static_cast<int32_t>(size * 8));
  return Next(pc + 1);
}

}  // namespace bpfdiff::interp
