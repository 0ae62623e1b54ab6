#include "harness/diff/blinding_check.h"

#include <array>
#include <vector>

#include <fmt/format.h>

#include "isa/disassembler.h"
#include "isa/insn.h"

namespace bpfdiff {
namespace {

// The immediates bpf_jit_blind_insn() rewrites (6.12): which ones a slot
// holds, as the 32-bit values the code would build.
std::vector<uint32_t> BlindedConstants(const isa::Program& program, uint32_t slot) {
  const isa::Insn& insn = program.insns[slot];
  const uint8_t cls = isa::ClassOf(insn.opcode);
  const auto imm = static_cast<uint32_t>(insn.imm);
  if (insn.opcode == isa::kOpLddw) {
    if (insn.src != 0 || slot + 1 >= program.insns.size()) return {};  // a map's or a callback's address
    return {imm, static_cast<uint32_t>(program.insns[slot + 1].imm)};
  }
  if (cls == isa::kClassAlu || cls == isa::kClassAlu64) {
    if ((insn.opcode & isa::kSrcX) != 0) return {};
    const uint8_t op = insn.opcode & 0xf0;
    const bool blinded = op == isa::kAluAdd || op == isa::kAluSub || op == isa::kAluAnd || op == isa::kAluOr ||
                         op == isa::kAluXor || op == isa::kAluMul || op == isa::kAluMov || op == isa::kAluDiv ||
                         op == isa::kAluMod;
    return blinded ? std::vector<uint32_t>{imm} : std::vector<uint32_t>{};
  }
  if (cls == isa::kClassJmp || cls == isa::kClassJmp32) {
    if ((insn.opcode & isa::kSrcX) != 0) return {};
    const uint8_t op = insn.opcode & 0xf0;
    const bool conditional = op != isa::kJmpJa && op != isa::kJmpCall && op != isa::kJmpExit &&
                             op != isa::kJmpTailCall;
    return conditional ? std::vector<uint32_t>{imm} : std::vector<uint32_t>{};
  }
  if (cls == isa::kClassSt) {
    const uint8_t mode = isa::ModeOf(insn.opcode);
    return mode == isa::kModeMem || mode == isa::kModeProbeMem32 ? std::vector<uint32_t>{imm}
                                                                 : std::vector<uint32_t>{};
  }
  return {};
}

// A value no single move-wide instruction makes.
bool NeedsTwoMoves(uint32_t value) {
  const uint32_t low = value & 0xffff;
  const uint32_t high = value >> 16;
  return low != 0 && low != 0xffff && high != 0 && high != 0xffff;
}

// MOVN, MOVZ, MOVK (move wide immediate), 32 or 64 bits:
//   sf | opc(2) | 100101 | hw(2) | imm16 | Rd
//   opc 00 MOVN, 10 MOVZ, 11 MOVK
struct MoveWide {
  bool keep;      // MOVK: the other bits stay
  bool inverted;  // MOVN
  unsigned shift;
  uint64_t imm16;
  unsigned rd;
};

std::optional<MoveWide> DecodeMoveWide(uint32_t word) {
  if ((word & 0x1f800000u) != 0x12800000u) return std::nullopt;
  const unsigned opc = (word >> 29) & 3;
  if (opc == 1) return std::nullopt;  // unallocated
  return MoveWide{opc == 3, opc == 0, 16 * ((word >> 21) & 3), (word >> 5) & 0xffff, word & 31};
}

}  // namespace

std::optional<std::string> ConstantLeftByBlinding(const isa::Program& program, const jit::CompiledProgram& compiled) {
  for (const jit::CompiledSubprogram& sub : compiled.subprograms) {
    for (uint32_t slot = sub.first_slot; slot < sub.end_slot; ++slot) {
      std::vector<uint32_t> constants;
      for (const uint32_t value : BlindedConstants(program, slot)) {
        if (NeedsTwoMoves(value)) constants.push_back(value);
      }
      if (constants.empty()) continue;
      const uint32_t index = slot - sub.first_slot;
      const uint32_t end_index = program.insns[slot].opcode == isa::kOpLddw ? index + 2 : index + 1;
      if (end_index >= sub.offsets.size()) continue;
      const uint32_t first = sub.offsets[index];
      const uint32_t end = std::min<uint32_t>(sub.offsets[end_index], static_cast<uint32_t>(sub.words.size()));
      // What each register holds as the code of the slot builds it.
      std::array<uint64_t, 32> built{};
      for (uint32_t w = first; w < end; ++w) {
        const auto move = DecodeMoveWide(sub.words[w]);
        if (!move) continue;
        uint64_t& value = built[move->rd];
        const uint64_t field = move->imm16 << move->shift;
        if (move->keep) {
          value = (value & ~(uint64_t{0xffff} << move->shift)) | field;
        } else {
          value = move->inverted ? ~field : field;
        }
        for (const uint32_t constant : constants) {
          if (static_cast<uint32_t>(value) != constant && static_cast<uint32_t>(value >> 32) != constant) continue;
          return fmt::format("constant blinding left the constant 0x{:x} of slot {} ({}) in its code: word {} "
                             "(0x{:08x}) builds it in x{}",
                             constant, slot, isa::DisassembleInsn(program.insns[slot]), w, sub.words[w], move->rd);
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace bpfdiff
