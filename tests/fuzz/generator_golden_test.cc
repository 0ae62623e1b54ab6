// The fuzz input format is stable (fuzz/generator/fuzz_format.h): corpora,
// crash artifacts and reproducers keep meaning the same case. These inputs
// pin what each format version makes of fixed bytes: the bytes of every
// program's slots, the maps, the input memory and the options. The text
// beside each slot is a comment: a change of the disassembler's display
// does not trip these tests.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "isa/insn.h"
#include "support/hex.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

// The newest version these goldens know; each test says its version.
constexpr uint8_t kNewestGoldenVersion = 8;

const std::string kChangedFormat =
    "the generator changed what the bytes of a released format version mean; add a new version to "
    "fuzz/generator/fuzz_format.h or restore the old behaviour";

// What the input means, independent of how the disassembler shows it:
// every program's slots as bytes, then the configuration.
std::string Generated(const std::optional<CaseSource>& source) {
  if (!source) return "(not a case)\n";
  std::string out;
  for (size_t p = 0; p < source->programs.size(); ++p) {
    out += "program " + std::to_string(p) + ":\n";
    for (const isa::Insn& insn : source->programs[p]) {
      uint8_t bytes[isa::kInsnSize];
      insn.ToBytes(bytes);
      out += FormatHexBytes(bytes) + "\n";
    }
  }
  return out + DescribeConfiguration(*source);
}

// The failure message: what changed, and the case as it is now.
std::string ChangedFormat(const std::optional<CaseSource>& source) {
  return kChangedFormat + "\nthe input now makes:\n" + (source ? DescribeSource(*source) : "(not a case)");
}

// An input of an older version that does not make `absent` (a fragment
// of Generated()) keeps its case once upgraded to the current version.
void ExpectUpgradeKeepsCase(std::vector<uint8_t> old, std::string_view absent) {
  const std::string before = Generated(DecodeFuzzInput(old));
  EXPECT_EQ(before.find(absent), std::string::npos) << before;
  UpgradeFuzzInput(old);
  EXPECT_EQ(old[0], kFormatVersion);
  EXPECT_EQ(Generated(DecodeFuzzInput(old)), before);
}

TEST(FuzzGeneratorGolden, EveryReadableVersionHasGoldens) {
  // A new version keeps the goldens of the old ones (they still decode the
  // same) and adds its own: print Generated() of each input, check it.
  EXPECT_EQ(kFormatVersion, kNewestGoldenVersion) << "kFormatVersion changed: add goldens for the new version";
  EXPECT_EQ(kOldestFormatVersion, 1) << "a version that no longer decodes loses its goldens here";
}

// Maps, a subprogram, a lookup, a probe load, a local call, an early exit.
std::vector<uint8_t> MapsAndASubprogram(uint8_t version) {
  return {
    // version, structured, 1 subprogram, array + hash map of 8-byte
    // values, no tail-call targets, 8 bytes of memory, seed, options
    version, 0x00, 0x01, 0x03, 0x00, 0x08, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00,
    // subprogram 1 (callees are built first, from the first records)
    0x05, 0x02, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00,  // alu: mul, register source
    0x3c, 0x06, 0x90, 0x00, 0x78, 0x56, 0x34, 0x12,  // mov immediate: a 32-bit word
    0x50, 0x13, 0x01, 0x00, 0x10, 0x00, 0x07, 0x00,  // load 8 bytes
    0x64, 0x02, 0x01, 0x01, 0x04, 0x00, 0x06, 0x00,  // store 4 bytes from a register
    0x9c, 0x03, 0x06, 0x00, 0x00, 0x05, 0x00, 0x00,  // if
    0x78, 0x01, 0x04, 0x00, 0x20, 0x00, 0x03, 0x00,  // atomic fetch add, 64 bits
    0xb9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of the if
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
    // main entry
    0xd0, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x80,  // map lookup, then if (r0 != NULL)
    0x82, 0x02, 0x00, 0x00, 0x04, 0x08, 0x00, 0x00,  // probe load
    0xe0, 0x00, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // local call
    0x10, 0x0e, 0x00, 0x02, 0x00, 0x01, 0x02, 0x00,  // alu: byte swap
    0xf1, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,  // early exit
    0x40, 0x00, 0x80, 0x01, 0xff, 0xff, 0xff, 0x7f,  // mov immediate (dead code after exit)
  };
}

