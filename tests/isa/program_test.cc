// Decoder and validation (isa/program.cc): every rejection with its message,
// and acceptance of every form of the opcode table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/insn.h"
#include "isa/opcode_table.h"
#include "isa/program.h"
#include "isa/syntax.h"
#include "tests/isa/form_samples.h"
#include "tests/isa/make_insn.h"

namespace bpfdiff::isa {
namespace {

using ::testing::HasSubstr;

using isa_testing::Make;

const Insn kExit = Make(kOpExit);
constexpr uint8_t kMov64Imm = kClassAlu64 | kSrcK | kAluMov;
constexpr uint8_t kMov64Reg = kClassAlu64 | kSrcX | kAluMov;
constexpr uint8_t kJa = kClassJmp | kJmpJa;

MapSpec ArrayMap(int32_t fd, uint32_t value_size = 8, uint32_t entries = 4) {
  MapSpec map;
  map.fd = fd;
  map.value_size = value_size;
  map.max_entries = entries;
  return map;
}

// The error MakeProgram gives, or "" when it accepts.
std::string Rejection(std::vector<Insn> insns, std::vector<MapSpec> maps = {}) {
  auto program = MakeProgram(std::move(insns), std::move(maps));
  return program.ok() ? std::string() : program.message();
}

TEST(isaProgram, RejectsAnEmptyProgram) {
  EXPECT_EQ(Rejection({}), "the program is empty");
}

TEST(isaProgram, RejectsTooManySlots) {
  std::vector<Insn> insns(kMaxSlots + 1, kExit);
  EXPECT_THAT(Rejection(std::move(insns)), HasSubstr("more than the limit of 1048576"));
}

TEST(isaProgram, RejectsUnknownOpcodes) {
  int unknown = 0;
  for (int opcode = 0; opcode < 256; ++opcode) {
    if (IsKnownOpcode(static_cast<uint8_t>(opcode))) continue;
    ++unknown;
    EXPECT_EQ(Rejection({Make(static_cast<uint8_t>(opcode)), kExit}),
              fmt::format("instruction 0: unknown opcode 0x{:02x}", opcode));
  }
  EXPECT_GT(unknown, 100);
}

// lddw_func names where a callback starts, as a local call names its
// callee: a subprogram starts there, and the name must be a slot of the
// program that is no lddw's second.
TEST(isaProgram, LddwFuncStartsTheSubprogramItNames) {
  const Insn func = Make(kOpLddw, 2, kPseudoFunc, 0, 2);  // the slot after the next exit
  auto program = MakeProgram({func, Make(0), kExit, Make(kClassAlu64 | kSrcK | kAluMov, 0, 0, 0, 1), kExit});
  ASSERT_TRUE(program.ok()) << program.message();
  EXPECT_EQ(program->subprogram_starts, (std::vector<uint32_t>{0, 3}));

  EXPECT_EQ(Rejection({Make(kOpLddw, 2, kPseudoFunc, 0, 9), Make(0), kExit}),
            "instruction 0 (lddw func): function target 10 is outside the program (3 slots)");
  EXPECT_EQ(Rejection({Make(kOpLddw, 2, kPseudoFunc, 0, 2), Make(0, 0, 0, 0, 5), kExit, kExit}),
            "instruction 1: second slot of lddw func must have imm 0, not 5");
  // Its target is the second slot of another lddw.
  EXPECT_EQ(Rejection({Make(kOpLddw, 2, kPseudoFunc, 0, 3), Make(0), kExit, Make(kOpLddw, 1), Make(0), kExit}),
            "instruction 0 (lddw func): jump target 4 is the second slot of an lddw");
  EXPECT_EQ(Rejection({Make(kOpLddw, 10, kPseudoFunc, 0, 1), Make(0), kExit, kExit}),
            "instruction 0 (lddw func): r10 is read-only");
}

TEST(isaProgram, RejectsKnownOpcodesWithAnUnknownDiscriminant) {
  EXPECT_EQ(Rejection({Make(kOpCall, 0, 3, 0, 5), kExit}),
            "instruction 0: unsupported call kind src=3 (0 = helper, 1 = local, 2 = kfunc)");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, 3), Make(0), kExit}),
            "instruction 0: unsupported lddw source 3 (0 = imm64, 1 = map fd, 2 = map value, 4 = function)");
  // sdiv is offset 1; offset 2 names nothing.
  EXPECT_EQ(Rejection({Make(kClassAlu64 | kSrcX | kAluDiv, 1, 2, 2), kExit}),
            "instruction 0: opcode 0x3f with offset 2 and imm 0 names no instruction");
  // Byte swaps of 17 bits do not exist.
  EXPECT_EQ(Rejection({Make(kClassAlu | kSrcK | kAluEnd, 1, 0, 0, 17), kExit}),
            "instruction 0: opcode 0xd4 with offset 0 and imm 17 names no instruction");
  // movsx from 64 bits does not exist; nor atomics with a made-up operation.
  EXPECT_THAT(Rejection({Make(kMov64Reg, 1, 2, 64), kExit}), HasSubstr("names no instruction"));
  EXPECT_THAT(Rejection({Make(kClassStx | kModeAtomic | kSizeDW, 1, 2, 0, 0x33), kExit}),
              HasSubstr("names no instruction"));
}

