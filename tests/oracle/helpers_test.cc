// Helpers (oracle/helpers.cc), called directly over an installed
// environment and through programs: array and hash map semantics with the
// kernel's errno values, probe_read, get_prandom_u32, kptr_xchg, and the
// trace every engine records.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

constexpr uint64_t kEnoent = static_cast<uint64_t>(-2);
constexpr uint64_t kE2big = static_cast<uint64_t>(-7);
constexpr uint64_t kEfault = static_cast<uint64_t>(-14);
constexpr uint64_t kEexist = static_cast<uint64_t>(-17);
constexpr uint64_t kEinval = static_cast<uint64_t>(-22);

constexpr uint64_t kAny = 0, kNoExist = 1, kExist = 2;

// Scratch memory for keys and values: the top of CPU 1's stack.
constexpr uint64_t kScratch = guest::StackTop(1) - 256;

// An environment with the given maps installed (and a trivial program).
class HelperTest : public ::testing::Test {
 protected:
  void Install(std::vector<isa::MapSpec> maps) {
    CaseSource source;
    source.programs = {{Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov), kExit}};
    source.maps = std::move(maps);
    auto prepared = Prepare(source);
    ASSERT_TRUE(prepared.has_value());
    prepared_ = std::move(*prepared);
  }
  GuestMemory& memory() { return prepared_->env->memory(); }
  HelperResult Call(int64_t id, HelperArgs args) {
    HelperContext context{memory(), prepared_->env->helper_state(0)};
    return CallHelper(id, context, args);
  }
  uint64_t Returned(int64_t id, HelperArgs args) {
    HelperResult result = Call(id, args);
    EXPECT_EQ(result.kind, HelperResult::Kind::kReturn) << result.error;
    return result.value;
  }
  // Puts `value` (its low `size` bytes) at `address`; returns the address.
  uint64_t Put(uint64_t address, uint64_t value, size_t size = 8) {
    uint8_t* p = memory().HostPointer(address, size);
    EXPECT_NE(p, nullptr);
    if (p != nullptr) std::memcpy(p, &value, size);
    return address;
  }
  uint64_t Get(uint64_t address, size_t size = 8) {
    uint64_t value = 0;
    const uint8_t* p = memory().HostPointer(address, size);
    EXPECT_NE(p, nullptr);
    if (p != nullptr) std::memcpy(&value, p, size);
    return value;
  }

  std::optional<Prepared> prepared_;
};

using oracle_helpers = HelperTest;

constexpr uint64_t kMap0 = 0x3000000;  // the first map's GuestMap object
constexpr uint64_t kMap1 = 0x3000400;
constexpr uint64_t kValues0 = 0x2000000;

// --- Array maps ---

TEST_F(oracle_helpers, ArrayLookupGivesTheElementAddress) {
  // Array elements are value_size rounded up to 8 apart (as the kernel's
  // elem_size = round_up(value_size, 8)).
  Install({ArrayMap(3, 4, 4)});
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, Put(kScratch, 0, 4)}), kValues0);
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, Put(kScratch, 3, 4)}), kValues0 + 24);
  // Out of range: NULL.
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, Put(kScratch, 4, 4)}), 0u);
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, Put(kScratch, 0xffffffff, 4)}), 0u);
}

TEST_F(oracle_helpers, ArrayUpdateAndItsErrors) {
  Install({ArrayMap(3, 8, 2)});
  const uint64_t key = Put(kScratch, 1, 4);
  const uint64_t value = Put(kScratch + 8, 0x1122334455667788);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kAny}), 0u);
  EXPECT_EQ(Get(kValues0 + 8), 0x1122334455667788u);
  Put(value, 0x99);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kExist}), 0u);
  EXPECT_EQ(Get(kValues0 + 8), 0x99u);
  // Every element of an array exists: BPF_NOEXIST is -EEXIST.
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kNoExist}), kEexist);
  // Unknown flags: -EINVAL, checked before the index.
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, 3}), kEinval);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 2, 4), value, 3}), kEinval);
  // Index out of range: -E2BIG, checked before BPF_NOEXIST.
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 2, 4), value, kAny}), kE2big);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 2, 4), value, kNoExist}), kE2big);
  EXPECT_EQ(Get(kValues0), 0u);  // element 0 never written
}

TEST_F(oracle_helpers, ArrayDeleteIsInvalid) {
  Install({ArrayMap(3, 8, 2)});
  EXPECT_EQ(Returned(kHelperMapDeleteElem, {kMap0, Put(kScratch, 0, 4)}), kEinval);
}

// --- Hash maps ---

