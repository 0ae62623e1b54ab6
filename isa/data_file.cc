#include "isa/data_file.h"

#include <limits>
#include <map>

#include <fmt/core.h>

#include "isa/assembler.h"
#include "isa/syntax.h"
#include "support/files.h"
#include "support/hex.h"

namespace bpfdiff::isa {
namespace {

// The options `-- options` accepts: the one place that lists them.
struct OptionInfo {
  std::string_view name;
  bool DataOptions::*flag;
};
constexpr OptionInfo kKnownOptions[] = {
    {"kptr_xchg_inline", &DataOptions::kptr_xchg_inline},
};

enum class SectionKind : uint8_t {
  kAsm, kRaw, kMem, kResult, kError, kIgnored, kMap, kOptions, kTrace, kExceptionCallback,
};

struct SectionName {
  std::string_view word;
  SectionKind kind;
};
constexpr SectionName kSectionNames[] = {
    {"asm", SectionKind::kAsm},       {"raw", SectionKind::kRaw},
    {"mem", SectionKind::kMem},       {"result", SectionKind::kResult},
    {"error", SectionKind::kError},   {"c", SectionKind::kIgnored},
    {"map", SectionKind::kMap},       {"options", SectionKind::kOptions},
    {"trace", SectionKind::kTrace},   {"exception_callback", SectionKind::kExceptionCallback},
};
constexpr std::string_view kKnownSections =
    "asm, raw, mem, result, error, map, options, trace, exception_callback, c, no register offset";
constexpr std::string_view kExceptionCallbackSyntax = "-- exception_callback <label of -- asm> [<program>]";

std::vector<std::string_view> SplitSpaces(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    const size_t begin = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > begin) words.push_back(text.substr(begin, i - begin));
  }
  return words;
}

Error AtLine(size_t line, std::string_view message) { return Fail("line {}: {}", line, message); }

struct Line {
  std::string_view text;  // the whole line, without its end of line
  std::string_view code;  // before any '#', trimmed
  size_t number;
};

struct Section {
  SectionKind kind;
  std::string name;       // for messages: "asm 1", "map 3", "result"
  std::string_view args;  // what follows the name on the header line
  size_t program = 0;     // -- asm k / -- raw k
  size_t line;            // of the header
  std::vector<Line> body;
};

Result<Section> ParseHeader(const Line& line) {
  const std::string_view rest = Trim(line.code.substr(2));
  const std::vector<std::string_view> words = SplitSpaces(rest);
  if (words.empty()) return AtLine(line.number, "'--' without a section name");
  Section section{SectionKind::kIgnored, std::string(words[0]), {}, 0, line.number, {}};
  if (words.size() == 3 && words[0] == "no" && words[1] == "register" && words[2] == "offset") {
    section.name = "no register offset";
    return section;
  }
  const SectionName* known = nullptr;
  for (const SectionName& name : kSectionNames) {
    if (words[0] == name.word) known = &name;
  }
  if (known == nullptr) {
    return AtLine(line.number, fmt::format("unknown section '-- {}' (known: {})",
                                           Excerpt(rest), kKnownSections));
  }
  section.kind = known->kind;
  section.args = Trim(rest.substr(words[0].size()));
  switch (section.kind) {
    case SectionKind::kAsm:
    case SectionKind::kRaw:
      if (!section.args.empty()) {
        auto k = ParseUnsigned(section.args);
        if (!k || *k >= kMaxDataPrograms) {
          return AtLine(line.number,
                        fmt::format("'-- {} {}': the program number must be 0..{}", words[0],
                                    Excerpt(section.args), kMaxDataPrograms - 1));
        }
        section.program = static_cast<size_t>(*k);
        if (section.program != 0) section.name += fmt::format(" {}", section.program);
      }
      break;
    case SectionKind::kMem:
    case SectionKind::kResult:
    case SectionKind::kOptions:
    case SectionKind::kTrace:
      if (!section.args.empty()) {
        return AtLine(line.number,
                      fmt::format("'-- {}' takes nothing more on its line, found '{}'", words[0],
                                  Excerpt(section.args)));
      }
      break;
    case SectionKind::kMap:
      section.name += fmt::format(" {}", words.size() > 1 ? words[1] : "");
      break;
    case SectionKind::kExceptionCallback:
      // The label, and the program it is of (0 when left out).
      if (words.size() < 2 || words.size() > 3) {
        return AtLine(line.number, fmt::format("an exception callback is named '{}'", kExceptionCallbackSyntax));
      }
      if (words.size() == 3) {
        auto k = ParseUnsigned(words[2]);
        if (!k || *k >= kMaxDataPrograms) {
          return AtLine(line.number, fmt::format("'-- exception_callback {}': the program number must be 0..{}",
                                                 Excerpt(section.args), kMaxDataPrograms - 1));
        }
        section.program = static_cast<size_t>(*k);
        section.name += fmt::format(" {}", section.program);
      }
      section.args = words[1];
      break;
    case SectionKind::kError:
    case SectionKind::kIgnored: break;
  }
  return section;
}

