// The pack lifecycle World: grace periods, stale entries, accounting, and
// each planted bug caught by the invariant that names it (and the same
// scenario clean without the bug, so that every test can fail).
#include <algorithm>
#include <cstring>
#include <ostream>

#include <gtest/gtest.h>

#include "harness/lifecycle/world.h"
#include "isa/assembler.h"
#include "oracle/guest_layout.h"

namespace bpfdiff::lifecycle {
namespace {

using jit::kBreakFault;

std::vector<isa::Insn> Asm(std::string_view text) {
  auto insns = isa::Assemble(text);
  EXPECT_TRUE(insns) << insns.message();
  return insns ? *insns : std::vector<isa::Insn>{};
}

// Counts down from 100: long enough to stop inside it.
constexpr std::string_view kLoop = R"(
  mov %r0, 0
  mov %r2, 100
loop:
  add %r0, 3
  sub %r2, 1
  jne %r2, 0, loop
  exit
)";

// A PROBE_MEM load through the NULL page: it faults, the exception table
// zeroes r0 and the program goes on.
constexpr std::string_view kProbe = R"(
  mov %r1, 0
  mov %r0, 7
  probe ldxdw %r0, [%r1+8]
  add %r0, 5
  exit
)";

// A program with a subprogram (two images, two allocations).
constexpr std::string_view kWithSubprogram = R"(
  mov %r1, 4
  call local double
  add %r0, 1
  exit
double:
  mov %r0, %r1
  add %r0, %r1
  exit
)";

std::unique_ptr<World> MakeWorld(int cpus, std::string_view bug = "") {
  WorldOptions options;
  options.cpus = cpus;
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs) << bugs.message();
  if (bugs) options.bugs = *bugs;
  auto world = World::Create(options);
  EXPECT_TRUE(world) << world.message();
  return world ? std::move(world).value() : nullptr;
}

bool Broke(const World& world, Invariant invariant) {
  return std::any_of(world.violations().begin(), world.violations().end(),
                     [&](const Violation& v) { return v.invariant == invariant; });
}

std::string Violations(const World& world) {
  std::string all;
  for (const auto& v : world.violations()) all += v.Describe() + "\n";
  return all.empty() ? "none" : all;
}

uint32_t WordAt(World& world, uint64_t address) {
  uint32_t word = 0;
  std::memcpy(&word, world.sandbox().env().memory().HostPointer(address, 4), 4);
  return word;
}

// The entry word of program `id`, read through its slot name's address.
uint64_t EntryOf(World& world, int id) {
  const std::string name = world.SlotName(id);
  const auto at = name.find(" at 0x");
  return std::stoull(name.substr(at + 6), nullptr, 16);
}

