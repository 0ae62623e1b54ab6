// The trampoline emitter: prologue, rctx, the enter update of the chosen
// policy, the run and miss paths, the exit update, epilogue. See
// trampoline.h for the frame and the register use.
#include "jit/trampoline.h"

#include <array>
#include <cstring>

#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "jit/a64/label.h"
#include "jit/a64/move_immediate.h"

namespace bpfdiff::jit {
namespace {

using a64::AtomicOp;
using a64::Cond;
using a64::Extend;
using a64::Indexing;
using a64::LoadStoreOp;
using a64::MemOrder;
using a64::PairOp;
using a64::Reg;
using a64::Size;
using a64::Width;
using Mark = recursion::Point;
using recursion::Policy;
using recursion::kHardirqMask;
using recursion::kNmiMask;
using recursion::kSoftirqMask;
using recursion::kSoftirqOffset;
using Anchor = TrampolineAnchor;

// Register roles (trampoline.h).
constexpr Reg kCtx = Reg::kX19;      // context argument, then the return value
constexpr Reg kPerCpu = Reg::kX20;   // this_cpu base
constexpr Reg kRctx = Reg::kX21;     // interrupt_context_level()
constexpr Reg kState = Reg::kX22;    // &state: u32 active (or u8 active[4]); u64 misses at +8
constexpr Reg kRan = Reg::kX23;      // 1 once the program has run
constexpr Reg kBugReg = Reg::kX24;   // planted bugs: early decision / wrong exit byte
constexpr Reg kT0 = Reg::kX10;
constexpr Reg kT1 = Reg::kX11;
constexpr Reg kT2 = Reg::kX12;
constexpr Reg kT3 = Reg::kX13;
constexpr Reg kT4 = Reg::kX14;
constexpr uint32_t kMissesOffset = 8;

// Words and boundary labels. The label of the boundary before each word is
// the state after the previous one: Emit() records `state_` and then clears
// its one-boundary parts (anchor, store-exclusive condition); After() says
// what the word just emitted has done.
class Emitter {
 public:
  void Emit(uint32_t word) {
    code_.words.push_back(word);
    code_.labels.push_back(state_);
    state_.anchor = Anchor::kNone;
    state_.status_reg = -1;
  }
  void Emit(const a64::MoveSequence& sequence) {
    for (uint32_t word : sequence) Emit(word);
  }
  // The word just emitted completed `mark`.
  void After(Mark mark) { state_.mark = mark; }
  // The word just emitted is a store-exclusive with status register `status`:
  // `mark` if it committed, `if_failed` if the loop goes round again.
  void AfterStoreExclusive(Mark mark, Reg status, Mark if_failed) {
    state_.mark = mark;
    state_.status_reg = static_cast<int8_t>(status);
    state_.mark_if_failed = if_failed;
  }
  // The boundary before the next word is `anchor`.
  void AnchorNext(Anchor anchor) { state_.anchor = anchor; }
  // The next word starts a block reached by a branch, in state `mark`.
  void StartBlock(Mark mark) {
    state_.mark = mark;
    state_.anchor = Anchor::kNone;
    state_.status_reg = -1;
  }

  // A branch to `label` (jit/a64/label.h; a full label leaves kBreakFault,
  // which EmitTrampoline rejects).
  void Branch(a64::Label& label, const a64::BranchShape& shape) {
    Emit(label.BranchFrom(static_cast<uint32_t>(code_.words.size()), shape));
  }
  void Bind(a64::Label& label) {
    label.Bind(static_cast<uint32_t>(code_.words.size()),
               [this](uint32_t idx, uint32_t word) { code_.words[idx] = word; });
  }

  size_t size() const { return code_.words.size(); }
  TrampolineCode Take() { return std::move(code_); }

