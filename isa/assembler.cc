#include "isa/assembler.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "isa/opcode_table.h"
#include "isa/program.h"
#include "isa/syntax.h"

namespace bpfdiff::isa {
namespace {

// Upstream spellings that name a form of the table under another mnemonic.
struct Alias {
  std::string_view written;
  std::string_view mnemonic;
};
constexpr Alias kAliases[] = {
    {"swap16", "bswap16"},
    {"swap32", "bswap32"},
    {"swap64", "bswap64"},
    {"call helper", "call"},
    // xchg and cmpxchg always fetch; upstream accepts the redundant word.
    {"lock fetch xchg", "lock xchg"},
    {"lock fetch xchg32", "lock xchg32"},
    {"lock fetch cmpxchg", "lock cmpxchg"},
    {"lock fetch cmpxchg32", "lock cmpxchg32"},
};

// The longest mnemonic of the table has four words ("probe32 lock fetch add32").
constexpr size_t kMaxMnemonicWords = 4;

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// Label names: [A-Za-z_.][A-Za-z0-9_.]*
bool IsWordStart(char c) { return IsLetter(c) || c == '.'; }
bool IsWordChar(char c) { return IsWordStart(c) || IsDigit(c); }

size_t SkipSpaces(std::string_view text, size_t i) {
  while (i < text.size() && IsSpace(text[i])) ++i;
  return i;
}

size_t ScanWord(std::string_view text, size_t i) {
  while (i < text.size() && IsWordChar(text[i])) ++i;
  return i;
}

struct Position {
  size_t line;
  size_t column;  // 1-based, in bytes
};

Error At(Position where, std::string_view message) {
  return Fail("line {}, column {}: {}", where.line, where.column, message);
}

// One operand as written, with the column where it starts.
struct Token {
  std::string_view text;
  size_t column;
};

// What an operand looks like, before its value is read: enough to choose
// between the forms a mnemonic names (`add %r0, 1` or `add %r0, %r1`).
enum class Kind : uint8_t { kRegister, kMemory, kNumber, kWord, kMapFd, kMapValue, kOther };

Kind KindOf(std::string_view text) {
  if (text.empty()) return Kind::kOther;
  if (text[0] == '%') return Kind::kRegister;
  if (text[0] == '[') return Kind::kMemory;
  if (text.starts_with("map_value:")) return Kind::kMapValue;
  if (text.starts_with("map:")) return Kind::kMapFd;
  if (text[0] == '+' || text[0] == '-' || IsDigit(text[0])) return Kind::kNumber;
  if (IsWordStart(text[0])) return Kind::kWord;
  return Kind::kOther;
}

bool Accepts(Operand operand, Kind kind) {
  switch (operand) {
    case Operand::kDstReg:
    case Operand::kSrcReg: return kind == Kind::kRegister;
    case Operand::kImm:
    case Operand::kImm64: return kind == Kind::kNumber;
    case Operand::kOffsetTarget:
    case Operand::kImmTarget: return kind == Kind::kNumber || kind == Kind::kWord;
    case Operand::kDstMem:
    case Operand::kSrcMem: return kind == Kind::kMemory;
    case Operand::kMapFd: return kind == Kind::kMapFd;
    case Operand::kMapValue: return kind == Kind::kMapValue;
  }
  return false;
}

std::string_view Canonical(std::string_view written) {
  for (const Alias& alias : kAliases) {
    if (written == alias.written) return alias.mnemonic;
  }
  return written;
}

// "add %rD, imm | add %rD, %rS"
std::string Syntaxes(std::span<const FormId> ids) {
  std::string out;
  for (FormId id : ids) {
    if (!out.empty()) out += " | ";
    out += FormSyntax(FormById(id));
  }
  return out;
}

// Splits the operands of an instruction: separated by commas and/or white
// space; a memory operand [...] may contain spaces.
Result<std::vector<Token>> SplitOperands(std::string_view line, size_t start, size_t number) {
  std::vector<Token> tokens;
  bool after_comma = false;
  size_t comma_column = 0;
  size_t i = start;
  while (true) {
    i = SkipSpaces(line, i);
    if (i >= line.size()) break;
    if (line[i] == ',') {
      if (tokens.empty() || after_comma) return At({number, i + 1}, "missing operand before ','");
      after_comma = true;
      comma_column = i + 1;
      ++i;
      continue;
    }
    const size_t begin = i;
    if (line[i] == '[') {
      const size_t close = line.find(']', i);
      if (close == std::string_view::npos) {
        return At({number, i + 1}, fmt::format("missing ']' in '{}'", Excerpt(line.substr(i))));
      }
      i = close + 1;
    } else {
      while (i < line.size() && !IsSpace(line[i]) && line[i] != ',' && line[i] != '[') ++i;
    }
    tokens.push_back({line.substr(begin, i - begin), begin + 1});
    after_comma = false;
  }
  if (after_comma) return At({number, comma_column}, "missing operand after ','");
  return tokens;
}

Result<uint8_t> ParseRegister(std::string_view text, Position where) {
  if (text.size() >= 3 && text.size() <= 4 && text[0] == '%' && text[1] == 'r') {
    std::string_view digits = text.substr(2);
    bool all_digits = true;
    for (char c : digits) all_digits = all_digits && IsDigit(c);
    const bool leading_zero = digits.size() > 1 && digits[0] == '0';
    if (all_digits && !leading_zero) {
      int value = 0;
      for (char c : digits) value = value * 10 + (c - '0');
      if (value < kNumRegs) return static_cast<uint8_t>(value);
    }
  }
  if (!text.empty() && text[0] != '%' && text.size() >= 2 && text[0] == 'r' && IsDigit(text[1])) {
    return At(where, fmt::format("unknown register '{}' (registers are written %r0..%r10)",
                                 Excerpt(text)));
  }
  return At(where, fmt::format("unknown register '{}' (registers are %r0..%r10)", Excerpt(text)));
}

struct MemoryOperand {
  uint8_t reg = 0;
  int16_t offset = 0;
};

// [%rN], [%rN+off], [%rN-off]; off is decimal or hex (see docs/assembly.md).
Result<MemoryOperand> ParseMemory(const Token& token, size_t number) {
  const std::string_view text = token.text;
  const Position where{number, token.column};
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return At(where, fmt::format("expected a memory operand like [%r1+4], found '{}'", Excerpt(text)));
  }
  const std::string_view inner = text.substr(1, text.size() - 2);
  size_t i = SkipSpaces(inner, 0);
  const size_t reg_begin = i;
  while (i < inner.size() && !IsSpace(inner[i]) && inner[i] != '+' && inner[i] != '-') ++i;
  MemoryOperand mem;
  auto reg = ParseRegister(inner.substr(reg_begin, i - reg_begin),
                           {number, token.column + 1 + reg_begin});
  if (!reg) return reg.error();
  mem.reg = *reg;
  i = SkipSpaces(inner, i);
  if (i >= inner.size()) return mem;
  const size_t sign_at = i;
  if (inner[i] != '+' && inner[i] != '-') {
    return At({number, token.column + 1 + sign_at},
              fmt::format("expected '+' or '-' after the register in '{}'", Excerpt(text)));
  }
  const bool negative = inner[i] == '-';
  const std::string_view digits = Trim(inner.substr(i + 1));
  const std::string_view written = Trim(inner.substr(sign_at));
  const Position offset_at{number, token.column + 1 + sign_at};
  if (digits.empty() || digits[0] == '+' || digits[0] == '-') {
    return At(offset_at, fmt::format("expected an offset after the sign in '{}'", Excerpt(text)));
  }
  auto literal = ParseLiteral(digits);
  if (!literal) return At(offset_at, fmt::format("offset {}", literal.message()));
  literal->negative = negative;
  literal->has_sign = true;
  auto offset = FitSigned(*literal, 16, "offset", written);
  if (!offset) return At(offset_at, offset.message());
  mem.offset = static_cast<int16_t>(*offset);
  return mem;
}

Result<int32_t> ParseImm32(const Token& token, size_t number, std::string_view what) {
  const Position where{number, token.column};
  auto literal = ParseLiteral(token.text);
  if (!literal) return At(where, fmt::format("{} {}", what, literal.message()));
  auto value = FitSigned(*literal, 32, what, token.text);
  if (!value) return At(where, value.message());
  return *value;
}

Result<uint64_t> ParseImm64(const Token& token, size_t number) {
  const Position where{number, token.column};
  auto literal = ParseLiteral(token.text);
  if (!literal) return At(where, fmt::format("immediate {}", literal.message()));
  auto value = Fit64(*literal, token.text);
  if (!value) return At(where, value.message());
  return *value;
}

// A jump distance written as a number: +N or -N slots from the next slot.
Result<int32_t> ParseDistance(const Token& token, size_t number, unsigned bits) {
  const Position where{number, token.column};
  auto literal = ParseLiteral(token.text);
  if (!literal) return At(where, fmt::format("jump distance {}", literal.message()));
  if (!literal->has_sign) {
    return At(where, fmt::format("jump distance '{}' needs a sign (+{} or -{}), or use a label",
                                 Excerpt(token.text), Excerpt(token.text), Excerpt(token.text)));
  }
  auto value = FitSigned(*literal, bits, "jump distance", token.text);
  if (!value) return At(where, value.message());
  return *value;
}

struct MapValueRef {
  int32_t fd = 0;
  uint32_t offset = 0;
};

// map_value:FD or map_value:FD+OFF
Result<MapValueRef> ParseMapValue(const Token& token, size_t number) {
  constexpr std::string_view kPrefix = "map_value:";
  const Position where{number, token.column};
  const std::string_view rest = token.text.substr(kPrefix.size());
  const size_t plus = rest.find('+', 1);
  const std::string_view fd_text = rest.substr(0, plus);
  MapValueRef ref;
  auto fd = ParseLiteral(fd_text);
  if (!fd) return At(where, fmt::format("map fd {}", fd.message()));
  auto fd_value = FitSigned(*fd, 32, "map fd", fd_text);
  if (!fd_value) return At(where, fd_value.message());
  ref.fd = *fd_value;
  if (plus == std::string_view::npos) return ref;
  const std::string_view offset_text = rest.substr(plus + 1);
  const Position offset_at{number, token.column + kPrefix.size() + plus + 1};
  auto offset = ParseLiteral(offset_text);
  if (!offset) return At(offset_at, fmt::format("map value offset {}", offset.message()));
  if (offset->has_sign || offset->magnitude > 0xffffffffu) {
    return At(offset_at, fmt::format("map value offset '{}' must be 0..0xffffffff",
                                     Excerpt(offset_text)));
  }
  ref.offset = static_cast<uint32_t>(offset->magnitude);
  return ref;
}

struct Label {
  size_t slot;
  size_t line;
};

// A jump or local call whose distance waits for its label.
struct Fixup {
  size_t slot;
  bool in_imm;  // imm (ja32, call local) or offset (16 bits)
  std::string label;
  Position where;
};

class Assembler {
 public:
  Status AddLine(std::string_view text, size_t number);
  Result<std::vector<Insn>> Finish() &&;
  const Label* FindLabel(std::string_view name) const {
    const auto it = labels_.find(name);
    return it == labels_.end() ? nullptr : &it->second;
  }

