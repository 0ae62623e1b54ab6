#include "fuzz/generator/function_builder.h"

#include <algorithm>
#include <iterator>

#include "fuzz/generator/interesting_values.h"
#include "fuzz/generator/magnitudes.h"
#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "oracle/register_use.h"

namespace bpfdiff::fuzz {
namespace {

using isa::Insn;

constexpr int kMaxConstructs = 64;  // per function
constexpr int kMaxRegionDepth = 4;
constexpr int kMaxLoopDepth = 2;
constexpr int kMaxRegionConstructs = 24;
constexpr uint8_t kR0 = 0, kR1 = 1, kR2 = 2, kR3 = 3, kR4 = 4, kR6 = 6, kFp = isa::kFramePointer;

Insn Make(uint8_t opcode, uint8_t dst = 0, uint8_t src = 0, int16_t offset = 0, int32_t imm = 0) {
  return Insn{opcode, dst, src, offset, imm};
}

uint8_t SizeCode(unsigned bytes) {
  switch (bytes) {
    case 1: return isa::kSizeB;
    case 2: return isa::kSizeH;
    case 4: return isa::kSizeW;
    default: return isa::kSizeDW;
  }
}

constexpr unsigned kSizes[] = {1, 2, 4, 8};

constexpr uint8_t kAluOps[] = {isa::kAluAdd, isa::kAluSub, isa::kAluMul, isa::kAluDiv,  isa::kAluOr,
                               isa::kAluAnd, isa::kAluLsh, isa::kAluRsh, isa::kAluMod,  isa::kAluXor,
                               isa::kAluMov, isa::kAluArsh};
constexpr uint8_t kConditions[] = {isa::kJmpJeq,  isa::kJmpJgt,  isa::kJmpJge,  isa::kJmpJset,
                                   isa::kJmpJne,  isa::kJmpJsgt, isa::kJmpJsge, isa::kJmpJlt,
                                   isa::kJmpJle,  isa::kJmpJslt, isa::kJmpJsle};
constexpr int32_t kAtomicOps[] = {
    isa::kAtomicAdd,  isa::kAtomicOr,   isa::kAtomicAnd,   isa::kAtomicXor,
    isa::kAtomicAdd | isa::kAtomicFetch, isa::kAtomicOr | isa::kAtomicFetch,
    isa::kAtomicAnd | isa::kAtomicFetch, isa::kAtomicXor | isa::kAtomicFetch,
    isa::kAtomicXchg, isa::kAtomicCmpXchg};
constexpr int32_t kSimpleHelpers[] = {kHelperGetPrandomU32, kHelperGetSmpProcessorId,
                                      kHelperGetCurrentPidTgid};

}  // namespace

FunctionBuilder::FunctionBuilder(const CaseLayout& layout, Role role, size_t function, size_t functions)
    : layout_(layout), role_(role), function_(function), functions_(functions) {
  // Every register is 0 on entry on every engine; what the function may
  // read depends on how it is entered.
  auto& r = state_.regs;
  for (auto& reg : r) reg = RegState::Scalar();
  r[kFp] = RegState::Pointer(Area::kStack, 0, 512);
  const RegState context = RegState::Pointer(Area::kContext, 0, static_cast<int32_t>(layout.context_length));
  switch (role) {
    case Role::kMainEntry:
      r[kR1] = context;  // r2 = its length
      break;
    case Role::kTailTarget:
      // r1 = ctx; r3 is zero-extended by the JIT's bounds check and r4, r5
      // may hold what a call left undefined in the caller. What the caller
      // left in r0, r2, r6..r9 may be stack addresses.
      for (auto& reg : r) reg = RegState::Scalar(true);
      r[kFp] = RegState::Pointer(Area::kStack, 0, 512);
      r[kR1] = context;
      r[kR3] = r[kR4] = r[5] = RegState{};
      break;
    case Role::kSubprogram: {
      // Arguments are plain scalars (the caller passes no stack address but
      // r1 in caller-stack mode); r0 and r6..r9 are the caller's.
      const Signature& sig = layout.signatures[function];
      for (auto& reg : r) reg = RegState::Scalar(true);
      r[kFp] = RegState::Pointer(Area::kStack, 0, 512);
      for (int a = 1; a <= 5; ++a) r[static_cast<size_t>(a)] = a <= sig.args ? RegState::Scalar() : RegState{};
      if (sig.caller_stack) r[kR1] = RegState::Pointer(Area::kCallerStack, 0, 64);
      // bpf_loop passes a callback no r0 (the verifier's NOT_INIT).
      if (sig.callback || sig.exception_callback) r[kR0] = RegState{};
      break;
    }
  }
}

void FunctionBuilder::Build(RecordReader& records) {
  if (InChain()) {
    // r6 = r1: the context for the chain's tail call, in a register
    // nothing else writes (calls keep it).
    Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR6, kR1));
    state_.regs[kR6] = state_.regs[kR1];
    reserved_ |= static_cast<uint16_t>(1u << kR6);
    // A target passes the chain on first: its body runs once, after the
    // limit, not 33 times (which would make a chain case dozens of times
    // the cost of another).
    if (role_ == Role::kTailTarget) EmitChainTailCall();
  }
  for (int n = 0; n < kMaxConstructs && !records.exhausted(); ++n) {
    const Record r = records.Next();
    if (r.kind() == kEndOfFunction) break;
    Construct(r);
    if (!regions_.empty() && ++regions_.back().constructs >= kMaxRegionConstructs) EndRegion();
  }
  while (!regions_.empty()) EndRegion();
  if (role_ == Role::kMainEntry) {
    // Make every function a subprogram by calling the ones no one calls.
    for (size_t callee : uncalled_) {
      const Signature& sig = layout_.signatures[callee];
      if (sig.caller_stack) {
        EmitFrameAddress(kR1, -64);
      }
      for (int a = sig.caller_stack ? 2 : 1; a <= sig.args; ++a) EmitMovImm(static_cast<uint8_t>(a), static_cast<uint64_t>(a));
      EmitLocalCall(callee);
    }
  }
  if (InChain() && role_ == Role::kMainEntry) {
    // A tail call that succeeds never reaches the exit: observe first.
    EmitObservations();
    EmitChainTailCall();
  }
  if (!state_.regs[kR0].readable()) EmitMovImm(kR0, 0);
  EmitExit();
}

bool FunctionBuilder::InChain() const {
  return layout_.tail_call_chain && layout_.prog_array && role_ != Role::kSubprogram;
}

void FunctionBuilder::EmitChainTailCall() {
  // Slot t holds target t; the last slot is empty.
  const size_t targets = layout_.prog_array->entries - 1;
  size_t slot = 0;
  if (role_ == Role::kTailTarget) slot = layout_.chain_to_next ? (function_ + 1) % targets : function_;
  // The JIT must compare the low 32 bits only: a chain that runs on
  // garbage in the upper half shows a JIT that does not.
  const uint64_t garbage = layout_.chain_upper_garbage ? uint64_t{0x80000001} << 32 : 0;
  EmitTailCall(kR6, slot | garbage, false);
}

void FunctionBuilder::EmitTailCall(uint8_t context, uint64_t index, bool helper_form) {
  if (context != kR1) Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR1, context));
  EmitLddw(kR2, isa::kPseudoMapFd, static_cast<uint32_t>(layout_.prog_array->fd));
  EmitMovImm(kR3, index);
  Emit(helper_form ? Make(isa::kOpCall, 0, 0, 0, kHelperTailCall) : Make(isa::kOpTailCall));
  ClobberCallerSaved();
}

void FunctionBuilder::Emit(Insn insn) {
  // The second slot of an lddw names no form and writes nothing.
  if (const auto form = isa::Classify(insn)) written_ |= UseOf(insn, isa::FormById(*form)).writes;
  code_.push_back(insn);
}