TEST(LifecycleWorld, FreeWaitsForEveryCpuInsideTheProgram) {
  auto world = MakeWorld(2);
  auto id = world->Load(Asm(kLoop));
  ASSERT_TRUE(id) << id.message();
  world->Step(0, *id, 5);
  world->Step(1, *id, 9);
  ASSERT_TRUE(world->busy(0) && world->busy(1));
  const uint64_t slot = EntryOf(*world, *id);
  world->Free(*id);
  EXPECT_EQ(world->WaitingFor(*id), (std::vector<int>{0, 1}));
  EXPECT_NE(WordAt(*world, slot + 64), kBreakFault) << "invalidated while CPUs are inside";

  world->RunToCompletion(0);
  EXPECT_EQ(world->WaitingFor(*id), (std::vector<int>{1}));
  world->RunToCompletion(1);
  EXPECT_TRUE(world->WaitingFor(*id).empty());
  EXPECT_EQ(WordAt(*world, slot + 64), kBreakFault);
  EXPECT_EQ(world->calls_compared(), 2u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, CpuThatStartsAfterTheFreeIsNotWaitedFor) {
  auto world = MakeWorld(2);
  auto id = world->Load(Asm(kLoop));
  ASSERT_TRUE(id);
  world->Step(0, *id, 5);
  world->Free(*id);
  world->Step(1, 0, 3);  // a tail caller, started after the free
  EXPECT_EQ(world->WaitingFor(*id), (std::vector<int>{0}));
  world->Synchronize();
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, StaleEntryTrapsOnItsFirstInstruction) {
  auto world = MakeWorld(1);
  auto id = world->Load(Asm(kLoop));
  ASSERT_TRUE(id);
  EXPECT_FALSE(world->CallStale(0)) << "no program has been freed yet";
  world->Free(*id);
  EXPECT_TRUE(world->CallStale(0));
  EXPECT_FALSE(world->busy(0));
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, FaultingProbeLoadResumesWithTheRegisterZeroed) {
  auto world = MakeWorld(1);
  for (uint64_t pad : {0u, 130u * 64, 262'144u}) {  // start of a pack, deep in one, oversize
    auto id = world->Load(Asm(kProbe), pad);
    ASSERT_TRUE(id) << id.message();
    world->Step(0, *id, 1'000'000);
    EXPECT_FALSE(world->busy(0));
    world->Free(*id);
  }
  EXPECT_EQ(world->calls_compared(), 3u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, OversizeProgramsGetAnAllocationOfTheirOwn) {
  auto world = MakeWorld(1);
  auto id = world->Load(Asm(kLoop), 262'144);
  ASSERT_TRUE(id) << id.message();
  EXPECT_GE(EntryOf(*world, *id), guest::kOversizeBase);
  world->Step(0, *id, 1'000'000);
  world->Free(*id);
  EXPECT_EQ(world->sandbox().pack().Accounting().oversize_allocations, 0);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, TailCallThroughAReplacedEntryStaysInItsOwnPrograms) {
  auto world = MakeWorld(2);
  auto a = world->Load(Asm(kLoop));
  auto b = world->Load(Asm(kProbe));
  ASSERT_TRUE(a && b);
  world->SetTailTarget(0, *a);
  world->Step(0, 0, 2);  // tail caller 0, before its tail call
  world->SetTailTarget(0, *b);
  world->Free(*a);
  world->Step(1, 0, 1'000'000);  // a whole call through the new entry
  world->Synchronize();
  EXPECT_EQ(world->calls_compared(), 1u);
  EXPECT_EQ(world->calls_not_comparable(), 1u) << "the entry changed during cpu 0's call";
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, FailedExtraPassLeavesNoBufferAndNoPack) {
  auto world = MakeWorld(1, "extra-pass-grows");
  const auto before = world->sandbox().pack().Accounting();
  auto id = world->Load(Asm(kWithSubprogram));
  EXPECT_FALSE(id) << "the planted bug makes the extra pass fail";
  const auto after = world->sandbox().pack().Accounting();
  EXPECT_EQ(after.live_rw_buffers, 0);
  EXPECT_EQ(after.chunks_used, before.chunks_used);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, EmptyPacksAreReleased) {
  auto world = MakeWorld(1);
  const int packs = world->sandbox().pack().Accounting().packs;
  std::vector<int> ids;
  for (int i = 0; i < 40; ++i) {
    auto id = world->Load(Asm(kLoop), 8'000);  // about 64 KiB each: a second pack
    ASSERT_TRUE(id) << id.message();
    ids.push_back(*id);
  }
  EXPECT_GT(world->sandbox().pack().Accounting().packs, packs);
  for (int id : ids) world->Free(id);
  EXPECT_EQ(world->sandbox().pack().Accounting().packs, packs);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// --- negative controls: each planted bug, caught by its invariant ---

struct Control {
  std::string_view bug;
  Invariant invariant;
};

void PrintTo(const Control& control, std::ostream* out) {
  *out << control.bug << " caught by " << InvariantName(control.invariant);
}

class PlantedBugControl : public ::testing::TestWithParam<Control> {};

// One scenario that gives every bug its chance: two CPUs inside a program
// with a faulting probe load when it is freed, a stale call, a reload.
void Scenario(World& world) {
  auto id = world.Load(Asm(kProbe));
  ASSERT_TRUE(id) << id.message();
  auto loop = world.Load(Asm(kLoop));
  ASSERT_TRUE(loop) << loop.message();
  world.Step(0, *loop, 4);
  world.Step(1, *id, 1'000'000);
  world.Free(*loop);
  world.Step(0, -1, 3);
  world.RunToCompletion(0);
  world.CallStale(1);
  auto again = world.Load(Asm(kLoop));
  ASSERT_TRUE(again) << again.message();
  world.Step(0, *again, 1'000'000);
  world.Synchronize();
}

TEST_P(PlantedBugControl, IsCaughtByItsInvariant) {
  auto world = MakeWorld(2, GetParam().bug);
  Scenario(*world);
  EXPECT_TRUE(Broke(*world, GetParam().invariant))
      << "expected " << InvariantName(GetParam().invariant) << "; got " << Violations(*world);
}

TEST(PlantedBugControl, ScenarioIsCleanWithoutABug) {
  auto world = MakeWorld(2);
  Scenario(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
  EXPECT_GE(world->calls_compared(), 3u);
}

INSTANTIATE_TEST_SUITE_P(
    Lifecycle, PlantedBugControl,
    ::testing::Values(Control{"flush-before-copy", Invariant::kIcacheDiscipline},
                      Control{"extable-against-rw", Invariant::kExtableStructure},
                      Control{"extable-against-rw", Invariant::kOutcome},
                      Control{"skip-invalidate-on-free", Invariant::kFreedSlotInvalid},
                      Control{"skip-invalidate-on-free", Invariant::kStaleEntryTraps},
                      Control{"per-word-invalidate", Invariant::kOneCacheOpPerRange},
                      Control{"free-without-grace-period", Invariant::kNoOverwriteInUse}),
    [](const ::testing::TestParamInfo<Control>& param_info) {
      std::string name = std::string(param_info.param.bug) + "_" + std::string(InvariantName(param_info.param.invariant));
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace bpfdiff::lifecycle