 private:
  TrampolineCode code_;
  BoundaryLabel state_;
};

// ---- small instruction helpers -------------------------------------------

uint32_t LoadW(Reg rt, Reg base, uint32_t offset) {  // ldr wt, [base, #offset]
  return a64::LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, Size::k32, rt, base, offset);
}
uint32_t StoreW(Reg rt, Reg base, uint32_t offset) {  // str wt, [base, #offset]
  return a64::LoadStoreUnsignedImmediate(LoadStoreOp::kStore, Size::k32, rt, base, offset);
}
uint32_t LoadByte(Reg rt, Reg base, Reg index) {  // ldrb wt, [base, index]
  return a64::LoadStoreRegisterOffset(LoadStoreOp::kLoad, Size::k8, rt, base, index);
}
uint32_t StoreByte(Reg rt, Reg base, Reg index) {  // strb wt, [base, index]
  return a64::LoadStoreRegisterOffset(LoadStoreOp::kStore, Size::k8, rt, base, index);
}
uint32_t AddImm(Width w, Reg rd, Reg rn, uint32_t imm) {
  return a64::AddSubImmediate(a64::AddSubOp::kAdd, w, rd, rn, imm);
}
uint32_t SubImm(Width w, Reg rd, Reg rn, uint32_t imm) {
  return a64::AddSubImmediate(a64::AddSubOp::kSub, w, rd, rn, imm);
}

// ---- the pieces of the trampoline ------------------------------------------

void EmitPrologue(Emitter& e, const TrampolineSpec& spec) {
  e.Emit(a64::LoadStorePair(PairOp::kStore, Width::kX, a64::kFp, a64::kLr, Reg::kSp,
                            -static_cast<int64_t>(kTrampolineFrameBytes), Indexing::kPreIndex));
  e.Emit(a64::MovSp(Width::kX, a64::kFp, Reg::kSp));
  e.Emit(a64::LoadStorePair(PairOp::kStore, Width::kX, kCtx, kPerCpu, Reg::kSp, 16));
  e.Emit(a64::LoadStorePair(PairOp::kStore, Width::kX, kRctx, kState, Reg::kSp, 32));
  e.Emit(a64::LoadStorePair(PairOp::kStore, Width::kX, kRan, kBugReg, Reg::kSp, 48));
  e.Emit(a64::Mov(Width::kX, kCtx, Reg::kX0));
  e.Emit(a64::Mov(Width::kX, kRan, Reg::kZr));
  e.Emit(a64::Mrs(kPerCpu, a64::kTpidrEl1));  // this_cpu_ptr()
  e.Emit(AddImm(Width::kX, kState, kPerCpu, spec.state_offset));
}

// rctx = interrupt_context_level(): the number of the tests
//   pc & NMI_MASK, pc & (NMI_MASK | HARDIRQ_MASK),
//   pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET)
// that are non-zero, over preempt_count.
void EmitContextLevel(Emitter& e, const TrampolineSpec& spec) {
  const uint32_t softirq_bits = spec.bugs.rctx_wrong_bits ? kSoftirqMask : kSoftirqOffset;
  const uint32_t hardirq_bits = spec.bugs.hardirq_as_interrupted ? 0 : kHardirqMask;
  e.Emit(LoadW(kT0, kPerCpu, spec.preempt_count_offset));
  e.Emit(a64::TstImm(Width::kW, kT0, kNmiMask));
  e.Emit(a64::Cset(Width::kW, kRctx, Cond::kNe));
  e.Emit(a64::TstImm(Width::kW, kT0, kNmiMask | hardirq_bits));
  e.Emit(a64::Cset(Width::kW, kT1, Cond::kNe));
  e.Emit(a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kW, kRctx, kRctx, kT1));
  e.Emit(a64::MoveImmediate(Width::kW, kT2, kNmiMask | hardirq_bits | softirq_bits));
  e.Emit(a64::Tst(Width::kW, kT0, kT2));
  e.Emit(a64::Cset(Width::kW, kT1, Cond::kNe));
  e.Emit(a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kW, kRctx, kRctx, kT1));
  if (spec.bugs.exit_wrong_context) {
    e.Emit(a64::LogicalImmediate(a64::LogicalImmOp::kEor, Width::kW, kBugReg, kRctx, 1));
  }
}