void FunctionBuilder::EmitExit() {
  EmitObservations();
  if (role_ == Role::kSubprogram && layout_.signatures[function_].callback) {
    // A callback returns 0 (go on) or 1 (stop): r0 &= 1, of a scalar.
    const RegState& r0 = state_.regs[kR0];
    if (!r0.readable() || r0.pointer() || r0.stack_derived) EmitMovImm(kR0, 0);
    Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAnd, kR0, 0, 0, 1));
  }
  Emit(Make(isa::kOpExit));
}

void FunctionBuilder::EmitObservations() {
  if (layout_.observe_registers) {
    // *(u64 *)(r10 - 512 + 8 * (reg - 1)) = reg, for each register this
    // function wrote that it may still read: what a caller or the run's
    // end would otherwise never see (r0 is the result, compared anyway).
    for (uint8_t reg = 1; reg <= kObservedRegisters; ++reg) {
      if (!(written_ & RegisterBit(reg)) || !state_.regs[reg].readable()) continue;
      const int32_t slot = -static_cast<int32_t>(isa::kStackSize) + 8 * (reg - 1);
      Emit(Make(isa::kClassStx | isa::kModeMem | isa::kSizeDW, kFp, reg, static_cast<int16_t>(slot)));
    }
  }
}

void FunctionBuilder::Construct(const Record& r) {
  const uint8_t k = r.kind();
  if (k < 60 || (k >= 246 && k < 255)) return Alu(r);
  if (k < 70) return MovImm(r);
  if (k < 78) return LoadImm64(r);
  if (k < 100) return Load(r);
  if (k < 118) return Store(r);
  if (k < 128) return AtomicOp(r);
  if (k < 140) return ProbeLoad(r);
  if (k < 146) return UntrustedPointer(r);
  if (k <= kPointerSetupLast) return PointerSetup(r);
  if (k < 172) return BeginIf(r);
  if (k < 177) return BeginDead(r);
  if (k < 185) return BeginLoop(r);
  if (k < 205) return EndRegion();
  if (k < 223) return HelperCall(r);
  if (k < 230) return LocalCall(r);
  if (k < 234) return Callx(r);
  if (k < kEarlyExitFirst) return TailCall(r);
  if (k <= kEarlyExitLast) return EarlyExit(r);
  if (k < 245) return DeliberateFault(r);
  return layout_.legacy_packet_access ? LegacyPacket(r) : Alu(r);
}

// --- Registers --------------------------------------------------------------

int FunctionBuilder::PickWritable(uint8_t choice, bool callee_saved_only) const {
  // Inside a loop a callee-saved pointer must stay what the body saw on its
  // first iteration (r0..r5 start every iteration undefined, see BeginLoop).
  for (int i = 0; i < isa::kNumRegs; ++i) {
    const auto reg = static_cast<uint8_t>(callee_saved_only ? 6 + (choice + i) % 4 : (choice + i) % 10);
    if (reserved(reg)) continue;
    if (loops_ > 0 && reg >= 6 && state_.regs[reg].pointer()) continue;
    return reg;
  }
  return -1;
}

int FunctionBuilder::PickReadable(uint8_t choice) const {
  for (int i = 0; i < isa::kNumRegs; ++i) {
    const auto reg = static_cast<uint8_t>((choice + i) % isa::kNumRegs);
    if (state_.regs[reg].readable()) return reg;
  }
  return -1;
}

uint8_t FunctionBuilder::ScalarOperand(uint8_t choice) {
  const int reg = PickReadable(choice);
  if (reg >= 0 && reg != kFp) return static_cast<uint8_t>(reg);
  const int fresh = PickWritable(choice);
  const auto target = static_cast<uint8_t>(fresh < 0 ? 0 : fresh);
  EmitMovImm(target, static_cast<uint64_t>(static_cast<int64_t>(kInteresting32[choice % std::size(kInteresting32)])));
  return target;
}

void FunctionBuilder::ClobberCallerSaved() {
  for (uint8_t reg = 1; reg <= 5; ++reg) state_.regs[reg] = RegState{};
}

void FunctionBuilder::EmitLddw(uint8_t dst, uint8_t src, uint64_t imm64) {
  Emit(Make(isa::kOpLddw, dst, src, 0, static_cast<int32_t>(static_cast<uint32_t>(imm64))));
  Emit(Make(0, 0, 0, 0, static_cast<int32_t>(static_cast<uint32_t>(imm64 >> 32))));
}

void FunctionBuilder::EmitMovImm(uint8_t dst, uint64_t value) {
  const auto low = static_cast<int32_t>(static_cast<uint32_t>(value));
  if (static_cast<uint64_t>(static_cast<int64_t>(low)) == value) {
    Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, dst, 0, 0, low));
  } else if ((value >> 32) == 0) {
    Emit(Make(isa::kClassAlu | isa::kSrcK | isa::kAluMov, dst, 0, 0, low));
  } else {
    EmitLddw(dst, 0, value);
  }
  SetScalar(dst);
}

int32_t FunctionBuilder::Immediate(const Record& r, size_t byte) const {
  if (layout_.magnitudes) return Magnitude32(r, r.byte(byte), r.byte(byte == 3 ? 4 : 3));
  if (r.Flag(byte, 7)) return static_cast<int32_t>(r.Word());
  return kInteresting32[r.Pick(byte, std::size(kInteresting32))];
}

uint64_t FunctionBuilder::Immediate64(const Record& r) const {
  if (layout_.magnitudes) return Magnitude64(r, r.byte(2), r.byte(3));
  if (r.Flag(1, 7)) return kInteresting64[r.Pick(2, std::size(kInteresting64))];
  return uint64_t{r.Word()} << (8 * r.Pick(2, 5)) ^ static_cast<uint64_t>(static_cast<int64_t>(Immediate(r, 3)));
}

// Classes past the tables: 2^k, 2^k - 1, -2^k (k from the parameter), and
// raw, the record's bytes p3..p6 as they are.
constexpr uint32_t kExtraClasses = 4;

uint64_t FunctionBuilder::Magnitude64(const Record& r, uint8_t cls, uint8_t param) const {
  constexpr auto n = static_cast<uint32_t>(std::size(kMagnitudes64));
  const uint32_t c = cls % (n + kExtraClasses);
  if (c < n) return kMagnitudes64[c];
  const uint64_t power = uint64_t{1} << (param % 64);
  switch (c - n) {
    case 0: return power;
    case 1: return power - 1;
    case 2: return 0 - power;
    default: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(r.Word())));
  }
}

int32_t FunctionBuilder::Magnitude32(const Record& r, uint8_t cls, uint8_t param) const {
  constexpr auto n = static_cast<uint32_t>(std::size(kMagnitudes32));
  const uint32_t c = cls % (n + kExtraClasses);
  if (c < n) return kMagnitudes32[c];
  const uint32_t power = uint32_t{1} << (param % 32);
  switch (c - n) {
    case 0: return static_cast<int32_t>(power);
    case 1: return static_cast<int32_t>(power - 1);
    case 2: return static_cast<int32_t>(0u - power);
    default: return static_cast<int32_t>(r.Word());
  }
}

uint8_t FunctionBuilder::RelatedOperand(const Record& r, uint8_t a_reg, uint64_t a) {
  const uint32_t relation = r.Pick(3, layout_.bounds ? 9 : 8);
  if (relation == 0) return a_reg;  // the same register
  const int picked = PickWritable(static_cast<uint8_t>(r.byte(3) >> 3));
  if (picked < 0 || picked == a_reg) return a_reg;
  const auto reg = static_cast<uint8_t>(picked);
  uint64_t value = a;  // relation 1: equal
  switch (relation) {
    case 2: value = a + 1; break;
    case 3: value = a - 1; break;
    case 4: value = ~a; break;
    case 5: value = a ^ 0xffffffff00000000ULL; break;  // the same low word, another upper half
    case 6:
    case 7: value = Magnitude64(r, r.byte(4), r.byte(3)); break;
    // The bounds mode: the same upper half, no bit of the low word in common (a
    // 32-bit JSET finds none, a 64-bit one the upper half's).
    case 8: value = (a & 0xffffffff00000000ULL) | (~a & 0xffffffffULL); break;
    default: break;
  }
  EmitMovImm(reg, value);
  return reg;
}