// A number of a data section: decimal (possibly negative: two's complement)
// or 0x hex, up to 64 bits.
Result<uint64_t> ParseNumber64(std::string_view text, size_t line, std::string_view what) {
  auto literal = ParseLiteral(text);
  if (!literal) return AtLine(line, fmt::format("{}: {}", what, literal.message()));
  auto value = Fit64(*literal, text);
  if (!value) return AtLine(line, fmt::format("{}: {}", what, value.message()));
  return *value;
}

bool IsHexByte(std::string_view token) {
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  return token.size() == 2 && hex(token[0]) && hex(token[1]);
}

// -- raw: one 64-bit little-endian instruction word per token, or a line of
// exactly eight two-digit hex bytes (one instruction in memory order, as
// upstream's negative tests write it).
Result<std::vector<Insn>> ParseRaw(const Section& section) {
  std::vector<Insn> insns;
  for (const Line& line : section.body) {
    const std::vector<std::string_view> tokens = SplitSpaces(line.code);
    bool bytes_line = tokens.size() == kInsnSize;
    for (std::string_view token : tokens) bytes_line = bytes_line && IsHexByte(token);
    if (bytes_line) {
      const std::vector<uint8_t> bytes = *ParseHexBytes(line.code);
      insns.push_back(Insn::FromBytes(bytes.data()));
      continue;
    }
    for (std::string_view token : tokens) {
      auto word = ParseUnsigned(token);
      if (!word) {
        return AtLine(line.number,
                      fmt::format("-- {}: '{}' is not an instruction word (write 64-bit words "
                                  "like 0x0000000000000095, or a line of eight hex bytes)",
                                  section.name, Excerpt(token)));
      }
      insns.push_back(Insn::FromWord(*word));
    }
  }
  if (insns.empty()) {
    return AtLine(section.line, fmt::format("the -- {} section holds no instructions", section.name));
  }
  return insns;
}

// Joins the body of a section as written, so that the assembler sees the
// file's own lines (its errors then name file lines and columns).
std::string BodyText(const Section& section) {
  std::string text;
  for (size_t i = 0; i < section.body.size(); ++i) {
    if (i != 0) text += '\n';
    text += section.body[i].text;
  }
  return text;
}

Result<std::vector<uint8_t>> ParseHexSection(const Section& section) {
  std::vector<uint8_t> bytes;
  for (const Line& line : section.body) {
    auto line_bytes = ParseHexBytes(line.code);
    if (!line_bytes) {
      return AtLine(line.number, fmt::format("-- {}: {}", section.name, line_bytes.message()));
    }
    bytes.insert(bytes.end(), line_bytes->begin(), line_bytes->end());
  }
  return bytes;
}

Result<uint64_t> ParseResult(const Section& section) {
  std::string_view value;
  size_t value_line = 0;
  for (const Line& line : section.body) {
    for (std::string_view word : SplitSpaces(line.code)) {
      if (value_line != 0) {
        return AtLine(line.number, fmt::format("a second value in -- result (the first is at "
                                               "line {}); it holds one number",
                                               value_line));
      }
      value = word;
      value_line = line.number;
    }
  }
  if (value_line == 0) return AtLine(section.line, "the -- result section has no value");
  return ParseNumber64(value, value_line, "-- result");
}

std::string ParseErrorText(const Section& section) {
  std::string text(section.args);
  for (const Line& line : section.body) {
    if (line.code.empty()) continue;
    if (!text.empty()) text += '\n';
    text += line.code;
  }
  return text;
}

