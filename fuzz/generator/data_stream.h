// Deterministic pseudo-random data from a 64-bit seed (splitmix64): the
// generator's input memory, initial map values and signatures, and the
// iTLB report's programs. Part of the stable input format: the sequence
// for a seed must never change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bpfdiff::fuzz {

class DataStream {
 public:
  explicit DataStream(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::vector<uint8_t> Bytes(size_t n) {
    std::vector<uint8_t> bytes(n);
    for (auto& b : bytes) b = static_cast<uint8_t>(Next());
    return bytes;
  }

 private:
  uint64_t state_;
};

}  // namespace bpfdiff::fuzz
