// Reads the generator's choices from a fuzz input: the header bytes, then
// one 8-byte record per step. Past the end everything reads as zero, so any
// input, however short, is a complete description.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

#include "fuzz/generator/fuzz_format.h"

namespace bpfdiff::fuzz {

class Record {
 public:
  explicit Record(std::array<uint8_t, kRecordSize> bytes) : bytes_(bytes) {}

  uint8_t kind() const { return bytes_[0]; }
  uint8_t byte(size_t i) const { return bytes_[1 + i]; }  // p0..p6
  // A choice among n from parameter byte i.
  uint32_t Pick(size_t i, uint32_t n) const { return n == 0 ? 0 : byte(i) % n; }
  bool Flag(size_t i, unsigned bit) const { return (byte(i) >> bit) & 1; }
  // 32 bits from parameter bytes 3..6.
  uint32_t Word() const {
    uint32_t w;
    std::memcpy(&w, &bytes_[4], 4);
    return w;
  }

 private:
  std::array<uint8_t, kRecordSize> bytes_;
};

class RecordReader {
 public:
  explicit RecordReader(std::span<const uint8_t> input) : input_(input) {}

  uint8_t HeaderByte(size_t i) const { return i < input_.size() ? input_[i] : 0; }
  uint64_t HeaderWord(size_t first) const {
    uint64_t value = 0;
    for (size_t i = 0; i < 8; ++i) value |= uint64_t{HeaderByte(first + i)} << (8 * i);
    return value;
  }

  bool exhausted() const { return kHeaderSize + next_ * kRecordSize >= input_.size(); }
  size_t records_read() const { return next_; }

  Record Next() {
    std::array<uint8_t, kRecordSize> bytes{};
    const size_t start = kHeaderSize + next_ * kRecordSize;
    for (size_t i = 0; i < kRecordSize; ++i) {
      bytes[i] = start + i < input_.size() ? input_[start + i] : 0;
    }
    ++next_;
    return Record(bytes);
  }

 private:
  std::span<const uint8_t> input_;
  size_t next_ = 0;
};

}  // namespace bpfdiff::fuzz
