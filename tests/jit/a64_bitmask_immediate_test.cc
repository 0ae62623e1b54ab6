// EncodeBitmaskImmediate against DecodeBitMasks, written from the Arm ARM
// pseudocode (shared/functions/bitmasks/DecodeBitMasks), over every encoding.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <optional>
#include <random>
#include <set>

#include "jit/a64/immediates.h"

namespace bpfdiff::a64 {
namespace {

uint64_t Ones(unsigned n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// wmask of DecodeBitMasks(immN, imms, immr, immediate = TRUE, M = datasize),
// or nullopt where the pseudocode is UNDEFINED (or reserved for sf = 0).
std::optional<uint64_t> DecodeBitMasks(uint32_t n, uint32_t imms, uint32_t immr,
                                       unsigned datasize) {
  if (datasize == 32 && n != 0) return std::nullopt;
  // len = HighestSetBit(immN:NOT(imms))
  const uint32_t combined = (n << 6) | (~imms & 0x3f);
  if (combined == 0) return std::nullopt;
  const int len = 31 - std::countl_zero(combined);
  if (len < 1) return std::nullopt;
  const unsigned esize = 1u << len;
  if (esize > datasize) return std::nullopt;
  const uint32_t levels = static_cast<uint32_t>(Ones(static_cast<unsigned>(len)));
  if ((imms & levels) == levels) return std::nullopt;  // immediate: all-ones element
  const uint32_t s = imms & levels;
  const uint32_t r = immr & levels;
  // welem = ZeroExtend(Ones(S + 1), esize); wmask = Replicate(ROR(welem, R))
  const uint64_t welem = Ones(s + 1);
  const uint64_t emask = Ones(esize);
  const uint64_t rotated = r == 0 ? welem : ((welem >> r) | (welem << (esize - r))) & emask;
  uint64_t wmask = 0;
  for (unsigned at = 0; at < datasize; at += esize) wmask |= rotated << at;
  return wmask;
}

// Every (N, immr, imms) for the width, decoded; immr only up to the element
// size, which is the canonical encoding (higher immr bits are ignored).
struct Decoded {
  uint32_t fields;
  uint64_t value;
  bool canonical;
};
std::vector<Decoded> AllEncodings(Width width) {
  std::vector<Decoded> all;
  const unsigned datasize = Bits(width);
  for (uint32_t n = 0; n <= 1; ++n) {
    for (uint32_t immr = 0; immr < 64; ++immr) {
      for (uint32_t imms = 0; imms < 64; ++imms) {
        const std::optional<uint64_t> value = DecodeBitMasks(n, imms, immr, datasize);
        if (!value) continue;
        const unsigned esize = 1u << (31 - std::countl_zero((n << 6) | (~imms & 0x3f)));
        all.push_back({(n << 12) | (immr << 6) | imms, *value, immr < esize});
      }
    }
  }
  return all;
}

void CheckRoundTrip(Width width, size_t expected_values) {
  std::set<uint64_t> values;
  for (const Decoded& d : AllEncodings(width)) {
    values.insert(d.value);
    const std::optional<uint32_t> fields = EncodeBitmaskImmediate(d.value, width);
    ASSERT_TRUE(fields.has_value()) << std::hex << d.value << " decodes from " << d.fields;
    if (d.canonical) {
      EXPECT_EQ(*fields, d.fields) << std::hex << "value 0x" << d.value;
    } else {
      const uint32_t f = *fields;
      EXPECT_EQ(DecodeBitMasks(f >> 12, f & 0x3f, (f >> 6) & 0x3f, Bits(width)), d.value);
    }
  }
  EXPECT_EQ(values.size(), expected_values);
}

TEST(a64_bitmask, EveryValid64BitEncodingRoundTrips) { CheckRoundTrip(Width::kX, 5334); }

TEST(a64_bitmask, EveryValid32BitEncodingRoundTrips) { CheckRoundTrip(Width::kW, 1302); }

TEST(a64_bitmask, NotEncodable) {
  for (uint64_t value :
       {uint64_t{0}, ~uint64_t{0}, uint64_t{0x1234}, uint64_t{5}, uint64_t{0x1234567812345678},
        uint64_t{0x8000000000000002}, uint64_t{0x00ff00ff00ff00fe}, uint64_t{0xfffffffffffffff5}}) {
    EXPECT_FALSE(EncodeBitmaskImmediate(value, Width::kX).has_value()) << std::hex << value;
  }
  for (uint64_t value :
       {uint64_t{0}, uint64_t{0xffffffff}, uint64_t{0x1234}, uint64_t{0x80000002},
        uint64_t{0x100000000}, uint64_t{0xffffffff00000000}, uint64_t{0x5555555555555555}}) {
    EXPECT_FALSE(EncodeBitmaskImmediate(value, Width::kW).has_value()) << std::hex << value;
  }
}

// Random values (biased towards runs of ones) are encodable exactly when the
// decoder can produce them.
TEST(a64_bitmask, RandomValuesAgreeWithTheDecoder) {
  for (Width width : {Width::kW, Width::kX}) {
    std::set<uint64_t> valid;
    for (const Decoded& d : AllEncodings(width)) valid.insert(d.value);
    std::mt19937_64 random(42);
    for (int i = 0; i < 20000; ++i) {
      uint64_t value = random();
      if (i % 2 == 1) {  // a random run, rotated and replicated, with one bit maybe flipped
        const unsigned esize = 2u << (random() % 6);
        const uint64_t run = Ones(1 + static_cast<unsigned>(random() % esize));
        const unsigned rotation = static_cast<unsigned>(random() % esize);
        const uint64_t element =
            (rotation == 0 ? run : (run >> rotation) | (run << (esize - rotation))) & Ones(esize);
        value = 0;
        for (unsigned at = 0; at < 64; at += esize) value |= element << at;
        if (i % 4 == 3) value ^= uint64_t{1} << (random() % 64);
      }
      if (width == Width::kW) value &= 0xffffffff;
      EXPECT_EQ(IsBitmaskImmediate(value, width), valid.contains(value))
          << std::hex << "0x" << value << (width == Width::kW ? " (w)" : " (x)");
    }
  }
}

}  // namespace
}  // namespace bpfdiff::a64
