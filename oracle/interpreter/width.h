// Width helpers of the interpreter: every truncation and extension is
// spelled out (internal to oracle/interpreter.cc).
#pragma once

#include <cstdint>
#include <cstring>

namespace bpfdiff::interp {

constexpr uint32_t U32(uint64_t v) { return static_cast<uint32_t>(v); }
constexpr int32_t S32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
constexpr int64_t S64(uint64_t v) { return static_cast<int64_t>(v); }
constexpr uint64_t SExt32(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
constexpr uint64_t ZExt32(uint32_t v) { return v; }

inline uint64_t ByteSwap(uint64_t v, int32_t width) {
  switch (width) {
    case 16: return __builtin_bswap16(static_cast<uint16_t>(v));
    case 32: return __builtin_bswap32(static_cast<uint32_t>(v));
    default: return __builtin_bswap64(v);
  }
}

inline uint64_t Truncate(uint64_t v, int32_t width) {
  switch (width) {
    case 16: return static_cast<uint16_t>(v);
    case 32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

inline uint64_t ReadSized(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1: return p[0];
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

inline uint64_t SignExtend(uint64_t v, unsigned size) {
  switch (size) {
    case 1: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(v)));
    case 2: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v)));
    case 4: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
    default: return v;
  }
}

inline void WriteSized(uint8_t* p, unsigned size, uint64_t v) {
  switch (size) {
    case 1: p[0] = static_cast<uint8_t>(v); break;
    case 2: { auto x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case 4: { auto x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

}  // namespace bpfdiff::interp
