#include "isa/syntax.h"

#include <charconv>
#include <limits>
#include <vector>

#include <fmt/core.h>

namespace bpfdiff::isa {
namespace {

using enum Operand;

constexpr Operand kAluImmOps[] = {kDstReg, kImm};
constexpr Operand kAluRegOps[] = {kDstReg, kSrcReg};
constexpr Operand kDstOnlyOps[] = {kDstReg};
constexpr Operand kJaOps[] = {kOffsetTarget};
constexpr Operand kJa32Ops[] = {kImmTarget};
constexpr Operand kJumpImmOps[] = {kDstReg, kImm, kOffsetTarget};
constexpr Operand kJumpRegOps[] = {kDstReg, kSrcReg, kOffsetTarget};
constexpr Operand kImmOnlyOps[] = {kImm};
constexpr Operand kLddwOps[] = {kDstReg, kImm64};
constexpr Operand kLddwMapFdOps[] = {kDstReg, kMapFd};
constexpr Operand kLddwMapValueOps[] = {kDstReg, kMapValue};
constexpr Operand kLddwFuncOps[] = {kDstReg, kImmTarget};
constexpr Operand kLdIndOps[] = {kSrcReg, kImm};
constexpr Operand kLoadOps[] = {kDstReg, kSrcMem};
constexpr Operand kStoreImmOps[] = {kDstMem, kImm};
constexpr Operand kStoreRegOps[] = {kDstMem, kSrcReg};

}  // namespace

std::span<const Operand> OperandsOf(Shape shape) {
  switch (shape) {
    case Shape::kAluImm: return kAluImmOps;
    case Shape::kAluReg: return kAluRegOps;
    case Shape::kAluUnary: return kDstOnlyOps;
    case Shape::kEndian: return kDstOnlyOps;
    case Shape::kMovSx: return kAluRegOps;
    case Shape::kMovPerCpu: return kAluRegOps;
    case Shape::kAddrSpaceCast: return kAluRegOps;
    case Shape::kJa: return kJaOps;
    case Shape::kJa32: return kJa32Ops;
    case Shape::kJumpImm: return kJumpImmOps;
    case Shape::kJumpReg: return kJumpRegOps;
    case Shape::kCallHelper: return kImmOnlyOps;
    case Shape::kCallLocal: return kJa32Ops;
    case Shape::kCallKfunc: return kImmOnlyOps;
    case Shape::kCallReg: return kDstOnlyOps;
    case Shape::kTailCall: return {};
    case Shape::kExit: return {};
    case Shape::kLddw: return kLddwOps;
    case Shape::kLddwMapFd: return kLddwMapFdOps;
    case Shape::kLddwMapValue: return kLddwMapValueOps;
    case Shape::kLddwFunc: return kLddwFuncOps;
    case Shape::kLdAbs: return kImmOnlyOps;
    case Shape::kLdInd: return kLdIndOps;
    case Shape::kLoad: return kLoadOps;
    case Shape::kStoreImm: return kStoreImmOps;
    case Shape::kStoreReg: return kStoreRegOps;
    case Shape::kAtomic: return kStoreRegOps;
  }
  return {};
}

std::string_view OperandSyntax(Operand operand) {
  switch (operand) {
    case kDstReg: return "%rD";
    case kSrcReg: return "%rS";
    case kImm: return "imm";
    case kImm64: return "imm64";
    case kOffsetTarget:
    case kImmTarget: return "target";
    case kDstMem: return "[%rD+off]";
    case kSrcMem: return "[%rS+off]";
    case kMapFd: return "map:FD";
    case kMapValue: return "map_value:FD+OFF";
  }
  return "?";
}

std::string_view OperandDescription(Operand operand) {
  switch (operand) {
    case kDstReg:
    case kSrcReg: return "a register %r0..%r10";
    case kImm: return "a 32-bit immediate";
    case kImm64: return "a 64-bit immediate";
    case kOffsetTarget:
    case kImmTarget: return "a label or a distance like +3 or -2";
    case kDstMem:
    case kSrcMem: return "a memory operand like [%r1+4]";
    case kMapFd: return "a map reference like map:3";
    case kMapValue: return "a map value reference like map_value:3+16";
  }
  return "?";
}

std::string FormSyntax(const Form& form) {
  std::string text = form.mnemonic;
  bool first = true;
  for (Operand operand : OperandsOf(form.shape)) {
    text += first ? " " : ", ";
    text += OperandSyntax(operand);
    first = false;
  }
  return text;
}

namespace {

FieldUse ComputeFieldsOf(const Form& form) {
  FieldUse use;
  for (Operand operand : OperandsOf(form.shape)) {
    switch (operand) {
      case kDstReg: use.dst = true; break;
      case kSrcReg: use.src = true; break;
      case kImm:
      case kImmTarget:
      case kMapFd: use.imm = true; break;
      case kImm64:
      case kMapValue: use.imm = use.next_imm = true; break;
      case kOffsetTarget: use.offset = true; break;
      case kDstMem: use.dst = use.offset = true; break;
      case kSrcMem: use.src = use.offset = true; break;
    }
  }
  switch (form.discriminant) {
    case Discriminant::kNone: break;
    case Discriminant::kSrc: use.src = true; break;
    case Discriminant::kOffset: use.offset = true; break;
    case Discriminant::kImm: use.imm = true; break;
  }
  return use;
}

}  // namespace

// Validation asks this for every instruction of every program: one table,
// built once, indexed by form.
FieldUse FieldsOf(const Form& form) {
  static const std::vector<FieldUse> table = [] {
    std::vector<FieldUse> uses;
    for (const Form& f : AllForms()) uses.push_back(ComputeFieldsOf(f));
    return uses;
  }();
  return table[form.id];
}

Result<Literal> ParseLiteral(std::string_view text) {
  Literal literal;
  std::string_view digits = text;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    literal.has_sign = true;
    literal.negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    literal.hex = true;
    base = 16;
    digits.remove_prefix(2);
  }
  if (digits.empty()) return Fail("'{}' is not a number", Excerpt(text));
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), literal.magnitude, base);
  if (ec == std::errc::result_out_of_range) {
    return Fail("'{}' does not fit in 64 bits", Excerpt(text));
  }
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return Fail("'{}' is not a number", Excerpt(text));
  }
  return literal;
}