// preempt_count += delta, a plain load / add / store as preempt_disable()
// and preempt_enable() are on arm64.
void EmitPreemptCountAdd(Emitter& e, const TrampolineSpec& spec, bool increment, Mark loaded,
                         Mark stored) {
  e.Emit(LoadW(kT0, kPerCpu, spec.preempt_count_offset));
  e.After(loaded);
  e.Emit(increment ? AddImm(Width::kW, kT0, kT0, 1) : SubImm(Width::kW, kT0, kT0, 1));
  e.Emit(StoreW(kT0, kPerCpu, spec.preempt_count_offset));
  e.After(stored);
}

// *address += addend (kX or kW) as one atomic RMW; `result` gets the new
// value (LL/SC) or the old one (LSE, when `result` is not kZr).
//   LSE:   ldadd addend, result, [address]   (stadd when result is kZr)
//   LL/SC: 1: ldxr result, [address]; add result, result, addend;
//             stxr w12, result, [address]; cbnz w12, 1b
// `window` marks the boundary where an interrupt splits the update.
void EmitAtomicAdd(Emitter& e, AtomicLowering lowering, Width width, Reg address, int64_t addend,
                   Reg result, Mark before, Mark committed, Anchor window) {
  const Size size = width == Width::kX ? Size::k64 : Size::k32;
  if (lowering == AtomicLowering::kLse) {
    e.Emit(a64::MoveImmediate(width, kT0, width == Width::kX ? static_cast<uint64_t>(addend)
                                                             : static_cast<uint32_t>(addend)));
    e.AnchorNext(window);
    e.Emit(a64::AtomicMemoryOperation(AtomicOp::kLdadd, size, MemOrder::kRelaxed, kT0, result,
                                      address));
    e.After(committed);
    return;
  }
  const Reg value = result == Reg::kZr ? kT1 : result;
  a64::Label loop;
  e.Bind(loop);
  e.Emit(a64::Ldxr(size, value, address));
  e.AnchorNext(window);
  e.Emit(addend >= 0 ? AddImm(width, value, value, static_cast<uint32_t>(addend))
                     : SubImm(width, value, value, static_cast<uint32_t>(-addend)));
  e.Emit(a64::Stxr(size, kT2, value, address));
  e.AfterStoreExclusive(committed, kT2, before);
  e.Branch(loop, a64::BranchIfNonZero(Width::kW, kT2));
}

// The decision of the check-then-increment bug: w24 = (the state read now
// is not free), before the increment.
void EmitEarlyCheck(Emitter& e, const TrampolineSpec& spec) {
  if (spec.policy == Policy::kPerContext) {
    e.Emit(LoadByte(kT1, kState, kRctx));
  } else {
    e.Emit(LoadW(kT1, kState, 0));  // the int counter, or all four bytes
  }
  e.Emit(a64::CmpImm(Width::kW, kT1, 0));
  e.Emit(a64::Cset(Width::kW, kBugReg, Cond::kNe));
}

