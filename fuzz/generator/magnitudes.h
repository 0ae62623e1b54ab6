// Operand values by magnitude class, the way the kernel's test_bpf
// exhaustive tests pick them (Johan Almbladh, 2021): every width boundary
// and its neighbours, signs and near-signs, 0, +-1 and powers of two, and
// 32-bit values with garbage in the upper half in front of 32-bit
// operations. A JIT lowering usually chooses its code path by these: an
// immediate that fits one encoding and not another, a sign, a zero.
#pragma once

#include <cstdint>

namespace bpfdiff::fuzz {

// 64-bit register values.
inline constexpr uint64_t kMagnitudes64[] = {
    // zero, one, minus one, two, minus two
    0, 1, 0xffffffffffffffffULL, 2, 0xfffffffffffffffeULL,
    // width boundaries: 8, 16, 32 and 64 bits, each side
    0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
    0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x8000000000000001ULL,
    // negative boundaries, sign-extended
    0xffffffffffffff80ULL, 0xffffffffffff8000ULL, 0xffffffff80000000ULL, 0xffffffff7fffffffULL,
    // immediate-field boundaries of arm64 (imm12, imm12 << 12, imm16 chunks)
    0xfff, 0x1000, 0xfff000, 0x1000000, 0xffff0000ULL, 0xffff00000000ULL,
    // garbage in the upper half in front of a 32-bit operation
    0xdeadbeef00000000ULL, 0xdeadbeef00000001ULL, 0x12345678ffffffffULL, 0xfedcba9880000000ULL,
    0x000000017fffffffULL, 0xffffffff00000080ULL,
    // bit patterns
    0x5555555555555555ULL, 0xaaaaaaaaaaaaaaaaULL, 0x0f0f0f0f0f0f0f0fULL, 0x0123456789abcdefULL,
};

// 32-bit immediates (sign-extended to 64 bits by the ALU64 and JMP forms).
inline constexpr int32_t kMagnitudes32[] = {
    0, 1, -1, 2, -2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
    0x7fffffff, INT32_MIN, INT32_MIN + 1, 0x7ffffffe,
    // add/sub immediates: imm12, imm12 << 12, and just beyond
    0xfff, 0x1000, -0xfff, -0x1000, 0xfff000, 0x1000000,
    // shift amounts at and past the width
    31, 32, 63, 64,
    // logical immediates that encode, and ones that do not
    0x55555555, 0x0f0f0f0f, 0x00ff00ff, 0x12345678, -0x10000,
};

}  // namespace bpfdiff::fuzz