// Every field a form does not use must be zero: one rejection per form and
// reserved field, with the field named.
TEST(isaProgram, RejectsEveryReservedFieldOfEveryForm) {
  int checked = 0;
  for (const Form& form : AllForms()) {
    const FieldUse use = FieldsOf(form);
    struct Case {
      bool reserved;
      const char* name;
      void (*poke)(Insn&);
    };
    const Case cases[] = {
        {!use.dst, "dst", [](Insn& insn) { insn.dst = 1; }},
        {!use.src, "src", [](Insn& insn) { insn.src = 1; }},
        {!use.offset, "offset", [](Insn& insn) { insn.offset = 1; }},
        {!use.imm, "imm", [](Insn& insn) { insn.imm = 1; }},
    };
    for (const Case& c : cases) {
      if (!c.reserved) continue;
      testing::Sample sample = testing::CanonicalSample(form);
      c.poke(sample.insns[0]);
      // A fixed imm (addr_space_cast's) is not reserved, but just as checked.
      const bool fixed = c.name == std::string_view("imm") && form.fixed_imm != 0;
      EXPECT_THAT(Rejection(sample.insns, sample.maps),
                  HasSubstr(fmt::format("instruction 0 ({}): {} {} field is 1, must be {}", form.name,
                                        fixed ? "fixed" : "reserved", c.name, fixed ? form.fixed_imm : 0)))
          << form.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(isaProgram, RejectsRegistersAboveR10) {
  EXPECT_EQ(Rejection({Make(kMov64Imm, 11), kExit}),
            "instruction 0 (mov imm): invalid register r11");
  EXPECT_EQ(Rejection({Make(kMov64Reg, 0, 15), kExit}),
            "instruction 0 (mov reg): invalid register r15");
  EXPECT_EQ(Rejection({Make(kClassLdx | kModeMem | kSizeW, 1, 12, 4), kExit}),
            "instruction 0 (ldxw): invalid register r12");
  EXPECT_EQ(Rejection({Make(kOpCallX, 11), kExit}), "instruction 0 (callx): invalid register r11");
}

TEST(isaProgram, RejectsWritesToR10) {
  EXPECT_EQ(Rejection({Make(kMov64Imm, 10, 0, 0, 1), kExit}),
            "instruction 0 (mov imm): r10 is read-only");
  EXPECT_EQ(Rejection({Make(kClassLdx | kModeMem | kSizeDW, 10, 1), kExit}),
            "instruction 0 (ldxdw): r10 is read-only");
  EXPECT_EQ(Rejection({Make(kOpLddw, 10), Make(0), kExit}), "instruction 0 (lddw): r10 is read-only");
  // A fetching atomic writes its source register.
  EXPECT_EQ(
      Rejection({Make(kClassStx | kModeAtomic | kSizeDW, 1, 10, 0, kAtomicAdd | kAtomicFetch), kExit}),
      "instruction 0 (lock fetch add): r10 is read-only (fetch writes the source register)");
  EXPECT_THAT(Rejection({Make(kClassStx | kModeAtomic | kSizeW, 1, 10, 0, kAtomicXchg), kExit}),
              HasSubstr("r10 is read-only"));
  // Reading r10 is fine, and so is cmpxchg from it (it writes r0) or a
  // non-fetching atomic.
  EXPECT_EQ(Rejection({Make(kMov64Reg, 1, 10), kExit}), "");
  EXPECT_EQ(Rejection({Make(kClassStx | kModeAtomic | kSizeDW, 1, 10, 0, kAtomicCmpXchg), kExit}), "");
  EXPECT_EQ(Rejection({Make(kClassStx | kModeAtomic | kSizeDW, 1, 10, 0, kAtomicAdd), kExit}), "");
  // Storing through r10 is not writing it.
  EXPECT_EQ(Rejection({Make(kClassSt | kModeMem | kSizeDW, 10, 0, -8, 1), kExit}), "");
}

TEST(isaProgram, RejectsJumpsOutsideTheProgram) {
  EXPECT_EQ(Rejection({Make(kJa, 0, 0, 5), kExit}),
            "instruction 0 (ja): jump target 6 is outside the program (2 slots)");
  EXPECT_EQ(Rejection({Make(kJa, 0, 0, -2), kExit}),
            "instruction 0 (ja): jump target -1 is outside the program (2 slots)");
  // One past the end is outside too.
  EXPECT_EQ(Rejection({Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, 1), kExit}),
            "instruction 0 (jeq imm): jump target 2 is outside the program (2 slots)");
  EXPECT_EQ(Rejection({Make(kClassJmp32 | kJmpJa, 0, 0, 0, 100000), kExit}),
            "instruction 0 (ja32): jump target 100001 is outside the program (2 slots)");
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 10), kExit}),
            "instruction 0 (call local): call target 11 is outside the program (2 slots)");
}

