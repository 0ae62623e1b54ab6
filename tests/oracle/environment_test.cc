// GuestMemory (regions, permissions, the first inaccessible byte) and
// GuestEnvironment (the regions of guest_layout.h, installing a case,
// Reset, Capture).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "oracle/environment.h"
#include "oracle/guest_layout.h"
#include "oracle/guest_memory.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

// --- GuestMemory ---

TEST(oracle_guest_memory, MapRejectsUnalignedRegions) {
  GuestMemory memory;
  auto a = memory.Map("a", 0x1000 + 8, 0x1000, kPermRead);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.message(), "region a at 0x1008 (+0x1000) is not page aligned");
  auto b = memory.Map("b", 0x1000, 0x800, kPermRead);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.message(), "region b at 0x1000 (+0x800) is not page aligned");
  EXPECT_FALSE(memory.Map("empty", 0x1000, 0, kPermRead).ok());
  EXPECT_TRUE(memory.regions().empty());
}

TEST(oracle_guest_memory, MapRejectsOverlaps) {
  GuestMemory memory;
  ASSERT_TRUE(memory.Map("a", 0x10000, 0x2000, kPermRead).ok());
  auto inside = memory.Map("b", 0x11000, 0x1000, kPermRead);
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.message(), "region b at 0x11000 overlaps region a");
  EXPECT_FALSE(memory.Map("c", 0xf000, 0x2000, kPermRead).ok());   // over the start
  EXPECT_FALSE(memory.Map("d", 0x8000, 0x10000, kPermRead).ok());  // around it
  // Adjacent on either side is fine.
  EXPECT_TRUE(memory.Map("before", 0xf000, 0x1000, kPermRead).ok());
  EXPECT_TRUE(memory.Map("after", 0x12000, 0x1000, kPermRead).ok());
  EXPECT_EQ(memory.regions().size(), 3u);
}

TEST(oracle_guest_memory, TranslateChecksRegionAndPermission) {
  GuestMemory memory;
  ASSERT_TRUE(memory.Map("rw", 0x10000, 0x1000, kPermRead | kPermWrite).ok());
  ASSERT_TRUE(memory.Map("r", 0x20000, 0x1000, kPermRead).ok());
  ASSERT_TRUE(memory.Map("rx", 0x30000, 0x1000, kPermRead | kPermExec).ok());
  EXPECT_NE(memory.Translate(0x10000, 8, AccessKind::kRead), nullptr);
  EXPECT_NE(memory.Translate(0x10ff8, 8, AccessKind::kWrite), nullptr);
  EXPECT_EQ(memory.Translate(0x10ff9, 8, AccessKind::kRead), nullptr);  // crosses the end
  EXPECT_EQ(memory.Translate(0x20000, 4, AccessKind::kWrite), nullptr);
  EXPECT_NE(memory.Translate(0x20000, 4, AccessKind::kRead), nullptr);
  EXPECT_EQ(memory.Translate(0x20000, 4, AccessKind::kExec), nullptr);
  EXPECT_NE(memory.Translate(0x30000, 4, AccessKind::kExec), nullptr);
  EXPECT_EQ(memory.Translate(0x0, 1, AccessKind::kRead), nullptr);
  EXPECT_EQ(memory.Translate(0xfffffffffffffff8, 16, AccessKind::kRead), nullptr);  // wraps
  // kMisaligned is never a permission.
  EXPECT_EQ(memory.Translate(0x10000, 8, AccessKind::kMisaligned), nullptr);
  // The host pointer is the region's buffer at the offset.
  uint8_t* p = memory.Translate(0x10010, 1, AccessKind::kWrite);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p, memory.FindByName("rw")->host + 0x10);
  // Translate after a miss on the cached region still finds the others.
  EXPECT_NE(memory.Translate(0x20010, 1, AccessKind::kRead), nullptr);
  EXPECT_NE(memory.Translate(0x10010, 1, AccessKind::kRead), nullptr);
}

TEST(oracle_guest_memory, FirstInaccessibleIsWhereACpuFaults) {
  GuestMemory memory;
  ASSERT_TRUE(memory.Map("rw", 0x10000, 0x1000, kPermRead | kPermWrite).ok());
  ASSERT_TRUE(memory.Map("r", 0x11000, 0x1000, kPermRead).ok());
  EXPECT_EQ(memory.FirstInaccessible(0x10ffc, 8, AccessKind::kWrite), 0x11000u);
  EXPECT_EQ(memory.FirstInaccessible(0x11ffc, 8, AccessKind::kRead), 0x12000u);
  EXPECT_EQ(memory.FirstInaccessible(0x5000, 8, AccessKind::kRead), 0x5000u);    // all of it
  EXPECT_EQ(memory.FirstInaccessible(0x10000, 8, AccessKind::kRead), 0x10000u);  // none of it
  EXPECT_TRUE(memory.Accessible(0x10000, 0x1000, AccessKind::kWrite));
  EXPECT_FALSE(memory.Accessible(0x10000, 0x1001, AccessKind::kWrite));
}