TEST_F(oracle_helpers, HashUpdateLookupDelete) {
  // Slots: u64 in_use; key rounded up to 8; value rounded up to 8.
  Install({HashMap(4, 4, 8, 2)});
  const uint64_t key = Put(kScratch, 0xabcd, 4);
  const uint64_t value = Put(kScratch + 8, 0x5555);
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, key}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kAny}), 0u);
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, key}), kValues0 + 8 + 8);
  EXPECT_EQ(Get(kValues0 + 16), 0x5555u);
  EXPECT_EQ(Returned(kHelperMapDeleteElem, {kMap0, key}), 0u);
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, key}), 0u);
  EXPECT_EQ(Returned(kHelperMapDeleteElem, {kMap0, key}), kEnoent);
}

TEST_F(oracle_helpers, HashUpdateFlags) {
  Install({HashMap(4, 4, 8, 4)});
  const uint64_t key = Put(kScratch, 7, 4);
  const uint64_t value = Put(kScratch + 8, 1);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kExist}), kEnoent);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kNoExist}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kNoExist}), kEexist);
  Put(value, 2);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, kExist}), 0u);
  const uint64_t element = Returned(kHelperMapLookupElem, {kMap0, key});
  ASSERT_NE(element, 0u);
  EXPECT_EQ(Get(element), 2u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, key, value, 4}), kEinval);
}

TEST_F(oracle_helpers, HashMapFullIsE2big) {
  Install({HashMap(4, 4, 8, 2)});
  const uint64_t value = Put(kScratch + 8, 1);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 1, 4), value, kAny}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 2, 4), value, kAny}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 3, 4), value, kAny}), kE2big);
  // An existing key can still be updated; BPF_EXIST on a missing one is -ENOENT first.
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 2, 4), value, kAny}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 3, 4), value, kExist}), kEnoent);
  // Deleting frees a slot for a new key.
  EXPECT_EQ(Returned(kHelperMapDeleteElem, {kMap0, Put(kScratch, 1, 4)}), 0u);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, Put(kScratch, 3, 4), value, kAny}), 0u);
}

TEST_F(oracle_helpers, HashKeysCompareAllTheirBytes) {
  Install({HashMap(4, 12, 8, 4)});
  uint8_t* key = memory().HostPointer(kScratch, 12);
  std::memset(key, 0x11, 12);
  const uint64_t value = Put(kScratch + 16, 9);
  EXPECT_EQ(Returned(kHelperMapUpdateElem, {kMap0, kScratch, value, kAny}), 0u);
  key[11] = 0x12;  // differs in the last byte only
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, kScratch}), 0u);
  key[11] = 0x11;
  // 8 (in_use) + 16 (12-byte key rounded up) into slot 0.
  EXPECT_EQ(Returned(kHelperMapLookupElem, {kMap0, kScratch}), kValues0 + 24);
}

TEST_F(oracle_helpers, MapHelpersRefuseWhatIsNotAMapWithValues) {
  Install({ArrayMap(3, 8, 2), ProgArray(5, 2, {0})});
  const uint64_t key = Put(kScratch, 0, 4);
  EXPECT_EQ(Call(kHelperMapLookupElem, {0, key}).kind, HelperResult::Kind::kError);
  EXPECT_EQ(Call(kHelperMapLookupElem, {kMap0 + 8, key}).kind, HelperResult::Kind::kError);
  EXPECT_EQ(Call(kHelperMapLookupElem, {kMap1, key}).kind, HelperResult::Kind::kError);  // prog_array
  EXPECT_EQ(Call(kHelperMapLookupElem, {kMap1 + 0x400, key}).kind, HelperResult::Kind::kError);  // unused
  // A key the helper cannot read.
  const HelperResult unreadable = Call(kHelperMapLookupElem, {kMap0, 0});
  EXPECT_EQ(unreadable.kind, HelperResult::Kind::kError);
  EXPECT_EQ(unreadable.error, "map_lookup_elem: key 0x0 is not readable");
  EXPECT_EQ(Call(kHelperMapUpdateElem, {kMap0, key, 0, 0}).kind, HelperResult::Kind::kError);
}

// --- probe_read ---

TEST_F(oracle_helpers, ProbeReadCopies) {
  Install({});
  Put(kScratch, 0x1122334455667788);
  EXPECT_EQ(Returned(kHelperProbeRead, {kScratch + 64, 6, kScratch}), 0u);
  EXPECT_EQ(Get(kScratch + 64), 0x0000334455667788u);
  EXPECT_EQ(Returned(kHelperProbeRead, {kScratch + 64, 0, 0}), 0u);  // nothing to copy
}