TEST(isaProgram, RejectsJumpsIntoTheSecondSlotOfLddw) {
  EXPECT_EQ(Rejection({Make(kJa, 0, 0, 1), Make(kOpLddw, 1), Make(0), kExit}),
            "instruction 0 (ja): jump target 2 is the second slot of an lddw");
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 1), Make(kOpLddw, 1), Make(0), kExit}),
            "instruction 0 (call local): jump target 2 is the second slot of an lddw");
}

TEST(isaProgram, RejectsJumpsAcrossSubprograms) {
  // Subprogram 1 starts at slot 2; its ja goes back into subprogram 0.
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 1), kExit, Make(kJa, 0, 0, -3), kExit}),
            "instruction 2 (ja): jump target 0 is in another subprogram");
  // And forward from subprogram 0 into subprogram 1.
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 2), Make(kJa, 0, 0, 1), kExit, kExit}),
            "instruction 1 (ja): jump target 3 is in another subprogram");
}

TEST(isaProgram, RejectsATruncatedOrMalformedLddw) {
  EXPECT_EQ(Rejection({kExit, Make(kOpLddw, 1)}),
            "instruction 1 (lddw): truncated: the second slot is missing");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1), kExit, kExit}),
            "instruction 1: second slot of lddw must have opcode, registers and offset 0");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1), Make(0, 1), kExit}),
            "instruction 1: second slot of lddw must have opcode, registers and offset 0");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1), Make(0, 0, 0, 1), kExit}),
            "instruction 1: second slot of lddw must have opcode, registers and offset 0");
  // A map fd load leaves the second slot's imm empty (the kernel rejects it
  // too: "unrecognized bpf_ld_imm64 insn"); imm64 and map value loads use it.
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapFd, 0, 3), Make(0, 0, 0, 0, 5), kExit},
                      {ArrayMap(3)}),
            "instruction 1: second slot of lddw map_fd must have imm 0, not 5");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, 0, 0, 3), Make(0, 0, 0, 0, 5), kExit}), "");
}