std::optional<int32_t> FunctionBuilder::BoundaryOffset(uint8_t choice, int32_t from, int32_t low, int32_t high,
                                                       unsigned size, bool aligned) const {
  const auto s = static_cast<int32_t>(size);
  // Where arm64's forms change: the scaled unsigned offset (0 .. 4095 *
  // size, multiples of size), the unscaled one (-256 .. 255), neither.
  const int32_t candidates[] = {0, 1, s - 1, s, s + 1, -1, -s, -s - 1, 255, 256, 257, -256, -257,
                                4095 * s, 4096 * s, 2 * s + 1, -2 * s + 1, 511, -511, 510};
  constexpr auto n = static_cast<uint32_t>(std::size(candidates));
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t offset = candidates[(choice + i) % n];
    const int32_t at = from + offset;
    if (at < low || at + s > high) continue;
    if (aligned && (at - low) % s != 0) continue;
    return offset;
  }
  return std::nullopt;
}

// --- ALU ----------------------------------------------------------------

void FunctionBuilder::Alu(const Record& r) {
  const int picked = PickWritable(r.byte(2));
  if (picked < 0) return;
  const auto dst = static_cast<uint8_t>(picked);
  const bool is64 = !r.Flag(1, 0);
  const uint8_t cls = is64 ? isa::kClassAlu64 : isa::kClassAlu;
  const uint32_t which = r.Pick(0, 21);
  // Everything but mov reads dst: make sure it holds a value.
  const bool reads_dst = which != 10 && which != 12;
  // Operand-magnitude mode: dst first holds a class value.
  const uint64_t a = layout_.magnitudes ? Magnitude64(r, r.byte(5), r.byte(6)) : 0;
  if (layout_.magnitudes && reads_dst) EmitMovImm(dst, a);
  if (reads_dst && !state_.regs[dst].readable()) EmitMovImm(dst, static_cast<uint64_t>(Immediate(r, 3)));
  const bool tainted = reads_dst && state_.regs[dst].stack_derived;
  bool src_tainted = false;
  if (which < 12) {
    // dst = dst OP src|imm, every binary operation; div/mod also signed.
    const uint8_t op = kAluOps[which];
    const bool signed_div = (op == isa::kAluDiv || op == isa::kAluMod) && r.Flag(1, 2);
    const int16_t offset = signed_div ? 1 : 0;
    if (r.Flag(1, 1)) {
      const uint8_t src = layout_.magnitudes && reads_dst ? RelatedOperand(r, dst, a) : ScalarOperand(r.byte(3));
      src_tainted = state_.regs[src].stack_derived;
      Emit(Make(cls | isa::kSrcX | op, dst, src, offset));
    } else {
      Emit(Make(cls | isa::kSrcK | op, dst, 0, offset, Immediate(r, 4)));
    }
  } else if (which == 12) {
    // dst = (s8|s16|s32)src
    const uint8_t src = ScalarOperand(r.byte(3));
    src_tainted = state_.regs[src].stack_derived;
    const int16_t widths64[] = {8, 16, 32};
    const int16_t width = is64 ? widths64[r.Pick(4, 3)] : widths64[r.Pick(4, 2)];
    Emit(Make(cls | isa::kSrcX | isa::kAluMov, dst, src, width));
  } else if (which == 13) {
    // dst = -dst
    Emit(Make(cls | isa::kSrcK | isa::kAluNeg, dst));
  } else {
    // Byte order: le/be (ALU) or bswap (ALU64), 16, 32 or 64 bits.
    const int32_t widths[] = {16, 32, 64};
    const int32_t width = widths[r.Pick(4, 3)];
    const uint32_t kind = r.Pick(5, 3);
    const uint8_t opcode = kind == 0   ? (isa::kClassAlu | isa::kSrcK | isa::kAluEnd)
                           : kind == 1 ? (isa::kClassAlu | isa::kSrcX | isa::kAluEnd)
                                       : (isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd);
    Emit(Make(opcode, dst, 0, 0, width));
  }
  SetScalar(dst);
  state_.regs[dst].stack_derived = tainted || src_tainted;
}

void FunctionBuilder::MovImm(const Record& r) {
  const int dst = PickWritable(r.byte(0));
  if (dst < 0) return;
  const int32_t imm = Immediate(r, 1);
  const uint8_t cls = r.Flag(2, 0) ? isa::kClassAlu : isa::kClassAlu64;
  Emit(Make(cls | isa::kSrcK | isa::kAluMov, static_cast<uint8_t>(dst), 0, 0, imm));
  SetScalar(static_cast<uint8_t>(dst));
}

void FunctionBuilder::LoadImm64(const Record& r) {
  const int picked = PickWritable(r.byte(0));
  if (picked < 0) return;
  const auto dst = static_cast<uint8_t>(picked);
  const uint32_t kind = r.Pick(1, 4);
  if (kind == 1 && !layout_.value_maps.empty()) {
    // dst = &map (a map object: read-only, for helpers)
    const MapInfo& map = layout_.value_maps[r.Pick(2, static_cast<uint32_t>(layout_.value_maps.size()))];
    EmitLddw(dst, isa::kPseudoMapFd, static_cast<uint32_t>(map.fd));
    SetScalar(dst);
    return;
  }
  if (kind == 2 && !layout_.value_maps.empty()) {
    // dst = &map value + offset
    const MapInfo& map = layout_.value_maps[r.Pick(2, static_cast<uint32_t>(layout_.value_maps.size()))];
    const auto stride = static_cast<uint32_t>(guest::ArrayValueStride(map.value_size));
    const uint32_t area = map.type == isa::MapType::kArray ? stride * map.entries : 0;
    if (area == 0) return;  // hash values are reached through lookups
    const uint32_t offset = (r.Word() % area) & ~7u;
    Emit(Make(isa::kOpLddw, dst, isa::kPseudoMapValue, 0, map.fd));
    Emit(Make(0, 0, 0, 0, static_cast<int32_t>(offset)));
    state_.regs[dst] = RegState::Pointer(Area::kMapValue, static_cast<int32_t>(offset),
                                         static_cast<int32_t>(area), map.index);
    return;
  }
  // dst = imm64
  EmitLddw(dst, 0, Immediate64(r));
  SetScalar(dst);
}

void FunctionBuilder::EmitFrameAddress(uint8_t dst, int32_t offset) {
  Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, dst, kFp));
  Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, dst, 0, 0, offset));
}

void FunctionBuilder::EmitLocalCall(size_t callee) {
  if (callee < layout_.throws.size() && layout_.throws[callee]) throws_ = true;
  local_calls_.emplace_back(code_.size(), callee);
  Emit(Make(isa::kOpCall, 0, isa::kPseudoCall));
  ClobberCallerSaved();
  SetScalar(kR0);
}

void FunctionBuilder::EmitLoopCall(size_t callee, uint8_t choice) {
  // choice bits 1..3: nr_loops 0..4 (% 5); bits 4..5 both set: an error
  // bpf_loop answers without calling, flags 1 (-EINVAL) with bit 6 clear,
  // else BPF_MAX_LOOPS + 1 iterations (-E2BIG).
  const bool error = (choice & 0x30) == 0x30;
  const bool bad_flags = error && (choice & 0x40) == 0;
  const uint64_t iterations = error && !bad_flags ? uint64_t{guest::kMaxLoops} + 1 : ((choice >> 1) & 7) % 5;
  EmitMovImm(kR1, iterations);
  EmitMovImm(kR4, bad_flags ? 1 : 0);
  local_calls_.emplace_back(code_.size(), callee);
  Emit(Make(isa::kOpLddw, kR2, isa::kPseudoFunc));
  Emit(Make(0, 0, 0));
  Emit(Make(isa::kOpCall, 0, 0, 0, kHelperLoop));
  ClobberCallerSaved();
  SetScalar(kR0);
}

