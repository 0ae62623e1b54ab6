// The .data parser: upstream sections, our extensions, every file of the
// shared suite, the malformed inputs of tests/isa/malformed/, and random
// input (which must give errors, never crashes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/data_file.h"
#include "support/files.h"

namespace bpfdiff::isa {
namespace {

using ::testing::HasSubstr;

DataFile Parse(std::string_view text) {
  auto file = ParseDataFile(text);
  EXPECT_TRUE(file.ok()) << text << "\n-> " << file.message();
  return file.ok() ? *file : DataFile{};
}

std::string ParseError(std::string_view text) {
  auto file = ParseDataFile(text);
  EXPECT_FALSE(file.ok()) << text << " parsed";
  return file.ok() ? std::string() : file.message();
}

std::vector<Insn> Asm(std::string_view text) {
  auto insns = Assemble(text);
  EXPECT_TRUE(insns.ok()) << insns.message();
  return insns.ok() ? *insns : std::vector<Insn>{};
}

TEST(isaDataFile, UpstreamSections) {
  const DataFile file = Parse(
      "# Copyright line\n"
      "-- asm\n"
      "mov %r0, %r2   # a comment\n"
      "exit\n"
      "-- mem\n"
      "00 00 00 01\n"
      "0000 0002\n"
      "-- no register offset\n"
      "anything at all\n"
      "-- c\n"
      "int main() { return 0; }\n"
      "-- result\n"
      "0x8\n");
  ASSERT_EQ(file.programs.size(), 1u);
  EXPECT_EQ(file.programs[0], Asm("mov %r0, %r2\nexit"));
  EXPECT_EQ(file.origins[0].source, ProgramSource::kAsm);
  EXPECT_EQ(file.origins[0].asm_line, 2u);
  EXPECT_EQ(file.origins[0].asm_text, "mov %r0, %r2   # a comment\nexit");
  EXPECT_EQ(file.memory, (std::vector<uint8_t>{0, 0, 0, 1, 0, 0, 0, 2}));
  EXPECT_EQ(file.expected_result, 8u);
  EXPECT_FALSE(file.expected_error.has_value());
  EXPECT_FALSE(file.expected_trace.has_value());
  EXPECT_TRUE(file.maps.empty());
  EXPECT_TRUE(file.warnings.empty());
}

TEST(isaDataFile, ResultValues) {
  EXPECT_EQ(Parse("-- asm\nexit\n-- result\n42\n").expected_result, 42u);
  EXPECT_EQ(Parse("-- asm\nexit\n-- result\n0xffffffffffffffff\n").expected_result, ~uint64_t{0});
  EXPECT_EQ(Parse("-- asm\nexit\n-- result\n-1\n").expected_result, ~uint64_t{0});
  EXPECT_EQ(Parse("-- asm\nexit\n-- result\n\n  0x10  \n\n").expected_result, 16u);
  // Neither result nor error: the file is still read (a program to run).
  EXPECT_FALSE(Parse("-- asm\nexit\n").expected_result.has_value());
}

TEST(isaDataFile, ErrorText) {
  EXPECT_EQ(Parse("-- asm\nexit\n-- error\n  Invalid register  \n").expected_error, "Invalid register");
  EXPECT_EQ(Parse("-- asm\nexit\n-- error\nfirst\n\nsecond\n").expected_error, "first\nsecond");
  EXPECT_EQ(Parse("-- asm\nexit\n-- error Invalid\n").expected_error, "Invalid");
  // An empty -- error expects some error, whatever its text.
  EXPECT_EQ(Parse("-- raw\n0x95\n-- error\n").expected_error, "");
}

TEST(isaDataFile, RawWordsAndByteLines) {
  const DataFile file = Parse(
      "-- raw\n"
      "0x5566778800000018 0x1122334400000000\n"
      "149\n"                       // decimal word: 0x95, exit
      "95 00 00 00 00 00 00 00\n"   // eight bytes: exit
      "-- error\n");
  ASSERT_EQ(file.programs.size(), 1u);
  EXPECT_EQ(file.origins[0].source, ProgramSource::kRaw);
  EXPECT_EQ(file.origins[0].raw_line, 1u);
  std::vector<Insn> expected = Asm("lddw %r0, 0x1122334455667788\nexit\nexit");
  EXPECT_EQ(file.programs[0], expected);
}

TEST(isaDataFile, RawWinsOverAsmAndDisagreementIsAWarning) {
  const std::string agree =
      "-- asm\nlddw %r0, 0x1122334455667788\nexit\n"
      "-- raw\n0x5566778800000018\n0x1122334400000000\n0x0000000000000095\n"
      "-- result\n0x1122334455667788\n";
  const DataFile same = Parse(agree);
  EXPECT_EQ(same.origins[0].source, ProgramSource::kRaw);
  EXPECT_EQ(same.origins[0].asm_line, 1u);
  EXPECT_EQ(same.origins[0].raw_line, 4u);
  EXPECT_TRUE(same.warnings.empty());

  const DataFile differ = Parse("-- asm\nmov %r0, 1\nexit\n-- raw\n0x00000002000000b7\n0x95\n-- result\n2\n");
  EXPECT_EQ(differ.programs[0], Asm("mov %r0, 2\nexit"));
  ASSERT_EQ(differ.warnings.size(), 1u);
  EXPECT_EQ(differ.warnings[0],
            "line 1: the -- asm section and the -- raw section (line 4) disagree: slot 0 is "
            "0x00000001000000b7 in -- asm and 0x00000002000000b7 in -- raw; -- raw is used");

  const DataFile broken = Parse("-- asm\nmov %r0, %r99\n-- raw\n0x95\n-- error\n");
  ASSERT_EQ(broken.warnings.size(), 1u);
  EXPECT_THAT(broken.warnings[0], HasSubstr("the -- asm section does not assemble (line 2, column 10: unknown register '%r99'"));
}

TEST(isaDataFile, AsmErrorsNameFileLines) {
  EXPECT_EQ(ParseError("# header\n-- result\n1\n-- asm\nmov %r0, 1\n  add %r0, %r11\nexit\n"),
            "line 6, column 12: unknown register '%r11' (registers are %r0..%r10)");
  EXPECT_EQ(ParseError("-- asm\n# nothing\n-- result\n1\n"), "line 1: the -- asm section holds no instructions");
}

TEST(isaDataFile, CrlfLineEnds) {
  const DataFile file = Parse("-- asm\r\nmov %r0, 1\r\nexit\r\n-- mem\r\naa bb\r\n-- result\r\n0x1\r\n");
  EXPECT_EQ(file.programs[0], Asm("mov %r0, 1\nexit"));
  EXPECT_EQ(file.memory, (std::vector<uint8_t>{0xaa, 0xbb}));
  EXPECT_EQ(file.expected_result, 1u);
  EXPECT_EQ(file.origins[0].asm_text, "mov %r0, 1\nexit");
  EXPECT_EQ(ParseError("-- asm\r\nmov %r0, %r11\r\n"),
            "line 2, column 10: unknown register '%r11' (registers are %r0..%r10)");
}

TEST(isaDataFile, MapsOfEachType) {
  const DataFile file = Parse(
      "-- map 3 array key=4 value=8 entries=2\n"
      "01 02 03 04 05 06 07 08\n"
      "09 0a\n"
      "-- map 0x4 hash key=8 value=16 entries=100\n"
      "-- map 5 prog_array key=4 value=4 entries=4\n"
      "1 -1\n"
      "0\n"
      "-- asm\n"
      "lddw %r1, map_value:3+8\n"
      "exit\n"
      "-- asm 1\n"
      "mov %r0, 7\n"
      "exit\n"
      "-- result\n"
      "7\n");
  ASSERT_EQ(file.maps.size(), 3u);
  EXPECT_EQ(file.maps[0].fd, 3);
  EXPECT_EQ(file.maps[0].type, MapType::kArray);
  EXPECT_EQ(file.maps[0].key_size, 4u);
  EXPECT_EQ(file.maps[0].value_size, 8u);
  EXPECT_EQ(file.maps[0].max_entries, 2u);
  EXPECT_EQ(file.maps[0].initial_values,
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(file.maps[1].fd, 4);
  EXPECT_EQ(file.maps[1].type, MapType::kHash);
  EXPECT_EQ(file.maps[1].max_entries, 100u);
  EXPECT_TRUE(file.maps[1].initial_values.empty());
  EXPECT_EQ(file.maps[2].type, MapType::kProgArray);
  EXPECT_EQ(file.maps[2].programs, (std::vector<int32_t>{1, -1, 0}));
  ASSERT_EQ(file.programs.size(), 2u);
  EXPECT_EQ(file.programs[1], Asm("mov %r0, 7\nexit"));
  EXPECT_EQ(file.origins[1].asm_line, 11u);
  // The maps are what MakeProgram wants.
  auto program = MakeProgram(file.programs[0], file.maps);
  EXPECT_TRUE(program.ok()) << program.message();
}

TEST(isaDataFile, AdditionalProgramsFromAsmAndRaw) {
  const DataFile file = Parse(
      "-- raw 2\n0x95\n"
      "-- asm\nexit\n"
      "-- asm 1\nmov %r0, 1\nexit\n"
      "-- asm 0x2\nexit\n");
  ASSERT_EQ(file.programs.size(), 3u);
  EXPECT_EQ(file.origins[2].source, ProgramSource::kRaw);
  EXPECT_EQ(file.origins[2].raw_line, 1u);
  EXPECT_EQ(file.origins[2].asm_line, 8u);
  EXPECT_TRUE(file.warnings.empty());
  EXPECT_THAT(ParseError("-- asm\nexit\n-- asm 2\nexit\n"),
              HasSubstr("line 3: program 1 is missing: programs are numbered from 0 without gaps"));
  EXPECT_THAT(ParseError("-- asm 1\nexit\n"), HasSubstr("program 0 is missing"));
  EXPECT_THAT(ParseError("-- asm\nexit\n-- asm 0\nexit\n"),
              HasSubstr("line 3: a second '-- asm' section (the first is at line 1)"));
  EXPECT_THAT(ParseError("-- asm 64\nexit\n"), HasSubstr("the program number must be 0..63"));
}

TEST(isaDataFile, Options) {
  EXPECT_FALSE(Parse("-- asm\nexit\n").options.kptr_xchg_inline);
  EXPECT_TRUE(Parse("-- options\nkptr_xchg_inline   # the kernel's rewrite\n-- asm\nexit\n")
                  .options.kptr_xchg_inline);
  EXPECT_EQ(ParseError("-- options\nkptr_xchg_inline\nfast\n-- asm\nexit\n"),
            "line 3: unknown option 'fast' (known: kptr_xchg_inline)");
  ASSERT_EQ(KnownDataOptions().size(), 1u);
  EXPECT_EQ(KnownDataOptions()[0], "kptr_xchg_inline");
}

TEST(isaDataFile, Trace) {
  const DataFile file = Parse(
      "-- asm\nexit\n"
      "-- trace\n"
      "1(0x10, 2, 3, 4, 5) = 0\n"
      "helper 12(0xffffffffffffffff, -1, 0, 0, 0) = 0x8000000000000000\n"
      "  7 ( 1 ,2,3 , 4,5 )=  -2  \n");
  ASSERT_TRUE(file.expected_trace.has_value());
  ASSERT_EQ(file.expected_trace->size(), 3u);
  EXPECT_EQ((*file.expected_trace)[0], (ExpectedCall{1, {16, 2, 3, 4, 5}, 0}));
  EXPECT_EQ((*file.expected_trace)[1],
            (ExpectedCall{12, {~uint64_t{0}, ~uint64_t{0}, 0, 0, 0}, uint64_t{1} << 63}));
  EXPECT_EQ((*file.expected_trace)[2], (ExpectedCall{7, {1, 2, 3, 4, 5}, ~uint64_t{1}}));
  // An empty trace expects no calls at all.
  const DataFile none = Parse("-- asm\nexit\n-- trace\n");
  ASSERT_TRUE(none.expected_trace.has_value());
  EXPECT_TRUE(none.expected_trace->empty());
}

TEST(isaDataFile, StructuralErrors) {
  EXPECT_EQ(ParseError(""), "no program: the file has no '-- asm' or '-- raw' section");
  EXPECT_EQ(ParseError("mov %r0, 1\n"),
            "line 1: 'mov %r0, 1' is outside any section (sections start with a line like '-- asm')");
  EXPECT_EQ(ParseError("-- asm\nexit\n-- Unknown directive\n"),
            "line 3: unknown section '-- Unknown directive' (known: asm, raw, mem, result, error, map, "
            "options, trace, exception_callback, c, no register offset)");
  EXPECT_EQ(ParseError("-- asm\nexit\n-- result 1\n"),
            "line 3: '-- result' takes nothing more on its line, found '1'");
  EXPECT_EQ(ParseError("-- asm\nexit\n-- result\n1\n2\n"),
            "line 5: a second value in -- result (the first is at line 4); it holds one number");
  EXPECT_EQ(ParseError("-- asm\nexit\n-- mem\naa\nzz\n"), "line 5: -- mem: 'zz' at offset 0 is not a hex byte");
  EXPECT_EQ(ParseError("-- raw\n0x95 banana\n"),
            "line 2: -- raw: 'banana' is not an instruction word (write 64-bit words like "
            "0x0000000000000095, or a line of eight hex bytes)");
  EXPECT_EQ(ParseError("-- map 1 array key=4 value=4 entries=1\n-- map 1 hash key=4 value=4 entries=1\n-- asm\nexit\n"),
            "line 2: a second '-- map 1' section (the first is at line 1)");
  EXPECT_EQ(ParseError("-- map 1 array key=4 value=4 entries=1\n-- map 0x1 hash key=4 value=4 entries=1\n-- asm\nexit\n"),
            "line 2: map fd 1 is declared twice (first at line 1)");
}

// The examples of docs/assembly.md, as files: they parse, and their
// programs and maps are valid.
TEST(isaDataFile, ExampleFiles) {
  const std::filesystem::path dir = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/isa/examples";
  auto tail_call = ReadDataFile(dir / "tail_call.data");
  ASSERT_TRUE(tail_call.ok()) << tail_call.message();
  ASSERT_EQ(tail_call->programs.size(), 2u);
  EXPECT_EQ(tail_call->maps[0].programs, (std::vector<int32_t>{-1, 1}));
  EXPECT_EQ(tail_call->expected_result, 42u);

  auto all = ReadDataFile(dir / "extensions.data");
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_TRUE(all->options.kptr_xchg_inline);
  ASSERT_EQ(all->programs.size(), 2u);
  EXPECT_EQ(all->origins[1].source, ProgramSource::kRaw);
  EXPECT_EQ(all->programs[1], Asm("mov %r0, 7\nexit"));
  EXPECT_EQ(all->maps[0].initial_values.size(), 12u);
  EXPECT_EQ(all->memory, (std::vector<uint8_t>{0xaa, 0xbb}));
  ASSERT_TRUE(all->expected_trace.has_value());
  EXPECT_TRUE(all->expected_trace->empty());
  EXPECT_TRUE(all->warnings.empty());

  for (const DataFile* file : {&*tail_call, &*all}) {
    for (const auto& insns : file->programs) {
      auto program = MakeProgram(insns, file->maps);
      EXPECT_TRUE(program.ok()) << program.message();
    }
  }
}

TEST(isaDataFile, ReadDataFilePrefixesThePath) {
  const std::filesystem::path dir = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/isa/malformed";
  auto file = ReadDataFile(dir / "bad_register.data");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.message(), HasSubstr((dir / "bad_register.data").string() + ": line "));
  auto missing = ReadDataFile(dir / "does-not-exist.data");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), HasSubstr("does-not-exist.data: cannot open"));
}