TEST(FuzzGeneratorGolden, StructuredWithMapsAndASubprogram) {
  const std::vector<uint8_t> input = MapsAndASubprogram(1);
  const std::string golden =
      "program 0:\n"  // the main entry; subprogram 1 from slot 18
      "18 11 00 00 01 00 00 00\n"  // lddw %r1, map:1
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "7a 0a f0 ff 02 00 00 00\n"  // stdw [%r10-16], 2
      "bf a2 00 00 00 00 00 00\n"  // mov %r2, %r10
      "07 02 00 00 f0 ff ff ff\n"  // add %r2, -16
      "85 00 00 00 01 00 00 00\n"  // call 1
      "15 00 08 00 00 00 00 00\n"  // jeq %r0, 0, +8
      "21 04 08 00 00 00 00 00\n"  // probe ldxw %r4, [%r0+8]
      "bf 41 00 00 00 00 00 00\n"  // mov %r1, %r4
      "85 10 00 00 08 00 00 00\n"  // call local +8
      "b7 02 00 00 00 00 00 00\n"  // mov %r2, 0
      "d7 02 00 00 20 00 00 00\n"  // bswap32 %r2
      "b7 00 00 00 0f 00 00 00\n"  // mov %r0, 15
      "95 00 00 00 00 00 00 00\n"  // exit
      "b4 00 00 00 ff ff ff 7f\n"  // mov32 %r0, 0x7fffffff
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "85 10 00 00 01 00 00 00\n"  // call local +1
      "95 00 00 00 00 00 00 00\n"  // exit
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "2f 13 00 00 00 00 00 00\n"  // mul %r3, %r1
      "b7 06 00 00 78 56 34 12\n"  // mov %r6, 0x12345678
      "79 a7 10 fe 00 00 00 00\n"  // ldxdw %r7, [%r10-496]
      "63 6a 04 fe 00 00 00 00\n"  // stxw [%r10-508], %r6
      "45 06 01 00 07 00 00 00\n"  // jset %r6, 7, +1
      "db 3a 20 fe 01 00 00 00\n"  // lock fetch add [%r10-480], %r3
      "95 00 00 00 00 00 00 00\n"  // exit
      "map fd 1: array key 4 value 8 entries 4\n"
      "  values 5673a7eec30c5f31dd6025abe2340c28bc6982726e4f301640c1d67f9fa04d2a\n"
      "map fd 2: hash key 8 value 8 entries 8\n"
      "memory: 8 bytes 10656b09b58cbc81\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

// A loop, a tail call and its target, kptr_xchg inlined.
std::vector<uint8_t> LoopAndTailCallTarget(uint8_t version) {
  return {
    // version, structured (mode byte 7), no subprogram, only the small
    // array map (fd 3), 1 tail-call target, 16 bytes of memory, seed,
    // inline kptr_xchg
    version, 0x07, 0x00, 0x04, 0x01, 0x10, 0xef, 0xbe, 0xad, 0xde, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
    // main entry
    0x92, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,  // pointer setup: copy ctx to r7
    0xb1, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,  // loop
    0x20, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x00,  // alu: signed div, immediate
    0x96, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // pointer setup: r10 - k
    0x5a, 0x11, 0x00, 0x01, 0x08, 0x00, 0x02, 0x00,  // load 2 bytes, sign-extended
    0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of the loop
    0xea, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00,  // tail call through `call 12`
    0xd5, 0x05, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00,  // helper: kptr_xchg
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
    // tail-call target
    0x8c, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,  // an untrusted pointer
    0x84, 0x13, 0x01, 0x01, 0x04, 0x00, 0x10, 0x00,  // probe load
    0xad, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // begin dead code (ja)
    0x00, 0x00, 0x00, 0x02, 0x00, 0x07, 0x00, 0x00,  // alu: add immediate
  };
}

TEST(FuzzGeneratorGolden, StructuredWithLoopAndTailCallTarget) {
  const std::vector<uint8_t> input = LoopAndTailCallTarget(1);
  const std::string golden =
      "program 0:\n"
      "bf 17 00 00 00 00 00 00\n"  // mov %r7, %r1
      "b7 06 00 00 03 00 00 00\n"  // mov %r6, 3
      "b7 02 00 00 ff ff ff ff\n"  // mov %r2, -1
      "37 02 01 00 07 00 00 00\n"  // sdiv %r2, 7
      "bf a0 00 00 00 00 00 00\n"  // mov %r0, %r10
      "07 00 00 00 f8 ff ff ff\n"  // add %r0, -8
      "89 72 08 00 00 00 00 00\n"  // ldxsh %r2, [%r7+8]
      "17 06 00 00 01 00 00 00\n"  // sub %r6, 1
      "55 06 f9 ff 00 00 00 00\n"  // jne %r6, 0, -7
      "bf 71 00 00 00 00 00 00\n"  // mov %r1, %r7
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "85 00 00 00 0c 00 00 00\n"  // call 12
      "bf a1 00 00 00 00 00 00\n"  // mov %r1, %r10
      "07 01 00 00 e8 ff ff ff\n"  // add %r1, -24
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "85 00 00 00 c2 00 00 00\n"  // call 194
      "95 00 00 00 00 00 00 00\n"  // exit
      "program 1:\n"  // the tail-call target
      "b7 00 00 00 00 00 10 00\n"  // mov %r0, 0x100000
      "39 14 00 10 00 00 00 00\n"  // probe ldxdw %r4, [%r1+4096]
      "05 00 01 00 00 00 00 00\n"  // ja +1
      "07 02 00 00 0f 00 00 00\n"  // add %r2, 15
      "95 00 00 00 00 00 00 00\n"  // exit
      "map fd 3: array key 4 value 8 entries 1\n"
      "  values 018ab96bda5b8ace\n"
      "map fd 4: prog_array key 4 value 8 entries 2 programs 1,-1\n"
      "memory: 16 bytes 9b221d901c3fb35a857e29bc59d52273\n"
      "inline kptr_xchg: true\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

TEST(FuzzGeneratorGolden, RawInstructionsKeepTheSlotsThatNameAForm) {
  const std::vector<uint8_t> input = {
      1, kModeRaw,
      0xb7, 0x01, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00,  // mov r1, 42
      0xff, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde,  // no such opcode: dropped
      0x18, 0x00, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55,  // lddw r0, ...
      0x00, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11,  // ... its second slot
      0x0f, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // add r0, r1
      0xd4, 0x00, 0x00, 0x00, 0x21, 0x00, 0x00, 0x00,  // le with width 33 names no form: dropped
      0xb7, 0x0b, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // mov r11, 1: a form, kept for the load step to reject
      0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
      0x95, 0x00, 0x00,                                // a partial slot: dropped
  };
  const std::string golden =
      "program 0:\n"
      "b7 01 00 00 2a 00 00 00\n"  // mov %r1, 42
      "18 00 00 00 88 77 66 55\n"  // lddw %r0, 0x1122334455667788
      "00 00 00 00 44 33 22 11\n"  // (second slot of lddw)
      "0f 10 00 00 00 00 00 00\n"  // add %r0, %r1
      "b7 0b 00 00 01 00 00 00\n"  // mov %r11, 1 # invalid: no register r11
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 0 bytes\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

// Version 2: the same records make the same constructs, with the frame's
// bottom 72 bytes left to the observations, and before each exit a store of
// every register the function wrote and may still read.
TEST(FuzzGeneratorGolden, Version2ObservesWhatEachFunctionWroteBeforeItsExits) {
  const std::vector<uint8_t> input = MapsAndASubprogram(2);
  const std::string golden =
      "program 0:\n"  // the main entry; subprogram 1 from slot 19
      "18 11 00 00 01 00 00 00\n"  // lddw %r1, map:1
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "7a 0a f0 ff 02 00 00 00\n"  // stdw [%r10-16], 2
      "bf a2 00 00 00 00 00 00\n"  // mov %r2, %r10
      "07 02 00 00 f0 ff ff ff\n"  // add %r2, -16
      "85 00 00 00 01 00 00 00\n"  // call 1
      "15 00 09 00 00 00 00 00\n"  // jeq %r0, 0, +9
      "21 04 08 00 00 00 00 00\n"  // probe ldxw %r4, [%r0+8]
      "bf 41 00 00 00 00 00 00\n"  // mov %r1, %r4
      "85 10 00 00 09 00 00 00\n"  // call local +9
      "b7 02 00 00 00 00 00 00\n"  // mov %r2, 0
      "d7 02 00 00 20 00 00 00\n"  // bswap32 %r2
      "b7 00 00 00 0f 00 00 00\n"  // mov %r0, 15
      "7b 2a 08 fe 00 00 00 00\n"  // stxdw [%r10-504], %r2: r1, r4 died in the call
      "95 00 00 00 00 00 00 00\n"  // exit
      "b4 00 00 00 ff ff ff 7f\n"  // mov32 %r0, 0x7fffffff
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "85 10 00 00 01 00 00 00\n"  // call local +1
      "95 00 00 00 00 00 00 00\n"  // exit: nothing written is left
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "2f 13 00 00 00 00 00 00\n"  // mul %r3, %r1
      "b7 06 00 00 78 56 34 12\n"  // mov %r6, 0x12345678
      "79 a7 58 fe 00 00 00 00\n"  // ldxdw %r7, [%r10-424] (version 1: -496)
      "63 6a 4c fe 00 00 00 00\n"  // stxw [%r10-436], %r6 (-508)
      "45 06 01 00 07 00 00 00\n"  // jset %r6, 7, +1
      "db 3a 68 fe 01 00 00 00\n"  // lock fetch add [%r10-408], %r3 (-480)
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "7b 7a 30 fe 00 00 00 00\n"  // stxdw [%r10-464], %r7; r1 is the caller's argument
      "95 00 00 00 00 00 00 00\n"  // exit
      "map fd 1: array key 4 value 8 entries 4\n"
      "  values 5673a7eec30c5f31dd6025abe2340c28bc6982726e4f301640c1d67f9fa04d2a\n"
      "map fd 2: hash key 8 value 8 entries 8\n"
      "memory: 8 bytes 10656b09b58cbc81\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

TEST(FuzzGeneratorGolden, Version2ObservesInTailCallTargetsToo) {
  const std::vector<uint8_t> input = LoopAndTailCallTarget(2);
  const std::string golden =
      "program 0:\n"
      "bf 17 00 00 00 00 00 00\n"  // mov %r7, %r1
      "b7 06 00 00 03 00 00 00\n"  // mov %r6, 3
      "b7 02 00 00 ff ff ff ff\n"  // mov %r2, -1
      "37 02 01 00 07 00 00 00\n"  // sdiv %r2, 7
      "bf a0 00 00 00 00 00 00\n"  // mov %r0, %r10
      "07 00 00 00 f8 ff ff ff\n"  // add %r0, -8
      "89 72 08 00 00 00 00 00\n"  // ldxsh %r2, [%r7+8]
      "17 06 00 00 01 00 00 00\n"  // sub %r6, 1
      "55 06 f9 ff 00 00 00 00\n"  // jne %r6, 0, -7
      "bf 71 00 00 00 00 00 00\n"  // mov %r1, %r7
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "85 00 00 00 0c 00 00 00\n"  // call 12
      "bf a1 00 00 00 00 00 00\n"  // mov %r1, %r10
      "07 01 00 00 e8 ff ff ff\n"  // add %r1, -24
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "85 00 00 00 c2 00 00 00\n"  // call 194
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "7b 7a 30 fe 00 00 00 00\n"  // stxdw [%r10-464], %r7
      "95 00 00 00 00 00 00 00\n"  // exit
      "program 1:\n"  // the tail-call target
      "b7 00 00 00 00 00 10 00\n"  // mov %r0, 0x100000
      "39 14 00 10 00 00 00 00\n"  // probe ldxdw %r4, [%r1+4096]
      "05 00 01 00 00 00 00 00\n"  // ja +1
      "07 02 00 00 0f 00 00 00\n"  // add %r2, 15
      "7b 2a 08 fe 00 00 00 00\n"  // stxdw [%r10-504], %r2 (the caller's, written in dead code: kept)
      "7b 4a 18 fe 00 00 00 00\n"  // stxdw [%r10-488], %r4
      "95 00 00 00 00 00 00 00\n"  // exit
      "map fd 3: array key 4 value 8 entries 1\n"
      "  values 018ab96bda5b8ace\n"
      "map fd 4: prog_array key 4 value 8 entries 2 programs 1,-1\n"
      "memory: 16 bytes 9b221d901c3fb35a857e29bc59d52273\n"
      "inline kptr_xchg: true\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

TEST(FuzzGeneratorGolden, Version2RawInputsStartWithTheirInputMemory) {
  const std::vector<uint8_t> input = {
      2, kModeRaw,
      0x05, 0x00,                    // 5 bytes of input memory
      0x11, 0x22, 0x33, 0x44, 0x55,  // the memory
      0x61, 0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,  // ldxw r0, [r1+1]
      0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // exit
  };
  const std::string golden =
      "program 0:\n"
      "61 10 01 00 00 00 00 00\n"  // ldxw %r0, [%r1+1]
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 5 bytes 1122334455\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}


// Version 3 without options: what version 2 made of the same bytes, as
// long as byte 2 names fewer than 4 subprograms.
TEST(FuzzGeneratorGolden, Version3WithoutOptionsMakesWhatVersion2Made) {
  EXPECT_EQ(Generated(DecodeFuzzInput(MapsAndASubprogram(3))), Generated(DecodeFuzzInput(MapsAndASubprogram(2))));
  EXPECT_EQ(Generated(DecodeFuzzInput(LoopAndTailCallTarget(3))),
            Generated(DecodeFuzzInput(LoopAndTailCallTarget(2))));
}

// Version 3 in operand-magnitude mode (byte 15 bit 0), with five
// subprograms (byte 2 = 5; version 2 read one).
TEST(FuzzGeneratorGolden, Version3MagnitudeModeAndFiveSubprograms) {
  const std::vector<uint8_t> input = {
    // version 3, structured, 5 subprograms, no maps, no tail-call targets,
    // 8 bytes of memory, seed, no kptr_xchg inlining, magnitude mode
    3, 0x00, 0x05, 0x00, 0x00, 0x08, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x01,
    // subprogram 1: mul, register source; dst = class 14 (0x80000000),
    // src = dst + 1 (p3 = 0x0a: relation 2, register choice 1)
    0x05, 0x02, 0x02, 0x03, 0x0a, 0x00, 0x0e, 0x00,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // subprogram 2: add32 immediate; dst = class 30 (garbage in the upper
    // half), immediate = 32-bit class 18 (0x1000)
    0x00, 0x00, 0x01, 0x04, 0x00, 0x12, 0x1e, 0x00,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // subprogram 3: if (class 13, 0x7fffffff, against its low word + 1),
    // and inside it an add
    0x9c, 0x03, 0x06, 0x00, 0x00, 0x01, 0x0d, 0x00,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x07, 0x00, 0x00,
    0xb9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // subprogram 4: load 8 bytes at a boundary offset (p1 bit 6; p3 = 9:
    // 256 does not fit the frame, -256 does)
    0x50, 0x13, 0x41, 0x00, 0x09, 0x00, 0x07, 0x00,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // subprogram 5: callx with an id whose upper half is 0x41
    0xe6, 0x00, 0x00, 0x01, 0x00, 0x40, 0x00, 0x00,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // main entry: a local call; and with dst = raw class (p3..p6 as they
    // are) and immediate -2^17; sub with dst = 2^47; three more calls
    0xe0, 0x00, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
    0x07, 0x05, 0x00, 0x07, 0x11, 0x22, 0x2b, 0x44,
    0x08, 0x01, 0x00, 0x08, 0x00, 0x00, 0x28, 0x2f,
    0xe1, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0xe2, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
    0xe3, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
  };
  const std::string golden =
      "program 0:\n"
      "bf 31 00 00 00 00 00 00\n"  // mov %r1, %r3
      "bf 42 00 00 00 00 00 00\n"  // mov %r2, %r4
      "bf 53 00 00 00 00 00 00\n"  // mov %r3, %r5
      "bf 64 00 00 00 00 00 00\n"  // mov %r4, %r6
      "85 10 00 00 25 00 00 00\n"  // call local +37
      "b7 07 00 00 11 22 2b 44\n"  // mov %r7, 0x442b2211
      "57 07 00 00 00 00 fe ff\n"  // and %r7, 0xfffe0000
      "18 08 00 00 00 00 00 00\n"  // lddw %r8, 0x800000000000
      "00 00 00 00 00 80 00 00\n"  // (second slot of lddw)
      "17 08 00 00 00 00 00 00\n"  // sub %r8, 0
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "bf 62 00 00 00 00 00 00\n"  // mov %r2, %r6
      "bf 63 00 00 00 00 00 00\n"  // mov %r3, %r6
      "85 10 00 00 20 00 00 00\n"  // call local +32
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "85 10 00 00 21 00 00 00\n"  // call local +33
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "bf 62 00 00 00 00 00 00\n"  // mov %r2, %r6
      "bf 63 00 00 00 00 00 00\n"  // mov %r3, %r6
      "85 10 00 00 23 00 00 00\n"  // call local +35
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "b7 03 00 00 03 00 00 00\n"  // mov %r3, 3
      "b7 04 00 00 04 00 00 00\n"  // mov %r4, 4
      "85 10 00 00 11 00 00 00\n"  // call local +17
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "b7 03 00 00 03 00 00 00\n"  // mov %r3, 3
      "85 10 00 00 11 00 00 00\n"  // call local +17
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "85 10 00 00 12 00 00 00\n"  // call local +18
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "b7 03 00 00 03 00 00 00\n"  // mov %r3, 3
      "85 10 00 00 14 00 00 00\n"  // call local +20
      "b7 01 00 00 01 00 00 00\n"  // mov %r1, 1
      "b7 02 00 00 02 00 00 00\n"  // mov %r2, 2
      "b7 03 00 00 03 00 00 00\n"  // mov %r3, 3
      "85 10 00 00 15 00 00 00\n"  // call local +21
      "7b 7a 30 fe 00 00 00 00\n"  // stxdw [%r10-464], %r7
      "7b 8a 38 fe 00 00 00 00\n"  // stxdw [%r10-456], %r8
      "95 00 00 00 00 00 00 00\n"  // exit
      "18 00 00 00 07 00 00 00\n"  // lddw %r0, 0x4100000007
      "00 00 00 00 41 00 00 00\n"  // (second slot of lddw)
      "8d 00 00 00 00 00 00 00\n"  // call %r0
      "95 00 00 00 00 00 00 00\n"  // exit
      "79 a7 00 ff 00 00 00 00\n"  // ldxdw %r7, [%r10-256]
      "7b 7a 30 fe 00 00 00 00\n"  // stxdw [%r10-464], %r7
      "95 00 00 00 00 00 00 00\n"  // exit
      "b7 06 00 00 ff ff ff 7f\n"  // mov %r6, 0x7fffffff
      "45 06 02 00 00 00 00 80\n"  // jset %r6, 0x80000000, +2
      "b7 02 00 00 00 00 00 00\n"  // mov %r2, 0
      "07 02 00 00 ff 00 00 00\n"  // add %r2, 255
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "95 00 00 00 00 00 00 00\n"  // exit
      "18 04 00 00 00 00 00 00\n"  // lddw %r4, 0xdeadbeef00000000
      "00 00 00 00 ef be ad de\n"  // (second slot of lddw)
      "04 04 00 00 00 10 00 00\n"  // add32 %r4, 4096
      "7b 4a 18 fe 00 00 00 00\n"  // stxdw [%r10-488], %r4
      "95 00 00 00 00 00 00 00\n"  // exit
      "b4 03 00 00 00 00 00 80\n"  // mov32 %r3, 0x80000000
      "b4 01 00 00 01 00 00 80\n"  // mov32 %r1, 0x80000001
      "2f 13 00 00 00 00 00 00\n"  // mul %r3, %r1
      "7b 1a 00 fe 00 00 00 00\n"  // stxdw [%r10-512], %r1
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 8 bytes 10656b09b58cbc81\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

// Version 4: the tail-call chain (byte 15 bits 1, 2 and 6, to the next
// target: bit 4) and the bounds mode (bit 3) with the magnitude mode (bit 0).
std::vector<uint8_t> Version4ChainAndBounds() {
  return {
    // version 4, structured, no subprograms, an array map of 8-byte
    // values, two tail-call targets, 16 bytes of memory, seed, chain to the
    // next target, bounds and magnitude modes
    4, 0x00, 0x00, 0x01, 0x02, 0x10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x5f,
    // main entry: a tail call with index max_entries (p1 = 4); one with
    // index 0xffffffff (p1 = 6) and upper garbage (p2 % 4 == 0), helper
    // form (p3 bit 0)
    0xea, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00,
    0xea, 0x00, 0x06, 0x04, 0x01, 0x10, 0x03, 0x00,
    // if jset32 (p0 = 0x87) of a class-30 value and a register with the
    // same upper half and the complement low word (p3 = 8)
    0x9c, 0x87, 0x02, 0x01, 0x08, 0x00, 0x1e, 0x00,
    0xb9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // a load of 8 bytes from the context at offset 32767 (p1 = 0x61, p3 =
    // 10), through r3 = ctx + 8 - 32767 (p4 = 8, p6 = 3)
    0x50, 0x03, 0x61, 0x00, 0x0a, 0x08, 0x00, 0x03,
    // a 64-bit atomic fetch-and on the stack at offset -32768 (p1 = 0x60,
    // p3 = 12), through r4 = r10 - 424 + 32768
    0x76, 0x01, 0x60, 0x02, 0x0c, 0x10, 0x00, 0x04,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // target 0: a 4-byte store of a constant at offset -4095 from ctx + 5
    // + 4095 (p1 = 0x60, p3 = 1, p4 = 5, p6 = 2)
    0x64, 0x12, 0x60, 0x00, 0x01, 0x05, 0x00, 0x02,
    0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // target 1: nothing but the chain
  };
}

TEST(FuzzGeneratorGolden, Version4TailCallChainAndBounds) {
  const std::vector<uint8_t> input = Version4ChainAndBounds();
  const std::string golden =
      "program 0:\n"
      "bf 16 00 00 00 00 00 00\n"  // mov %r6, %r1
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 03 00 00 00\n"  // mov %r3, 3
      "f5 00 00 00 00 00 00 00\n"  // tail_call
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "18 03 00 00 ff ff ff ff\n"  // lddw %r3, 0x88ffffffff
      "00 00 00 00 88 00 00 00\n"  // (second slot of lddw)
      "85 00 00 00 0c 00 00 00\n"  // call 12
      "18 02 00 00 00 00 00 00\n"  // lddw %r2, 0xdeadbeef00000000
      "00 00 00 00 ef be ad de\n"  // (second slot of lddw)
      "18 03 00 00 ff ff ff ff\n"  // lddw %r3, 0xdeadbeefffffffff
      "00 00 00 00 ef be ad de\n"  // (second slot of lddw)
      "4e 32 00 00 00 00 00 00\n"  // jset32 %r2, %r3, +0
      "bf 63 00 00 00 00 00 00\n"  // mov %r3, %r6
      "07 03 00 00 09 80 ff ff\n"  // add %r3, -32759
      "79 30 ff 7f 00 00 00 00\n"  // ldxdw %r0, [%r3+32767]
      "bf a4 00 00 00 00 00 00\n"  // mov %r4, %r10
      "07 04 00 00 58 7e 00 00\n"  // add %r4, 32344
      "db 04 00 80 51 00 00 00\n"  // lock fetch and [%r4-32768], %r0
      "7b 2a 08 fe 00 00 00 00\n"  // stxdw [%r10-504], %r2
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "7b 4a 18 fe 00 00 00 00\n"  // stxdw [%r10-488], %r4
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 00 00 00 00\n"  // mov %r3, 0
      "f5 00 00 00 00 00 00 00\n"  // tail_call
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "95 00 00 00 00 00 00 00\n"  // exit
      "program 1:\n"
      "bf 16 00 00 00 00 00 00\n"  // mov %r6, %r1
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "f5 00 00 00 00 00 00 00\n"  // tail_call
      "bf 62 00 00 00 00 00 00\n"  // mov %r2, %r6
      "07 02 00 00 04 10 00 00\n"  // add %r2, 4100
      "62 02 01 f0 00 00 00 00\n"  // stw [%r2-4095], 0
      "7b 2a 08 fe 00 00 00 00\n"  // stxdw [%r10-504], %r2
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "95 00 00 00 00 00 00 00\n"  // exit
      "program 2:\n"
      "bf 16 00 00 00 00 00 00\n"  // mov %r6, %r1
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "18 12 00 00 04 00 00 00\n"  // lddw %r2, map:4
      "00 00 00 00 00 00 00 00\n"  // (second slot of lddw)
      "b7 03 00 00 00 00 00 00\n"  // mov %r3, 0
      "f5 00 00 00 00 00 00 00\n"  // tail_call
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "95 00 00 00 00 00 00 00\n"  // exit
      "map fd 1: array key 4 value 8 entries 4\n"
      "  values dd6025abe2340c28bc6982726e4f301640c1d67f9fa04d2a0754d2dc6d7afbc1\n"
      "map fd 4: prog_array key 4 value 8 entries 3 programs 1,2,-1\n"
      "memory: 16 bytes 10656b09b58cbc815673a7eec30c5f31\n"
      "inline kptr_xchg: false\n";
  const auto source = DecodeFuzzInput(input);
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
}

// Version 5: the fifth pointer setup, this CPU's per-CPU variable, in
// place (dst = src) and from another register, then a store and a load
// through it; a fourth kind (ptr += imm) that version 4 wrote as the same
// record upgrades to the same program; and the sixth, arena accesses.
std::vector<uint8_t> Version5PerCpu(uint8_t version) {
  return {
    // version, structured, no subprogram, no maps, no tail-call targets,
    // 8 bytes of memory, seed, no options
    version, 0x00, 0x00, 0x00, 0x00, 0x08, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x00,
    0x92, 0x04, 0x03, 0x00, 0x00, 0x05, 0x00, 0x00,  // pointer setup 4: r3 = per-CPU + 40
    0x92, 0x04, 0x06, 0x01, 0x01, 0x7f, 0x00, 0x00,  // pointer setup 4: r6 = addr_percpu r2 (+1016)
    0x64, 0x03, 0x01, 0x01, 0x00, 0x00, 0x06, 0x00,  // store 8 bytes through r3
    0x50, 0x03, 0x00, 0x02, 0x00, 0x00, 0x07, 0x00,  // load 8 bytes through r6
    0x92, 0x03, 0x03, 0x00, 0x10, 0x00, 0x00, 0x00,  // pointer setup 3: ptr += imm
    0x92, 0x05, 0x01, 0x2c, 0x10, 0x00, 0x00, 0x00,  // arena: an 8-byte load at 16, offset 8
    0x92, 0x05, 0x02, 0x11, 0x20, 0x00, 0x00, 0x00,  // arena: a 1-byte store of a register at 32
    0x92, 0x05, 0x03, 0xc6, 0x40, 0x00, 0x02, 0x01,  // arena: an 8-byte or, upper half set, offset 32767
  };
}

TEST(FuzzGeneratorGolden, Version5PerCpuVariable) {
  const std::vector<uint8_t> input = Version5PerCpu(5);
  const auto source = DecodeFuzzInput(input);
  const std::string golden =
      "program 0:\n"
      "b7 03 00 00 28 0c 00 00\n"  // mov %r3, 3112
      "bf 33 ff ff 00 00 00 00\n"  // addr_percpu %r3, %r3
      "b7 02 00 00 f8 0f 00 00\n"  // mov %r2, 4088
      "bf 26 ff ff 00 00 00 00\n"  // addr_percpu %r6, %r2
      "7b 63 d8 ff 00 00 00 00\n"  // stxdw [%r3-40], %r6
      "79 67 08 fc 00 00 00 00\n"  // ldxdw %r7, [%r6-1016]
      "07 03 00 00 e8 ff ff ff\n"  // add %r3, -24
      "b7 01 00 00 08 00 00 00\n"  // mov %r1, 8
      "b9 10 08 00 00 00 00 00\n"  // probe32 ldxdw %r0, [%r1+8]
      "b7 02 00 00 20 00 00 00\n"  // mov %r2, 32
      "b3 02 00 00 00 00 00 00\n"  // probe32 stxb [%r2], %r0
      "b4 03 00 00 41 80 ff ff\n"  // mov32 %r3, -32703
      "fb 23 ff 7f 40 00 00 00\n"  // probe32 lock or [%r3+32767], %r2
      "7b 1a 00 fe 00 00 00 00\n"  // stxdw [%r10-512], %r1
      "7b 2a 08 fe 00 00 00 00\n"  // stxdw [%r10-504], %r2
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "7b 6a 28 fe 00 00 00 00\n"  // stxdw [%r10-472], %r6
      "7b 7a 30 fe 00 00 00 00\n"  // stxdw [%r10-464], %r7
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 8 bytes 321728a6ebd06865\n"
      "inline kptr_xchg: false\n";
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
  // The records version 4 wrote keep their case once upgraded.
  std::vector<uint8_t> old = Version5PerCpu(4);
  const std::string before = Generated(DecodeFuzzInput(old));
  UpgradeFuzzInput(old);
  EXPECT_EQ(old[0], kFormatVersion);
  EXPECT_EQ(Generated(DecodeFuzzInput(old)), before);
}

// Version 6: the far-branch block, for an input whose hash chooses it
// (fuzz/corpus/diff_fuzzer/far-branch-imm19-below): its first eight
// instructions, its filler (29,126 cmpxchgs, byte 14 choice 2), then the
// main entry the records make (here, an empty function: its exit).
TEST(FuzzGeneratorGolden, Version6FarBranch) {
  const std::vector<uint8_t> input = {
      // version, structured, nothing else, seed 0x5eed0000f00d00f6, byte 14 choice 2, byte 15 bit 7
      0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf6, 0x00, 0x0d, 0xf0, 0x00, 0x00, 0xed, 0x5e, 0x04, 0x80,
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
  };
  const auto source = DecodeFuzzInput(input);
  ASSERT_TRUE(source);
  const std::vector<isa::Insn>& program = source->programs.front();
  std::string head;
  for (size_t i = 0; i < 8 && i < program.size(); ++i) {
    uint8_t bytes[isa::kInsnSize];
    program[i].ToBytes(bytes);
    head += FormatHexBytes(bytes) + "\n";
  }
  const std::string golden =
      "bf 16 00 00 00 00 00 00\n"  // mov %r6, %r1
      "85 00 00 00 07 00 00 00\n"  // call 7 (bpf_get_prandom_u32)
      "bf 61 00 00 00 00 00 00\n"  // mov %r1, %r6
      "55 00 c9 71 f6 00 0d f0\n"  // jne %r0, 0xf00d00f6, +29129
      "7a 0a f8 ff 00 00 00 00\n"  // stdw [%r10-8], 0
      "b7 00 00 00 00 00 00 00\n"  // mov %r0, 0
      "b7 02 00 00 00 00 00 00\n"  // mov %r2, 0
      "db 2a f8 ff f1 00 00 00\n";  // lock cmpxchg [%r10-8], %r2
  EXPECT_EQ(head, golden) << kChangedFormat;
  ASSERT_EQ(program.size(), 7u + 29126u + 1u) << kChangedFormat;
  EXPECT_EQ(program[7 + 29125], program[7]);
  EXPECT_EQ(program.back().opcode, isa::kOpExit);
  // Without the hash's choice (another seed), the mode is only asked for.
  std::vector<uint8_t> other = input;
  other[6] ^= 1;
  EXPECT_EQ(DecodeFuzzInput(other)->programs.front().size(), 1u);
}

// Version 7: subprogram 1 may be a callback (byte 14 bit 4), and the main
// entry's local-call record with p6 bit 0 calls it through bpf_loop, twice
// (p6 bits 1..3). The callback reads no r0 and returns r0 & 1; the main
// entry still calls it directly at its end, since no later function does.
std::vector<uint8_t> Version7Callback(uint8_t version) {
  return {
      // version, structured, 1 subprogram, no maps, no tail-call targets,
      // no memory, seed, byte 14: subprogram 1 may be a callback
      version, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x10, 0x00,
      0x05, 0x02, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00,  // subprogram 1: alu, mul with a register source
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
      0xe0, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05,  // main: a local call of 1, through bpf_loop, 2 times
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
  };
}

TEST(FuzzGeneratorGolden, Version7CallbackThroughBpfLoop) {
  const auto source = DecodeFuzzInput(Version7Callback(7));
  const std::string golden =
      "program 0:\n"
      "bf 13 00 00 00 00 00 00\n"  // mov %r3, %r1 (the callback's context)
      "b7 01 00 00 02 00 00 00\n"  // mov %r1, 2
      "b7 04 00 00 00 00 00 00\n"  // mov %r4, 0
      "18 42 00 00 04 00 00 00\n"  // lddw_func %r2, +4
      "00 00 00 00 00 00 00 00\n"
      "85 00 00 00 b5 00 00 00\n"  // call 181 (bpf_loop)
      "85 10 00 00 01 00 00 00\n"  // call local +1
      "95 00 00 00 00 00 00 00\n"  // exit
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "2f 33 00 00 00 00 00 00\n"  // mul %r3, %r3
      "b7 00 00 00 00 00 00 00\n"  // mov %r0, 0 (no r0 came in)
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "57 00 00 00 01 00 00 00\n"  // and %r0, 1
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 0 bytes\n"
      "inline kptr_xchg: false\n";
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
  // The same bytes as version 6 are no callback; upgraded, they keep that case.
  ExpectUpgradeKeepsCase(Version7Callback(6), "18 42");
}

// Version 8: an early-exit record with p0 bit 1 throws: subprogram 1
// throws an immediate (p0 bit 2, p1 names it) after it stored what it
// observes; the main entry calls it at its end, and so throws too.
std::vector<uint8_t> Version8Throw(uint8_t version) {
  return {
      // version, structured, 1 subprogram, no maps, no tail-call targets,
      // no memory, seed, no options
      version, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x00,
      0x05, 0x02, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00,  // subprogram 1: alu, mul with a register source
      0xef, 0x06, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,  // early exit that throws an immediate
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // main: end of function
  };
}

TEST(FuzzGeneratorGolden, Version8ThrowFromASubprogram) {
  const auto source = DecodeFuzzInput(Version8Throw(8));
  const std::string golden =
      "program 0:\n"
      "85 10 00 00 01 00 00 00\n"  // call local +1 (no one else calls 1)
      "95 00 00 00 00 00 00 00\n"  // exit
      "b7 03 00 00 01 00 00 00\n"  // mov %r3, 1
      "2f 33 00 00 00 00 00 00\n"  // mul %r3, %r3
      "b7 01 00 00 02 00 00 00\n"  // mov %r1, 2 (the cookie)
      "7b 1a 00 fe 00 00 00 00\n"  // stxdw [%r10-512], %r1 (observed)
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "85 20 00 00 01 00 00 00\n"  // call kfunc 1 (bpf_throw)
      "7b 1a 00 fe 00 00 00 00\n"  // the function's end, never reached
      "7b 3a 10 fe 00 00 00 00\n"
      "95 00 00 00 00 00 00 00\n"
      "memory: 0 bytes\n"
      "inline kptr_xchg: false\n";
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
  // The same bytes as version 7 are an early exit; upgraded, they keep that case.
  ExpectUpgradeKeepsCase(Version8Throw(7), "85 20");
}

// Version 8, header byte 2 bit 7: the last subprogram is the program's
// exception callback, which no one calls (the main entry does not call it
// at its end) and whose r0 is undefined at its entry; subprogram 1 throws
// a scalar of its own (p2).
std::vector<uint8_t> Version8OwnCallback(uint8_t version) {
  return {
      // version, structured, 2 subprograms and the exception callback bit,
      // no maps, no tail-call targets, no memory, seed, no options
      version, 0x00, 0x82, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x00,
      0x05, 0x02, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00,  // subprogram 2 (the callback): alu, mul
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
      0x05, 0x03, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00,  // subprogram 1: alu
      0xef, 0x02, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00,  // early exit that throws a scalar (p2)
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // end of function
      0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // main: end of function
  };
}

TEST(FuzzGeneratorGolden, Version8OwnExceptionCallback) {
  const auto source = DecodeFuzzInput(Version8OwnCallback(8));
  const std::string golden =
      "program 0:\n"
      "85 10 00 00 01 00 00 00\n"  // call local +1 (subprogram 1; not the callback)
      "95 00 00 00 00 00 00 00\n"  // exit
      "b7 03 00 00 01 00 00 00\n"  // subprogram 1: mov %r3, 1
      "3f 33 00 00 00 00 00 00\n"  // div %r3, %r3
      "bf 31 00 00 00 00 00 00\n"  // mov %r1, %r3 (the cookie)
      "7b 1a 00 fe 00 00 00 00\n"  // stxdw [%r10-512], %r1 (observed)
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "85 20 00 00 01 00 00 00\n"  // call kfunc 1 (bpf_throw)
      "7b 1a 00 fe 00 00 00 00\n"  // the function's end, never reached
      "7b 3a 10 fe 00 00 00 00\n"
      "95 00 00 00 00 00 00 00\n"
      "b7 03 00 00 01 00 00 00\n"  // the exception callback: mov %r3, 1
      "2f 13 00 00 00 00 00 00\n"  // mul %r3, %r1 (the cookie)
      "b7 00 00 00 00 00 00 00\n"  // mov %r0, 0 (no r0 came in)
      "7b 3a 10 fe 00 00 00 00\n"  // stxdw [%r10-496], %r3
      "95 00 00 00 00 00 00 00\n"  // exit
      "memory: 0 bytes\n"
      "inline kptr_xchg: false\n"
      "program 0: exception callback at slot 11\n";
  EXPECT_EQ(Generated(source), golden) << ChangedFormat(source);
  // The same bytes as version 7 have no callback of their own; upgraded,
  // they keep that case.
  ExpectUpgradeKeepsCase(Version8OwnCallback(7), "exception callback");
}

}  // namespace
}  // namespace bpfdiff::fuzz