Status ParseOptions(const Section& section, DataOptions& options) {
  for (const Line& line : section.body) {
    for (std::string_view word : SplitSpaces(line.code)) {
      const OptionInfo* known = nullptr;
      for (const OptionInfo& option : kKnownOptions) {
        if (word == option.name) known = &option;
      }
      if (known == nullptr) {
        std::string names;
        for (const OptionInfo& option : kKnownOptions) {
          names += names.empty() ? "" : ", ";
          names += option.name;
        }
        return AtLine(line.number,
                      fmt::format("unknown option '{}' (known: {})", Excerpt(word), names));
      }
      options.*(known->flag) = true;
    }
  }
  return {};
}

// [helper] <id>(<a1>, <a2>, <a3>, <a4>, <a5>) = <ret>
Result<ExpectedCall> ParseCall(const Line& line) {
  std::string_view text = line.code;
  auto malformed = [&line]() {
    return AtLine(line.number,
                  fmt::format("-- trace: expected '<helper id>(<a1>, <a2>, <a3>, <a4>, <a5>) = "
                              "<ret>', found '{}'",
                              Excerpt(line.code)));
  };
  if (text.starts_with("helper") && text.size() > 6 && IsSpace(text[6])) text.remove_prefix(7);
  const size_t open = text.find('(');
  const size_t close = text.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return malformed();
  }
  ExpectedCall call;
  const std::string_view id_text = Trim(text.substr(0, open));
  auto id = ParseLiteral(id_text);
  if (!id) return AtLine(line.number, fmt::format("-- trace: helper id {}", id.message()));
  auto id_value = FitSigned(*id, 32, "helper id", id_text);
  if (!id_value) return AtLine(line.number, fmt::format("-- trace: {}", id_value.message()));
  call.id = *id_value;
  std::string_view args = text.substr(open + 1, close - open - 1);
  size_t count = 0;
  while (true) {
    const size_t comma = args.find(',');
    const std::string_view arg = Trim(args.substr(0, comma));
    if (count == call.args.size()) {
      return AtLine(line.number, fmt::format("-- trace: a call has {} arguments, found more in "
                                             "'{}'",
                                             call.args.size(), Excerpt(line.code)));
    }
    auto value = ParseNumber64(arg, line.number, "-- trace: argument");
    if (!value) return value.error();
    call.args[count++] = *value;
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  if (count != call.args.size()) {
    return AtLine(line.number, fmt::format("-- trace: a call has {} arguments, found {} in '{}'",
                                           call.args.size(), count, Excerpt(line.code)));
  }
  const std::string_view rest = Trim(text.substr(close + 1));
  if (rest.empty() || rest[0] != '=') return malformed();
  auto ret = ParseNumber64(Trim(rest.substr(1)), line.number, "-- trace: return value");
  if (!ret) return ret.error();
  call.ret = *ret;
  return call;
}

Result<std::vector<ExpectedCall>> ParseTrace(const Section& section) {
  std::vector<ExpectedCall> calls;
  for (const Line& line : section.body) {
    if (line.code.empty()) continue;
    auto call = ParseCall(line);
    if (!call) return call.error();
    calls.push_back(*call);
  }
  return calls;
}

constexpr std::string_view kMapSyntax =
    "-- map <fd> <array|hash|prog_array> key=<n> value=<n> entries=<n>";

Result<uint32_t> ParseU32(std::string_view text, size_t line, std::string_view what) {
  auto value = ParseUnsigned(text);
  if (!value || *value > std::numeric_limits<uint32_t>::max()) {
    return AtLine(line, fmt::format("{} '{}' must be a number 0..4294967295", what, Excerpt(text)));
  }
  return static_cast<uint32_t>(*value);
}

