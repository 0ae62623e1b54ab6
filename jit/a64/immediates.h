// Which immediates and offsets the A64 encoders can take.
//
// The JIT asks these before choosing a lowering (add with an immediate or
// through a scratch register, a short or a long branch, a scaled or an
// unscaled load); the encoders apply the same rules and return kBreakFault
// for anything these reject.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>

#include "jit/a64/operands.h"

namespace bpfdiff::a64 {

// ADD/SUB (immediate): a 12-bit unsigned value, optionally shifted left by 12.
// Negative values do not fit (use the opposite operation with -value).
constexpr bool IsAddSubImmediate(int64_t value) {
  return (value >= 0 && value <= 0xfff) ||
         (value >= 0 && value <= 0xfff000 && (value & 0xfff) == 0);
}

// Branch offsets are in bytes, relative to the branch instruction itself, and
// must be multiples of 4.
namespace detail {
constexpr bool FitsSignedScaled(int64_t value, unsigned bits, unsigned scale_log2) {
  const int64_t scale = int64_t{1} << scale_log2;
  const int64_t limit = (int64_t{1} << (bits - 1)) * scale;
  return value % scale == 0 && value >= -limit && value < limit;
}
}  // namespace detail

// B, BL: imm26, +-128 MiB.
constexpr bool IsBranchOffset26(int64_t byte_offset) {
  return detail::FitsSignedScaled(byte_offset, 26, 2);
}
// B.cond, CBZ/CBNZ, LDR (literal): imm19, +-1 MiB.
constexpr bool IsBranchOffset19(int64_t byte_offset) {
  return detail::FitsSignedScaled(byte_offset, 19, 2);
}
// TBZ/TBNZ: imm14, +-32 KiB.
constexpr bool IsBranchOffset14(int64_t byte_offset) {
  return detail::FitsSignedScaled(byte_offset, 14, 2);
}
// ADR: any byte offset in +-1 MiB.
constexpr bool IsAdrOffset(int64_t byte_offset) {
  return detail::FitsSignedScaled(byte_offset, 21, 0);
}
// ADRP: a whole number of 4 KiB pages in +-4 GiB (target page - own page).
constexpr bool IsAdrpOffset(int64_t byte_offset) {
  return detail::FitsSignedScaled(byte_offset, 21, 12);
}

// LDR/STR (unsigned immediate): 0 <= offset < 4096 * bytes, aligned to bytes.
constexpr bool IsScaledOffset(int64_t byte_offset, Size size) {
  const int64_t bytes = Bytes(size);
  return byte_offset >= 0 && byte_offset % bytes == 0 && byte_offset / bytes <= 0xfff;
}
// LDUR/STUR and pre/post-indexed LDR/STR: signed 9-bit byte offset.
constexpr bool IsUnscaledOffset(int64_t byte_offset) {
  return byte_offset >= -256 && byte_offset <= 255;
}
// LDP/STP: signed 7-bit offset scaled by the register size (4 or 8 bytes).
constexpr bool IsPairOffset(int64_t byte_offset, Width width) {
  return detail::FitsSignedScaled(byte_offset, 7, width == Width::kX ? 3 : 2);
}

// The N:immr:imms field (13 bits, N in bit 12) of a logical immediate, or
// nullopt when `value` is not a bitmask immediate: a power-of-two-sized
// element (2..64 bits, at most 32 for kW) holding one rotated run of ones,
// replicated across the register. 0 and all-ones are never encodable, and
// for kW the value must fit in 32 bits.
constexpr std::optional<uint32_t> EncodeBitmaskImmediate(uint64_t value, Width width) {
  if (width == Width::kW) {
    if ((value >> 32) != 0) return std::nullopt;
    value |= value << 32;  // a 32-bit pattern is a 64-bit one with period <= 32
  }
  if (value == 0 || value == ~uint64_t{0}) return std::nullopt;

  // The smallest element size in which the value repeats.
  unsigned esize = 64;
  while (esize > 2) {
    const unsigned half = esize / 2;
    const uint64_t half_mask = (uint64_t{1} << half) - 1;
    if ((value & half_mask) != ((value >> half) & half_mask)) break;
    esize = half;
  }
  const uint64_t emask = esize == 64 ? ~uint64_t{0} : (uint64_t{1} << esize) - 1;
  const uint64_t element = value & emask;
  const auto ones = static_cast<unsigned>(std::popcount(element));

  // The run of ones starts at bit `start` (cyclically); then the element is
  // Ones(ones) rotated right by esize - start.
  unsigned start = 0;
  if ((element & 1) == 0) {
    start = static_cast<unsigned>(std::countr_zero(element));
  } else {
    const uint64_t zeros = ~element & emask;  // non-empty: element != emask
    // The ones wrap around from the top; the run starts after the zeros
    // (at esize, that is 0, when the zeros reach the top bit).
    start = static_cast<unsigned>(std::countr_zero(zeros) + std::popcount(zeros)) % esize;
  }
  const uint64_t run = (uint64_t{1} << ones) - 1;  // ones < esize <= 64
  const uint64_t rotated = start == 0 ? run : ((run << start) | (run >> (esize - start))) & emask;
  if (rotated != element) return std::nullopt;  // more than one run

  const uint32_t n = esize == 64 ? 1 : 0;
  const uint32_t immr = (esize - start) % esize;  // start < esize
  // imms: the element size in the high bits (0xxxxx for 32, 10xxxx for 16, ...)
  // and ones - 1 in the low bits.
  const uint32_t imms = ((~(esize - 1) << 1) & 0x3f) | (ones - 1);
  return (n << 12) | (immr << 6) | imms;
}

constexpr bool IsBitmaskImmediate(uint64_t value, Width width) {
  return EncodeBitmaskImmediate(value, width).has_value();
}

}  // namespace bpfdiff::a64