void EmitEnter(Emitter& e, const TrampolineSpec& spec, a64::Label& miss) {
  const bool early = spec.bugs.check_then_increment;
  // The branch to the miss path, unless a planted bug drops the check.
  const auto check = [&](const a64::BranchShape& shape) {
    if (!spec.bugs.no_recursion_check) e.Branch(miss, shape);
  };
  if (early) EmitEarlyCheck(e, spec);
  switch (spec.policy) {
    case Policy::kAtomic: {
      // this_cpu_inc_return(*active) != 1
      EmitAtomicAdd(e, spec.atomics, Width::kW, kState, 1, kT1, Mark::kStart, Mark::kEntered,
                    Anchor::kEnterWindow);
      if (spec.atomics == AtomicLowering::kLse) e.Emit(AddImm(Width::kW, kT1, kT1, 1));  // old + 1
      if (!early) {
        e.Emit(a64::CmpImm(Width::kW, kT1, 1));
        check(a64::BranchIf(Cond::kNe));
      }
      break;
    }
    case Policy::kPerContext: {
      // ++active[rctx] != 1, a plain load / add / store
      e.Emit(LoadByte(kT1, kState, kRctx));
      e.After(Mark::kActiveLoaded);
      e.AnchorNext(Anchor::kEnterWindow);
      e.Emit(AddImm(Width::kW, kT1, kT1, 1));
      e.Emit(StoreByte(kT1, kState, kRctx));
      e.After(Mark::kEntered);
      if (!early) {
        e.Emit(a64::Uxtb(kT1, kT1));  // the u8 result
        e.Emit(a64::CmpImm(Width::kW, kT1, 1));
        check(a64::BranchIf(Cond::kNe));
      }
      break;
    }
    case Policy::kLanded: {
      // preempt_disable(); active[rctx]++; v = *(u32 *)active; preempt_enable();
      // v != 1 << (rctx * 8) is a miss
      EmitPreemptCountAdd(e, spec, true, Mark::kPreemptDisableLoaded, Mark::kPreemptDisabled);
      e.Emit(LoadByte(kT1, kState, kRctx));
      e.After(Mark::kActiveLoaded);
      e.AnchorNext(Anchor::kEnterWindow);
      e.Emit(AddImm(Width::kW, kT1, kT1, 1));
      e.Emit(StoreByte(kT1, kState, kRctx));
      if (early) {
        e.After(Mark::kChecked);  // decided before; nothing is read here
      } else {
        e.After(Mark::kActiveStored);
        e.Emit(LoadW(kT2, kState, 0));
        e.After(Mark::kChecked);
      }
      EmitPreemptCountAdd(e, spec, false, Mark::kPreemptEnableLoaded, Mark::kEntered);
      if (!early) {
        e.Emit(a64::LslImm(Width::kW, kT3, kRctx, 3));
        e.Emit(a64::MoveImmediate(Width::kW, kT4, 1));
        e.Emit(a64::LslReg(Width::kW, kT4, kT4, kT3));
        e.Emit(a64::Cmp(Width::kW, kT2, kT4));
        check(a64::BranchIf(Cond::kNe));
      }
      break;
    }
  }
  if (early) check(a64::BranchIfNonZero(Width::kW, kBugReg));
}

void EmitExit(Emitter& e, const TrampolineSpec& spec) {
  const Reg byte = spec.bugs.exit_wrong_context ? kBugReg : kRctx;
  switch (spec.policy) {
    case Policy::kAtomic:
      // this_cpu_dec(*active)
      EmitAtomicAdd(e, spec.atomics, Width::kW, kState, -1, Reg::kZr, Mark::kExitBegin,
                    Mark::kExited, Anchor::kExitWindow);
      break;
    case Policy::kPerContext:
      e.Emit(LoadByte(kT1, kState, byte));
      e.After(Mark::kExitLoaded);
      e.AnchorNext(Anchor::kExitWindow);
      e.Emit(SubImm(Width::kW, kT1, kT1, 1));
      e.Emit(StoreByte(kT1, kState, byte));
      e.After(Mark::kExited);
      break;
    case Policy::kLanded:
      EmitPreemptCountAdd(e, spec, true, Mark::kExitPreemptDisableLoaded, Mark::kExitPreemptDisabled);
      e.Emit(LoadByte(kT1, kState, byte));
      e.After(Mark::kExitLoaded);
      e.AnchorNext(Anchor::kExitWindow);
      e.Emit(SubImm(Width::kW, kT1, kT1, 1));
      e.Emit(StoreByte(kT1, kState, byte));
      e.After(Mark::kExitStored);
      EmitPreemptCountAdd(e, spec, false, Mark::kExitPreemptEnableLoaded, Mark::kExited);
      break;
  }
}

void EmitEpilogue(Emitter& e) {
  e.Emit(a64::Mov(Width::kX, Reg::kX0, kCtx));
  e.Emit(a64::Mov(Width::kX, Reg::kX1, kRan));
  e.Emit(a64::LoadStorePair(PairOp::kLoad, Width::kX, kRan, kBugReg, Reg::kSp, 48));
  e.Emit(a64::LoadStorePair(PairOp::kLoad, Width::kX, kRctx, kState, Reg::kSp, 32));
  e.Emit(a64::LoadStorePair(PairOp::kLoad, Width::kX, kCtx, kPerCpu, Reg::kSp, 16));
  e.Emit(a64::LoadStorePair(PairOp::kLoad, Width::kX, a64::kFp, a64::kLr, Reg::kSp,
                            kTrampolineFrameBytes, Indexing::kPostIndex));
  e.Emit(a64::Ret());
}

}  // namespace

