// MoveImmediate: the sequence loads the value, whatever the register held
// before, and is as short as a MOVZ/MOVN + MOVK sequence can be.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "jit/a64/move_immediate.h"

namespace bpfdiff::a64 {
namespace {

// Executes move-wide words on one register that starts as `initial`.
// Fails the test for any other word or another destination register.
uint64_t Simulate(const MoveSequence& sequence, Reg rd, uint64_t initial) {
  uint64_t reg = initial;
  for (uint32_t word : sequence) {
    EXPECT_EQ((word >> 23) & 0x3f, 0b100101u) << std::hex << word << " is not a move wide";
    EXPECT_EQ(word & 31, static_cast<uint32_t>(rd));
    const bool sf = (word >> 31) != 0;
    const uint32_t opc = (word >> 29) & 3;
    const unsigned shift = 16 * ((word >> 21) & 3);
    const uint64_t imm = uint64_t{(word >> 5) & 0xffff} << shift;
    switch (opc) {
      case 0:
        reg = ~imm;
        break;  // movn
      case 2:
        reg = imm;
        break;  // movz
      case 3:
        reg = (reg & ~(uint64_t{0xffff} << shift)) | imm;
        break;  // movk
      default:
        ADD_FAILURE() << "unallocated opc in " << std::hex << word;
    }
    if (!sf) reg &= 0xffffffff;  // a W destination zero-extends
  }
  return reg;
}

// Fewest words: every 16-bit chunk that differs from the fill of the first
// instruction (0 for movz, 0xffff for movn) needs one, at least one in all;
// a 64-bit value with a zero upper half may use the 32-bit forms.
size_t MinimumLength(Width width, uint64_t value) {
  const auto length = [](uint64_t v, unsigned chunks) {
    unsigned zeros = 0;
    unsigned ones = 0;
    for (unsigned i = 0; i < chunks; ++i) {
      const uint64_t chunk = (v >> (16 * i)) & 0xffff;
      zeros += chunk == 0;
      ones += chunk == 0xffff;
    }
    return std::max<size_t>(1, chunks - std::max(zeros, ones));
  };
  if (width == Width::kW) return length(value, 2);
  size_t best = length(value, 4);
  if ((value >> 32) == 0) best = std::min(best, length(value, 2));
  return best;
}

void Check(Width width, uint64_t value) {
  for (Reg rd : {Reg::kX0, Reg::kX30}) {
    const MoveSequence sequence = MoveImmediate(width, rd, value);
    ASSERT_GE(sequence.size(), 1u);
    ASSERT_LE(sequence.size(), width == Width::kX ? 4u : 2u);
    // The first word must not depend on the old register value.
    EXPECT_EQ(Simulate(sequence, rd, 0), value) << std::hex << "0x" << value;
    EXPECT_EQ(Simulate(sequence, rd, 0x0123456789abcdef), value) << std::hex << "0x" << value;
    EXPECT_EQ(sequence.size(), MinimumLength(width, value)) << std::hex << "0x" << value;
    // What a JIT's sizing pass counts is what the writing pass emits.
    EXPECT_EQ(MoveImmediateLength(width, value), sequence.size()) << std::hex << "0x" << value;
  }
}

std::vector<uint64_t> EdgeValues() {
  std::vector<uint64_t> values = {
      0,
      1,
      ~uint64_t{0},
      uint64_t(std::numeric_limits<int32_t>::min()),  // sign-extended INT32_MIN
      uint64_t(std::numeric_limits<int32_t>::max()),
      uint64_t(uint32_t(std::numeric_limits<int32_t>::min())),  // 0x80000000
      uint64_t(std::numeric_limits<int64_t>::min()),
      uint64_t(std::numeric_limits<int64_t>::max()),
      0xffff0000ffff0000,
      0x0000ffff0000ffff,
      0xffffffff00000000,
      0x00000000ffffffff,
      0x00000000fffff123,
      0xfffffffffffff123,
      0x123400000000ffff,
      0xffff1234ffff5678,
      0x1234567812345678,
      0xdeadbeefcafebabe,
      0x8000000000000001,
      0x0000000100000000,
  };
  for (unsigned shift = 0; shift < 64; shift += 16) {  // single chunks
    values.push_back(uint64_t{0x1234} << shift);
    values.push_back(uint64_t{0xffff} << shift);
    values.push_back(~(uint64_t{0x1234} << shift));
    values.push_back(~(uint64_t{0xffff} << shift));
  }
  return values;
}

TEST(a64_move_immediate, EdgeValues64) {
  for (uint64_t value : EdgeValues()) Check(Width::kX, value);
}

TEST(a64_move_immediate, EdgeValues32) {
  for (uint64_t value : EdgeValues()) Check(Width::kW, value & 0xffffffff);
}

TEST(a64_move_immediate, RandomValues) {
  std::mt19937_64 random(7);
  const uint64_t kChunks[] = {0, 0xffff, 0x8000, 0x7fff};
  for (int i = 0; i < 4000; ++i) {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 16) {  // chunks biased to 0 / 0xffff
      const uint64_t pick = random() % 6;
      const uint64_t chunk = pick < 4 ? kChunks[pick] : random() & 0xffff;
      value |= chunk << shift;
    }
    Check(Width::kX, value);
    Check(Width::kW, value & 0xffffffff);
  }
}

TEST(a64_move_immediate, KnownSequences) {
  // movz x0, #1
  EXPECT_EQ(MoveImmediate(Width::kX, Reg::kX0, 1).size(), 1u);
  EXPECT_EQ(MoveImmediate(Width::kX, Reg::kX0, 1)[0], 0x52800020u);  // as movz w0, #1
  // movn x0, #0 (x0 = -1)
  EXPECT_EQ(MoveImmediate(Width::kX, Reg::kX0, ~uint64_t{0})[0], 0x92800000u);
  // movn w0, #0xedc (0x00000000fffff123 in one word, via the 32-bit form)
  const MoveSequence low = MoveImmediate(Width::kX, Reg::kX0, 0xfffff123);
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0], 0x1281db80u);
}

}  // namespace
}  // namespace bpfdiff::a64