TEST(isaProgram, RejectsProgramsThatDoNotEndInExitOrJa) {
  EXPECT_EQ(Rejection({Make(kMov64Imm)}),
            "instruction 0 (mov imm): the program must end in exit or an unconditional jump");
  EXPECT_EQ(Rejection({Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, -1)}),
            "instruction 0 (jeq imm): the program must end in exit or an unconditional jump");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1), Make(0)}),
            "instruction 1: the last instruction of a subprogram must be exit or a jump, not lddw");
  // Subprogram 0 ends just before the call target.
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 1), Make(kMov64Imm), kExit}),
            "instruction 1 (mov imm): subprogram 0 must end in exit or an unconditional jump");
  // ja and ja32 end a program as well as exit.
  EXPECT_EQ(Rejection({kExit, Make(kJa, 0, 0, -2)}), "");
  EXPECT_EQ(Rejection({kExit, Make(kClassJmp32 | kJmpJa, 0, 0, 0, -2)}), "");
}

// test_bpf's cases load without the verifier, and some hold code after
// their last exit: what no path reaches cannot run off the end.
TEST(isaProgram, TakesAnEndNoPathReaches) {
  // "JMP_EXIT": mov32 r0, 0x4711; exit; mov32 r0, 0x4712.
  EXPECT_EQ(Rejection({Make(kMov64Imm), kExit, Make(kMov64Imm)}), "");
  // "Short relative jump: offset=0": the jump lands on the exit either way.
  EXPECT_EQ(Rejection({Make(kMov64Imm), Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, 0), kExit, Make(kMov64Imm)}), "");
  // Jumped over, and an lddw no path reaches.
  EXPECT_EQ(Rejection({Make(kJa, 0, 0, 1), Make(kMov64Imm), kExit, Make(kOpLddw, 1), Make(0)}), "");
  // Reached by a jump, by either way of a condition, or by falling through
  // a call, it runs off the end.
  EXPECT_EQ(Rejection({Make(kJa, 0, 0, 1), kExit, Make(kMov64Imm)}),
            "instruction 2 (mov imm): the program must end in exit or an unconditional jump");
  EXPECT_EQ(Rejection({Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, 1), kExit, Make(kMov64Imm)}),
            "instruction 2 (mov imm): the program must end in exit or an unconditional jump");
  EXPECT_EQ(Rejection({Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, 1), Make(kMov64Imm), kExit, Make(kOpLddw, 1), Make(0)}),
            "");
  EXPECT_EQ(Rejection({Make(kClassJmp | kSrcK | kJmpJeq, 0, 0, 2), Make(kMov64Imm), kExit, Make(kOpLddw, 1), Make(0)}),
            "instruction 4: the last instruction of a subprogram must be exit or a jump, not lddw");
  // A subprogram's first slot is reached by its callers: subprogram 1 (slot
  // 2 on) runs off the end.
  EXPECT_EQ(Rejection({Make(kOpCall, 0, kPseudoCall, 0, 1), kExit, Make(kMov64Imm)}),
            "instruction 2 (mov imm): subprogram 1 must end in exit or an unconditional jump");
}

TEST(isaProgram, RejectsUndeclaredOrUnfitMaps) {
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapFd, 0, 3), Make(0), kExit}),
            "instruction 0 (lddw map_fd): map fd 3 is not declared");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapValue, 0, 4), Make(0), kExit}, {ArrayMap(3)}),
            "instruction 0 (lddw map_value): map fd 4 is not declared");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapValue, 0, 3), Make(0, 0, 0, 0, 32), kExit},
                      {ArrayMap(3, 8, 4)}),
            "instruction 0 (lddw map_value): offset 32 is outside map 3's 32 value bytes");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapValue, 0, 3), Make(0, 0, 0, 0, 31), kExit},
                      {ArrayMap(3, 8, 4)}),
            "");
  MapSpec prog_array = ArrayMap(5);
  prog_array.type = MapType::kProgArray;
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapValue, 0, 5), Make(0), kExit}, {prog_array}),
            "instruction 0 (lddw map_value): map 5 is a prog_array and has no values");
  EXPECT_EQ(Rejection({Make(kOpLddw, 1, kPseudoMapFd, 0, 5), Make(0), kExit}, {prog_array}), "");
}

