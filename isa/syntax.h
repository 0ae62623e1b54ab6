// The written form of instructions, shared by the assembler and the
// disassembler so that each is defined once:
//
//  - for every operand Shape of the opcode table, the operands it is written
//    with, in order, and the instruction fields each operand fills;
//  - the integer literals of immediates, offsets and jump distances, and the
//    rule that a literal must fit its field without truncation.
//
// A new form added to the opcode table with an existing Shape is therefore
// assembled and disassembled with no edit here; a new Shape needs one line in
// OperandsOf().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "support/result.h"

namespace bpfdiff::isa {

// One written operand and the fields it fills.
enum class Operand : uint8_t {
  kDstReg,        // %rN                  -> dst
  kSrcReg,        // %rN                  -> src
  kImm,           // 32-bit literal       -> imm
  kImm64,         // 64-bit literal       -> imm, and the next slot's imm (upper half)
  kOffsetTarget,  // label, +N or -N      -> offset, counted from the next slot
  kImmTarget,     // label, +N or -N      -> imm, counted from the next slot
  kDstMem,        // [%rN+off]            -> dst, offset
  kSrcMem,        // [%rN+off]            -> src, offset
  kMapFd,         // map:FD               -> imm
  kMapValue,      // map_value:FD+OFF     -> imm, and the next slot's imm (OFF)
};

// The operands of an instruction of `shape`, in written order.
std::span<const Operand> OperandsOf(Shape shape);

// How an operand is written, for messages and documentation ("%rD", "imm").
std::string_view OperandSyntax(Operand operand);

// What the operand is, for messages ("a register", "a memory operand like [%r1+4]").
std::string_view OperandDescription(Operand operand);

// The syntax of a form: "add32 %rD, imm", "lddw %rD, map:FD".
std::string FormSyntax(const Form& form);

// Which fields a form uses: those its operands fill plus its discriminating
// field. Every other field is reserved and must be zero. A wide form's second
// slot has only an imm, used or not (`next_imm`).
struct FieldUse {
  bool dst = false;
  bool src = false;
  bool offset = false;
  bool imm = false;
  bool next_imm = false;
};
FieldUse FieldsOf(const Form& form);

// An integer literal: [+-]? (0x hexdigits | decimal digits).
struct Literal {
  bool negative = false;
  bool has_sign = false;  // written with an explicit '+' or '-'
  bool hex = false;
  uint64_t magnitude = 0;
};
Result<Literal> ParseLiteral(std::string_view text);

// The value of `literal` for a signed field of `bits` bits (16 or 32). An
// unsigned hex literal is a bit pattern up to 2^bits - 1 (0xffffffff is -1
// in a 32-bit field); anything else must be within the signed range.
// `what` names the field in the error ("immediate", "offset").
Result<int32_t> FitSigned(const Literal& literal, unsigned bits, std::string_view what,
                          std::string_view text);

// The value of `literal` as 64 bits: any unsigned value, or a negative value
// down to -2^63 (two's complement).
Result<uint64_t> Fit64(const Literal& literal, std::string_view text);

// Literal text that re-reads as the same bits: decimal when small
// (|value| < 65536), else hex of the bit pattern.
std::string FormatImm32(int32_t value);
std::string FormatImm64(uint64_t value);
// A relative distance: "+3", "-2", "+0".
std::string FormatDistance(int64_t distance);

// User text for an error message: bytes outside printable ASCII as \xNN, and
// at most `limit` characters (then "...").
std::string Excerpt(std::string_view text, size_t limit = 48);

// Blanks inside a line of assembly or of a .data file (not newline).
bool IsSpace(char c);
// `text` without leading and trailing blanks.
std::string_view Trim(std::string_view text);

}  // namespace bpfdiff::isa