// --- Memory -----------------------------------------------------------------

std::optional<FunctionBuilder::Access> FunctionBuilder::PickAccess(const Record& r, unsigned size,
                                                                   bool aligned) {
  // Candidates: r10 and every register that points somewhere.
  uint8_t candidates[isa::kNumRegs];
  size_t count = 0;
  for (uint8_t reg = 0; reg < isa::kNumRegs; ++reg) {
    if (state_.regs[reg].pointer()) candidates[count++] = reg;
  }
  const uint8_t base = candidates[r.Pick(2, static_cast<uint32_t>(count))];
  const RegState& s = state_.regs[base];
  // The area, in offsets relative to where the pointer's offsets count from.
  const int32_t low = s.area == Area::kStack ? layout_.frame_low : 0;
  const int32_t high = s.area == Area::kStack ? 0 : s.limit;
  if (high - low < static_cast<int32_t>(size)) {
    // Too small (a short input memory): use the stack.
    const auto slots = static_cast<uint32_t>(-layout_.frame_low) / size;
    const auto slot = static_cast<int32_t>(r.Pick(3, slots));
    return Access{kFp, static_cast<int16_t>(layout_.frame_low + slot * static_cast<int32_t>(size))};
  }
  if (layout_.bounds && layout_.magnitudes && r.Flag(1, 6) && r.Flag(1, 5)) {
    if (auto far = DisplacedAccess(r, base, low, high, size, aligned)) return far;
  }
  if (layout_.magnitudes && r.Flag(1, 6)) {
    // Where an addressing form changes, if the area has room for it.
    if (auto offset = BoundaryOffset(r.byte(3), s.offset, low, high, size, aligned)) {
      if (*offset >= INT16_MIN && *offset <= INT16_MAX) return Access{base, static_cast<int16_t>(*offset)};
    }
  }
  const auto span = static_cast<uint32_t>(high - low) - size + 1;
  int32_t at = low + static_cast<int32_t>((r.byte(3) | r.byte(4) << 8) % span);
  if (aligned) at -= (at - low) % static_cast<int32_t>(size);
  const int32_t offset = at - s.offset;
  if (offset < INT16_MIN || offset > INT16_MAX) return std::nullopt;
  return Access{base, static_cast<int16_t>(offset)};
}

std::optional<FunctionBuilder::Access> FunctionBuilder::DisplacedAccess(const Record& r, uint8_t base, int32_t low,
                                                                       int32_t high, unsigned size, bool aligned) {
  const auto s = static_cast<int32_t>(size);
  // The offset classes of the JIT's lowerings (jit/memory.cc, atomic.cc)
  // past what any area holds: an atomic adds +-1..4095 as an immediate and
  // puts anything else in a register; a load or store encodes 0..4095 *
  // size (multiples of size) and puts anything else in a register.
  const int32_t candidates[] = {4095, -4095, 4096, -4096, 4097, -4097, 8191, -8192,
                                std::min(4095 * s, 32767), std::min(4096 * s, 32767),
                                32767, -32767, -32768, 32767 - 7, -32768 + 8, 16384};
  const int32_t offset = candidates[r.Pick(3, std::size(candidates))];
  // A copy in a register no loop needs to keep (r0..r5 start every
  // iteration undefined), other than the base itself.
  const int picked = PickWritable(r.byte(6));
  if (picked < 0 || picked == base || (loops_ > 0 && picked > 5)) return std::nullopt;
  const auto copy = static_cast<uint8_t>(picked);
  const auto span = static_cast<uint32_t>(high - low - s + 1);
  int32_t at = low + static_cast<int32_t>((r.byte(4) | r.byte(5) << 8) % span);
  if (aligned) at -= (at - low) % s;
  // copy = base + (at - offset - base's offset): copy + offset is `at`.
  const RegState& from = state_.regs[base];
  const int32_t copy_offset = at - offset;
  Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, copy, base));
  Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, copy, 0, 0, copy_offset - from.offset));
  RegState moved = from;
  moved.offset = copy_offset;
  state_.regs[copy] = moved;
  return Access{copy, static_cast<int16_t>(offset)};
}

std::optional<FunctionBuilder::Access> FunctionBuilder::OwnAddressAccess(uint8_t choice, unsigned size) const {
  for (int i = 0; i < isa::kNumRegs; ++i) {
    const auto reg = static_cast<uint8_t>((choice + i) % isa::kNumRegs);
    const RegState& s = state_.regs[reg];
    if (!s.pointer() || s.area == Area::kStack || s.stack_derived || PickWritable(reg) != reg) continue;
    const auto width = static_cast<int32_t>(size);
    if (s.offset < 0 || s.offset + width > s.limit || s.offset % width != 0) continue;
    return Access{reg, 0};
  }
  return std::nullopt;
}

void FunctionBuilder::Load(const Record& r) {
  const unsigned size = kSizes[r.Pick(0, 4)];
  const bool sign = size != 8 && r.Flag(0, 4);
  const auto access = PickAccess(r, size, r.Flag(1, 0));
  const int dst = PickWritable(r.byte(5));
  if (!access || dst < 0) return;
  const uint8_t mode = sign ? isa::kModeMemSx : isa::kModeMem;
  // dst = *(size *)(base + offset)
  Emit(Make(isa::kClassLdx | mode | SizeCode(size), static_cast<uint8_t>(dst), access->base, access->offset));
  SetScalar(static_cast<uint8_t>(dst));
}

void FunctionBuilder::Store(const Record& r) {
  const unsigned size = kSizes[r.Pick(0, 4)];
  const auto access = PickAccess(r, size, r.Flag(1, 0));
  if (!access) return;
  if (r.Flag(0, 4)) {
    // *(size *)(base + offset) = imm
    Emit(Make(isa::kClassSt | isa::kModeMem | SizeCode(size), access->base, 0, access->offset, Immediate(r, 5)));
    return;
  }
  // *(size *)(base + offset) = src; never a stack address (see the header).
  uint8_t src = ScalarOperand(r.byte(5));
  if (state_.regs[src].stack_derived) return;
  Emit(Make(isa::kClassStx | isa::kModeMem | SizeCode(size), access->base, src, access->offset));
}

