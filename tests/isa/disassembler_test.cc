// The disassembler: its text, and the round trip Assemble(Disassemble(p)) == p
// for random valid instances of every form, random programs, and every
// program of the shared conformance suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/data_file.h"
#include "isa/disassembler.h"
#include "isa/opcode_table.h"
#include "isa/program.h"
#include "support/files.h"
#include "tests/isa/form_samples.h"
#include "tests/isa/make_insn.h"

namespace bpfdiff::isa {
namespace {

using ::testing::HasSubstr;

using isa_testing::Make;

const Insn kExit = Make(kOpExit);

// Disassembles `insns` and assembles the text back; "" when the bytes are
// the same, else what went wrong.
std::string RoundTripProblem(const std::vector<Insn>& insns, bool labels) {
  const std::string text = Disassemble(insns, {.labels = labels});
  auto again = Assemble(text);
  if (!again.ok()) return fmt::format("{}\nin:\n{}", again.message(), text);
  if (ToBytes(*again) != ToBytes(insns)) return fmt::format("different bytes from:\n{}", text);
  return "";
}

TEST(isaDisassembler, TextOfEachShape) {
  struct Case {
    std::vector<Insn> insns;
    std::string_view text;
  };
  const Case cases[] = {
      {{Make(0x07, 0, 0, 0, 5)}, "add %r0, 5"},
      {{Make(0x04, 3, 0, 0, -7)}, "add32 %r3, -7"},
      {{Make(0x0c, 0, 1)}, "add32 %r0, %r1"},
      {{Make(0x37, 2, 0, 1, 3)}, "sdiv %r2, 3"},
      {{Make(0x87, 9)}, "neg %r9"},
      {{Make(0xd4, 1, 0, 0, 16)}, "le16 %r1"},
      {{Make(0xd7, 1, 0, 0, 64)}, "bswap64 %r1"},
      {{Make(0xbc, 0, 1, 8)}, "movsx832 %r0, %r1"},
      {{Make(0x05, 0, 0, 3)}, "ja +3"},
      {{Make(0x05, 0, 0, 0)}, "ja +0"},
      {{Make(0x06, 0, 0, 0, -2)}, "ja32 -2"},
      {{Make(0x15, 1, 0, 1, 5)}, "jeq %r1, 5, +1"},
      {{Make(0xde, 1, 2, -1)}, "jsle32 %r1, %r2, -1"},
      {{Make(0x85, 0, 0, 0, 5)}, "call 5"},
      {{Make(0x85, 0, 1, 0, 4)}, "call local +4"},
      {{Make(0x8d, 2)}, "call %r2"},
      {{Make(0xf5)}, "tail_call"},
      {{kExit}, "exit"},
      {{Make(0x18, 0, 0, 0, 0x55667788), Make(0, 0, 0, 0, 0x11223344)}, "lddw %r0, 0x1122334455667788"},
      {{Make(0x18, 0, 0, 0, -2), Make(0, 0, 0, 0, -1)}, "lddw %r0, -2"},
      {{Make(0x18, 1, 1, 0, 3), Make(0)}, "lddw %r1, map:3"},
      {{Make(0x18, 1, 2, 0, 3), Make(0, 0, 0, 0, 16)}, "lddw %r1, map_value:3+16"},
      {{Make(0x18, 1, 2, 0, 3), Make(0)}, "lddw %r1, map_value:3"},
      {{Make(0x20, 0, 0, 0, 16)}, "ldabsw 16"},
      {{Make(0x50, 0, 1, 0, 16)}, "ldindb %r1, 16"},
      {{Make(0x61, 0, 1, 4)}, "ldxw %r0, [%r1+4]"},
      {{Make(0x79, 0, 10, -8)}, "ldxdw %r0, [%r10-8]"},
      {{Make(0x71, 0, 1)}, "ldxb %r0, [%r1]"},
      {{Make(0x21, 0, 1, 4)}, "probe ldxw %r0, [%r1+4]"},
      {{Make(0x62, 1, 0, 4, 5)}, "stw [%r1+4], 5"},
      {{Make(0x7b, 10, 1, -8)}, "stxdw [%r10-8], %r1"},
      {{Make(0xc3, 1, 2, 4, 0x01)}, "lock fetch add32 [%r1+4], %r2"},
      {{Make(0xdb, 1, 2, 0, 0xf1)}, "lock cmpxchg [%r1], %r2"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DisassembleInsn(c.insns[0], c.insns.size() > 1 ? &c.insns[1] : nullptr), c.text);
  }
}

TEST(isaDisassembler, ImmediatesAreDecimalWhenSmallAndHexWhenLarge) {
  auto mov = [](int32_t imm) { return DisassembleInsn(Make(0xb7, 0, 0, 0, imm)); };
  EXPECT_EQ(mov(65535), "mov %r0, 65535");
  EXPECT_EQ(mov(65536), "mov %r0, 0x10000");
  EXPECT_EQ(mov(-65535), "mov %r0, -65535");
  EXPECT_EQ(mov(-65536), "mov %r0, 0xffff0000");
  EXPECT_EQ(mov(-2147483647 - 1), "mov %r0, 0x80000000");
  EXPECT_EQ(mov(2147483647), "mov %r0, 0x7fffffff");
  const Insn high = Make(0, 0, 0, 0, -1);
  EXPECT_EQ(DisassembleInsn(Make(0x18, 0, 0, 0, 0), &high), "lddw %r0, 0xffffffff00000000");
  const Insn zero;
  EXPECT_EQ(DisassembleInsn(Make(0x18, 0, 0, 0, -1), &zero), "lddw %r0, 0xffffffff");
}

TEST(isaDisassembler, WholeProgramsWithDistancesOrLabels) {
  const std::vector<Insn> insns = {
      Make(0x15, 1, 0, 2, 0),                              // 0: jeq %r1, 0, +2 -> 3
      Make(0x18, 0, 0, 0, 1), Make(0),                     // 1-2: lddw
      Make(0x85, 0, 1, 0, 1),                              // 3: call local +1 -> 5
      kExit,                                               // 4
      Make(0x05, 0, 0, -1),                                // 5: ja -1 -> 5
  };
  EXPECT_EQ(Disassemble(insns),
            "jeq %r1, 0, +2\n"
            "lddw %r0, 1\n"
            "call local +1\n"
            "exit\n"
            "ja -1\n");
  EXPECT_EQ(Disassemble(insns, {.labels = true}),
            "jeq %r1, 0, L3\n"
            "lddw %r0, 1\n"
            "L3:\n"
            "call local L5\n"
            "exit\n"
            "L5:\n"
            "ja L5\n");
  EXPECT_EQ(RoundTripProblem(insns, false), "");
  EXPECT_EQ(RoundTripProblem(insns, true), "");
  // A Program disassembles as its instructions.
  auto program = MakeProgram(insns);
  ASSERT_TRUE(program.ok()) << program.message();
  EXPECT_EQ(Disassemble(*program), Disassemble(insns));
}

TEST(isaDisassembler, LabelsOnlyWhereALabelCanStand) {
  // Targets one past the end get a label after the last line; targets out of
  // the program or inside an lddw keep their distance.
  const std::vector<Insn> insns = {
      Make(0x05, 0, 0, 4),           // 0: ja +4 -> 5 (the end)
      Make(0x05, 0, 0, 1),           // 1: ja +1 -> 3 (second slot of lddw)
      Make(0x18, 0, 0, 0, 1), Make(0),
      Make(0x05, 0, 0, 100),         // 4: ja +100: outside
  };
  EXPECT_EQ(Disassemble(insns, {.labels = true}),
            "ja L5\n"
            "ja +1\n"
            "lddw %r0, 1\n"
            "ja +100\n"
            "L5:\n");
  EXPECT_EQ(RoundTripProblem(insns, true), "");
}

TEST(isaDisassembler, InvalidSlotsAreShownNotFatal) {
  EXPECT_EQ(DisassembleInsn(Make(0x8f)), "# invalid opcode 0x8f");
  EXPECT_EQ(DisassembleInsn(Make(0x00)), "# invalid opcode 0x00");
  EXPECT_EQ(DisassembleInsn(Make(0x85, 0, 3, 0, 5)),
            "# invalid: opcode 0x85 (call) with src=3 names no instruction");
  EXPECT_EQ(DisassembleInsn(Make(0xd4, 1, 0, 0, 17)),
            "# invalid: opcode 0xd4 (le16) with imm=17 names no instruction");
  EXPECT_EQ(DisassembleInsn(Make(0x07, 1, 3, 2, 5)),
            "add %r1, 5 # invalid: reserved src=3, reserved offset=2");
  EXPECT_EQ(DisassembleInsn(Make(0xbf, 12, 11)),
            "mov %r12, %r11 # invalid: no register r12, no register r11");
  EXPECT_EQ(DisassembleInsn(Make(0x18, 1)), "lddw %r1, 0 # invalid: truncated: the second slot is missing");
  const Insn second_imm = Make(0, 0, 0, 0, 5);
  EXPECT_EQ(DisassembleInsn(Make(0x18, 1, 1, 0, 3), &second_imm),
            "lddw %r1, map:3 # invalid: reserved imm=5 in the second slot");
  const Insn bad_second = Make(0x95);
  EXPECT_THAT(DisassembleInsn(Make(0x18, 1), &bad_second),
              HasSubstr("# invalid: the second slot must have opcode, registers and offset 0"));
}

TEST(isaDisassembler, DisplayShowsSlotsBytesAndAMark) {
  const std::vector<Insn> slots = {Make(0x61, 0, 1, 4), Make(0x18, 1, 1, 0, 3), Make(0), Make(0x8f),
                                   kExit};
  EXPECT_EQ(DisassembleForDisplay(slots, 3),
            "      0: 61 10 04 00 00 00 00 00  ldxw %r0, [%r1+4]\n"
            "      1: 18 11 00 00 03 00 00 00  lddw %r1, map:3\n"
            "      2: 00 00 00 00 00 00 00 00  (second slot of lddw)\n"
            "=>    3: 8f 00 00 00 00 00 00 00  # invalid opcode 0x8f\n"
            "      4: 95 00 00 00 00 00 00 00  exit\n");
  EXPECT_EQ(DisassembleForDisplay({}), "");
}

// (a) Every form, random valid operand values: disassemble + assemble gives
// the same bytes, with distances and with labels.
TEST(isaDisassembler, RoundTripsRandomInstancesOfEveryForm) {
  std::mt19937_64 rng(20240601);
  size_t checked = 0;
  for (const Form& form : AllForms()) {
    size_t valid = 0;
    for (int attempt = 0; attempt < 400 && valid < 60; ++attempt) {
      testing::Sample sample = testing::RandomSample(form, rng);
      if (!MakeProgram(sample.insns, sample.maps).ok()) continue;
      ++valid;
      ASSERT_EQ(RoundTripProblem(sample.insns, false), "") << form.name;
      ASSERT_EQ(RoundTripProblem(sample.insns, true), "") << form.name;
    }
    EXPECT_GE(valid, 30u) << form.name;
    checked += valid;
  }
  RecordProperty("instances", static_cast<int>(checked));
  std::printf("round-tripped %zu random instances of %zu forms\n", checked, AllForms().size());
}

// Random programs of several instructions of random forms, with jumps and
// local calls between them; those MakeProgram accepts round-trip.
TEST(isaDisassembler, RoundTripsRandomPrograms) {
  std::mt19937_64 rng(7);
  const std::span<const Form> forms = AllForms();
  size_t valid = 0;
  for (int attempt = 0; attempt < 6000; ++attempt) {
    std::vector<Insn> insns;
    std::vector<MapSpec> maps;
    const size_t count = std::uniform_int_distribution<size_t>(1, 12)(rng);
    for (size_t i = 0; i < count; ++i) {
      const Form& form = forms[std::uniform_int_distribution<size_t>(0, forms.size() - 1)(rng)];
      testing::Sample sample = testing::RandomSample(form, rng);
      // Keep the instance and one exit after it; jumps then land anywhere
      // in the program once the distances are re-drawn below.
      const size_t width = form.is_wide() ? 2 : 1;
      size_t at = 0;
      while (sample.insns[at].opcode == kOpExit && at + 1 < sample.insns.size()) ++at;
      insns.insert(insns.end(), sample.insns.begin() + static_cast<std::ptrdiff_t>(at),
                   sample.insns.begin() + static_cast<std::ptrdiff_t>(at + width));
      if (maps.empty()) maps = sample.maps;
    }
    insns.push_back(kExit);
    const auto n = static_cast<int64_t>(insns.size());
    for (int64_t pc = 0; pc < n; ++pc) {
      const auto id = Classify(insns[static_cast<size_t>(pc)]);
      if (!id) continue;
      const Shape shape = FormById(*id).shape;
      const int64_t distance = std::uniform_int_distribution<int64_t>(-pc - 1, n - pc - 1)(rng);
      if (shape == Shape::kJa || shape == Shape::kJumpImm || shape == Shape::kJumpReg) {
        insns[static_cast<size_t>(pc)].offset = static_cast<int16_t>(distance);
      } else if (shape == Shape::kJa32 || shape == Shape::kCallLocal || shape == Shape::kLddwFunc) {
        insns[static_cast<size_t>(pc)].imm = static_cast<int32_t>(distance);
      }
      if (FormById(*id).is_wide()) ++pc;
    }
    if (!MakeProgram(insns, maps).ok()) continue;
    ++valid;
    ASSERT_EQ(RoundTripProblem(insns, false), "");
    ASSERT_EQ(RoundTripProblem(insns, true), "");
  }
  EXPECT_GT(valid, 500u);
  std::printf("round-tripped %zu random programs\n", valid);
}

// (b) Every program of the shared conformance suite.
TEST(isaDisassembler, RoundTripsEveryProgramOfTheConformanceSuite) {
  const std::filesystem::path suite = BPFDIFF_CONFORMANCE_SUITE;
  if (!std::filesystem::is_directory(suite)) GTEST_SKIP() << suite << " does not exist";
  auto files = ListFiles(suite, ".data");
  ASSERT_TRUE(files.ok()) << files.message();
  size_t checked = 0;
  size_t valid = 0;
  for (const auto& path : *files) {
    auto file = ReadDataFile(path);
    ASSERT_TRUE(file.ok()) << file.message();
    const std::vector<Insn>& insns = file->programs[0];
    if (MakeProgram(insns, file->maps).ok()) ++valid;
    EXPECT_EQ(RoundTripProblem(insns, false), "") << path;
    EXPECT_EQ(RoundTripProblem(insns, true), "") << path;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  RecordProperty("files", static_cast<int>(checked));
  std::printf("round-tripped the programs of %zu .data files (%zu valid for MakeProgram), with "
              "distances and with labels\n",
              checked, valid);
}

TEST(isaDisassembler, NeverFailsOnRandomSlots) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 3000; ++i) {
    std::vector<Insn> slots(std::uniform_int_distribution<size_t>(0, 8)(rng));
    for (Insn& slot : slots) slot = Insn::FromWord(rng());
    // Half the time, take a real opcode so that the classified paths run.
    for (Insn& slot : slots) {
      if (rng() & 1) slot.opcode = AllForms()[rng() % AllForms().size()].opcode;
    }
    EXPECT_FALSE(Disassemble(slots).empty() && !slots.empty());
    EXPECT_FALSE(Disassemble(slots, {.labels = true}).empty() && !slots.empty());
    EXPECT_EQ(DisassembleForDisplay(slots, 0).size() > 0, !slots.empty());
  }
}

}  // namespace
}  // namespace bpfdiff::isa