TEST(oracle_guest_memory, HostAccessIgnoresPermissions) {
  GuestMemory memory;
  ASSERT_TRUE(memory.Map("r", 0x20000, 0x1000, kPermRead).ok());
  EXPECT_TRUE(memory.Store<uint32_t>(0x20004, 0xdeadbeef));
  EXPECT_FALSE(memory.Store<uint32_t>(0x20ffe, 1));  // crosses the end
  EXPECT_EQ(memory.HostPointer(0x30000, 1), nullptr);
  const uint8_t* p = memory.Translate(0x20004, 4, AccessKind::kRead);
  ASSERT_NE(p, nullptr);
  uint32_t v;
  std::memcpy(&v, p, 4);
  EXPECT_EQ(v, 0xdeadbeefu);
  EXPECT_EQ(memory.Find(0x20fff)->name, "r");
  EXPECT_EQ(memory.Find(0x20fff, 2), nullptr);
  EXPECT_EQ(memory.FindByName("nope"), nullptr);
}

// --- GuestEnvironment ---

std::unique_ptr<GuestEnvironment> NewEnvironment() {
  auto env = GuestEnvironment::Create();
  EXPECT_TRUE(env.ok()) << (env.ok() ? "" : env.message());
  return env.ok() ? std::move(env).value() : nullptr;
}

LoadedCase Loaded(std::vector<uint8_t> memory, std::vector<isa::MapSpec> maps = {},
                  size_t programs = 1) {
  CaseSource source;
  source.programs.assign(programs, {Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov), kExit});
  source.memory = std::move(memory);
  source.maps = std::move(maps);
  auto loaded = LoadCase(source);
  EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.message());
  return loaded.ok() ? std::move(loaded).value() : LoadedCase{};
}

TEST(oracle_environment, MapsTheRegionsOfTheLayout) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  GuestMemory& m = env->memory();
  struct Expect {
    uint64_t address;
    AccessKind kind;
    bool allowed;
  };
  const Expect expects[] = {
      {0x0, AccessKind::kRead, false},
      {0x100000, AccessKind::kExec, true},   {0x100000, AccessKind::kWrite, false},
      {0x110000, AccessKind::kExec, true},
      {0x1000000, AccessKind::kWrite, true}, {0x100ffff, AccessKind::kWrite, true},
      {0x1010000, AccessKind::kRead, false},
      {0x2000000, AccessKind::kWrite, true}, {0x20fffff, AccessKind::kWrite, true},
      {0x3000000, AccessKind::kRead, true},  {0x3000000, AccessKind::kWrite, false},
      {0x3100000, AccessKind::kRead, true},  {0x3100000, AccessKind::kWrite, false},
      {0x4000000, AccessKind::kWrite, true}, {0x403ffff, AccessKind::kWrite, true},
      {0x4040000, AccessKind::kRead, false},
      {0x5000000, AccessKind::kWrite, true},
      {0x10000000, AccessKind::kExec, true}, {0x10000000, AccessKind::kWrite, false},
      {0x11ffffff, AccessKind::kRead, true},
      {0x20000000, AccessKind::kExec, true},
  };
  for (const Expect& e : expects) {
    EXPECT_EQ(m.Accessible(e.address, 1, e.kind), e.allowed)
        << std::hex << "0x" << e.address << " " << AccessKindName(e.kind);
  }
  // Helper stubs are `ret`; the stop page spins on itself.
  uint32_t word;
  std::memcpy(&word, m.HostPointer(guest::HelperAddress(7), 4), 4);
  EXPECT_EQ(word, 0xd65f03c0u);
  std::memcpy(&word, m.HostPointer(guest::kStopAddress, 4), 4);
  EXPECT_EQ(word, 0x14000000u);
}

TEST(oracle_environment, ContextEndsAtTheRegionEndEightByteAligned) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  env->Install(Loaded({1, 2, 3, 4, 5}));
  EXPECT_EQ(env->context_address(), 0x100fff8u);  // 0x01010000 - round_up(5, 8)
  EXPECT_EQ(env->context_length(), 5u);
  const uint8_t* p = env->memory().HostPointer(0x100fff8, 8);
  EXPECT_EQ(std::vector<uint8_t>(p, p + 8), (std::vector<uint8_t>{1, 2, 3, 4, 5, 0, 0, 0}));
  env->Install(Loaded(std::vector<uint8_t>(16, 7)));
  EXPECT_EQ(env->context_address(), 0x100fff0u);
  env->Install(Loaded({}));
  EXPECT_EQ(env->context_address(), 0x1010000u);
  EXPECT_EQ(env->context_length(), 0u);
}

TEST(oracle_environment, ACaseWithNoContextHasANullR1) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  LoadedCase loaded = Loaded({});
  loaded.options.null_context = true;  // test_bpf's FLAG_NO_DATA: bpf_prog_run(fp, NULL)
  env->Install(loaded);
  EXPECT_EQ(env->context_address(), 0u);
  EXPECT_EQ(env->context_length(), 0u);
}

