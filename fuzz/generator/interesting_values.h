// Immediates that JITs get wrong: boundaries of every field an arm64 JIT
// encodes an immediate into, and the values that just fit or just miss.
#pragma once

#include <cstdint>
#include <iterator>

namespace bpfdiff::fuzz {

inline constexpr int32_t kInteresting32[] = {
    0, 1, -1, 2, -2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256,
    0x7f, 0x80, 0xff, 0x100,
    // add/sub immediate: imm12, imm12 << 12, and just beyond
    4095, 4096, 4097, -4095, -4096, -4097, 0xfff000, 0x1000000, 0xfff001, -0xfff000,
    // logical immediates that encode, and neighbours that do not
    0x0f0f0f0f, 0x55555555, 0x33333333, 0x00ff00ff, 0x7ffffffe, 0x7fffffff, 0x3ffffff0,
    0x0f0f0f0e, 0x55555554, 0x12345678, 0x01010101, 0xfffe, 0x1ffff,
    // move-wide chunks
    0xffff, 0x10000, -0x10000 /* 0xffff0000 */, 0x7fff0000, 0x8000, -0x8000, -0x10001,
    INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1,
    // load/store offsets around the scaled and unscaled ranges
    255, 256, -256, -257, 504, 512, 32760, 32767, -32768,
};

inline constexpr uint64_t kInteresting64[] = {
    0, 1, ~0ULL, 0x8000000000000000ULL, 0x7fffffffffffffffULL, 0x100000000ULL, 0xffffffffULL,
    0xffffffff00000000ULL, 0x0000ffff0000ffffULL, 0xffff0000ffff0000ULL, 0x123456789abcdef0ULL,
    0x5555555555555555ULL, 0x0f0f0f0f0f0f0f0fULL, 0x00ff00ff00ff00ffULL, 0xfffffffffffffffeULL,
    0x8000000080000000ULL, 0x0000000080000000ULL, 0xffffffff80000000ULL, 0x0001000000000000ULL,
    0xffff800000000000ULL, 0x1122334455667788ULL,
};

// Addresses an untrusted pointer may hold: unmapped, guard gaps, the edges
// of every region, code (readable), kernel-like high addresses. Never the
// top of a running CPU's stack: the JIT keeps its saved registers there,
// which the interpreter has no reason to model (the kernel never lets a
// PROBE_MEM load see its own stack either). Indexed by the generator's
// records: a table's order is part of its format version.
inline constexpr uint64_t kInterestingAddresses[] = {
    0x0,        0x8,        0xfff,      0x1000,     0x000ffff8, 0x00100000, 0x00100ff8,
    0x00110000, 0x00fffff8, 0x01000000, 0x0100fff8, 0x01010000, 0x01010004, 0x01fffff8,
    0x02000000, 0x020ffff8, 0x02100000, 0x03000000, 0x03000010, 0x03100ff8, 0x04000000,
    0x04001000, 0x04010000, 0x05000000, 0x10000000, 0x10000040, 0x101ffff8, 0x20000000,
    0x0000fffffffff000ULL, 0xffff800008000000ULL, 0xfffffffffffffff8ULL, 0xdead0000ULL,
};

// Format version 1's table: the same but for the program objects, which it
// points at at their start, program 0's bpf_func. That field holds each
// JIT's own entry address, so a run that read it was never comparable;
// version 2 points at the region's last doubleword (past every program
// object, and one byte short of the guard gap).
inline constexpr uint64_t kInterestingAddressesV1[] = {
    0x0,        0x8,        0xfff,      0x1000,     0x000ffff8, 0x00100000, 0x00100ff8,
    0x00110000, 0x00fffff8, 0x01000000, 0x0100fff8, 0x01010000, 0x01010004, 0x01fffff8,
    0x02000000, 0x020ffff8, 0x02100000, 0x03000000, 0x03000010, 0x03100000, 0x04000000,
    0x04001000, 0x04010000, 0x05000000, 0x10000000, 0x10000040, 0x101ffff8, 0x20000000,
    0x0000fffffffff000ULL, 0xffff800008000000ULL, 0xfffffffffffffff8ULL, 0xdead0000ULL,
};
static_assert(std::size(kInterestingAddresses) == std::size(kInterestingAddressesV1));

}  // namespace bpfdiff::fuzz