void FunctionBuilder::AtomicOp(const Record& r) {
  const bool is64 = r.Flag(0, 0);
  const unsigned size = is64 ? 8 : 4;
  const int32_t op = kAtomicOps[r.Pick(1, std::size(kAtomicOps))];
  // Operand-magnitude mode, p0 bit 6: the address register is the operand
  // too, at offset 0 (the LL/SC loop must not lose the address to the
  // value it loads); only into the context or a map value, whose
  // addresses every engine shares.
  std::optional<Access> access;
  if (layout_.magnitudes && r.Flag(0, 6)) access = OwnAddressAccess(r.byte(2), size);
  const bool src_is_base = access.has_value();
  if (!access) access = PickAccess(r, size, true);
  if (!access) return;
  const bool fetch = (op & isa::kAtomicFetch) != 0;
  int src;
  if (src_is_base) {
    src = access->base;
  } else if (fetch && op != isa::kAtomicCmpXchg) {
    // The old value comes back in src, so src must be writable (and must
    // not be the base register, which would lose the pointer).
    src = PickWritable(r.byte(5));
    if (src < 0 || src == access->base) return;
    if (!state_.regs[static_cast<size_t>(src)].readable()) EmitMovImm(static_cast<uint8_t>(src), 1);
  } else {
    src = ScalarOperand(r.byte(5));
  }
  if (state_.regs[static_cast<size_t>(src)].stack_derived) return;
  if (op == isa::kAtomicCmpXchg) {
    // r0 is compared and receives the old value (zero-extended by the
    // 32-bit form: magnitude mode gives r0 a class value, upper half too).
    if (reserved(kR0) || access->base == kR0) return;
    if (layout_.magnitudes) {
      EmitMovImm(kR0, Magnitude64(r, r.byte(6), r.byte(4)));
    } else if (!state_.regs[kR0].readable() || state_.regs[kR0].stack_derived) {
      EmitMovImm(kR0, 0);
    }
  }
  Emit(Make(isa::kClassStx | isa::kModeAtomic | (is64 ? isa::kSizeDW : isa::kSizeW), access->base,
            static_cast<uint8_t>(src), access->offset, op));
  if (op == isa::kAtomicCmpXchg) {
    SetScalar(kR0);
  } else if (fetch) {
    SetScalar(static_cast<uint8_t>(src));
  }
}

void FunctionBuilder::ProbeLoad(const Record& r) {
  // A load through an untrusted pointer: any value the program holds that
  // is not derived from its stack, at any offset. It may fault; the
  // exception table then gives 0.
  int base = -1;
  for (int i = 0; i < isa::kNumRegs && base < 0; ++i) {
    const auto reg = static_cast<uint8_t>((r.byte(2) + i) % isa::kNumRegs);
    const RegState& s = state_.regs[reg];
    if (s.readable() && !s.stack_derived) base = reg;
  }
  const int dst = PickWritable(r.byte(3));
  if (base < 0 || dst < 0) return;
  const unsigned size = kSizes[r.Pick(0, 4)];
  const bool sign = size != 8 && r.Flag(0, 4);
  const auto offset = static_cast<int16_t>(r.Flag(1, 0) ? static_cast<int16_t>(r.byte(4) | r.byte(5) << 8)
                                                        : static_cast<int16_t>(r.byte(4) % 64));
  const uint8_t mode = sign ? isa::kModeProbeMemSx : isa::kModeProbeMem;
  Emit(Make(isa::kClassLdx | mode | SizeCode(size), static_cast<uint8_t>(dst), static_cast<uint8_t>(base), offset));
  SetScalar(static_cast<uint8_t>(dst));
}

void FunctionBuilder::UntrustedPointer(const Record& r) {
  const int dst = PickWritable(r.byte(0));
  if (dst < 0) return;
  uint64_t address = layout_.interesting_addresses[r.Pick(1, static_cast<uint32_t>(layout_.interesting_addresses.size()))];
  if (r.Flag(2, 0)) address += r.byte(3);
  EmitMovImm(static_cast<uint8_t>(dst), address);
}

void FunctionBuilder::PointerSetup(const Record& r) {
  // Version 5 adds a fifth kind, this CPU's per-CPU variable, and a
  // sixth, an access to the arena.
  const uint32_t kind = r.Pick(0, layout_.version >= 5 ? 6 : 4);
  if (kind == 4) return PerCpuPointer(r);
  if (kind == 5) return ArenaAccess(r);
  if (kind == 3) {
    // ptr += imm, staying inside its area (not in a loop: the offset would drift).
    if (loops_ > 0) return;
    const int reg = PickReadable(r.byte(1));
    // Not a reserved register: the chain's r6 must still hold the context
    // when the function ends (loop counters, reserved too, are scalars).
    if (reg < 0 || reg == kFp || !state_.regs[static_cast<size_t>(reg)].pointer() ||
        reserved(static_cast<uint8_t>(reg))) {
      return;
    }
    RegState& s = state_.regs[static_cast<size_t>(reg)];
    const int32_t low = s.area == Area::kStack ? layout_.frame_low : 0;
    const int32_t high = s.area == Area::kStack ? 0 : s.limit;
    const int32_t target = low + static_cast<int32_t>(r.Word() % static_cast<uint32_t>(high - low + 1));
    Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, static_cast<uint8_t>(reg), 0, 0, target - s.offset));
    s.offset = target;
    return;
  }
  const int picked = PickWritable(r.byte(1));
  if (picked < 0) return;
  const auto dst = static_cast<uint8_t>(picked);
  if (kind == 0) {
    // dst = r10 - k: a pointer into this frame
    const auto k = static_cast<int32_t>(8 * (1 + r.Pick(2, 64)));
    EmitFrameAddress(dst, -k);
    state_.regs[dst] = RegState::Pointer(Area::kStack, -k, 512);
  } else if (kind == 1) {
    // dst = another register's pointer (a copy of ctx, say)
    for (uint8_t reg = 0; reg < 10; ++reg) {
      const RegState& s = state_.regs[reg];
      if (!s.pointer() || reg == dst) continue;
      Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, dst, reg));
      state_.regs[dst] = s;
      return;
    }
  } else {
    LoadImm64(Record({0, r.byte(1), 2, r.byte(2), r.byte(3), r.byte(4), r.byte(5), r.byte(6)}));
  }
}

void FunctionBuilder::PerCpuPointer(const Record& r) {
  // As the verifier writes this_cpu_ptr() for a JIT with per-CPU moves:
  // src = the per-CPU pointer (an offset into the per-CPU page), then
  // dst = addr_percpu src, the variable's address on this CPU. dst is src
  // itself (the verifier's form), or another register with src kept as a
  // scalar.
  const int picked = PickWritable(r.byte(1));
  if (picked < 0) return;
  const auto dst = static_cast<uint8_t>(picked);
  if (r.Flag(2, 1)) {
    // Beyond what the verifier writes, the lowering's arithmetic on any
    // scalar: all 64 bits of the sum count (guest addresses fit 32 bits,
    // so a pointer alone would not show a 32-bit add).
    const uint8_t scalar = ScalarOperand(r.byte(3));
    Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, dst, scalar, isa::kAddrPerCpu));
    SetScalar(dst);
    return;
  }
  uint8_t src = dst;
  if (r.Flag(2, 0)) {
    const int other = PickWritable(static_cast<uint8_t>(r.byte(3) + 1));
    if (other >= 0 && other != dst) src = static_cast<uint8_t>(other);
  }
  const auto size = static_cast<int32_t>(guest::kPerCpuScratchSize);
  const auto offset = static_cast<int32_t>(8 * r.Pick(4, static_cast<uint32_t>(size / 8)));
  EmitMovImm(src, guest::kPerCpuScratchOffset + static_cast<uint64_t>(offset));
  SetScalar(src);
  Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, dst, src, isa::kAddrPerCpu));
  state_.regs[dst] = RegState::Pointer(Area::kPerCpu, offset, size);
}

void FunctionBuilder::ArenaAccess(const Record& r) {
  ArenaAccessBody(r);
  // With p5 bit 2, then the cast of an arena register to the user address
  // (addr_space_cast, into the register p6 + 3 picks): the JIT's only
  // address-space cast.
  if (!r.Flag(5, 2)) return;
  const int from = PickReadable(r.byte(1));
  const int to = PickWritable(static_cast<uint8_t>(r.byte(6) + 3));
  if (from < 0 || to < 0 || from == kFp || state_.regs[static_cast<size_t>(from)].stack_derived) return;
  Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, static_cast<uint8_t>(to), static_cast<uint8_t>(from),
            isa::kAddrSpaceCastOffset, isa::kCastUserImm));
  SetScalar(static_cast<uint8_t>(to));
}