TEST_F(oracle_helpers, ProbeReadOfUnreadableMemoryZeroFillsAndReturnsEfault) {
  Install({});
  Put(kScratch + 64, 0xffffffffffffffff);
  EXPECT_EQ(Returned(kHelperProbeRead, {kScratch + 64, 4, 0}), kEfault);
  EXPECT_EQ(Get(kScratch + 64), 0xffffffff00000000u);  // 4 bytes zeroed, not 8
  // A source straddling the end of a region is unreadable as a whole.
  Put(kScratch + 64, 0xffffffffffffffff);
  EXPECT_EQ(Returned(kHelperProbeRead, {kScratch + 64, 8, guest::kContextBase + guest::kContextSize - 4}),
            kEfault);
  EXPECT_EQ(Get(kScratch + 64), 0u);
}

TEST_F(oracle_helpers, ProbeReadRefusesBadDestinationsAndSizes) {
  Install({});
  EXPECT_EQ(Call(kHelperProbeRead, {0x3000000, 8, kScratch}).kind, HelperResult::Kind::kError);
  EXPECT_EQ(Call(kHelperProbeRead, {kScratch, 4097, kScratch}).kind, HelperResult::Kind::kError);
}

// --- get_prandom_u32, CPU id, pid/tgid ---

TEST_F(oracle_helpers, PrandomIsXorshift64FromAFixedSeed) {
  // x = 0x2545f4914f6cdd1d; x ^= x << 13; x ^= x >> 7; x ^= x << 17; low 32
  // bits. Worked out by hand (64-bit arithmetic):
  //   x1 = 0x7f6c280beaa8e3e7, x2 = 0xe47119871cf9abe0, x3 = 0x35174a4158b8a0b7
  Install({});
  EXPECT_EQ(Returned(kHelperGetPrandomU32, {}), 0xeaa8e3e7u);
  EXPECT_EQ(Returned(kHelperGetPrandomU32, {}), 0x1cf9abe0u);
  EXPECT_EQ(Returned(kHelperGetPrandomU32, {}), 0x58b8a0b7u);
  EXPECT_EQ(prepared_->env->helper_state(0).prandom, 0x35174a4158b8a0b7u);
}

TEST(oracle_helpers_run, PrandomSequenceRestartsOnEveryRun) {
  CaseSource source;
  source.programs = {Asm(
      "call 7\nmov %r6, %r0\n"
      "call 7\nmov %r7, %r0\n"
      "call 7\n"
      "xor %r0, %r6\nxor %r0, %r7\n"
      "exit")};
  auto prepared = Prepare(source);
  ASSERT_TRUE(prepared.has_value());
  const uint64_t expected = 0xeaa8e3e7u ^ 0x1cf9abe0u ^ 0x58b8a0b7u;
  EXPECT_TRUE(ExitsWith(prepared->Run(), expected));
  prepared->env->Reset();
  const Outcome again = prepared->Run();
  EXPECT_TRUE(ExitsWith(again, expected));
  ASSERT_EQ(again.helper_calls.size(), 3u);
  EXPECT_EQ(again.helper_calls[0].ret, 0xeaa8e3e7u);
  EXPECT_EQ(again.helper_calls[1].ret, 0x1cf9abe0u);
  EXPECT_EQ(again.helper_calls[2].ret, 0x58b8a0b7u);
}

TEST(oracle_helpers_run, SmpProcessorIdIsTheRunsCpu) {
  CaseSource source;
  source.programs = {Asm("call 8\nexit")};
  auto prepared = Prepare(source);
  ASSERT_TRUE(prepared.has_value());
  EXPECT_TRUE(ExitsWith(prepared->Run(100, 0), 0));
  EXPECT_TRUE(ExitsWith(prepared->Run(100, 2), 2));
}

TEST_F(oracle_helpers, CurrentPidTgid) {
  Install({});
  EXPECT_EQ(Returned(kHelperGetCurrentPidTgid, {}), 0x0000123400005678u);
}

// --- kptr_xchg ---

TEST_F(oracle_helpers, KptrXchgReturnsTheOldPointerAndStoresTheNew) {
  Install({});
  Put(kScratch, 0x1111);
  EXPECT_EQ(Returned(kHelperKptrXchg, {kScratch, 0x2222}), 0x1111u);
  EXPECT_EQ(Get(kScratch), 0x2222u);
  EXPECT_EQ(Call(kHelperKptrXchg, {0x3000000, 1}).kind, HelperResult::Kind::kError);
}

// --- Lookup, errors, trace ---

