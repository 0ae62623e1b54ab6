#include "isa/disassembler.h"

#include <vector>

#include <fmt/core.h>

#include "isa/opcode_table.h"
#include "isa/syntax.h"
#include "support/hex.h"

namespace bpfdiff::isa {
namespace {

std::string Register(uint8_t reg) { return fmt::format("%r{}", reg); }

std::string Memory(uint8_t reg, int16_t offset) {
  if (offset == 0) return fmt::format("[%r{}]", reg);
  return fmt::format("[%r{}{}]", reg, FormatDistance(offset));
}

// Where targets get labels: has_label[t] for slot t (t == size: the end).
struct Labels {
  std::vector<bool> has_label;
  bool Has(int64_t target) const {
    return target >= 0 && static_cast<uint64_t>(target) < has_label.size() &&
           has_label[static_cast<size_t>(target)];
  }
};

// The distance of a target operand.
int64_t DistanceOf(Operand operand, const Insn& insn) {
  return operand == Operand::kOffsetTarget ? insn.offset : insn.imm;
}

std::string FormatOperand(Operand operand, const Insn& insn, const Insn& next, size_t pc,
                          const Labels* labels) {
  switch (operand) {
    case Operand::kDstReg: return Register(insn.dst);
    case Operand::kSrcReg: return Register(insn.src);
    case Operand::kImm: return FormatImm32(insn.imm);
    case Operand::kImm64: return FormatImm64(Imm64(insn, next));
    case Operand::kOffsetTarget:
    case Operand::kImmTarget: {
      const int64_t distance = DistanceOf(operand, insn);
      const int64_t target = static_cast<int64_t>(pc) + 1 + distance;
      if (labels != nullptr && labels->Has(target)) return fmt::format("L{}", target);
      return FormatDistance(distance);
    }
    case Operand::kDstMem: return Memory(insn.dst, insn.offset);
    case Operand::kSrcMem: return Memory(insn.src, insn.offset);
    case Operand::kMapFd: return fmt::format("map:{}", insn.imm);
    case Operand::kMapValue: {
      const auto offset = static_cast<uint32_t>(next.imm);
      if (offset == 0) return fmt::format("map_value:{}", insn.imm);
      return offset < 65536 ? fmt::format("map_value:{}+{}", insn.imm, offset)
                            : fmt::format("map_value:{}+0x{:x}", insn.imm, offset);
    }
  }
  return "?";
}

// What makes a classified slot invalid, if anything: reserved fields that
// are not zero, registers that do not exist, a bad or missing second slot.
std::string Problems(const Form& form, const Insn& insn, const Insn* next) {
  std::string out;
  auto add = [&out](const std::string& problem) {
    out += out.empty() ? "" : ", ";
    out += problem;
  };
  const FieldUse use = FieldsOf(form);
  if (!use.dst && insn.dst != 0) add(fmt::format("reserved dst={}", insn.dst));
  if (!use.src && insn.src != 0) add(fmt::format("reserved src={}", insn.src));
  if (!use.offset && insn.offset != 0) add(fmt::format("reserved offset={}", insn.offset));
  if (!use.imm && insn.imm != form.fixed_imm) add(fmt::format("reserved imm={}", insn.imm));
  if (use.dst && insn.dst >= kNumRegs) add(fmt::format("no register r{}", insn.dst));
  if (use.src && insn.src >= kNumRegs && form.discriminant != Discriminant::kSrc) {
    add(fmt::format("no register r{}", insn.src));
  }
  if (form.is_wide()) {
    if (next == nullptr) {
      add("truncated: the second slot is missing");
    } else if (next->opcode != 0 || next->dst != 0 || next->src != 0 || next->offset != 0) {
      add("the second slot must have opcode, registers and offset 0");
    } else if (!use.next_imm && next->imm != 0) {
      add(fmt::format("reserved imm={} in the second slot", next->imm));
    }
  }
  return out;
}

// A slot that names no form: say why, as a comment.
std::string InvalidSlot(const Insn& insn) {
  if (!IsKnownOpcode(insn.opcode)) return fmt::format("# invalid opcode 0x{:02x}", insn.opcode);
  // The opcode is known but its discriminating field names no form.
  const Form* any = nullptr;
  for (const Form& form : AllForms()) {
    if (form.opcode == insn.opcode) {
      any = &form;
      break;
    }
  }
  std::string field = "?";
  switch (any->discriminant) {
    case Discriminant::kNone: break;
    case Discriminant::kSrc: field = fmt::format("src={}", insn.src); break;
    case Discriminant::kOffset: field = fmt::format("offset={}", insn.offset); break;
    case Discriminant::kImm: field = fmt::format("imm={}", insn.imm); break;
  }
  return fmt::format("# invalid: opcode 0x{:02x} ({}) with {} names no instruction", insn.opcode,
                     any->mnemonic, field);
}

std::string FormatInsn(const Insn& insn, const Insn* next, size_t pc, const Labels* labels) {
  const auto id = Classify(insn);
  if (!id) return InvalidSlot(insn);
  const Form& form = FormById(*id);
  const Insn second = next != nullptr ? *next : Insn{};
  std::string text = form.mnemonic;
  bool first = true;
  for (Operand operand : OperandsOf(form.shape)) {
    text += first ? " " : ", ";
    text += FormatOperand(operand, insn, second, pc, labels);
    first = false;
  }
  if (std::string problems = Problems(form, insn, next); !problems.empty()) {
    text += " # invalid: " + problems;
  }
  return text;
}

bool IsWideAt(std::span<const Insn> slots, size_t pc) {
  const auto id = Classify(slots[pc]);
  return id && FormById(*id).is_wide() && pc + 1 < slots.size();
}

}  // namespace

std::string DisassembleInsn(const Insn& insn, const Insn* next_slot) {
  return FormatInsn(insn, next_slot, 0, nullptr);
}

std::string Disassemble(std::span<const Insn> insns, const DisassembleOptions& options) {
  const size_t n = insns.size();
  std::vector<bool> second_slot(n, false);
  for (size_t pc = 0; pc < n; ++pc) {
    if (!second_slot[pc] && IsWideAt(insns, pc)) second_slot[pc + 1] = true;
  }
  Labels labels{std::vector<bool>(n + 1, false)};
  if (options.labels) {
    for (size_t pc = 0; pc < n; ++pc) {
      const auto id = Classify(insns[pc]);
      if (second_slot[pc] || !id) continue;
      for (Operand operand : OperandsOf(FormById(*id).shape)) {
        if (operand != Operand::kOffsetTarget && operand != Operand::kImmTarget) continue;
        const int64_t target = static_cast<int64_t>(pc) + 1 + DistanceOf(operand, insns[pc]);
        if (target < 0 || target > static_cast<int64_t>(n)) continue;
        const auto slot = static_cast<size_t>(target);
        if (slot < n && second_slot[slot]) continue;  // no label can name it
        labels.has_label[slot] = true;
      }
    }
    for (uint32_t slot : options.extra_labels) {
      if (slot < n && !second_slot[slot]) labels.has_label[slot] = true;
    }
  }
  std::string out;
  for (size_t pc = 0; pc < n; ++pc) {
    if (labels.has_label[pc]) out += fmt::format("L{}:\n", pc);
    if (second_slot[pc]) continue;
    const Insn* next = pc + 1 < n ? &insns[pc + 1] : nullptr;
    out += FormatInsn(insns[pc], next, pc, options.labels ? &labels : nullptr);
    out += '\n';
  }
  if (labels.has_label[n]) out += fmt::format("L{}:\n", n);
  return out;
}

std::string Disassemble(const Program& program, const DisassembleOptions& options) {
  return Disassemble(program.insns, options);
}

std::string DisassembleForDisplay(std::span<const Insn> slots, std::optional<size_t> mark) {
  std::string out;
  bool second_slot = false;
  for (size_t pc = 0; pc < slots.size(); ++pc) {
    uint8_t bytes[kInsnSize];
    slots[pc].ToBytes(bytes);
    std::string text;
    if (second_slot) {
      text = "(second slot of lddw)";
      second_slot = false;
    } else {
      const Insn* next = pc + 1 < slots.size() ? &slots[pc + 1] : nullptr;
      text = FormatInsn(slots[pc], next, pc, nullptr);
      second_slot = IsWideAt(slots, pc);
    }
    out += fmt::format("{}{:>4}: {}  {}\n", mark == pc ? "=> " : "   ", pc,
                       FormatHexBytes(bytes), text);
  }
  return out;
}

}  // namespace bpfdiff::isa