 private:
  Status DeclareLabel(std::string_view name, Position where);
  Status AddInstruction(std::string_view line, size_t start, size_t number);
  Result<const Form*> SelectForm(std::string_view mnemonic, Position mnemonic_at,
                                 std::span<const Token> operands, size_t number) const;
  Status Encode(const Form& form, std::span<const Token> operands, size_t number);
  Result<int32_t> Target(const Token& token, size_t number, bool in_imm);

  std::vector<Insn> insns_;
  std::map<std::string, Label, std::less<>> labels_;
  std::vector<Fixup> fixups_;
  std::optional<size_t> first_exit_;
};

Status Assembler::AddLine(std::string_view text, size_t number) {
  const std::string_view line = text.substr(0, text.find_first_of("#;"));
  size_t i = SkipSpaces(line, 0);
  // Labels: `name:`, alone or before an instruction.
  while (i < line.size() && IsWordStart(line[i])) {
    const size_t end = ScanWord(line, i);
    if (end >= line.size() || line[end] != ':') break;
    if (auto status = DeclareLabel(line.substr(i, end - i), {number, i + 1}); !status) {
      return status;
    }
    i = SkipSpaces(line, end + 1);
  }
  if (i >= line.size()) return {};
  return AddInstruction(line, i, number);
}

Status Assembler::DeclareLabel(std::string_view name, Position where) {
  auto [it, inserted] = labels_.try_emplace(std::string(name), Label{insns_.size(), where.line});
  if (!inserted) {
    return At(where, fmt::format("label '{}' is already defined at line {}", Excerpt(name),
                                 it->second.line));
  }
  return {};
}

Status Assembler::AddInstruction(std::string_view line, size_t start, size_t number) {
  // The mnemonic is the longest run of leading words that names one
  // ("lock fetch add32", "call local", "ja" in "ja exit").
  struct Word {
    size_t begin, end;
  };
  std::array<Word, kMaxMnemonicWords> words{};
  size_t word_count = 0;
  for (size_t j = start; word_count < kMaxMnemonicWords && j < line.size() && IsLetter(line[j]);) {
    size_t end = j;
    while (end < line.size() && (IsLetter(line[end]) || IsDigit(line[end]))) ++end;
    words[word_count++] = {j, end};
    j = SkipSpaces(line, end);
  }
  if (word_count == 0) {
    return At({number, start + 1}, fmt::format("expected an instruction or a label, found '{}'",
                                               Excerpt(Trim(line.substr(start)))));
  }
  for (size_t count = word_count; count > 0; --count) {
    std::string written;
    for (size_t k = 0; k < count; ++k) {
      if (k != 0) written += ' ';
      written += line.substr(words[k].begin, words[k].end - words[k].begin);
    }
    const std::string_view mnemonic = Canonical(written);
    if (FormsWithMnemonic(mnemonic).empty()) continue;
    auto operands = SplitOperands(line, words[count - 1].end, number);
    if (!operands) return operands.error();
    auto form = SelectForm(mnemonic, {number, start + 1}, *operands, number);
    if (!form) return form.error();
    return Encode(**form, *operands, number);
  }
  // Unknown. If the first word begins multi-word mnemonics, list them.
  const std::string_view first = line.substr(words[0].begin, words[0].end - words[0].begin);
  std::vector<std::string_view> seen;
  std::string followers;
  for (const Form& form : AllForms()) {
    const std::string_view mnemonic = form.mnemonic;
    if (mnemonic.size() <= first.size() + 1 || !mnemonic.starts_with(first) ||
        mnemonic[first.size()] != ' ' ||
        std::find(seen.begin(), seen.end(), mnemonic) != seen.end()) {
      continue;
    }
    seen.push_back(mnemonic);
    followers += followers.empty() ? "" : ", ";
    followers += mnemonic;
  }
  const std::string_view written =
      line.substr(words[0].begin, words[word_count - 1].end - words[0].begin);
  if (followers.empty()) {
    return At({number, start + 1}, fmt::format("unknown instruction '{}'", Excerpt(written)));
  }
  return At({number, start + 1}, fmt::format("unknown instruction '{}' (known: {})",
                                             Excerpt(written), followers));
}

Result<const Form*> Assembler::SelectForm(std::string_view mnemonic, Position mnemonic_at,
                                          std::span<const Token> operands, size_t number) const {
  const std::span<const FormId> ids = FormsWithMnemonic(mnemonic);
  std::vector<const Form*> same_count;
  for (FormId id : ids) {
    const Form& form = FormById(id);
    const std::span<const Operand> expected = OperandsOf(form.shape);
    if (expected.size() != operands.size()) continue;
    same_count.push_back(&form);
    bool fits = true;
    for (size_t i = 0; i < expected.size(); ++i) {
      fits = fits && Accepts(expected[i], KindOf(operands[i].text));
    }
    if (fits) return &form;
  }
  if (same_count.empty()) {
    return At(mnemonic_at, fmt::format("'{}' is written {}; found {} operand{}", mnemonic,
                                       Syntaxes(ids), operands.size(),
                                       operands.size() == 1 ? "" : "s"));
  }
  // Name the first operand that no form of this operand count accepts.
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string expected;
    bool accepted = false;
    for (const Form* form : same_count) {
      const Operand operand = OperandsOf(form->shape)[i];
      accepted = accepted || Accepts(operand, KindOf(operands[i].text));
      const std::string_view description = OperandDescription(operand);
      if (expected.find(description) == std::string::npos) {
        expected += expected.empty() ? "" : " or ";
        expected += description;
      }
    }
    if (!accepted) {
      return At({number, operands[i].column},
                fmt::format("operand {} of '{}': expected {}, found '{}'", i + 1, mnemonic,
                            expected, Excerpt(operands[i].text)));
    }
  }
  return At(mnemonic_at, fmt::format("'{}' is written {}", mnemonic, Syntaxes(ids)));
}

