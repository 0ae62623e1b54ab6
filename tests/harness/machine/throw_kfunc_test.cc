// bpf_throw as guest code (harness/machine/throw_kfunc.h): its traps are
// named, and its table refuses more functions than it holds. Its walk is
// checked end to end by the exception vectors (tests/conformance/
// exception-*.data) on every engine and executor.
#include "harness/machine/throw_kfunc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "jit/a64/aliases.h"
#include "oracle/environment.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

TEST(harness_throw_kfunc, EveryBrkOfTheCodeIsANamedTrapAndNothingElseIs) {
  const std::vector<uint32_t> code = ThrowKfuncCode();
  ASSERT_LE(code.size() * 4, guest::kThrowKfuncBytes);
  int traps = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    const uint64_t pc = guest::kThrowKfuncAddress + 4 * i;
    const bool brk = (code[i] & 0xffe0001f) == a64::Brk(0);
    EXPECT_EQ(ThrowKfuncTrap(pc).has_value(), brk) << "word " << i;
    traps += brk;
  }
  EXPECT_EQ(traps, 4) << "no boundary, no callback, too deep, the callback returned";
  EXPECT_FALSE(ThrowKfuncTrap(guest::kThrowKfuncAddress - 4));
  EXPECT_FALSE(ThrowKfuncTrap(guest::kThrowKfuncAddress + guest::kThrowKfuncBytes));
  EXPECT_FALSE(ThrowKfuncTrap(guest::kThrowKfuncAddress + 2));
  const uint64_t returned = guest::kThrowKfuncAddress + 4 * (code.size() - 4);
  ASSERT_TRUE(ThrowKfuncTrap(returned));
  EXPECT_NE(ThrowKfuncTrap(returned)->find("returned to bpf_throw"), std::string::npos) << *ThrowKfuncTrap(returned);
}

TEST(harness_throw_kfunc, TheTableHoldsWhatFitsAndRefusesMore) {
  auto env = GuestEnvironment::Create();
  ASSERT_TRUE(env.ok()) << env.message();
  GuestMemory& memory = (*env)->memory();
  std::vector<ThrowTableEntry> entries(guest::kThrowTableMaxEntries, ThrowTableEntry{0x10000000, 0x10000100, 0});
  entries.front().callback = 0x10000200;
  ASSERT_TRUE(WriteThrowTable(memory, entries).ok());
  const auto word = [&](uint64_t at) {
    uint64_t value = 0;
    std::memcpy(&value, memory.HostPointer(at, 8), 8);
    return value;
  };
  EXPECT_EQ(word(guest::kThrowTableAddress), guest::kThrowTableMaxEntries);
  EXPECT_EQ(word(guest::kThrowTableAddress + 8 + 16), 0x10000200u);
  entries.push_back({});
  const Status refused = WriteThrowTable(memory, entries);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("more than bpf_throw's table holds"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace bpfdiff
