// The exception table: one entry per PROBE_MEM load, after the code.
//
// An entry is struct exception_table_entry {int insn, fixup; short type,
// data}. `insn` is the offset from the entry's own insn field to the
// faulting instruction; `fixup` holds the register to zero in bits 31..27
// and, in bits 26..0, the offset from the entry's own fixup field back to
// the instruction after the load. Both are computed against the RX image
// (where the table is searched) and written through the RW buffer.
#include <cstring>

#include <fmt/format.h>

#include "jit/context.h"

namespace bpfdiff::jit {
namespace {

// The RW image's address, as a JIT that mixed up its two buffers would use
// it (planted bug only). Fixed, so that the bug reproduces the same way
// everywhere, and below the RX image, so that the mixed-up offsets still
// pass the range checks (as they did in the kernel) and the table is wrong
// rather than the load refused.
constexpr uint64_t kRwAliasDistance = 0x1'0000;

constexpr uint32_t kFixupRegShift = 27;
constexpr uint32_t kFixupOffsetMask = (1u << 27) - 1;

}  // namespace

Status AddExceptionHandler(JitContext& ctx, uint32_t slot, a64::Reg dst, a64::Reg base) {
  if (!ctx.writing()) {
    ++ctx.exentry_idx;  // the sizing pass only counts
    return {};
  }
  const uint64_t entry_offset = uint64_t{ctx.exentry_idx} * kExtableEntrySize;
  // Both ends of each offset are RX addresses, where the kernel searches.
  // The planted bug takes the load's address in the RW image instead (the
  // mix-up the review of the arm64 prog pack series caught): every entry
  // then points kRwAliasDistance before its load.
  const uint64_t image = ctx.options.bugs.extable_against_rw ? ctx.ro_image - kRwAliasDistance : ctx.ro_image;
  // The planted extable_insn_after_load bug points the entry one word on.
  const uint64_t pc = image + (uint64_t{ctx.idx} - (ctx.options.bugs.extable_insn_after_load ? 0 : 1)) * 4;
  const uint64_t insn_field = ctx.ro_extable + entry_offset;
  const uint64_t fixup_field = insn_field + 4;
  const int64_t insn_offset = static_cast<int64_t>(pc) - static_cast<int64_t>(insn_field);
  const int64_t fixup_offset = static_cast<int64_t>(fixup_field) - static_cast<int64_t>(pc + 4);
  if (insn_offset >= 0 || insn_offset < INT32_MIN || fixup_offset <= 0 ||
      fixup_offset > static_cast<int64_t>(kFixupOffsetMask)) {
    return Fail("instruction {}: exception-table offsets out of range", slot);
  }
  ExtableEntry entry;
  entry.insn = static_cast<int32_t>(insn_offset);
  // The planted extable_fixup_base_register bug names the base register.
  const a64::Reg zeroed = ctx.options.bugs.extable_fixup_base_register ? base : dst;
  entry.fixup = static_cast<int32_t>(static_cast<uint32_t>(zeroed) << kFixupRegShift |
                                     static_cast<uint32_t>(fixup_offset));
  entry.type = kExTypeBpf;
  entry.data = 0;
  uint8_t* out = ctx.rw_extable + entry_offset;
  std::memcpy(out, &entry.insn, 4);
  std::memcpy(out + 4, &entry.fixup, 4);
  std::memcpy(out + 8, &entry.type, 2);
  std::memcpy(out + 10, &entry.data, 2);
  ++ctx.exentry_idx;
  return {};
}

DecodedExtableEntry DecodeExtableEntry(const uint8_t* bytes, uint64_t entry_address) {
  int32_t insn, fixup;
  std::memcpy(&insn, bytes, 4);
  std::memcpy(&fixup, bytes + 4, 4);
  const auto raw = static_cast<uint32_t>(fixup);
  const uint64_t fixup_field = entry_address + 4;
  return {entry_address + static_cast<uint64_t>(static_cast<int64_t>(insn)), fixup_field - (raw & kFixupOffsetMask),
          static_cast<int>(raw >> kFixupRegShift)};
}

std::optional<Fixup> SearchExtable(const uint8_t* rx_extable, uint64_t rx_extable_address,
                                   uint32_t entries, uint64_t pc) {
  // Entries are sorted by target (they are emitted in code order); the
  // kernel's search_extable is a binary search over them.
  uint32_t low = 0, high = entries;
  while (low < high) {
    const uint32_t mid = low + (high - low) / 2;
    const uint64_t offset = uint64_t{mid} * kExtableEntrySize;
    const DecodedExtableEntry entry = DecodeExtableEntry(rx_extable + offset, rx_extable_address + offset);
    const uint64_t target = entry.target;
    if (target == pc) return Fixup{entry.resume_pc, entry.reg};
    if (target < pc) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return std::nullopt;
}

}  // namespace bpfdiff::jit