TEST_F(oracle_helpers, UnknownHelperIdIsAnError) {
  Install({});
  EXPECT_EQ(FindHelper(6), nullptr);
  EXPECT_EQ(FindHelper(kHelperTailCall), nullptr);  // rewritten at load, never called
  ASSERT_NE(FindHelper(kHelperKptrXchg), nullptr);
  EXPECT_EQ(FindHelper(kHelperKptrXchg)->num_args, 2);
  const HelperResult result = Call(99, {});
  EXPECT_EQ(result.kind, HelperResult::Kind::kError);
  EXPECT_EQ(result.error, "call to unknown helper 99");
}

TEST_F(oracle_helpers, InvokeHelperRecordsEveryCall) {
  Install({});
  std::vector<HelperCall> trace;
  HelperContext context{memory(), prepared_->env->helper_state(0)};
  InvokeHelper(kHelperUnwind, context, {3, 4, 5, 6, 7}, trace);
  InvokeHelper(kHelperUnwind, context, {0, 1, 2, 3, 4}, trace);   // stops: result 0
  InvokeHelper(kHelperProbeRead, context, {0, 8, 0, 0, 0}, trace);  // refused: result 0
  ASSERT_EQ(trace.size(), 3u);
  // Only the arguments a helper takes are recorded (unwind 1, probe_read 3).
  EXPECT_EQ(trace[0], (HelperCall{5, {3, 0, 0, 0, 0}, 3}));
  EXPECT_EQ(trace[1], (HelperCall{5, {0, 0, 0, 0, 0}, 0}));
  EXPECT_EQ(trace[2], (HelperCall{4, {0, 8, 0, 0, 0}, 0}));
}

// --- Through programs ---

TEST(oracle_helpers_run, HashMapThroughAProgram) {
  Case c;
  c.maps = {HashMap(4, 4, 8, 2)};
  c.programs = {
      "stw [%r10-4], 77\n"      // key
      "stdw [%r10-16], 1234\n"  // value
      "lddw %r1, map:4\n"
      "mov %r2, %r10\nadd %r2, -4\n"
      "mov %r3, %r10\nadd %r3, -16\n"
      "mov %r4, 0\n"
      "call 2\n"
      "lddw %r1, map:4\n"
      "mov %r2, %r10\nadd %r2, -4\n"
      "call 1\n"
      "ldxdw %r0, [%r0]\n"
      "exit"};
  const Outcome outcome = RunCase(c);
  ASSERT_TRUE(ExitsWith(outcome, 1234));
  ASSERT_EQ(outcome.helper_calls.size(), 2u);
  EXPECT_EQ(outcome.helper_calls[0].ret, 0u);
  EXPECT_EQ(outcome.helper_calls[1].ret, kValues0 + 16);
  // The map's values area: slot 0 = in_use 1, key 77, value 1234.
  EXPECT_EQ(Read64(outcome.memory.map_values, 0), 1u);
  EXPECT_EQ(Read64(outcome.memory.map_values, 8), 77u);
  EXPECT_EQ(Read64(outcome.memory.map_values, 16), 1234u);
}

TEST(oracle_helpers_run, MapHelperRefusalEndsTheRunWithAHelperError) {
  const Outcome outcome = RunAsm("mov %r1, 0\nmov %r2, 0\ncall 1\nexit");
  EXPECT_EQ(outcome.end, EndKind::kHelperError) << outcome.Describe();
  EXPECT_EQ(outcome.message, "map_lookup_elem: 0x0 is not a map with values");
  ASSERT_EQ(outcome.helper_calls.size(), 1u);
  EXPECT_EQ(outcome.helper_calls[0].ret, 0u);
}

TEST(oracle_helpers_run, ProbeReadThroughAProgram) {
  const Outcome outcome = RunAsm(
      "stdw [%r10-8], -1\n"
      "mov %r3, %r1\n"         // source: the input
      "mov %r1, %r10\nadd %r1, -8\n"
      "mov %r2, 4\n"
      "call 4\n"
      "ldxdw %r0, [%r10-8]\n"
      "exit",
      {0x01, 0x02, 0x03, 0x04, 0x05});
  EXPECT_TRUE(ExitsWith(outcome, 0xffffffff04030201));
  const Outcome fault = RunAsm(
      "stdw [%r10-8], -1\n"
      "mov %r1, %r10\nadd %r1, -8\n"
      "mov %r2, 8\n"
      "mov %r3, 16\n"          // NULL + 16
      "call 4\n"
      "ldxdw %r6, [%r10-8]\n"
      "add %r0, %r6\n"         // -14 + 0
      "exit");
  EXPECT_TRUE(ExitsWith(fault, kEfault));
}

}  // namespace
}  // namespace bpfdiff::testing
