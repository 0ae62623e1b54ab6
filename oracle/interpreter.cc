#include "oracle/interpreter.h"

#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace bpfdiff {
namespace {

using isa::Insn;

// Width helpers: every truncation and extension is spelled out.
constexpr uint32_t U32(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr int32_t S32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
constexpr int64_t S64(uint64_t v) { return static_cast<int64_t>(v); }
constexpr uint64_t SExt32(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
constexpr uint64_t ZExt32(uint32_t v) { return v; }

constexpr uint64_t SDiv64(uint64_t a, uint64_t b) {
  if (b == 0) return 0;
  if (S64(a) == std::numeric_limits<int64_t>::min() && S64(b) == -1) return a;  // overflow: INT64_MIN
  return static_cast<uint64_t>(S64(a) / S64(b));
}
constexpr uint64_t SMod64(uint64_t a, uint64_t b) {
  if (b == 0) return a;
  if (S64(a) == std::numeric_limits<int64_t>::min() && S64(b) == -1) return 0;
  return static_cast<uint64_t>(S64(a) % S64(b));
}
constexpr uint32_t SDiv32(uint32_t a, uint32_t b) {
  if (b == 0) return 0;
  if (S32(a) == std::numeric_limits<int32_t>::min() && S32(b) == -1) return a;
  return static_cast<uint32_t>(S32(a) / S32(b));
}
constexpr uint32_t SMod32(uint32_t a, uint32_t b) {
  if (b == 0) return a;
  if (S32(a) == std::numeric_limits<int32_t>::min() && S32(b) == -1) return 0;
  return static_cast<uint32_t>(S32(a) % S32(b));
}

uint64_t ByteSwap(uint64_t v, int32_t width) {
  switch (width) {
    case 16: return __builtin_bswap16(static_cast<uint16_t>(v));
    case 32: return __builtin_bswap32(static_cast<uint32_t>(v));
    default: return __builtin_bswap64(v);
  }
}
uint64_t Truncate(uint64_t v, int32_t width) {
  switch (width) {
    case 16: return static_cast<uint16_t>(v);
    case 32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

uint64_t ReadSized(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1: return p[0];
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}
uint64_t SignExtend(uint64_t v, unsigned size) {
  switch (size) {
    case 1: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(v)));
    case 2: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v)));
    case 4: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
    default: return v;
  }
}
void WriteSized(uint8_t* p, unsigned size, uint64_t v) {
  switch (size) {
    case 1: p[0] = static_cast<uint8_t>(v); break;
    case 2: { auto x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case 4: { auto x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

// One local-call frame: where to return and the caller's registers.
struct Frame {
  uint32_t return_pc;
  uint64_t saved[10];  // r0..r9 of the caller (r0 is replaced by the callee's)
};

// Evaluates an atomic read-modify-write on `p` (4 or 8 bytes) and returns
// the old value. For cmpxchg, `expected` is r0.
uint64_t Atomic(uint8_t* p, unsigned size, int32_t op, uint64_t operand, uint64_t expected) {
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

}  // namespace

Outcome Interpreter::Run() {
  Outcome outcome =
      RunProgram(0, {env_.context_address(), env_.context_length(), 0, 0, 0});
  outcome.memory = env_.Capture(options_.cpu, options_.geometry);
  return outcome;
}

Outcome Interpreter::RunProgram(size_t index, const std::array<uint64_t, 5>& args) {
  Outcome outcome;
  GuestMemory& memory = env_.memory();
  HelperContext helper_context{memory, env_.helper_state(options_.cpu)};
  memory.ClearPrivateRead();
  // The stack bytes a program may see: the BPF frames of every call depth.
  const uint64_t deepest_frame = options_.geometry.FramePointer(options_.cpu, isa::kMaxCallDepth - 1) - isa::kStackSize;
  const uint64_t stack_top = options_.geometry.FramePointer(options_.cpu, 0);
  auto outside_frames = [&](uint64_t address, uint64_t size) {
    const Region* region = memory.last_region();
    if (region == nullptr || region->base != guest::kStackBase) return false;
    if (address < deepest_frame || address + size > stack_top) return true;
    for (int depth = 0; depth < isa::kMaxCallDepth; ++depth) {
      const uint64_t fp = options_.geometry.FramePointer(options_.cpu, depth);
      if (address >= fp - isa::kStackSize && address + size <= fp) return false;
    }
    return true;
  };
  bool outside = false;

  uint64_t r[isa::kNumRegs] = {};
  for (int i = 0; i < 5; ++i) r[i + 1] = args[static_cast<size_t>(i)];
  int depth = 0;
  r[isa::kFramePointer] = options_.geometry.FramePointer(options_.cpu, depth);
  Frame frames[isa::kMaxCallDepth];
  int tail_call_count = 0;

  size_t program_index = index;
  const Insn* code = loaded_.programs[index].program.insns.data();
  uint8_t* executed = options_.executed ? (*options_.executed)[index].data() : nullptr;
  uint32_t pc = 0;
  uint64_t steps = 0;
  const uint64_t budget = options_.budget;

  auto end_with_fault = [&](const FaultInfo& info) {
    outcome.end = EndKind::kFault;
    outcome.fault = info;
    outcome.steps = steps;
    outcome.read_engine_private = outside || memory.private_read();
    return std::move(outcome);  // every caller returns at once
  };
  // An access that faults: reported at its first inaccessible byte, as a CPU does.
  auto fault = [&](uint64_t address, uint64_t size, AccessKind kind) {
    const uint64_t first = memory.FirstInaccessible(address, size, kind);
    const bool partial = first != address || (size > 1 && memory.Accessible(address, 1, kind));
    return end_with_fault(FaultInfo{pc, static_cast<uint32_t>(program_index), first, kind, partial});
  };
  auto finish = [&](EndKind end, uint64_t r0, std::string message = {}) {
    outcome.end = end;
    outcome.r0 = r0;
    outcome.message = std::move(message);
    outcome.steps = steps;
    outcome.read_engine_private = outside || memory.private_read();
    return std::move(outcome);  // every caller returns at once
  };

  for (;;) {
    if (steps++ == budget) {
      return finish(EndKind::kBudget, 0, fmt::format("{} instructions", budget));
    }
    const Insn insn = code[pc];
    if (executed != nullptr) executed[pc] = 1;
    uint64_t& dst = r[insn.dst];
    const uint64_t src = r[insn.src];
    const uint64_t imm = SExt32(insn.imm);
    uint32_t next = pc + 1;

    switch (insn.opcode) {
      // --- ALU64: dst = dst OP src|imm (imm sign-extended to 64 bits) ---
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd: dst += imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluAdd: dst += src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluSub: dst -= imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluSub: dst -= src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluMul: dst *= imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluMul: dst *= src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluDiv:
        dst = insn.offset ? SDiv64(dst, imm) : (imm ? dst / imm : 0);
        break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluDiv:
        dst = insn.offset ? SDiv64(dst, src) : (src ? dst / src : 0);
        break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluMod:
        dst = insn.offset ? SMod64(dst, imm) : (imm ? dst % imm : dst);
        break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluMod:
        dst = insn.offset ? SMod64(dst, src) : (src ? dst % src : dst);
        break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluOr: dst |= imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluOr: dst |= src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluAnd: dst &= imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluAnd: dst &= src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluXor: dst ^= imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluXor: dst ^= src; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluLsh: dst <<= (imm & 63); break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluLsh: dst <<= (src & 63); break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluRsh: dst >>= (imm & 63); break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluRsh: dst >>= (src & 63); break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluArsh:
        dst = static_cast<uint64_t>(S64(dst) >> (imm & 63));
        break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluArsh:
        dst = static_cast<uint64_t>(S64(dst) >> (src & 63));
        break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluNeg: dst = 0 - dst; break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluMov: dst = imm; break;
      case isa::kClassAlu64 | isa::kSrcX | isa::kAluMov:
        dst = insn.offset == 0 ? src : SignExtend(src, static_cast<unsigned>(insn.offset) / 8);
        break;
      case isa::kClassAlu64 | isa::kSrcK | isa::kAluEnd: dst = ByteSwap(dst, insn.imm); break;

      // --- ALU32: on the low halves; the result is zero-extended ---
      case isa::kClassAlu | isa::kSrcK | isa::kAluAdd: dst = ZExt32(U32(dst) + U32(imm)); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluAdd: dst = ZExt32(U32(dst) + U32(src)); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluSub: dst = ZExt32(U32(dst) - U32(imm)); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluSub: dst = ZExt32(U32(dst) - U32(src)); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluMul: dst = ZExt32(U32(dst) * U32(imm)); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluMul: dst = ZExt32(U32(dst) * U32(src)); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluDiv:
        dst = insn.offset ? SDiv32(U32(dst), U32(imm)) : (U32(imm) ? U32(dst) / U32(imm) : 0);
        break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluDiv:
        dst = insn.offset ? SDiv32(U32(dst), U32(src)) : (U32(src) ? U32(dst) / U32(src) : 0);
        break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluMod:
        dst = insn.offset ? SMod32(U32(dst), U32(imm)) : (U32(imm) ? U32(dst) % U32(imm) : U32(dst));
        break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluMod:
        dst = insn.offset ? SMod32(U32(dst), U32(src)) : (U32(src) ? U32(dst) % U32(src) : U32(dst));
        break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluOr: dst = U32(dst) | U32(imm); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluOr: dst = U32(dst) | U32(src); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluAnd: dst = U32(dst) & U32(imm); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluAnd: dst = U32(dst) & U32(src); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluXor: dst = U32(dst) ^ U32(imm); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluXor: dst = U32(dst) ^ U32(src); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluLsh: dst = ZExt32(U32(dst) << (imm & 31)); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluLsh: dst = ZExt32(U32(dst) << (src & 31)); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluRsh: dst = U32(dst) >> (imm & 31); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluRsh: dst = U32(dst) >> (src & 31); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluArsh:
        dst = ZExt32(static_cast<uint32_t>(S32(dst) >> (imm & 31)));
        break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluArsh:
        dst = ZExt32(static_cast<uint32_t>(S32(dst) >> (src & 31)));
        break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluNeg: dst = ZExt32(0u - U32(dst)); break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluMov: dst = U32(imm); break;
      case isa::kClassAlu | isa::kSrcX | isa::kAluMov:
        dst = insn.offset == 0 ? U32(src) : U32(SignExtend(src, static_cast<unsigned>(insn.offset) / 8));
        break;
      case isa::kClassAlu | isa::kSrcK | isa::kAluEnd: dst = Truncate(dst, insn.imm); break;  // le
      case isa::kClassAlu | isa::kSrcX | isa::kAluEnd: dst = ByteSwap(dst, insn.imm); break;  // be

      // --- Jumps: if (dst OP src|imm) pc += offset ---
      case isa::kClassJmp | isa::kJmpJa: next = pc + 1 + static_cast<uint32_t>(insn.offset); break;
      case isa::kClassJmp32 | isa::kJmpJa: next = pc + 1 + static_cast<uint32_t>(insn.imm); break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJeq: if (dst == imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJeq: if (dst == src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJne: if (dst != imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJne: if (dst != src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJgt: if (dst > imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJgt: if (dst > src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJge: if (dst >= imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJge: if (dst >= src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJlt: if (dst < imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJlt: if (dst < src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJle: if (dst <= imm) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJle: if (dst <= src) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJset: if ((dst & imm) != 0) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJset: if ((dst & src) != 0) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJeq: if (U32(dst) == U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJeq: if (U32(dst) == U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJne: if (U32(dst) != U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJne: if (U32(dst) != U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJgt: if (U32(dst) > U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJgt: if (U32(dst) > U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJge: if (U32(dst) >= U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJge: if (U32(dst) >= U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJlt: if (U32(dst) < U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJlt: if (U32(dst) < U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJle: if (U32(dst) <= U32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJle: if (U32(dst) <= U32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJset: if ((U32(dst) & U32(imm)) != 0) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJset: if ((U32(dst) & U32(src)) != 0) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJsgt: if (S64(dst) > S64(imm)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJsgt: if (S64(dst) > S64(src)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJsge: if (S64(dst) >= S64(imm)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJsge: if (S64(dst) >= S64(src)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJslt: if (S64(dst) < S64(imm)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJslt: if (S64(dst) < S64(src)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcK | isa::kJmpJsle: if (S64(dst) <= S64(imm)) next += insn.offset; break;
      case isa::kClassJmp | isa::kSrcX | isa::kJmpJsle: if (S64(dst) <= S64(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsgt: if (S32(dst) > S32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsgt: if (S32(dst) > S32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsge: if (S32(dst) >= S32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsge: if (S32(dst) >= S32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJslt: if (S32(dst) < S32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJslt: if (S32(dst) < S32(src)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcK | isa::kJmpJsle: if (S32(dst) <= S32(imm)) next += insn.offset; break;
      case isa::kClassJmp32 | isa::kSrcX | isa::kJmpJsle: if (S32(dst) <= S32(src)) next += insn.offset; break;

      // --- Calls and exit ---
      case isa::kOpCall:
        if (insn.src == isa::kPseudoCall) {
          // Local call: a new frame with its own 512 bytes below a new r10.
          if (depth + 1 >= isa::kMaxCallDepth) {
            return finish(EndKind::kHarnessError, 0, "local calls nest deeper than the limit");
          }
          Frame& frame = frames[depth++];
          frame.return_pc = pc + 1;
          std::memcpy(frame.saved, r, sizeof frame.saved);
          r[isa::kFramePointer] = options_.geometry.FramePointer(options_.cpu, depth);
          next = pc + 1 + static_cast<uint32_t>(insn.imm);
          break;
        }
        [[fallthrough]];
      case isa::kOpCallX: {
        // Helper call: r0 = helper(r1, ..., r5). callx takes the id from dst.
        const uint64_t id = insn.opcode == isa::kOpCallX ? dst : static_cast<uint64_t>(insn.imm);
        if (insn.opcode == isa::kOpCallX && id > guest::kMaxHelperId) {
          return finish(EndKind::kHelperError, 0, BadCallxMessage());
        }
        HelperResult result = InvokeHelper(static_cast<int64_t>(id), helper_context,
                                           {r[1], r[2], r[3], r[4], r[5]}, outcome.helper_calls);
        if (result.kind == HelperResult::Kind::kUnwind) return finish(EndKind::kUnwind, 0);
        if (result.kind == HelperResult::Kind::kError) {
          outcome.refusing_helper = static_cast<int32_t>(id);
          return finish(EndKind::kHelperError, 0, std::move(result.error));
        }
        r[0] = result.value;
        break;
      }
      case isa::kOpExit:
        if (depth == 0) return finish(EndKind::kExit, r[0]);
        {
          // Return to the caller: its registers come back, r0 is the result.
          const Frame& frame = frames[--depth];
          const uint64_t result = r[0];
          std::memcpy(r, frame.saved, sizeof frame.saved);
          r[0] = result;
          r[isa::kFramePointer] = options_.geometry.FramePointer(options_.cpu, depth);
          next = frame.return_pc;
        }
        break;
      case isa::kOpTailCall: {
        // if (r3 >= map->max_entries || tcc >= 33 || !map->ptrs[r3]) fall through;
        // else run that program in this frame.
        const uint64_t map = r[2];
        const uint32_t slot = U32(r[3]);
        const uint8_t* max_entries = memory.Translate(map + guest::kMapMaxEntriesOffset, 4, AccessKind::kRead);
        if (max_entries == nullptr) return fault(map + guest::kMapMaxEntriesOffset, 4, AccessKind::kRead);
        if (slot >= ReadSized(max_entries, 4)) break;
        if (tail_call_count >= guest::kMaxTailCalls) break;
        ++tail_call_count;
        const uint64_t entry = map + guest::kMapPtrsOffset + uint64_t{slot} * 8;
        const uint8_t* prog_ptr = memory.Translate(entry, 8, AccessKind::kRead);
        if (prog_ptr == nullptr) return fault(entry, 8, AccessKind::kRead);
        const uint64_t prog = ReadSized(prog_ptr, 8);
        if (prog == 0) break;
        const uint8_t* target_index = memory.Inspect(prog + guest::kProgIndexOffset, 4, AccessKind::kRead);
        if (target_index == nullptr) return fault(prog + guest::kProgIndexOffset, 4, AccessKind::kRead);
        program_index = ReadSized(target_index, 4);
        if (program_index >= loaded_.programs.size()) {
          return finish(EndKind::kHarnessError, 0, "prog_array names a program the case does not have");
        }
        outcome.tail_calls.push_back(static_cast<uint32_t>(program_index));
        code = loaded_.programs[program_index].program.insns.data();
        if (executed != nullptr) executed = (*options_.executed)[program_index].data();
        next = 0;
        break;
      }

      // --- lddw: dst = imm64 ---
      case isa::kOpLddw:
        dst = isa::Imm64(insn, code[pc + 1]);
        next = pc + 2;
        break;

      default: {
        const uint8_t cls = isa::ClassOf(insn.opcode);
        const uint8_t mode = isa::ModeOf(insn.opcode);
        const unsigned size = isa::SizeBytes(insn.opcode);
        if (cls == isa::kClassLdx) {
          // dst = *(size *)(src + offset), zero- or sign-extended.
          const uint64_t address = src + SExt32(insn.offset);
          const uint8_t* p = memory.Translate(address, size, AccessKind::kRead);
          const bool probe = mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx;
          const bool sign = mode == isa::kModeMemSx || mode == isa::kModeProbeMemSx;
          if (p == nullptr) {
            if (!probe) return fault(address, size, AccessKind::kRead);
            dst = 0;  // the exception-table fixup
            break;
          }
          outside |= outside_frames(address, size);
          const uint64_t value = ReadSized(p, size);
          dst = sign ? SignExtend(value, size) : value;
          break;
        }
        if (cls == isa::kClassSt || (cls == isa::kClassStx && mode == isa::kModeMem)) {
          // *(size *)(dst + offset) = imm | src
          const uint64_t address = dst + SExt32(insn.offset);
          uint8_t* p = memory.Translate(address, size, AccessKind::kWrite);
          if (p == nullptr) return fault(address, size, AccessKind::kWrite);
          outside |= outside_frames(address, size);
          WriteSized(p, size, cls == isa::kClassSt ? imm : src);
          break;
        }
        if (cls == isa::kClassStx && mode == isa::kModeAtomic) {
          // An atomic must be naturally aligned; it reads before it writes,
          // so memory it may not read faults as a read.
          const uint64_t address = dst + SExt32(insn.offset);
          if (address % size != 0) {
            return end_with_fault(FaultInfo{pc, static_cast<uint32_t>(program_index), address,
                                            AccessKind::kMisaligned, false});
          }
          uint8_t* p = memory.Translate(address, size, AccessKind::kWrite);
          if (p == nullptr) {
            return fault(address, size, memory.Accessible(address, size, AccessKind::kRead) ? AccessKind::kWrite : AccessKind::kRead);
          }
          outside |= outside_frames(address, size);
          const uint64_t old = Atomic(p, size, insn.imm, src, r[0]);
          if (insn.imm == isa::kAtomicCmpXchg) {
            r[0] = old;
          } else if (insn.imm & isa::kAtomicFetch) {
            r[insn.src] = old;
          }
          break;
        }
        if (cls == isa::kClassLd && (mode == isa::kModeAbs || mode == isa::kModeInd)) {
          // Legacy packet access: r0 = ntoh(*(packet + [src +] imm)); the
          // program returns 0 when the access is outside the packet.
          const int64_t offset = mode == isa::kModeInd ? S32(U32(src) + U32(imm)) : insn.imm;
          if (offset < 0 || static_cast<uint64_t>(offset) + size > env_.context_length()) {
            return finish(EndKind::kExit, 0);
          }
          const uint8_t* p = memory.HostPointer(env_.context_address() + static_cast<uint64_t>(offset), size);
          r[0] = size == 1 ? p[0] : ByteSwap(ReadSized(p, size), static_cast<int32_t>(size * 8));
          break;
        }
        return finish(EndKind::kHarnessError, 0,
                      fmt::format("instruction {}: opcode 0x{:02x} reached the interpreter unvalidated",
                                  pc, insn.opcode));
      }
    }
    pc = next;
  }
}

}  // namespace bpfdiff