void FunctionBuilder::ArenaAccessBody(const Record& r) {
  // As the verifier rewrites an access through an arena pointer: a
  // register holding an offset into the arena (p1 picks it), then a
  // PROBE_MEM32 load or store or a PROBE_ATOMIC atomic through it (p2 bits
  // 0..1: load, store, atomic, atomic; bit 4: a store of an immediate or
  // of a register; bits 2..3 the size, bit 2 an atomic's; bits 5..7 the
  // offset field). The access lands at p3..p4
  // (modulo the arena's allocated page, aligned for an atomic), or, with p5
  // bit 0, past the page, or, with bit 1, with an upper half in the
  // register (both fault, and the exception table steps over them).
  static constexpr int16_t kOffsets[] = {0, 8, -8, 255, 4095, -4096, 32767, -32768};
  const int picked = PickWritable(r.byte(1));
  if (picked < 0) return;
  const auto base = static_cast<uint8_t>(picked);
  const uint32_t what = std::min(r.byte(2) & 3, 2);  // load, store, atomic (half of them)
  const bool atomic = what == 2;
  const unsigned size = atomic ? (r.Flag(2, 2) ? 8 : 4) : kSizes[(r.byte(2) >> 2) & 3];
  const int16_t offset = kOffsets[r.byte(2) >> 5];
  uint64_t target = (r.byte(3) | uint64_t{r.byte(4)} << 8) % (guest::kArenaMappedBytes - size + 1);
  if (atomic) target -= target % size;
  if (r.Flag(5, 0)) target += uint64_t{0x10000} << r.Pick(6, 4);
  if (r.Flag(5, 1)) target |= uint64_t{r.byte(6) | 1u} << 32;
  // The register holds target - offset; the sum is all 64 bits wide.
  const uint64_t value = target - static_cast<uint64_t>(static_cast<int64_t>(offset));
  const uint8_t size_code = SizeCode(size);
  // A register whose value may be stored: never one derived from a stack
  // address (see RegState::stack_derived).
  const auto storable = [&](uint8_t choice) {
    const uint8_t reg = ScalarOperand(choice);
    if (reg != base && !state_.regs[reg].stack_derived) return reg;
    const int fresh = PickWritable(static_cast<uint8_t>(choice + 1));
    const auto other = static_cast<uint8_t>(fresh < 0 || fresh == base ? kR0 : fresh);
    EmitMovImm(other, static_cast<uint64_t>(Immediate(r, 5)));
    return other;
  };
  if (what == 0) {
    const int dst = PickWritable(r.byte(5));
    if (dst < 0) return;
    EmitMovImm(base, value);
    SetScalar(base);
    // dst = *(size *)(arena + base + offset)
    Emit(Make(isa::kClassLdx | isa::kModeProbeMem32 | size_code, static_cast<uint8_t>(dst), base, offset));
    SetScalar(static_cast<uint8_t>(dst));
    return;
  }
  if (what == 1 && !r.Flag(2, 4)) {
    EmitMovImm(base, value);
    SetScalar(base);
    // *(size *)(arena + base + offset) = imm
    Emit(Make(isa::kClassSt | isa::kModeProbeMem32 | size_code, base, 0, offset, Immediate(r, 5)));
    return;
  }
  const uint8_t src = storable(r.byte(5));
  if (src == base || reserved(src) || src == kFp) return;
  EmitMovImm(base, value);
  SetScalar(base);
  if (!atomic) {
    // *(size *)(arena + base + offset) = src
    Emit(Make(isa::kClassStx | isa::kModeProbeMem32 | size_code, base, src, offset));
    return;
  }
  const int32_t op = kAtomicOps[r.Pick(6, std::size(kAtomicOps))];
  if (op == isa::kAtomicCmpXchg) {
    if (reserved(kR0) || base == kR0) return;
    if (!state_.regs[kR0].readable() || state_.regs[kR0].stack_derived) EmitMovImm(kR0, 0);
  }
  // lock <op> *(size *)(arena + base + offset), src
  Emit(Make(isa::kClassStx | isa::kModeProbeAtomic | size_code, base, src, offset, op));
  if (op == isa::kAtomicCmpXchg) {
    SetScalar(kR0);
  } else if ((op & isa::kAtomicFetch) != 0) {
    SetScalar(src);
  }
}

// --- Regions ------------------------------------------------------------

void FunctionBuilder::BeginIf(const Record& r) {
  if (regions_.size() >= kMaxRegionDepth) return;
  // if (a OP b) skip the region
  const bool is32 = r.Flag(0, 7);
  const uint8_t cls = is32 ? isa::kClassJmp32 : isa::kClassJmp;
  const uint8_t op = kConditions[r.Pick(0, std::size(kConditions))];
  Insn jump;
  if (layout_.bounds && op == isa::kJmpJset && r.Flag(2, 0)) {
    // The bounds mode: two values that meet only in their upper halves, so
    // that a JSET32 takes no branch and a JSET64 does. A value with bits
    // in its upper half, against one with the same upper half and the
    // complement low word (p4 bit 6 clear), or against one whose low word
    // is the same, zero, and whose upper half has one more bit (set: the
    // operands differ only in their upper halves).
    const int picked = PickWritable(r.byte(1));
    const int other = PickWritable(static_cast<uint8_t>(r.byte(1) + 1));
    if (picked < 0 || other < 0 || picked == other) return;
    uint64_t value = Magnitude64(r, r.byte(5), r.byte(6));
    if ((value >> 32) == 0) value |= uint64_t{1} << (32 + r.Pick(4, 32));
    uint64_t partner = (value & 0xffffffff00000000ULL) | (~value & 0xffffffffULL);
    if (r.Flag(4, 6)) {
      value &= 0xffffffff00000000ULL;
      partner = value | uint64_t{1} << (32 + r.Pick(6, 32));
    }
    EmitMovImm(static_cast<uint8_t>(picked), value);
    EmitMovImm(static_cast<uint8_t>(other), partner);
    jump = Make(cls | isa::kSrcX | op, static_cast<uint8_t>(picked), static_cast<uint8_t>(other));
  } else if (layout_.magnitudes) {
    // a class value, against its own low word, one above, one below, or
    // another class value: the bounds the compare decides on.
    const int picked = PickWritable(r.byte(1));
    if (picked < 0) return;
    const auto a = static_cast<uint8_t>(picked);
    const uint64_t value = Magnitude64(r, r.byte(5), r.byte(6));
    EmitMovImm(a, value);
    if (r.Flag(2, 0)) {
      jump = Make(cls | isa::kSrcX | op, a, RelatedOperand(r, a, value));
    } else {
      const auto low = static_cast<int32_t>(static_cast<uint32_t>(value));
      const int32_t imms[] = {low, static_cast<int32_t>(static_cast<uint32_t>(low) + 1),
                              static_cast<int32_t>(static_cast<uint32_t>(low) - 1), Magnitude32(r, r.byte(4), r.byte(3))};
      jump = Make(cls | isa::kSrcK | op, a, 0, 0, imms[r.Pick(4, 4)]);
    }
  } else {
    const uint8_t a = ScalarOperand(r.byte(1));
    if (r.Flag(2, 0)) {
      jump = Make(cls | isa::kSrcX | op, a, ScalarOperand(r.byte(3)));
    } else {
      jump = Make(cls | isa::kSrcK | op, a, 0, 0, Immediate(r, 4));
    }
  }
  regions_.push_back({Region::Kind::kIf, code_.size(), 0, 0, state_});
  Emit(jump);
}

void FunctionBuilder::BeginDead(const Record& r) {
  if (regions_.size() >= kMaxRegionDepth) return;
  // goto over code that never runs (ja, or ja32 = gotol)
  regions_.push_back({Region::Kind::kDead, code_.size(), 0, 0, state_});
  Emit(r.Flag(0, 0) ? Make(isa::kClassJmp32 | isa::kJmpJa) : Make(isa::kClassJmp | isa::kJmpJa));
}