TEST(isaDataFile, ParsesEveryFileOfTheConformanceSuite) {
  const std::filesystem::path suite = BPFDIFF_CONFORMANCE_SUITE;
  if (!std::filesystem::is_directory(suite)) GTEST_SKIP() << suite << " does not exist";
  auto files = ListFiles(suite, ".data");
  ASSERT_TRUE(files.ok()) << files.message();
  size_t parsed = 0;
  for (const auto& path : *files) {
    auto file = ReadDataFile(path);
    ASSERT_TRUE(file.ok()) << file.message();
    EXPECT_TRUE(file->expected_result || file->expected_error) << path;
    EXPECT_EQ(file->programs.size(), 1u) << path;
    EXPECT_FALSE(file->programs[0].empty()) << path;
    EXPECT_TRUE(file->warnings.empty()) << path << ": " << file->warnings[0];
    ++parsed;
  }
  EXPECT_GT(parsed, 200u);
  std::printf("parsed %zu .data files of %s\n", parsed, suite.c_str());
}

// tests/isa/malformed/: each file gives an error, and the error contains the
// text of its "# expect: " line when it has one.
TEST(isaDataFile, EveryMalformedInputIsAnError) {
  const std::filesystem::path dir = std::filesystem::path(BPFDIFF_SOURCE_DIR) / "tests/isa/malformed";
  auto files = ListFiles(dir, ".data");
  ASSERT_TRUE(files.ok()) << files.message();
  EXPECT_GE(files->size(), 30u);
  for (const auto& path : *files) {
    auto text = ReadTextFile(path);
    ASSERT_TRUE(text.ok()) << text.message();
    auto file = ParseDataFile(*text);
    ASSERT_FALSE(file.ok()) << path << " parsed";
    constexpr std::string_view kExpect = "# expect: ";
    if (size_t at = text->find(kExpect); at != std::string::npos) {
      size_t end = text->find_first_of("\r\n", at);
      if (end == std::string::npos) end = text->size();
      const std::string expected = text->substr(at + kExpect.size(), end - at - kExpect.size());
      EXPECT_THAT(file.message(), HasSubstr(expected)) << path;
    }
    // Messages stay printable and short, whatever the input.
    for (char c : file.message()) {
      EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << path << ": " << file.message();
    }
    EXPECT_LT(file.message().size(), 400u) << path;
  }
}

