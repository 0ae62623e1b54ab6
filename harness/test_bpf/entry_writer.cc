#include "harness/test_bpf/entry_writer.h"

#include <fmt/format.h>

#include "isa/opcode_table.h"

namespace bpfdiff {
namespace {

using isa::Insn;
using isa::Shape;

std::string Reg(uint8_t reg) { return fmt::format("R{}", reg); }

std::string_view AluOp(uint8_t opcode) {
  switch (isa::OpOf(opcode)) {
    case isa::kAluAdd: return "BPF_ADD";
    case isa::kAluSub: return "BPF_SUB";
    case isa::kAluMul: return "BPF_MUL";
    case isa::kAluDiv: return "BPF_DIV";
    case isa::kAluOr: return "BPF_OR";
    case isa::kAluAnd: return "BPF_AND";
    case isa::kAluLsh: return "BPF_LSH";
    case isa::kAluRsh: return "BPF_RSH";
    case isa::kAluNeg: return "BPF_NEG";
    case isa::kAluMod: return "BPF_MOD";
    case isa::kAluXor: return "BPF_XOR";
    case isa::kAluMov: return "BPF_MOV";
    case isa::kAluArsh: return "BPF_ARSH";
    default: return "BPF_END";
  }
}

std::string_view JumpOp(uint8_t opcode) {
  switch (isa::OpOf(opcode)) {
    case isa::kJmpJeq: return "BPF_JEQ";
    case isa::kJmpJgt: return "BPF_JGT";
    case isa::kJmpJge: return "BPF_JGE";
    case isa::kJmpJset: return "BPF_JSET";
    case isa::kJmpJne: return "BPF_JNE";
    case isa::kJmpJsgt: return "BPF_JSGT";
    case isa::kJmpJsge: return "BPF_JSGE";
    case isa::kJmpJlt: return "BPF_JLT";
    case isa::kJmpJle: return "BPF_JLE";
    case isa::kJmpJslt: return "BPF_JSLT";
    default: return "BPF_JSLE";
  }
}

std::string_view Size(uint8_t opcode) {
  switch (isa::SizeOf(opcode)) {
    case isa::kSizeW: return "BPF_W";
    case isa::kSizeH: return "BPF_H";
    case isa::kSizeB: return "BPF_B";
    default: return "BPF_DW";
  }
}

// The op of BPF_ATOMIC_OP(): BPF_XCHG and BPF_CMPXCHG include BPF_FETCH.
std::string AtomicOp(int32_t imm) {
  if (imm == isa::kAtomicXchg) return "BPF_XCHG";
  if (imm == isa::kAtomicCmpXchg) return "BPF_CMPXCHG";
  const std::string_view op = (imm & ~isa::kAtomicFetch) == isa::kAtomicOr    ? "BPF_OR"
                              : (imm & ~isa::kAtomicFetch) == isa::kAtomicAnd ? "BPF_AND"
                              : (imm & ~isa::kAtomicFetch) == isa::kAtomicXor ? "BPF_XOR"
                                                                               : "BPF_ADD";
  return (imm & isa::kAtomicFetch) != 0 ? fmt::format("{} | BPF_FETCH", op) : std::string(op);
}

std::string Immediate64(uint64_t value) {
  const auto as_signed = static_cast<int64_t>(value);
  if (as_signed >= -4096 && as_signed <= 4096) return fmt::format("{}", as_signed);
  return fmt::format("0x{:016x}ULL", value);
}

bool Is64(uint8_t opcode) { return isa::ClassOf(opcode) == isa::kClassAlu64; }

// TAIL_CALL()'s offset operand: a test's distance, or one of its names.
std::string TailCallOffset(int16_t offset, const kernelsrc::TestBpfMarkers& markers) {
  if (offset == markers.tail_call_null) return "TAIL_CALL_NULL";
  if (offset == markers.tail_call_invalid) return "TAIL_CALL_INVALID";
  return fmt::format("{}", offset);
}

// BPF_ALU | BPF_MOV | BPF_K holding TAIL_CALL_MARKER: TAIL_CALL()'s index.
bool IsIndexMarker(const Insn& insn, const kernelsrc::TestBpfMarkers& markers) {
  return insn.opcode == (isa::kClassAlu | isa::kAluMov | isa::kSrcK) && insn.imm == markers.tail_call_marker;
}

bool IsArrayMarker(std::span<const Insn> insns, size_t pc, const kernelsrc::TestBpfMarkers& markers) {
  return insns[pc].opcode == isa::kOpLddw && insns[pc].src == 0 && insns[pc].imm == markers.tail_call_marker &&
         pc + 1 < insns.size() && insns[pc + 1].imm == 0;
}

Result<std::string> Refuse(const isa::Form& form, size_t pc, std::string_view why) {
  return Fail("instruction {} ({}): {}", pc, form.name, why);
}

// One instruction that is not a TAIL_CALL() marker.
Result<std::string> Macro(std::span<const Insn> insns, size_t pc) {
  const Insn& insn = insns[pc];
  const auto id = isa::Classify(insn);
  if (!id) return Fail("instruction {}: opcode 0x{:02x} is no instruction", pc, insn.opcode);
  const isa::Form& form = isa::FormById(*id);
  const std::string dst = Reg(insn.dst), src = Reg(insn.src);
  const bool is64 = Is64(insn.opcode);
  const bool jmp32 = isa::ClassOf(insn.opcode) == isa::kClassJmp32;
  switch (form.shape) {
    case Shape::kAluImm:
      if (insn.offset != 0) {
        return fmt::format("BPF_ALU{}_IMM_OFF({}, {}, {}, {})", is64 ? 64 : 32, AluOp(insn.opcode), dst,
                           TestBpfImmediate(insn.imm), insn.offset);
      }
      if (isa::OpOf(insn.opcode) == isa::kAluMov) {
        return fmt::format("BPF_MOV{}_IMM({}, {})", is64 ? 64 : 32, dst, TestBpfImmediate(insn.imm));
      }
      return fmt::format("BPF_ALU{}_IMM({}, {}, {})", is64 ? 64 : 32, AluOp(insn.opcode), dst,
                         TestBpfImmediate(insn.imm));
    case Shape::kAluReg:
      if (insn.offset != 0) {
        return fmt::format("BPF_ALU{}_REG_OFF({}, {}, {}, {})", is64 ? 64 : 32, AluOp(insn.opcode), dst, src,
                           insn.offset);
      }
      if (isa::OpOf(insn.opcode) == isa::kAluMov) return fmt::format("BPF_MOV{}_REG({}, {})", is64 ? 64 : 32, dst, src);
      return fmt::format("BPF_ALU{}_REG({}, {}, {})", is64 ? 64 : 32, AluOp(insn.opcode), dst, src);
    case Shape::kAluUnary: return fmt::format("BPF_ALU{}_IMM(BPF_NEG, {}, 0)", is64 ? 64 : 32, dst);
    case Shape::kEndian:
      if (is64) return fmt::format("BPF_BSWAP({}, {})", dst, insn.imm);
      return fmt::format("BPF_ENDIAN({}, {}, {})", isa::SourceOf(insn.opcode) == isa::kSrcX ? "BPF_TO_BE" : "BPF_TO_LE",
                         dst, insn.imm);
    case Shape::kMovSx: return fmt::format("BPF_MOVSX{}_REG({}, {}, {})", is64 ? 64 : 32, dst, src, insn.offset);
    case Shape::kJa: return fmt::format("BPF_JMP_A({})", insn.offset);
    case Shape::kJa32: return fmt::format("BPF_JMP32_A({})", insn.imm);
    case Shape::kJumpImm:
      return fmt::format("BPF_JMP{}_IMM({}, {}, {}, {})", jmp32 ? "32" : "", JumpOp(insn.opcode), dst,
                         TestBpfImmediate(insn.imm), insn.offset);
    case Shape::kJumpReg:
      return fmt::format("BPF_JMP{}_REG({}, {}, {}, {})", jmp32 ? "32" : "", JumpOp(insn.opcode), dst, src,
                         insn.offset);
    case Shape::kTailCall: return std::string("BPF_JMP_IMM(BPF_TAIL_CALL, 0, 0, 0)");
    case Shape::kExit: return std::string("BPF_EXIT_INSN()");
    case Shape::kLddw: {
      const uint64_t value =
          static_cast<uint32_t>(insn.imm) | static_cast<uint64_t>(static_cast<uint32_t>(insns[pc + 1].imm)) << 32;
      return fmt::format("BPF_LD_IMM64({}, {})", dst, Immediate64(value));
    }
    case Shape::kLoad:
      if (isa::ModeOf(insn.opcode) == isa::kModeMem) {
        return fmt::format("BPF_LDX_MEM({}, {}, {}, {})", Size(insn.opcode), dst, src, insn.offset);
      }
      if (isa::ModeOf(insn.opcode) == isa::kModeMemSx) {
        return fmt::format("BPF_LDX_MEMSX({}, {}, {}, {})", Size(insn.opcode), dst, src, insn.offset);
      }
      return Refuse(form, pc, "kernel-internal: the verifier makes it, and test_bpf's cases are not verified");
    case Shape::kStoreImm:
      if (isa::ModeOf(insn.opcode) == isa::kModeMem) {
        return fmt::format("BPF_ST_MEM({}, {}, {}, {})", Size(insn.opcode), dst, insn.offset,
                           TestBpfImmediate(insn.imm));
      }
      return Refuse(form, pc, "kernel-internal: the verifier makes it, and test_bpf's cases are not verified");
    case Shape::kStoreReg:
      if (isa::ModeOf(insn.opcode) == isa::kModeMem) {
        return fmt::format("BPF_STX_MEM({}, {}, {}, {})", Size(insn.opcode), dst, src, insn.offset);
      }
      return Refuse(form, pc, "kernel-internal: the verifier makes it, and test_bpf's cases are not verified");
    case Shape::kAtomic:
      if (isa::ModeOf(insn.opcode) == isa::kModeAtomic) {
        return fmt::format("BPF_ATOMIC_OP({}, {}, {}, {}, {})", Size(insn.opcode), AtomicOp(insn.imm), dst, src,
                           insn.offset);
      }
      return Refuse(form, pc, "an arena atomic: test_bpf.c's cases have no arena");
    case Shape::kMovPerCpu:
      return Refuse(form, pc, "kernel-internal (BPF_ADDR_PERCPU): the verifier makes it of a per-CPU access");
    case Shape::kAddrSpaceCast: return Refuse(form, pc, "an arena cast: test_bpf.c's cases have no arena");
    case Shape::kCallHelper:
      return Refuse(form, pc,
                    "a helper call: test_bpf.c's cases are not verified, so nothing makes a helper's id its "
                    "address");
    case Shape::kCallLocal:
    case Shape::kLddwFunc:
      return Refuse(form, pc, "a BPF function: only the verifier's jit_subprogs() compiles programs of several");
    case Shape::kCallReg:
    case Shape::kCallKfunc: return Refuse(form, pc, "test_bpf.c's cases call no kernel function by BTF id");
    case Shape::kLddwMapFd:
    case Shape::kLddwMapValue: return Refuse(form, pc, "test_bpf.c makes no maps");
    case Shape::kLdAbs:
    case Shape::kLdInd:
      return Refuse(form, pc, "legacy packet access: its socket buffer is not bpfdiff's input memory");
  }
  return Refuse(form, pc, "no macro for it");
}

}  // namespace

std::string TestBpfImmediate(int32_t imm) {
  if (imm >= -4096 && imm <= 4096) return fmt::format("{}", imm);
  return fmt::format("0x{:x}", static_cast<uint32_t>(imm));
}

Result<std::vector<std::string>> TestBpfMacros(std::span<const isa::Insn> insns,
                                               const kernelsrc::TestBpfMarkers& markers) {
  std::vector<std::string> lines;
  for (size_t pc = 0; pc < insns.size();) {
    const Insn& insn = insns[pc];
    // TAIL_CALL(offset), as the file writes its tail calls: lddw r2, the
    // index's mov and the tail call, in four slots.
    if (IsArrayMarker(insns, pc, markers) && insn.dst == 2 && pc + 3 < insns.size() &&
        IsIndexMarker(insns[pc + 2], markers) && insns[pc + 2].dst == 3 &&
        insns[pc + 3].opcode == isa::kOpTailCall) {
      lines.push_back(fmt::format("TAIL_CALL({})", TailCallOffset(insns[pc + 2].offset, markers)));
      pc += 4;
      continue;
    }
    if (IsArrayMarker(insns, pc, markers)) {
      lines.push_back(fmt::format("BPF_LD_IMM64({}, TAIL_CALL_MARKER)", Reg(insn.dst)));
      pc += 2;
      continue;
    }
    if (IsIndexMarker(insn, markers)) {
      lines.push_back(fmt::format("BPF_RAW_INSN(BPF_ALU | BPF_MOV | BPF_K, {}, 0, {}, TAIL_CALL_MARKER)",
                                  Reg(insn.dst), TailCallOffset(insn.offset, markers)));
      ++pc;
      continue;
    }
    if (insn.opcode == isa::kOpLddw && pc + 1 >= insns.size()) return Fail("instruction {}: lddw without its second slot", pc);
    auto line = Macro(insns, pc);
    if (!line) return line.error();
    lines.push_back(std::move(line).value());
    pc += insn.opcode == isa::kOpLddw ? 2 : 1;
  }
  return lines;
}

Result<std::vector<std::string>> TestBpfRuns(std::span<const isa::Insn> insns,
                                             const kernelsrc::TestBpfMarkers& markers) {
  std::vector<std::string> slots;
  for (size_t pc = 0; pc < insns.size(); ++pc) {
    const Insn& insn = insns[pc];
    if (IsArrayMarker(insns, pc, markers) || IsIndexMarker(insn, markers)) {
      return Fail("instruction {}: a tail call's marker, in a program long enough for a fill helper", pc);
    }
    if (insn.opcode == isa::kOpLddw) {
      if (pc + 1 >= insns.size()) return Fail("instruction {}: lddw without its second slot", pc);
      auto whole = Macro(insns, pc);  // what test_bpf.c cannot hold is refused as in an entry
      if (!whole) return whole.error();
      slots.push_back(fmt::format("BPF_RAW_INSN(BPF_LD | BPF_DW | BPF_IMM, {}, 0, 0, {})", Reg(insn.dst),
                                  TestBpfImmediate(insn.imm)));
      slots.push_back(fmt::format("BPF_RAW_INSN(0, 0, 0, 0, {})", TestBpfImmediate(insns[++pc].imm)));
      continue;
    }
    auto line = Macro(insns, pc);
    if (!line) return line.error();
    slots.push_back(std::move(line).value());
  }
  std::vector<std::string> runs;
  for (size_t k = 0; k < slots.size();) {
    size_t end = k + 1;
    while (end < slots.size() && slots[end] == slots[k]) ++end;
    runs.push_back(fmt::format("{{ {}, {} }}", slots[k], end - k));
    k = end;
  }
  return runs;
}

}  // namespace bpfdiff
