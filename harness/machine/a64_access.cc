#include "harness/machine/a64_access.h"

namespace bpfdiff {
namespace {

constexpr uint32_t Bits(uint32_t word, int high, int low) {
  return (word >> low) & ((1u << (high - low + 1)) - 1);
}

constexpr int64_t SignExtend(uint32_t value, int bits) {
  return static_cast<int64_t>(static_cast<int32_t>(value << (32 - bits)) >> (32 - bits));
}

uint64_t Base(uint32_t word, const RegisterReader& regs) {
  const auto rn = static_cast<int>(Bits(word, 9, 5));
  return rn == 31 ? regs.Sp() : regs.X(rn);
}

enum class Way : uint8_t { kLoad, kStore, kReadModifyWrite };

AccessRange Range(uint64_t address, uint64_t bytes, Way way, bool atomic = false) {
  return {address, address + bytes, way != Way::kStore, way != Way::kLoad, atomic};
}

// opc (bits 23..22) of the single-register forms: 00 stores, the rest load
// (01 LDR, 1x LDRS; PRFM is left out by the callers).
Way SingleRegisterWay(uint32_t word) { return Bits(word, 23, 22) == 0 ? Way::kStore : Way::kLoad; }

}  // namespace

std::optional<AccessRange> MemoryAccessOf(uint32_t word, uint64_t pc, const RegisterReader& regs) {
  const uint32_t size = Bits(word, 31, 30);
  const bool vector = Bits(word, 26, 26) != 0;
  if (vector) return std::nullopt;  // SIMD&FP registers: the JIT emits none

  // PRFM and PRFUM (size 11, opc 10 in the register forms) are hints: they
  // neither access memory nor fault.
  const bool prefetch = size == 3 && Bits(word, 23, 22) == 2;

  // Load/store register (unsigned immediate): [Xn|SP, #imm12 << size]
  if ((word & 0x3b000000) == 0x39000000) {
    if (prefetch) return std::nullopt;
    return Range(Base(word, regs) + (uint64_t{Bits(word, 21, 10)} << size), 1ull << size, SingleRegisterWay(word));
  }
  // Load/store register (register offset): [Xn|SP, Rm{, extend {#size}}]
  if ((word & 0x3b200c00) == 0x38200800) {
    if (prefetch) return std::nullopt;
    const auto rm = static_cast<int>(Bits(word, 20, 16));
    const uint64_t m = rm == 31 ? 0 : regs.X(rm);
    uint64_t offset = 0;
    switch (Bits(word, 15, 13)) {
      case 2: offset = static_cast<uint32_t>(m); break;                                       // uxtw
      case 6: offset = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(m))); break;  // sxtw
      default: offset = m; break;                                                             // lsl, sxtx
    }
    if (Bits(word, 12, 12) != 0) offset <<= size;
    return Range(Base(word, regs) + offset, 1ull << size, SingleRegisterWay(word));
  }
  // Atomic memory operations (LSE): [Xn|SP]
  if ((word & 0x3b200c00) == 0x38200000) {
    return Range(Base(word, regs), 1ull << size, Way::kReadModifyWrite, true);
  }
  // Load/store register (unscaled, post-, pre-indexed, unprivileged)
  if ((word & 0x3b200000) == 0x38000000) {
    if (prefetch) return std::nullopt;
    const int64_t simm9 = SignExtend(Bits(word, 20, 12), 9);
    const bool post_index = Bits(word, 11, 10) == 1;
    return Range(Base(word, regs) + (post_index ? 0 : static_cast<uint64_t>(simm9)), 1ull << size,
                 SingleRegisterWay(word));
  }
  // Load/store pair: [Xn|SP{, #imm7 * scale}]
  if ((word & 0x3a000000) == 0x28000000) {
    const uint32_t opc = Bits(word, 31, 30);
    const uint64_t scale = opc == 2 ? 8 : 4;
    const int64_t offset = SignExtend(Bits(word, 21, 15), 7) * static_cast<int64_t>(scale);
    const bool post_index = Bits(word, 24, 23) == 1;
    const Way way = Bits(word, 22, 22) != 0 ? Way::kLoad : Way::kStore;  // L
    return Range(Base(word, regs) + (post_index ? 0 : static_cast<uint64_t>(offset)), 2 * scale, way);
  }
  // Load/store exclusive, load-acquire/store-release, compare-and-swap: [Xn|SP]
  if ((word & 0x3f000000) == 0x08000000) {
    const bool pair = Bits(word, 23, 23) == 0 && Bits(word, 21, 21) != 0;
    if (pair && Bits(word, 31, 31) == 0) {
      // CASP: bits 31..30 are 0:sz, two registers of 4 << sz bytes
      return Range(Base(word, regs), 2 * (4ull << Bits(word, 30, 30)), Way::kReadModifyWrite, true);
    }
    // CAS (o2 = 1, o1 = 1), then L (bit 22): LDXR, LDAXR, LDAR and their
    // pairs load; STXR, STLXR, STLR store
    const bool cas = Bits(word, 23, 23) != 0 && Bits(word, 21, 21) != 0;
    const Way way = cas ? Way::kReadModifyWrite : Bits(word, 22, 22) != 0 ? Way::kLoad : Way::kStore;
    // LDXP/STXP (1:sz, two registers) and the single-register forms
    return Range(Base(word, regs), (1ull << size) * (pair ? 2 : 1), way, true);
  }
  // Load register (literal): [pc + imm19 * 4]; opc 00 LDR W, 01 LDR X,
  // 10 LDRSW (4 bytes), 11 PRFM (a hint)
  if ((word & 0x3b000000) == 0x18000000) {
    if (size == 3) return std::nullopt;
    const uint64_t bytes = size == 1 ? 8 : 4;
    return Range(pc + static_cast<uint64_t>(SignExtend(Bits(word, 23, 5), 19) * 4), bytes, Way::kLoad);
  }
  return std::nullopt;
}

}  // namespace bpfdiff