TEST(oracle_environment, InstallWritesMapAndProgramObjects) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  env->Install(Loaded({}, {ArrayMap(3, 12, 5), ProgArray(5, 3, {1, -1, 0})}, 2));
  GuestMemory& m = env->memory();
  auto u32 = [&](uint64_t a) { uint32_t v = 0; std::memcpy(&v, m.HostPointer(a, 4), 4); return v; };
  auto u64 = [&](uint64_t a) { uint64_t v = 0; std::memcpy(&v, m.HostPointer(a, 8), 8); return v; };
  EXPECT_EQ(u32(0x3000000), 0u);  // array
  EXPECT_EQ(u32(0x3000004), 4u);
  EXPECT_EQ(u32(0x3000008), 12u);
  EXPECT_EQ(u32(0x300000c), 5u);
  EXPECT_EQ(u64(0x3000010), 0x2000000u);
  EXPECT_EQ(u32(0x3000400), 2u);  // prog_array
  EXPECT_EQ(u32(0x300040c), 3u);
  EXPECT_EQ(u64(0x3000440), 0x3100040u);  // slot 0 -> program 1's GuestProg
  EXPECT_EQ(u64(0x3000448), 0u);          // empty
  EXPECT_EQ(u64(0x3000450), 0x3100000u);  // slot 2 -> program 0
  EXPECT_EQ(u32(0x3100008), 0u);          // GuestProg.index
  EXPECT_EQ(u32(0x3100048), 1u);
  env->SetProgramEntry(1, 0x10000040);
  EXPECT_EQ(u64(0x3100040), 0x10000040u);
}

TEST(oracle_environment, ResetRestoresContextAndValuesAndZeroesStacks) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  env->Install(Loaded({1, 2, 3, 4}, {ArrayMap(3, 8, 2, Bytes64({0x11, 0x22}))}));
  GuestMemory& m = env->memory();
  EXPECT_EQ(Read64(std::vector<uint8_t>(m.HostPointer(0x2000000, 16), m.HostPointer(0x2000000, 16) + 16), 8),
            0x22u);
  m.Store<uint32_t>(0x100fff8, 0xffffffff);  // context
  m.Store<uint64_t>(0x2000008, 0x99);        // map value
  m.Store<uint64_t>(guest::StackTop(0) - 8, 0x77);
  m.Store<uint64_t>(guest::StackTop(3) - GuestEnvironment::kResetStackBytes, 0x66);
  env->helper_state(2).prandom = 5;
  env->Reset();
  uint64_t v;
  std::memcpy(&v, m.HostPointer(0x100fff8, 8), 8);
  EXPECT_EQ(v, 0x04030201u);
  std::memcpy(&v, m.HostPointer(0x2000008, 8), 8);
  EXPECT_EQ(v, 0x22u);
  std::memcpy(&v, m.HostPointer(guest::StackTop(0) - 8, 8), 8);
  EXPECT_EQ(v, 0u);
  std::memcpy(&v, m.HostPointer(guest::StackTop(3) - GuestEnvironment::kResetStackBytes, 8), 8);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(env->helper_state(2).prandom, 0x2545f4914f6cdd1du);
  EXPECT_EQ(env->helper_state(2).cpu, 2);
}

TEST(oracle_environment, CaptureTakesEightFramesOfTheCpusStack) {
  auto env = NewEnvironment();
  ASSERT_NE(env, nullptr);
  env->Install(Loaded({9, 8, 7}, {ArrayMap(3, 8, 1), HashMap(4, 4, 4, 1)}));
  GuestMemory& m = env->memory();
  // Mark the lowest and highest byte of every frame on CPU 1.
  for (int d = 0; d < 8; ++d) {
    const uint64_t fp = kGeometry.FramePointer(1, d);
    m.Store<uint8_t>(fp - 512, static_cast<uint8_t>(0x10 + d));
    m.Store<uint8_t>(fp - 1, static_cast<uint8_t>(0x20 + d));
  }
  const MemorySnapshot snapshot = env->Capture(1, kGeometry);
  ASSERT_EQ(snapshot.stack.size(), 8u * 512);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(snapshot.stack[StackIndex(d, -512)], 0x10 + d) << "frame " << d;
    EXPECT_EQ(snapshot.stack[StackIndex(d, -1)], 0x20 + d) << "frame " << d;
  }
  EXPECT_EQ(kGeometry.FramePointer(1, 0), 0x401ffb0u);
  EXPECT_EQ(snapshot.context, (std::vector<uint8_t>{9, 8, 7}));
  // Values: the array's 8 bytes, padding to 64, the hash's 8 + 8 + 8.
  EXPECT_EQ(snapshot.map_values.size(), 64u + 24u);
  // Another CPU's stack is not in it.
  EXPECT_EQ(env->Capture(0, kGeometry).stack, std::vector<uint8_t>(8 * 512, 0));
}

}  // namespace
}  // namespace bpfdiff::testing
