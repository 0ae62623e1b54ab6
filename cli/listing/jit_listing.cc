#include "cli/listing/jit_listing.h"

#include <cstring>

#include <fmt/format.h>

#include "isa/disassembler.h"
#include "jit/frame.h"

namespace bpfdiff {
namespace {


// The target of a PC-relative branch word, for the listing (LLVM prints
// the offset, llvm-objdump adds the address).
std::optional<uint64_t> BranchTarget(uint32_t word, uint64_t pc) {
  auto sign_extend = [](uint32_t value, int bits) {
    return static_cast<int64_t>(static_cast<int32_t>(value << (32 - bits)) >> (32 - bits));
  };
  if ((word & 0x7c000000) == 0x14000000) return pc + 4 * sign_extend(word & 0x3ffffff, 26);  // b, bl
  if ((word & 0xff000010) == 0x54000000 ||                                                   // b.cond
      (word & 0x7e000000) == 0x34000000) {                                                   // cbz, cbnz
    return pc + 4 * sign_extend((word >> 5) & 0x7ffff, 19);
  }
  if ((word & 0x7e000000) == 0x36000000) return pc + 4 * sign_extend((word >> 5) & 0x3fff, 14);  // tbz
  return std::nullopt;
}

std::string SlotText(const isa::Program& program, uint32_t slot) {
  const isa::Insn* next = slot + 1 < program.size() ? &program.insns[slot + 1] : nullptr;
  return isa::DisassembleInsn(program.insns[slot], next);
}

}  // namespace

std::string JitListing(const A64Disassembler& disassembler, const isa::Program& program,
                       const jit::CompiledProgram& compiled, const GuestMemory& memory,
                       const ListingOptions& options) {
  std::string out;
  const auto& slots = program.slots;
  for (size_t s = 0; s < compiled.subprograms.size(); ++s) {
    const jit::CompiledSubprogram& sub = compiled.subprograms[s];
    const jit::PackAllocation& slot = *sub.allocation;
    if (!options.first_slot) {
      out += fmt::format(
          "subprogram {} (BPF {}..{}): image 0x{:x}, {} code words, {}\n", s, sub.first_slot,
          sub.end_slot - 1, sub.rx_image, sub.code_words,
          slot.oversize() ? fmt::format("oversize allocation 0x{:x} (+0x{:x})", slot.rx_slot(), slot.slot_bytes())
                          : fmt::format("pack {} chunks {}..{} (slot 0x{:x} +0x{:x})", slot.pack(), slot.first_chunk(),
                                        slot.first_chunk() + slot.slot_bytes() / jit::kChunkSize - 1, slot.rx_slot(),
                                        slot.slot_bytes()));
    }
    // Annotate each word with the BPF instructions whose lowering starts
    // there (several when some emit no code, such as a final exit).
    uint32_t next_slot_index = 0;  // index into sub.offsets
    for (uint32_t w = 0; w < sub.code_words; ++w) {
      const uint64_t pc = sub.rx_image + 4ull * w;
      std::vector<uint32_t> starts;
      while (next_slot_index + 1 < sub.offsets.size() && sub.offsets[next_slot_index] == w) {
        const uint32_t bpf_slot = sub.first_slot + next_slot_index++;
        if (!slots[bpf_slot].second_slot) starts.push_back(bpf_slot);  // an lddw's second slot has no code
      }
      const uint32_t bpf_slot = sub.SlotAt(pc);
      if (options.first_slot && (bpf_slot < *options.first_slot || bpf_slot > *options.last_slot)) continue;
      if (w == 0) out += "  ; prologue\n";
      for (uint32_t start : starts) out += fmt::format("  ; {:>4}: {}\n", start, SlotText(program, start));
      if (w == sub.offsets.back()) out += "  ; epilogue\n";
      uint32_t word = 0;
      if (const uint8_t* p = memory.HostPointer(pc, 4)) std::memcpy(&word, p, 4);
      const auto text = disassembler.Disassemble(word, pc);
      const bool marked = options.mark_slot && bpf_slot == *options.mark_slot;
      std::string target;
      if (const auto address = BranchTarget(word, pc)) {
        target = fmt::format("  <0x{:x}{}>", *address,
                             sub.ContainsCode(*address) ? fmt::format(", BPF {}", sub.SlotAt(*address)) : "");
      }
      out += fmt::format("{} {:8x}: {:08x}  {}{}\n", marked ? "=>" : "  ", pc, word,
                         text ? *text : "<invalid>", target);
    }
    if (options.first_slot) continue;
    out += fmt::format("  exception table at 0x{:x}: {} entr{}\n", sub.rx_extable, sub.extable_entries,
                       sub.extable_entries == 1 ? "y" : "ies");
    for (uint32_t e = 0; e < sub.extable_entries; ++e) {
      const uint64_t field = sub.rx_extable + uint64_t{e} * jit::kExtableEntrySize;
      const uint8_t* bytes = memory.HostPointer(field, jit::kExtableEntrySize);
      if (bytes == nullptr) break;
      const jit::DecodedExtableEntry entry = jit::DecodeExtableEntry(bytes, field);
      const uint64_t target = entry.target;
      const uint64_t resume = entry.resume_pc;
      out += fmt::format("    [{}] load at 0x{:x} (BPF {}) -> zero x{}, resume at 0x{:x}\n", e, target,
                         sub.ContainsCode(target) ? fmt::format("{}", sub.SlotAt(target)) : "?",
                         entry.reg, resume);
    }
  }
  return out;
}

}  // namespace bpfdiff