TEST(isaProgram, RejectsBadMapDeclarations) {
  EXPECT_EQ(Rejection({kExit}, {ArrayMap(1), ArrayMap(1)}), "map fd 1 is declared twice");
  EXPECT_EQ(Rejection({kExit}, {ArrayMap(1, 8, 0)}), "map 1 has no entries");
  EXPECT_EQ(Rejection({kExit}, {ArrayMap(1, 0, 1)}), "map 1 needs a non-zero key and value size");
  MapSpec wide_key = ArrayMap(2);
  wide_key.key_size = 8;
  EXPECT_EQ(Rejection({kExit}, {wide_key}), "array map 2 must have 4-byte keys");
  wide_key.type = MapType::kHash;
  EXPECT_EQ(Rejection({kExit}, {wide_key}), "");
}

TEST(isaProgram, DecodeProgramChecksTheByteCount) {
  std::vector<uint8_t> bytes(9, 0);
  auto program = DecodeProgram(bytes);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.message(), "9 bytes is not a whole number of 8-byte instructions");
  EXPECT_EQ(DecodeProgram({}).message(), "the program is empty");
}

// One valid instance of every form: accepted, decoded from its bytes to the
// same instructions, and classified as that form.
TEST(isaProgram, AcceptsEveryFormOfTheTable) {
  for (const Form& form : AllForms()) {
    testing::Sample sample = testing::CanonicalSample(form);
    auto program = MakeProgram(sample.insns, sample.maps);
    ASSERT_TRUE(program.ok()) << form.name << ": " << program.message();
    auto decoded = DecodeProgram(ToBytes(sample.insns), sample.maps);
    ASSERT_TRUE(decoded.ok()) << form.name << ": " << decoded.message();
    EXPECT_EQ(decoded->insns, sample.insns) << form.name;
    const std::vector<SlotInfo> slots = program->slots;
    EXPECT_EQ(slots[0].form, form.id) << form.name;
    EXPECT_FALSE(slots[0].second_slot);
    if (form.is_wide()) {
      EXPECT_EQ(slots[1].form, form.id);
      EXPECT_TRUE(slots[1].second_slot);
    }
    const Requirements req = RequirementsOf(sample.insns);
    EXPECT_EQ(req.cpu, form.cpu) << form.name;  // exit is v1 base32
    EXPECT_TRUE(req.groups & form.group) << form.name;
  }
}

TEST(isaProgram, FindsSubprograms) {
  auto program = MakeProgram({Make(kOpCall, 0, kPseudoCall, 0, 1), kExit, Make(kMov64Imm), kExit});
  ASSERT_TRUE(program.ok()) << program.message();
  EXPECT_EQ(program->subprogram_starts, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(program->SubprogramOf(1), 0u);
  EXPECT_EQ(program->SubprogramOf(3), 1u);
  EXPECT_EQ(program->SubprogramEnd(0), 2u);
  EXPECT_EQ(program->SubprogramEnd(1), 4u);
}

TEST(isaProgram, RandomValidInstancesOfEveryFormAreAccepted) {
  std::mt19937_64 rng(0x15a);
  for (const Form& form : AllForms()) {
    int accepted = 0;
    for (int i = 0; i < 50; ++i) {
      testing::Sample sample = testing::RandomSample(form, rng);
      if (MakeProgram(sample.insns, sample.maps).ok()) ++accepted;
    }
    EXPECT_GT(accepted, 0) << form.name;
  }
}

}  // namespace
}  // namespace bpfdiff::isa