Result<int32_t> Assembler::Target(const Token& token, size_t number, bool in_imm) {
  if (KindOf(token.text) == Kind::kWord) {
    if (ScanWord(token.text, 0) != token.text.size()) {
      return At({number, token.column},
                fmt::format("'{}' is not a label name", Excerpt(token.text)));
    }
    fixups_.push_back({insns_.size(), in_imm, std::string(token.text), {number, token.column}});
    return 0;
  }
  return ParseDistance(token, number, in_imm ? 32 : 16);
}

Status Assembler::Encode(const Form& form, std::span<const Token> operands, size_t number) {
  Insn insn;
  insn.opcode = form.opcode;
  insn.imm = form.fixed_imm;
  switch (form.discriminant) {
    case Discriminant::kNone: break;
    case Discriminant::kSrc: insn.src = static_cast<uint8_t>(form.discriminant_value); break;
    case Discriminant::kOffset: insn.offset = static_cast<int16_t>(form.discriminant_value); break;
    case Discriminant::kImm: insn.imm = form.discriminant_value; break;
  }
  Insn second;  // the second slot of a wide form
  const std::span<const Operand> expected = OperandsOf(form.shape);
  for (size_t i = 0; i < expected.size(); ++i) {
    const Token& token = operands[i];
    const Position where{number, token.column};
    switch (expected[i]) {
      case Operand::kDstReg:
      case Operand::kSrcReg: {
        auto reg = ParseRegister(token.text, where);
        if (!reg) return reg.error();
        (expected[i] == Operand::kDstReg ? insn.dst : insn.src) = *reg;
        break;
      }
      case Operand::kImm: {
        auto imm = ParseImm32(token, number, "immediate");
        if (!imm) return imm.error();
        insn.imm = *imm;
        break;
      }
      case Operand::kImm64: {
        auto imm = ParseImm64(token, number);
        if (!imm) return imm.error();
        insn.imm = static_cast<int32_t>(static_cast<uint32_t>(*imm));
        second.imm = static_cast<int32_t>(static_cast<uint32_t>(*imm >> 32));
        break;
      }
      case Operand::kOffsetTarget: {
        auto distance = Target(token, number, false);
        if (!distance) return distance.error();
        insn.offset = static_cast<int16_t>(*distance);
        break;
      }
      case Operand::kImmTarget: {
        auto distance = Target(token, number, true);
        if (!distance) return distance.error();
        insn.imm = *distance;
        break;
      }
      case Operand::kDstMem:
      case Operand::kSrcMem: {
        auto mem = ParseMemory(token, number);
        if (!mem) return mem.error();
        (expected[i] == Operand::kDstMem ? insn.dst : insn.src) = mem->reg;
        insn.offset = mem->offset;
        break;
      }
      case Operand::kMapFd: {
        const Token fd{token.text.substr(4), token.column + 4};  // after "map:"
        auto value = ParseImm32(fd, number, "map fd");
        if (!value) return value.error();
        insn.imm = *value;
        break;
      }
      case Operand::kMapValue: {
        auto ref = ParseMapValue(token, number);
        if (!ref) return ref.error();
        insn.imm = ref->fd;
        second.imm = static_cast<int32_t>(ref->offset);
        break;
      }
    }
  }
  if (form.shape == Shape::kExit && !first_exit_) first_exit_ = insns_.size();
  insns_.push_back(insn);
  if (form.is_wide()) insns_.push_back(second);
  return {};
}