void FunctionBuilder::BeginLoop(const Record& r) {
  if (regions_.size() >= kMaxRegionDepth || loops_ >= kMaxLoopDepth) return;
  // The counter lives in a callee-saved register the body never writes.
  const int counter = PickWritable(r.byte(0), true);
  if (counter < 0 || state_.regs[static_cast<size_t>(counter)].pointer()) return;
  EmitMovImm(static_cast<uint8_t>(counter), 1 + r.Pick(1, 6));
  reserved_ |= static_cast<uint16_t>(1u << counter);
  ++loops_;
  // r0..r5 start every iteration as the previous one's calls left them.
  for (uint8_t reg = 0; reg <= 5; ++reg) state_.regs[reg] = RegState{};
  regions_.push_back({Region::Kind::kLoop, 0, code_.size(), static_cast<uint8_t>(counter), state_});
}

void FunctionBuilder::EndRegion() {
  if (regions_.empty()) return;
  Region region = regions_.back();
  regions_.pop_back();
  if (region.kind == Region::Kind::kLoop) {
    // counter -= 1; if (counter != 0) goto head
    const uint8_t c = region.counter;
    Emit(Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluSub, c, 0, 0, 1));
    const auto back = static_cast<int64_t>(region.loop_head) - static_cast<int64_t>(code_.size()) - 1;
    Emit(Make(isa::kClassJmp | isa::kSrcK | isa::kJmpJne, c, 0, static_cast<int16_t>(back), 0));
    reserved_ &= static_cast<uint16_t>(~(1u << c));
    --loops_;
    state_.reachable = true;
    SetScalar(c);
    return;
  }
  const auto distance = static_cast<int64_t>(code_.size()) - static_cast<int64_t>(region.jump_slot) - 1;
  Insn& jump = code_[region.jump_slot];
  if (jump.opcode == (isa::kClassJmp32 | isa::kJmpJa)) {
    jump.imm = static_cast<int32_t>(distance);
  } else {
    jump.offset = static_cast<int16_t>(distance);
  }
  state_ = region.kind == Region::Kind::kDead ? region.before : MachineState::Merge(region.before, state_);
}

// --- Calls ------------------------------------------------------------------

void FunctionBuilder::SetUpHelperArgs(const Record& r, int32_t helper) {
  const MapInfo* map = layout_.value_maps.empty()
                           ? nullptr
                           : &layout_.value_maps[r.Pick(1, static_cast<uint32_t>(layout_.value_maps.size()))];
  switch (helper) {
    case kHelperMapLookupElem:
    case kHelperMapUpdateElem:
    case kHelperMapDeleteElem: {
      // r1 = &map; r2 = &key on the stack; (update) r3 = &value, r4 = flags
      EmitLddw(kR1, isa::kPseudoMapFd, static_cast<uint32_t>(map->fd));
      const int32_t key_slot = -8 * static_cast<int32_t>(1 + r.Pick(2, 4));
      const int32_t key = map->type == isa::MapType::kArray ? static_cast<int32_t>(r.Pick(3, map->entries + 2))
                                                            : static_cast<int32_t>(r.Pick(3, 4));
      Emit(Make(isa::kClassSt | isa::kModeMem | isa::kSizeDW, kFp, 0, static_cast<int16_t>(key_slot), key));
      EmitFrameAddress(kR2, key_slot);
      if (helper == kHelperMapUpdateElem) {
        const int32_t value_slot = -64 - 8 * static_cast<int32_t>((map->value_size + 7) / 8);
        for (uint32_t b = 0; b < map->value_size; b += 8) {
          Emit(Make(isa::kClassSt | isa::kModeMem | isa::kSizeDW, kFp, 0,
                    static_cast<int16_t>(value_slot + static_cast<int32_t>(b)),
                    static_cast<int32_t>(static_cast<uint32_t>(Immediate(r, 4)) + b)));
        }
        EmitFrameAddress(3, value_slot);
        EmitMovImm(kR4, r.Pick(5, 4));
      }
      break;
    }
    case kHelperProbeRead: {
      // r1 = &stack buffer, r2 = size, r3 = an untrusted pointer
      const auto size = static_cast<int32_t>(r.Pick(2, 65));
      EmitFrameAddress(kR1, -128);
      EmitMovImm(kR2, static_cast<uint64_t>(size));
      EmitMovImm(kR3, layout_.interesting_addresses[r.Pick(3, static_cast<uint32_t>(layout_.interesting_addresses.size()))]);
      break;
    }
    case kHelperUnwind:
      // r1 = 0 stops the program (now and then), anything else goes on
      EmitMovImm(kR1, r.Pick(2, 8) == 0 ? 0 : static_cast<uint64_t>(Immediate(r, 3)) | 1);
      break;
    case kHelperKptrXchg: {
      // r1 = &an 8-byte slot (stack or map value), r2 = the new value
      const auto slot = static_cast<int32_t>(-8 * (1 + r.Pick(2, 8)));
      EmitFrameAddress(kR1, slot);
      EmitMovImm(kR2, static_cast<uint64_t>(Immediate(r, 3)));
      break;
    }
    default: break;
  }
}

void FunctionBuilder::HelperCall(const Record& r) {
  static constexpr int32_t kHelpers[] = {kHelperMapLookupElem, kHelperMapUpdateElem, kHelperMapDeleteElem,
                                         kHelperProbeRead,     kHelperUnwind,        kHelperKptrXchg,
                                         kHelperMapLookupElem, kHelperGetPrandomU32};
  int32_t helper = kHelpers[r.Pick(0, std::size(kHelpers))];
  const bool map_helper = helper <= kHelperMapDeleteElem;
  if (map_helper && layout_.value_maps.empty()) helper = kSimpleHelpers[r.Pick(6, std::size(kSimpleHelpers))];
  if (helper == kHelperGetPrandomU32) helper = kSimpleHelpers[r.Pick(6, std::size(kSimpleHelpers))];
  if (reserved(kR0)) return;
  SetUpHelperArgs(r, helper);
  const MapInfo* map = helper == kHelperMapLookupElem
                           ? &layout_.value_maps[r.Pick(1, static_cast<uint32_t>(layout_.value_maps.size()))]
                           : nullptr;
  Emit(Make(isa::kOpCall, 0, 0, 0, helper));
  ClobberCallerSaved();
  SetScalar(kR0);
  if (map != nullptr && r.Flag(6, 7) && regions_.size() < kMaxRegionDepth) {
    // if (r0 == NULL) skip; inside, r0 points to the value.
    regions_.push_back({Region::Kind::kIf, code_.size(), 0, 0, state_});
    Emit(Make(isa::kClassJmp | isa::kSrcK | isa::kJmpJeq, kR0, 0, 0, 0));
    state_.regs[kR0] = RegState::Pointer(Area::kMapValue, 0, static_cast<int32_t>(map->value_size), map->index);
  }
}

void FunctionBuilder::LocalCall(const Record& r) {
  if (role_ == Role::kTailTarget || function_ + 1 >= functions_ || reserved(kR0)) return;
  // Only later functions: the call graph stays acyclic.
  const size_t callee = function_ + 1 + r.Pick(0, static_cast<uint32_t>(functions_ - function_ - 1));
  const Signature& sig = layout_.signatures[callee];
  if (sig.exception_callback) return;  // bpf_throw alone calls it
  if (IsCallback() && callee < layout_.throws.size() && layout_.throws[callee]) return;
  if (sig.callback && r.Flag(6, 0)) {
    // Through bpf_loop: r3 is the callback's context (its r2), a value of
    // ours; r1, r2 and r4 are bpf_loop's.
    if (reserved(kR1) || reserved(kR2) || reserved(kR3) || reserved(kR4)) return;
    const uint8_t src = ScalarOperand(r.byte(2));
    if (state_.regs[src].stack_derived) {
      EmitMovImm(kR3, 3);
    } else if (src != kR3) {
      Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR3, src));
    }
    SetScalar(kR3);
    EmitLoopCall(callee, r.byte(6));
    return;
  }
  if (sig.caller_stack) {
    EmitFrameAddress(kR1, -64);
  }
  for (int a = sig.caller_stack ? 2 : 1; a <= sig.args; ++a) {
    // An argument is a value of ours, never a stack address.
    const uint8_t src = ScalarOperand(r.byte(static_cast<size_t>(a)));
    if (state_.regs[src].stack_derived) {
      EmitMovImm(static_cast<uint8_t>(a), static_cast<uint64_t>(a));
    } else if (src != a) {
      Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, static_cast<uint8_t>(a), src));
    }
    SetScalar(static_cast<uint8_t>(a));
  }
  EmitLocalCall(callee);
}

