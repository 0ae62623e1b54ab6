// Shortest MOVZ/MOVN + MOVK sequence that loads a constant into a register,
// as the kernel's emit_a64_mov_i64 / emit_a64_mov_i build it.
//
// The value is split into 16-bit chunks. If more chunks are 0xffff than
// 0x0000, the sequence starts with MOVN (the untouched chunks read as 0xffff),
// otherwise with MOVZ (they read as 0); every other chunk that differs from
// that fill gets a MOVK. A 64-bit value whose upper half is zero is built with
// the 32-bit forms, which zero the upper half for free (and may use MOVN for
// the low half: 0x00000000fffff123 is one `movn wd, #0xedc`).
//
// No allocation: the sequence is a fixed array of at most four words.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "jit/a64/encoder.h"

namespace bpfdiff::a64 {

class MoveSequence {
 public:
  static constexpr size_t kMaxWords = 4;

  constexpr void push_back(uint32_t word) { words_[size_++] = word; }
  constexpr size_t size() const { return size_; }
  constexpr uint32_t operator[](size_t i) const { return words_[i]; }
  constexpr const uint32_t* begin() const { return words_.data(); }
  constexpr const uint32_t* end() const { return words_.data() + size_; }

 private:
  std::array<uint32_t, kMaxWords> words_{};
  size_t size_ = 0;
};

namespace detail {

// The 16-bit chunks of a value to move and the fill the untouched ones read
// as: 0xffff when more chunks are 0xffff than 0x0000 (start with MOVN).
struct MoveChunks {
  Width width;  // kW when a 64-bit value's upper half is zero
  unsigned chunks;
  unsigned fill_chunks;  // chunks equal to the fill: no MOVK for them
  bool inverted;
};

constexpr MoveChunks CountChunks(Width width, uint64_t value) {
  if (width == Width::kX && (value >> 32) == 0) width = Width::kW;
  const unsigned chunks = Bits(width) / 16;
  unsigned zeros = 0;
  unsigned ones = 0;
  for (unsigned i = 0; i < chunks; ++i) {
    const auto chunk = static_cast<uint32_t>(value >> (16 * i)) & 0xffff;
    zeros += chunk == 0 ? 1 : 0;
    ones += chunk == 0xffff ? 1 : 0;
  }
  const bool inverted = ones > zeros;
  return {width, chunks, inverted ? ones : zeros, inverted};
}

}  // namespace detail

// How many words MoveImmediate(width, rd, value) emits, without encoding
// them (a JIT's sizing pass needs only this).
constexpr size_t MoveImmediateLength(Width width, uint64_t value) {
  if (width == Width::kW && (value >> 32) != 0) return 1;  // the kBreakFault word
  const detail::MoveChunks c = detail::CountChunks(width, value);
  // Every chunk but those equal to the fill; at least one word.
  return c.chunks == c.fill_chunks ? 1 : c.chunks - c.fill_chunks;
}

// rd = value. rd: ZR (a ZR destination is legal but pointless). For kW the
// value must fit in 32 bits; otherwise (or for a bad rd) the sequence is the
// single word kBreakFault.
constexpr MoveSequence MoveImmediate(Width width, Reg rd, uint64_t value) {
  MoveSequence sequence;
  if (width == Width::kW && (value >> 32) != 0) {
    sequence.push_back(kBreakFault);
    return sequence;
  }
  const detail::MoveChunks counted = detail::CountChunks(width, value);
  width = counted.width;
  const unsigned chunks = counted.chunks;
  const bool inverted = counted.inverted;
  const uint32_t fill = inverted ? 0xffff : 0;

  for (unsigned i = 0; i < chunks; ++i) {
    const auto chunk = static_cast<uint32_t>(value >> (16 * i)) & 0xffff;
    if (chunk == fill) continue;
    if (sequence.size() != 0) {
      sequence.push_back(MoveWideImmediate(MoveWideOp::kMovk, width, rd, chunk, 16 * i));
    } else if (inverted) {
      sequence.push_back(MoveWideImmediate(MoveWideOp::kMovn, width, rd, chunk ^ 0xffff, 16 * i));
    } else {
      sequence.push_back(MoveWideImmediate(MoveWideOp::kMovz, width, rd, chunk, 16 * i));
    }
  }
  if (sequence.size() == 0) {  // every chunk equals the fill: 0 or all ones
    sequence.push_back(
        MoveWideImmediate(inverted ? MoveWideOp::kMovn : MoveWideOp::kMovz, width, rd, 0, 0));
  }
  return sequence;
}

// rd = address in exactly three words (movz, movk #16, movk #32), whatever
// the value, so that code which holds an address does not change size with
// it (the kernel's emit_addr_mov_i64, for addresses that fit in 48 bits).
// Three kBreakFault words when the address needs more than 48 bits.
constexpr MoveSequence MoveAddress48(Reg rd, uint64_t address) {
  MoveSequence sequence;
  if (address >> 48 != 0) {
    for (int i = 0; i < 3; ++i) sequence.push_back(kBreakFault);
    return sequence;
  }
  sequence.push_back(MoveWideImmediate(MoveWideOp::kMovz, Width::kX, rd, address & 0xffff, 0));
  sequence.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, (address >> 16) & 0xffff, 16));
  sequence.push_back(MoveWideImmediate(MoveWideOp::kMovk, Width::kX, rd, (address >> 32) & 0xffff, 32));
  return sequence;
}

}  // namespace bpfdiff::a64