// Random input: no crash (ASan/UBSan builds check the rest), and the result
// is either a file or an error.
TEST(isaDataFile, RandomInputNeverCrashes) {
  std::mt19937_64 rng(1234);
  constexpr std::string_view kPieces[] = {
      "-- asm\n", "-- raw\n", "-- mem\n", "-- result\n", "-- error\n", "-- map 1 array key=4 value=4 entries=2\n",
      "-- map 2 prog_array key=4 value=4 entries=3\n", "-- options\n", "-- trace\n", "-- asm 1\n",
      "-- raw 1\n", "-- c\n", "-- no register offset\n", "%r1", "%r10", "%r11", "[", "]", ",", " ", "\n",
      "+", "-", "0x", "ff", "4294967296", "-9223372036854775809", "lddw", "ldxw", "stw", "lock fetch add",
      "call local", "ja", "ja32", "exit", "exit:", "L1:", "L1", "map:", "map_value:1+", "#", ";", "\r\n",
      "(", ")", "=", "kptr_xchg_inline", "0x95", "95 00 00 00 00 00 00 00", "mov32", "swap16", "probe",
  };
  size_t ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const size_t pieces = std::uniform_int_distribution<size_t>(0, 40)(rng);
    for (size_t p = 0; p < pieces; ++p) {
      if (rng() % 4 == 0) {
        text += static_cast<char>(rng() & 0xff);
      } else {
        text += kPieces[rng() % std::size(kPieces)];
      }
    }
    auto file = ParseDataFile(text);
    auto insns = Assemble(text);
    ok += file.ok() + insns.ok();
    if (file.ok()) {
      EXPECT_FALSE(file->programs.empty());
    }
  }
  for (int i = 0; i < 1000; ++i) {
    std::string bytes(std::uniform_int_distribution<size_t>(0, 300)(rng), '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    auto file = ParseDataFile(bytes);
    auto insns = Assemble(bytes);
    ok += file.ok() + insns.ok();
  }
  // Mutations of a valid file that uses every section: deeper paths.
  const std::string seed =
      "-- map 3 array key=4 value=8 entries=2\n01 02 03\n"
      "-- map 5 prog_array key=4 value=4 entries=2\n1 -1\n"
      "-- options\nkptr_xchg_inline\n"
      "-- asm\nmov %r0, 0 # zero\nlddw %r1, map_value:3+8\nldxw %r2, [%r1-4]\n"
      "jeq %r2, 0x10, exit\nlock fetch add32 [%r10-8], %r2\ncall local +1\nexit\nexit\n"
      "-- asm 1\nlddw %r1, map:5\nmov %r3, 1\ntail_call\nexit\n"
      "-- raw 1\n0x0000000500001118 0 0x00000001000003b7 0xf5 0x95\n"
      "-- mem\naa bb cc\n-- result\n0x10\n-- error\nsome text\n"
      "-- trace\n1(2, 3, 4, 5, 6) = 7\n";
  ASSERT_TRUE(ParseDataFile(seed).ok()) << ParseDataFile(seed).message();
  size_t mutants_ok = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = static_cast<char>(rng() & 0xff); break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        default: text.insert(at, kPieces[rng() % std::size(kPieces)]); break;
      }
    }
    mutants_ok += ParseDataFile(text).ok();
  }
  std::printf("random inputs: %zu of 8000 parses succeeded; %zu of 4000 mutants parsed\n", ok,
              mutants_ok);
}

}  // namespace
}  // namespace bpfdiff::isa