void FunctionBuilder::Callx(const Record& r) {
  // r0 or a callee-saved register holds the helper id; the arguments are
  // set up as for a direct call.
  const int holder = r.Flag(0, 0) ? PickWritable(r.byte(5), true) : (reserved(kR0) ? -1 : 0);
  if (holder < 0 || reserved(kR0)) return;
  int32_t helper = kSimpleHelpers[r.Pick(6, std::size(kSimpleHelpers))];
  if (r.Pick(0, 4) == 1) helper = kHelperUnwind;
  if (r.Pick(0, 4) == 2 && !layout_.value_maps.empty()) helper = kHelperMapLookupElem;
  SetUpHelperArgs(r, helper);
  uint64_t id = static_cast<uint64_t>(helper);
  if (r.Pick(2, 32) == 0) id = r.Flag(3, 0) ? 0x100 + r.byte(4) : 99;  // no such helper: an error
  // Version 3: an id whose upper half is not zero is no helper either.
  if (layout_.version >= 3 && r.Pick(2, 32) == 1) id |= uint64_t{r.byte(4) | 1u} << (32 + r.Pick(5, 32));
  EmitMovImm(static_cast<uint8_t>(holder), id);
  Emit(Make(isa::kOpCallX, static_cast<uint8_t>(holder)));
  ClobberCallerSaved();
  SetScalar(kR0);
}

void FunctionBuilder::TailCall(const Record& r) {
  if (role_ == Role::kSubprogram || !layout_.prog_array) return;
  // r1 = ctx (what the target expects), r2 = &prog_array, r3 = index
  int context = -1;
  for (uint8_t reg = 0; reg < 10 && context < 0; ++reg) {
    const RegState& s = state_.regs[reg];
    if (s.pointer() && s.area == Area::kContext && s.offset == 0) context = reg;
  }
  if (context < 0) return;
  uint64_t index = layout_.bounds ? TailCallIndex(r) : r.Pick(1, layout_.prog_array->entries + 2);
  // Version 3, p2 bit 5: a target calls its own slot, a chain that runs to
  // the tail-call limit.
  if (layout_.version >= 3 && role_ == Role::kTailTarget && r.Flag(2, 5)) index = function_;
  // Only the low 32 bits count; version 3 puts any value in the upper half,
  // the bounds mode one time in four.
  if (r.Pick(2, layout_.bounds ? 4 : 16) == 0) {
    index |= layout_.version >= 3 ? uint64_t{r.byte(4) | 1u} << (32 + r.Pick(5, 32)) : uint64_t{1} << 32;
  }
  EmitTailCall(static_cast<uint8_t>(context), index, r.Flag(3, 0));
}

uint64_t FunctionBuilder::TailCallIndex(const Record& r) const {
  // The JIT's bound check is `index >= max_entries` on the low 32 bits,
  // unsigned: below, the last slot, equal, above, and the values a signed
  // or off-by-one compare gets wrong.
  const uint32_t entries = layout_.prog_array->entries;
  switch (r.Pick(1, 8)) {
    case 3: return entries - 1;
    case 4: return entries;
    case 5: return uint64_t{entries} + 1;
    case 6: return 0xffffffffULL;
    case 7: return 0x80000000ULL;
    default: return r.Pick(5, entries);
  }
}

void FunctionBuilder::EarlyExit(const Record& r) {
  if (layout_.version >= 8 && (r.byte(0) & kEarlyExitThrows) != 0 && !IsCallback()) return Throw(r);
  if (reserved(kR0)) return;
  // return r0 from here
  if (!state_.regs[kR0].readable() || r.Flag(0, 0)) EmitMovImm(kR0, static_cast<uint64_t>(Immediate(r, 1)));
  EmitExit();
  state_.reachable = false;
}

void FunctionBuilder::Throw(const Record& r) {
  if (reserved(kR1)) return;
  // bpf_throw(cookie): the program returns the cookie (the verifier's
  // hidden exception callback), a scalar of ours (p2) or an immediate (p0
  // bit 2, p1).
  const uint8_t src = ScalarOperand(r.byte(2));
  if (r.Flag(0, 2) || state_.regs[src].stack_derived || !state_.regs[src].readable() || state_.regs[src].pointer()) {
    EmitMovImm(kR1, static_cast<uint64_t>(Immediate(r, 1)));
  } else if (src != kR1) {
    Emit(Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, kR1, src));
  }
  SetScalar(kR1);
  // What the function observes goes to its frame first, as before an exit:
  // the program's frame is compared after the callback ran.
  EmitObservations();
  Emit(Make(isa::kOpCall, 0, isa::kPseudoKfuncCall, 0, kKfuncThrow));
  throws_ = true;
  state_.reachable = false;
}

void FunctionBuilder::DeliberateFault(const Record& r) {
  const int reg = PickWritable(r.byte(1));
  if (reg < 0) return;
  const auto dst = static_cast<uint8_t>(reg);
  switch (r.Pick(0, 3)) {
    case 0:
      // A plain load through an untrusted pointer: an unhandled fault.
      EmitMovImm(dst, layout_.interesting_addresses[r.Pick(2, 6)]);
      Emit(Make(isa::kClassLdx | isa::kModeMem | SizeCode(kSizes[r.Pick(3, 4)]), dst, dst, 0));
      SetScalar(dst);
      break;
    case 1:
      // A store to a read-only map object.
      if (layout_.value_maps.empty()) return;
      EmitLddw(dst, isa::kPseudoMapFd, static_cast<uint32_t>(layout_.value_maps.front().fd));
      Emit(Make(isa::kClassSt | isa::kModeMem | isa::kSizeW, dst, 0, 0, 1));
      SetScalar(dst);
      break;
    default:
      // A misaligned atomic on the stack.
      if (state_.regs[dst].stack_derived) return;
      if (!state_.regs[dst].readable()) EmitMovImm(dst, 1);
      Emit(Make(isa::kClassStx | isa::kModeAtomic | isa::kSizeDW, kFp, dst,
                static_cast<int16_t>(-16 + 1 + r.Pick(2, 7)), isa::kAtomicAdd));
      break;
  }
}

void FunctionBuilder::LegacyPacket(const Record& r) {
  // Rare on purpose: the JIT rejects these (the kernel's verifier rewrites
  // them), so every program with one is a run the JITs cannot compare.
  if (reserved(kR0) || r.byte(6) >= 8) return;
  // r0 = ntoh(*(packet + [src +] imm)): interpreter only (the JIT rejects it).
  const uint8_t size = SizeCode(kSizes[r.Pick(0, 3)]);
  const auto imm = static_cast<int32_t>(r.Pick(1, 136));
  if (r.Flag(2, 0)) {
    Emit(Make(isa::kClassLd | isa::kModeInd | size, 0, ScalarOperand(r.byte(3)), 0, imm));
  } else {
    Emit(Make(isa::kClassLd | isa::kModeAbs | size, 0, 0, 0, imm));
  }
  ClobberCallerSaved();
  SetScalar(kR0);
}

}  // namespace bpfdiff::fuzz