Result<TrampolineCode> EmitTrampoline(const TrampolineSpec& spec) {
  if (spec.state_offset > 0xfff || spec.preempt_count_offset % 4 != 0 ||
      spec.preempt_count_offset > 0x3ffc) {
    return Fail("trampoline: per-CPU offsets out of range (state 0x{:x}, preempt_count 0x{:x})",
                spec.state_offset, spec.preempt_count_offset);
  }
  if (spec.bugs.exit_wrong_context && spec.bugs.check_then_increment) {
    return Fail("trampoline: at most one planted bug at a time (both use x24)");
  }
  if (spec.program_entry >> 48 != 0) {
    return Fail("trampoline: program entry 0x{:x} does not fit in 48 bits", spec.program_entry);
  }
  Emitter e;
  a64::Label miss, exit;
  EmitPrologue(e, spec);
  if (spec.policy != Policy::kAtomic) EmitContextLevel(e, spec);
  EmitEnter(e, spec, miss);

  // Run path: x0 = ctx; blr program; keep its r0.
  e.Emit(a64::Mov(Width::kX, Reg::kX0, kCtx));
  e.Emit(a64::MoveAddress48(kT0, spec.program_entry));
  const auto call_word = static_cast<uint32_t>(e.size());
  e.Emit(a64::Blr(kT0));
  e.After(Mark::kProgramReturned);
  e.Emit(a64::Mov(Width::kX, kCtx, Reg::kX0));
  e.Emit(a64::MoveImmediate(Width::kW, kRan, 1));
  e.Branch(exit, a64::BranchAlways());

  // Miss path: misses++ (atomic, as local64_inc), return 0.
  e.StartBlock(Mark::kEntered);
  e.Bind(miss);
  e.Emit(AddImm(Width::kX, kT3, kState, kMissesOffset));
  EmitAtomicAdd(e, spec.atomics, Width::kX, kT3, 1, Reg::kZr, Mark::kEntered, Mark::kMissCounted,
                Anchor::kNone);
  e.Emit(a64::Mov(Width::kX, kCtx, Reg::kZr));

  // Exit path, always.
  e.StartBlock(Mark::kExitBegin);
  e.AnchorNext(Anchor::kExitStart);
  e.Bind(exit);
  EmitExit(e, spec);
  EmitEpilogue(e);

  TrampolineCode code = e.Take();
  code.call_word = call_word;
  for (size_t i = 0; i < code.words.size(); ++i) {
    if (code.words[i] == a64::kBreakFault) {
      return Fail("trampoline: word {} could not be encoded", i);
    }
  }
  return code;
}

const BoundaryLabel* InstalledTrampoline::LabelAt(uint64_t pc) const {
  if (!Contains(pc) || (pc - entry()) % 4 != 0) return nullptr;
  return &code_.labels[(pc - entry()) / 4];
}

Result<std::unique_ptr<InstalledTrampoline>> InstallTrampoline(ProgPack& pack, TrampolineCode code) {
  auto allocation = pack.Alloc(4 * code.words.size());
  if (!allocation) return allocation.error();
  std::memcpy((*allocation)->rw_image(), code.words.data(), 4 * code.words.size());
  pack.Finalize(**allocation);
  auto trampoline = std::make_unique<InstalledTrampoline>();
  trampoline->allocation_ = std::move(allocation).value();
  trampoline->code_ = std::move(code);
  return trampoline;
}

void ReleaseTrampoline(ProgPack& pack, std::unique_ptr<InstalledTrampoline> trampoline) {
  if (trampoline) pack.Free(std::move(trampoline->allocation_));
}

}  // namespace bpfdiff::jit