Result<int32_t> FitSigned(const Literal& literal, unsigned bits, std::string_view what,
                          std::string_view text) {
  const uint64_t pattern_max = (uint64_t{1} << bits) - 1;
  const uint64_t positive_max = (uint64_t{1} << (bits - 1)) - 1;
  const uint64_t negative_max = uint64_t{1} << (bits - 1);
  if (literal.hex && !literal.negative) {
    if (literal.magnitude <= pattern_max) {
      // A bit pattern: the top bit is the sign bit.
      const uint64_t value = literal.magnitude;
      return value > positive_max ? static_cast<int32_t>(static_cast<int64_t>(value) -
                                                         static_cast<int64_t>(pattern_max) - 1)
                                  : static_cast<int32_t>(value);
    }
  } else if (literal.negative ? literal.magnitude <= negative_max
                              : literal.magnitude <= positive_max) {
    return literal.negative ? static_cast<int32_t>(-static_cast<int64_t>(literal.magnitude))
                            : static_cast<int32_t>(literal.magnitude);
  }
  return Fail("{} '{}' does not fit in {} bits (write -{}..{} in decimal, or a bit pattern "
              "0x0..0x{:x})",
              what, Excerpt(text), bits, negative_max, positive_max, pattern_max);
}

Result<uint64_t> Fit64(const Literal& literal, std::string_view text) {
  if (!literal.negative) return literal.magnitude;
  constexpr uint64_t kNegativeMax = uint64_t{1} << 63;
  if (literal.magnitude > kNegativeMax) {
    return Fail("'{}' does not fit in 64 bits (the smallest value is -{})", Excerpt(text),
                kNegativeMax);
  }
  return uint64_t{0} - literal.magnitude;
}

std::string FormatImm32(int32_t value) {
  if (value > -65536 && value < 65536) return fmt::format("{}", value);
  return fmt::format("0x{:x}", static_cast<uint32_t>(value));
}

std::string FormatImm64(uint64_t value) {
  const auto signed_value = static_cast<int64_t>(value);
  if (signed_value > -65536 && signed_value < 65536) return fmt::format("{}", signed_value);
  return fmt::format("0x{:x}", value);
}

std::string FormatDistance(int64_t distance) {
  return distance < 0 ? fmt::format("{}", distance) : fmt::format("+{}", distance);
}

std::string Excerpt(std::string_view text, size_t limit) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && IsSpace(text[begin])) ++begin;
  size_t end = text.size();
  while (end > begin && IsSpace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

}  // namespace bpfdiff::isa