// `-- map FD TYPE key=K value=V entries=N`: the declaration line.
Result<MapSpec> ParseMapDeclaration(const Section& section) {
  const size_t line = section.line;
  const std::vector<std::string_view> words = SplitSpaces(section.args);
  if (words.size() < 2) return AtLine(line, fmt::format("a map is declared '{}'", kMapSyntax));
  MapSpec map;
  auto fd = ParseUnsigned(words[0]);
  if (!fd || *fd > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return AtLine(line, fmt::format("map fd '{}' must be a number 0..2147483647", Excerpt(words[0])));
  }
  map.fd = static_cast<int32_t>(*fd);
  bool type_known = false;
  for (MapType type : {MapType::kArray, MapType::kHash, MapType::kProgArray}) {
    if (words[1] == MapTypeName(type)) {
      map.type = type;
      type_known = true;
    }
  }
  if (!type_known) {
    return AtLine(line, fmt::format("unknown map type '{}' (known: array, hash, prog_array)",
                                    Excerpt(words[1])));
  }
  struct Attribute {
    std::string_view name;
    uint32_t* value;
    bool seen = false;
  };
  Attribute attributes[] = {
      {"key", &map.key_size}, {"value", &map.value_size}, {"entries", &map.max_entries}};
  for (size_t i = 2; i < words.size(); ++i) {
    const size_t equals = words[i].find('=');
    const std::string_view name = words[i].substr(0, equals);
    Attribute* attribute = nullptr;
    for (Attribute& candidate : attributes) {
      if (candidate.name == name) attribute = &candidate;
    }
    if (equals == std::string_view::npos || attribute == nullptr) {
      return AtLine(line, fmt::format("'{}' is not a map attribute (a map is declared '{}')",
                                      Excerpt(words[i]), kMapSyntax));
    }
    if (attribute->seen) return AtLine(line, fmt::format("'{}=' is given twice", name));
    auto value = ParseU32(words[i].substr(equals + 1), line, name);
    if (!value) return value.error();
    *attribute->value = *value;
    attribute->seen = true;
  }
  for (const Attribute& attribute : attributes) {
    if (!attribute.seen) {
      return AtLine(line, fmt::format("the map needs {}=<n> (a map is declared '{}')",
                                      attribute.name, kMapSyntax));
    }
  }
  if (map.max_entries == 0) return AtLine(line, "a map needs at least one entry (entries=0)");
  return map;
}

// The body of a prog_array: program numbers, -1 for an empty entry.
Status ParseProgArrayEntries(const Section& section, MapSpec& map) {
  for (const Line& body : section.body) {
    for (std::string_view word : SplitSpaces(body.code)) {
      auto literal = ParseLiteral(word);
      if (!literal || (literal->negative && literal->magnitude != 1) ||
          (!literal->negative && literal->magnitude >= kMaxDataPrograms)) {
        return AtLine(body.number,
                      fmt::format("prog_array entry '{}' must be a program number 0..{}, or -1 "
                                  "for an empty entry",
                                  Excerpt(word), kMaxDataPrograms - 1));
      }
      if (map.programs.size() == map.max_entries) {
        return AtLine(body.number, fmt::format("the prog_array has more than its {} entries",
                                               map.max_entries));
      }
      map.programs.push_back(literal->negative ? -1 : static_cast<int32_t>(literal->magnitude));
    }
  }
  return {};
}

// A `-- map` section: the declaration, then the initial values (hex bytes)
// of an array or hash, or the entries of a prog_array.
Result<MapSpec> ParseMap(const Section& section) {
  auto map = ParseMapDeclaration(section);
  if (!map) return map;
  if (map->type == MapType::kProgArray) {
    if (auto entries = ParseProgArrayEntries(section, *map); !entries) return entries.error();
    return map;
  }
  auto bytes = ParseHexSection(section);
  if (!bytes) return bytes.error();
  const uint64_t capacity = uint64_t{map->value_size} * map->max_entries;
  if (bytes->size() > capacity) {
    return AtLine(section.line, fmt::format("the map has {} bytes of initial values, more than its {} "
                                            "(value={} x entries={})",
                                            bytes->size(), capacity, map->value_size, map->max_entries));
  }
  map->initial_values = std::move(*bytes);
  return map;
}

// Where the first difference between two instruction sequences is.
std::string DescribeDifference(const std::vector<Insn>& from_asm, const std::vector<Insn>& raw) {
  for (size_t i = 0; i < from_asm.size() && i < raw.size(); ++i) {
    if (from_asm[i] != raw[i]) {
      return fmt::format("slot {} is 0x{:016x} in -- asm and 0x{:016x} in -- raw", i,
                         from_asm[i].ToWord(), raw[i].ToWord());
    }
  }
  return fmt::format("-- asm has {} slots and -- raw {}", from_asm.size(), raw.size());
}

