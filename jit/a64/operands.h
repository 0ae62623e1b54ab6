// Operand types shared by the A64 encoders: registers, widths, access sizes,
// condition codes, shifts, extends and memory orderings.
//
// Register number 31 means either the zero register (XZR/WZR) or the stack
// pointer (SP/WSP), depending on the field. The two are distinct values of
// Reg here, so that every encoder can say which one a field accepts and turn
// the other one into kBreakFault instead of silently encoding the wrong
// register:
//
//   field documented "ZR": X0..X30 or kZr   (31 reads as zero, writes vanish)
//   field documented "SP": X0..X30 or kSp   (31 is the stack pointer)
//
// A register names a number only; whether it is used as Xn or Wn comes from
// the encoder's Width or Size argument.
#pragma once

#include <cstdint>
#include <optional>

namespace bpfdiff::a64 {

// clang-format off
enum class Reg : uint8_t {
  kX0, kX1, kX2, kX3, kX4, kX5, kX6, kX7,
  kX8, kX9, kX10, kX11, kX12, kX13, kX14, kX15,
  kX16, kX17, kX18, kX19, kX20, kX21, kX22, kX23,
  kX24, kX25, kX26, kX27, kX28, kX29, kX30,
  kZr,  // XZR/WZR: number 31 in a field documented "ZR"
  kSp,  // SP/WSP: number 31 in a field documented "SP"
};
// clang-format on

// The usual names of the procedure-call-standard registers.
inline constexpr Reg kFp = Reg::kX29;  // frame pointer
inline constexpr Reg kLr = Reg::kX30;  // link register

// General-purpose register X<number> for number 0..30 (the JIT's register
// map). Numbers above 30 give a value every encoder rejects.
constexpr Reg X(unsigned number) {
  return number <= 30 ? static_cast<Reg>(number) : static_cast<Reg>(0xff);
}

// Operand size of a data-processing instruction: the sf bit.
enum class Width : uint8_t {
  kW = 0,  // 32-bit: Wn registers, results zero-extended into Xn
  kX = 1,  // 64-bit: Xn registers
};

constexpr unsigned Bits(Width width) { return width == Width::kX ? 64 : 32; }

// Access size of a load or store: the size field (log2 of the byte count).
enum class Size : uint8_t {
  k8 = 0,   // byte (ldrb/strb)
  k16 = 1,  // halfword (ldrh/strh)
  k32 = 2,  // word (ldr wN)
  k64 = 3,  // doubleword (ldr xN)
};

constexpr unsigned Bytes(Size size) { return 1u << static_cast<unsigned>(size); }

// Condition codes (the cond field). kHs/kLo are also known as CS/CC.
enum class Cond : uint8_t {
  kEq = 0x0,  // equal (Z)
  kNe = 0x1,  // not equal (!Z)
  kHs = 0x2,  // unsigned >= (C)
  kLo = 0x3,  // unsigned < (!C)
  kMi = 0x4,  // negative (N)
  kPl = 0x5,  // positive or zero (!N)
  kVs = 0x6,  // overflow (V)
  kVc = 0x7,  // no overflow (!V)
  kHi = 0x8,  // unsigned > (C && !Z)
  kLs = 0x9,  // unsigned <= (!C || Z)
  kGe = 0xa,  // signed >= (N == V)
  kLt = 0xb,  // signed < (N != V)
  kGt = 0xc,  // signed > (!Z && N == V)
  kLe = 0xd,  // signed <= (Z || N != V)
  kAl = 0xe,  // always
  kNv = 0xf,  // always as well (never encode it on purpose)
};

// The opposite condition: flips bit 0 of the cond field. Invert(kAl) is kNv,
// which the architecture also executes as "always"; do not invert kAl.
constexpr Cond Invert(Cond cond) { return static_cast<Cond>(static_cast<uint8_t>(cond) ^ 1); }

// Shift applied to the last register operand (the shift field).
enum class Shift : uint8_t {
  kLsl = 0,
  kLsr = 1,
  kAsr = 2,
  kRor = 3,  // logical (shifted register) only
};

// Extension applied to a register operand (the option field).
enum class Extend : uint8_t {
  kUxtb = 0,
  kUxth = 1,
  kUxtw = 2,
  kUxtx = 3,  // "lsl" in the 64-bit forms
  kSxtb = 4,
  kSxth = 5,
  kSxtw = 6,
  kSxtx = 7,
};

// Ordering of an atomic memory operation or compare-and-swap
// (the A/R bits, L/o0 bits for CAS).
enum class MemOrder : uint8_t {
  kRelaxed = 0,         // ldadd, cas
  kAcquire = 1,         // ldadda, casa
  kRelease = 2,         // ldaddl, casl
  kAcquireRelease = 3,  // ldaddal, casal
};

constexpr bool HasAcquire(MemOrder order) { return (static_cast<unsigned>(order) & 1) != 0; }
constexpr bool HasRelease(MemOrder order) { return (static_cast<unsigned>(order) & 2) != 0; }

namespace detail {

// The 5-bit field for a register in a field documented "ZR": X0..X30 or kZr.
constexpr std::optional<uint32_t> ZrField(Reg reg) {
  const auto number = static_cast<uint32_t>(reg);
  if (number <= 31) return number;
  return std::nullopt;
}

// The 5-bit field for a register in a field documented "SP": X0..X30 or kSp.
constexpr std::optional<uint32_t> SpField(Reg reg) {
  const auto number = static_cast<uint32_t>(reg);
  if (number <= 30) return number;
  if (reg == Reg::kSp) return 31;
  return std::nullopt;
}

constexpr uint32_t U(auto enum_value) { return static_cast<uint32_t>(enum_value); }

}  // namespace detail
}  // namespace bpfdiff::a64
