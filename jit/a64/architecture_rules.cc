#include "jit/a64/architecture_rules.h"

namespace bpfdiff::a64 {
namespace {

constexpr uint32_t Field(uint32_t word, unsigned low, unsigned bits) { return (word >> low) & ((1u << bits) - 1); }

constexpr uint32_t kSp = 31;  // as a base register; as a data register it is ZR

// Load/store register (immediate post-indexed, pre-indexed), V = 0:
//   size:111:V:00:opc:0:imm9:(P)1:Rn:Rt, bits 11:10 = 01 or 11.
std::optional<std::string_view> ImmediateIndexed(uint32_t word) {
  if ((word & 0x3f200400) != 0x38000400) return std::nullopt;
  const uint32_t n = Field(word, 5, 5), t = Field(word, 0, 5);
  if (n == t && n != kSp) return "load/store with writeback whose base is its data register (Rn == Rt)";
  return std::nullopt;
}

// Load/store pair, V = 0: opc:101:V:0:idx(2):L:imm7:Rt2:Rn:Rt (idx 00
// non-temporal, 01 post-index, 10 offset, 11 pre-index).
std::optional<std::string_view> Pair(uint32_t word) {
  if ((word & 0x3c000000) != 0x28000000) return std::nullopt;
  const uint32_t opc = Field(word, 30, 2), idx = Field(word, 23, 2), load = Field(word, 22, 1);
  // opc 11 is unallocated; opc 01 with L = 0 is STGP (MTE), no JIT's.
  if (opc == 3 || (opc == 1 && load == 0)) return std::nullopt;
  const uint32_t t2 = Field(word, 10, 5), n = Field(word, 5, 5), t = Field(word, 0, 5);
  if (load != 0 && t == t2) return "load pair into one register twice (Rt == Rt2)";
  const bool writeback = idx == 1 || idx == 3;
  if (writeback && n != kSp && (n == t || n == t2)) {
    return "load/store pair with writeback whose base is a data register (Rn == Rt or Rt2)";
  }
  return std::nullopt;
}

// Load/store exclusive: size:001000:o2:L:o1:Rs:o0:Rt2:Rn:Rt with o2 = 0.
// o1 = 1 with bit 31 clear is CASP (FEAT_LSE), not an exclusive.
std::optional<std::string_view> Exclusive(uint32_t word) {
  if ((word & 0x3f800000) != 0x08000000) return std::nullopt;
  const uint32_t load = Field(word, 22, 1), pair = Field(word, 21, 1);
  if (pair != 0 && Field(word, 31, 1) == 0) return std::nullopt;
  const uint32_t s = Field(word, 16, 5), t2 = Field(word, 10, 5), n = Field(word, 5, 5), t = Field(word, 0, 5);
  if (load != 0) {
    if (pair != 0 && t == t2) return "load exclusive pair into one register twice (Rt == Rt2)";
    return std::nullopt;
  }
  if (s == t || (pair != 0 && s == t2)) return "store exclusive whose status register is its data register";
  if (s == n && n != kSp) return "store exclusive whose status register is its address register";
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> ConstrainedUnpredictable(uint32_t word) {
  if (auto rule = ImmediateIndexed(word)) return rule;
  if (auto rule = Pair(word)) return rule;
  return Exclusive(word);
}

}  // namespace bpfdiff::a64