class Parser {
 public:
  Result<DataFile> Parse(std::string_view text);

 private:
  Status Split(std::string_view text);
  Status CheckDuplicate(const Section& section);
  Status Collect(const Section& section);
  Status BuildPrograms();

  std::vector<Section> sections_;
  std::map<std::string, size_t, std::less<>> first_line_of_;
  const Section* asm_[kMaxDataPrograms] = {};
  const Section* raw_[kMaxDataPrograms] = {};
  std::vector<size_t> map_lines_;
  std::vector<const Section*> exception_callbacks_;
  DataFile file_;
};

Status Parser::Split(std::string_view text) {
  size_t number = 1;
  for (size_t begin = 0; begin <= text.size(); ++number) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    Line line;
    line.text = text.substr(begin, end - begin);
    if (!line.text.empty() && line.text.back() == '\r') line.text.remove_suffix(1);
    line.code = Trim(line.text.substr(0, line.text.find('#')));
    line.number = number;
    begin = end + 1;
    if (line.code.starts_with("--")) {
      auto section = ParseHeader(line);
      if (!section) return section.error();
      sections_.push_back(std::move(*section));
    } else if (!sections_.empty()) {
      sections_.back().body.push_back(line);
    } else if (!line.code.empty()) {
      return AtLine(number, fmt::format("'{}' is outside any section (sections start with a "
                                        "line like '-- asm')",
                                        Excerpt(line.code)));
    }
  }
  return {};
}

Status Parser::CheckDuplicate(const Section& section) {
  if (section.kind == SectionKind::kIgnored) return {};
  auto [it, inserted] = first_line_of_.try_emplace(section.name, section.line);
  if (!inserted) {
    return AtLine(section.line, fmt::format("a second '-- {}' section (the first is at line {})",
                                            section.name, it->second));
  }
  return {};
}

Status Parser::Collect(const Section& section) {
  switch (section.kind) {
    case SectionKind::kAsm: asm_[section.program] = &section; return {};
    case SectionKind::kRaw: raw_[section.program] = &section; return {};
    case SectionKind::kMem: {
      auto bytes = ParseHexSection(section);
      if (!bytes) return bytes.error();
      file_.memory = std::move(*bytes);
      return {};
    }
    case SectionKind::kResult: {
      auto value = ParseResult(section);
      if (!value) return value.error();
      file_.expected_result = *value;
      return {};
    }
    case SectionKind::kError: file_.expected_error = ParseErrorText(section); return {};
    case SectionKind::kIgnored: return {};
    case SectionKind::kMap: {
      auto map = ParseMap(section);
      if (!map) return map.error();
      for (size_t m = 0; m < file_.maps.size(); ++m) {
        if (file_.maps[m].fd == map->fd) {
          return AtLine(section.line, fmt::format("map fd {} is declared twice (first at line {})",
                                                  map->fd, map_lines_[m]));
        }
      }
      file_.maps.push_back(std::move(*map));
      map_lines_.push_back(section.line);
      return {};
    }
    case SectionKind::kOptions: return ParseOptions(section, file_.options);
    case SectionKind::kTrace: {
      auto calls = ParseTrace(section);
      if (!calls) return calls.error();
      file_.expected_trace = std::move(*calls);
      return {};
    }
    case SectionKind::kExceptionCallback: exception_callbacks_.push_back(&section); return {};
  }
  return {};
}