Result<std::vector<Insn>> Assembler::Finish() && {
  for (const Fixup& fixup : fixups_) {
    size_t target = 0;
    if (auto it = labels_.find(fixup.label); it != labels_.end()) {
      target = it->second.slot;
    } else if (fixup.label == "exit" && first_exit_) {
      target = *first_exit_;  // upstream's implicit label: the first exit
    } else {
      return At(fixup.where, fmt::format("unknown label '{}'", Excerpt(fixup.label)));
    }
    const int64_t distance = static_cast<int64_t>(target) - static_cast<int64_t>(fixup.slot) - 1;
    Insn& insn = insns_[fixup.slot];
    if (fixup.in_imm) {
      if (distance < std::numeric_limits<int32_t>::min() ||
          distance > std::numeric_limits<int32_t>::max()) {
        return At(fixup.where, fmt::format("label '{}' is {} slots away, beyond 32 bits",
                                           Excerpt(fixup.label), distance));
      }
      insn.imm = static_cast<int32_t>(distance);
    } else {
      if (distance < std::numeric_limits<int16_t>::min() ||
          distance > std::numeric_limits<int16_t>::max()) {
        return At(fixup.where,
                  fmt::format("label '{}' is {} slots away, beyond the 16-bit jump offset "
                              "(-32768..32767); ja32 reaches further",
                              Excerpt(fixup.label), distance));
      }
      insn.offset = static_cast<int16_t>(distance);
    }
  }
  return std::move(insns_);
}

}  // namespace

namespace {

Status AddLines(Assembler& assembler, std::string_view text, const AssembleOptions& options) {
  size_t number = options.first_line;
  for (size_t begin = 0; begin <= text.size(); ++number) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    if (auto status = assembler.AddLine(text.substr(begin, end - begin), number); !status) return status;
    begin = end + 1;
  }
  return {};
}

}  // namespace

Result<std::vector<Insn>> Assemble(std::string_view text, const AssembleOptions& options) {
  Assembler assembler;
  if (auto status = AddLines(assembler, text, options); !status) return status.error();
  return std::move(assembler).Finish();
}

Result<uint32_t> LabelSlot(std::string_view text, std::string_view label, const AssembleOptions& options) {
  Assembler assembler;
  if (auto status = AddLines(assembler, text, options); !status) return status.error();
  const Label* found = assembler.FindLabel(label);
  if (found == nullptr) return Fail("unknown label '{}'", Excerpt(label));
  return static_cast<uint32_t>(found->slot);
}

}  // namespace bpfdiff::isa