Status Parser::BuildPrograms() {
  size_t count = 0;
  size_t last_line = 0;
  for (size_t k = 0; k < kMaxDataPrograms; ++k) {
    if (asm_[k] != nullptr || raw_[k] != nullptr) {
      count = k + 1;
      last_line = (raw_[k] != nullptr ? raw_[k] : asm_[k])->line;
    }
  }
  if (count == 0) return Fail("no program: the file has no '-- asm' or '-- raw' section");
  for (size_t k = 0; k < count; ++k) {
    const Section* asm_section = asm_[k];
    const Section* raw_section = raw_[k];
    if (asm_section == nullptr && raw_section == nullptr) {
      return AtLine(last_line, fmt::format("program {} is missing: programs are numbered from 0 "
                                           "without gaps, and there is no '-- asm {}' or '-- raw "
                                           "{}' section",
                                           k, k, k));
    }
    ProgramOrigin origin;
    std::vector<Insn> insns;
    if (asm_section != nullptr) {
      origin.asm_text = BodyText(*asm_section);
      origin.asm_line = asm_section->line;
    }
    if (raw_section != nullptr) {
      origin.source = ProgramSource::kRaw;
      origin.raw_line = raw_section->line;
      auto raw = ParseRaw(*raw_section);
      if (!raw) return raw.error();
      insns = std::move(*raw);
    }
    if (asm_section != nullptr) {
      auto assembled = Assemble(origin.asm_text, {.first_line = asm_section->line + 1});
      if (raw_section == nullptr) {
        if (!assembled) return assembled.error();
        if (assembled->empty()) {
          return AtLine(asm_section->line,
                        fmt::format("the -- {} section holds no instructions", asm_section->name));
        }
        insns = std::move(*assembled);
      } else if (!assembled) {
        file_.warnings.push_back(fmt::format("the -- {} section does not assemble ({}); the -- {} "
                                             "section (line {}) is used",
                                             asm_section->name, assembled.message(),
                                             raw_section->name, raw_section->line));
      } else if (*assembled != insns) {
        file_.warnings.push_back(fmt::format(
            "line {}: the -- {} section and the -- {} section (line {}) disagree: {}; -- raw is "
            "used",
            asm_section->line, asm_section->name, raw_section->name, raw_section->line,
            DescribeDifference(*assembled, insns)));
      }
    }
    file_.programs.push_back(std::move(insns));
    file_.origins.push_back(std::move(origin));
  }
  // A label of the program's -- asm: the slot it names.
  file_.exception_callbacks.assign(file_.programs.size(), 0);
  for (const Section* section : exception_callbacks_) {
    if (section->program >= file_.programs.size() || file_.origins[section->program].asm_text.empty()) {
      return AtLine(section->line, fmt::format("'-- {}' names a label of program {}, which has no -- asm section",
                                               section->name, section->program));
    }
    const ProgramOrigin& origin = file_.origins[section->program];
    auto slot = LabelSlot(origin.asm_text, section->args, {.first_line = origin.asm_line + 1});
    if (!slot) return AtLine(section->line, fmt::format("-- {}: {}", section->name, slot.message()));
    if (*slot == 0 || *slot >= file_.programs[section->program].size()) {
      return AtLine(section->line, fmt::format("-- {}: label '{}' names slot {}, which cannot start a subprogram",
                                               section->name, Excerpt(section->args), *slot));
    }
    file_.exception_callbacks[section->program] = *slot;
  }
  for (size_t m = 0; m < file_.maps.size(); ++m) {
    for (size_t entry = 0; entry < file_.maps[m].programs.size(); ++entry) {
      const int32_t program = file_.maps[m].programs[entry];
      if (program >= static_cast<int32_t>(file_.programs.size())) {
        return AtLine(map_lines_[m], fmt::format("entry {} of prog_array {} names program {}, but "
                                                 "the file has {} program{}",
                                                 entry, file_.maps[m].fd, program,
                                                 file_.programs.size(),
                                                 file_.programs.size() == 1 ? "" : "s"));
      }
    }
  }
  return {};
}

Result<DataFile> Parser::Parse(std::string_view text) {
  if (auto status = Split(text); !status) return status.error();
  for (const Section& section : sections_) {
    if (auto status = CheckDuplicate(section); !status) return status.error();
    if (auto status = Collect(section); !status) return status.error();
  }
  if (auto status = BuildPrograms(); !status) return status.error();
  return std::move(file_);
}

}  // namespace

Result<DataFile> ParseDataFile(std::string_view text) {
  Parser parser;
  return parser.Parse(text);
}

Result<DataFile> ReadDataFile(const std::filesystem::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return text.error();  // already names the path
  return WithContext(ParseDataFile(*text), path.string());
}

std::span<const std::string_view> KnownDataOptions() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const OptionInfo& option : kKnownOptions) out.push_back(option.name);
    return out;
  }();
  return names;
}

}  // namespace bpfdiff::isa
