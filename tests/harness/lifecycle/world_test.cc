// The pack lifecycle World: grace periods, stale entries, accounting, and
// each planted bug caught by the invariant that names it (and the same
// scenario clean without the bug, so that every test can fail).
#include <algorithm>
#include <cstring>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/lifecycle/not_comparable.h"
#include "harness/lifecycle/world.h"
#include "tests/harness/lifecycle/world_test_support.h"
#include "isa/assembler.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"

namespace bpfdiff::lifecycle {
namespace {

using jit::kBreakFault;
using namespace world_testing;

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

std::unique_ptr<World> MakeWorld(int cpus, std::string_view bug = "", std::string_view jit_engine = "jit") {
  WorldOptions options;
  options.cpus = cpus;
  options.jit_engine = jit_engine;
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

TEST(LifecycleWorld, AnEngineThatIsNoJitIsRefusedByName) {
  for (std::string_view name : {"interp", "kernel", "jitt"}) {
    WorldOptions options;
    options.jit_engine = name;
    auto world = World::Create(options);
    ASSERT_FALSE(world) << name;
    EXPECT_NE(world.message().find(fmt::format("'{}' is not a JIT engine", name)), std::string::npos)
        << world.message();
  }
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

// Keeps a value in its stack frame across a loop: if anything else wrote
// the frame meanwhile (an interrupt's call on the same stack), r0 shows it.
constexpr std::string_view kStackKeeper = R"(
  mov %r0, 0x1234
  stxdw [%r10-8], %r0
  mov %r2, 100
loop:
  sub %r2, 1
  jne %r2, 0, loop
  ldxdw %r0, [%r10-8]
  exit
)";

// What an interrupt runs: the same frame offsets, other values.
constexpr std::string_view kStackWriter = R"(
  mov %r0, 0x5678
  stxdw [%r10-8], %r0
  stxdw [%r10-16], %r0
  mov %r2, 30
loop:
  sub %r2, 1
  jne %r2, 0, loop
  ldxdw %r0, [%r10-16]
  exit
)";

TEST(LifecycleWorld, AnInterruptsCallRunsOnItsOwnStackAndTheInterruptedCallResumes) {
  auto world = MakeWorld(1);
  auto keeper = world->Load(Asm(kStackKeeper));
  auto writer = world->Load(Asm(kStackWriter));
  ASSERT_TRUE(keeper && writer);
  EXPECT_FALSE(world->Interrupt(0, *writer, 5)) << "an idle CPU has no call to interrupt";
  world->Step(0, *keeper, 20);
  ASSERT_TRUE(world->Interrupt(0, *writer, 10));
  EXPECT_TRUE(world->in_interrupt(0));
  EXPECT_FALSE(world->Interrupt(0, *keeper, 5)) << "hardirqs do not nest";
  world->RunToCompletion(0);  // the interrupt's call
  EXPECT_FALSE(world->in_interrupt(0));
  EXPECT_TRUE(world->busy(0)) << "the interrupted call goes on";
  EXPECT_EQ(world->calls_compared(), 1u);
  world->RunToCompletion(0);
  EXPECT_FALSE(world->busy(0));
  EXPECT_EQ(world->calls_compared(), 2u) << Violations(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, AnInterruptThatEndsRightAwayResumesTheCall) {
  auto world = MakeWorld(2);
  auto keeper = world->Load(Asm(kStackKeeper));
  auto writer = world->Load(Asm(kStackWriter));
  ASSERT_TRUE(keeper && writer);
  world->Step(1, *keeper, 7);
  ASSERT_TRUE(world->Interrupt(1, *writer, 1'000));
  EXPECT_FALSE(world->in_interrupt(1));
  EXPECT_TRUE(world->busy(1));
  world->Synchronize();
  EXPECT_EQ(world->calls_compared(), 2u) << Violations(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// Stopped exactly where a tail call would enter the program, and resumed
// there after an interrupt that ran the same program: the block the call
// resumes with continues it (a resumed call that lost its instruction
// count would take it for a tail call into itself).
TEST(LifecycleWorld, ACallResumedAtItsTailCallEntryAfterAnInterruptMadeNoTailCall) {
  auto world = MakeWorld(1);
  auto id = world->Load(Asm(kLoop));
  ASSERT_TRUE(id);
  world->Step(0, *id, jit::TailCallEntryOffset() / 4);
  ASSERT_TRUE(world->Interrupt(0, *id, 1'000));
  ASSERT_FALSE(world->in_interrupt(0));
  world->RunToCompletion(0);
  EXPECT_EQ(world->calls_compared(), 2u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// Program `inside` freed while CPU 0 is in an interrupt: the interrupted
// call runs it (`in_the_interrupt` false) or the interrupt's does. The
// free waits for the interrupted call's return, not the interrupt's.
void FreeWhileInAnInterrupt(World& world, bool in_the_interrupt) {
  auto inside = world.Load(Asm(kLoop));
  auto other = world.Load(Asm(kStackWriter));
  ASSERT_TRUE(inside && other);
  world.Step(0, in_the_interrupt ? *other : *inside, 9);
  ASSERT_TRUE(world.Interrupt(0, in_the_interrupt ? *inside : *other, 6));
  const auto cpus_inside = world.CpusInside(*inside);
  ASSERT_EQ(cpus_inside.size(), 1u);
  EXPECT_TRUE(cpus_inside[0].nested_in_interrupt);
  EXPECT_FALSE(cpus_inside[0].by_tail_call);
  const uint64_t slot = EntryOf(world, *inside);
  world.Free(*inside);
  EXPECT_EQ(world.WaitingFor(*inside), (std::vector<int>{0}));
  world.RunToCompletion(0);  // the interrupt returns: no quiescent point
  EXPECT_EQ(world.WaitingFor(*inside), (std::vector<int>{0}));
  EXPECT_NE(WordAt(world, slot + 64), kBreakFault) << "invalidated while the interrupted call is inside";
  world.RunToCompletion(0);
  EXPECT_TRUE(world.WaitingFor(*inside).empty());
  EXPECT_EQ(WordAt(world, slot + 64), kBreakFault);
}

TEST(LifecycleWorld, FreeWaitsForAnInterruptedCallPastTheInterruptsReturn) {
  auto world = MakeWorld(1);
  FreeWhileInAnInterrupt(*world, false);
  EXPECT_EQ(world->calls_compared(), 2u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, FreeOfTheProgramAnInterruptRunsWaitsForTheCpu) {
  auto world = MakeWorld(1);
  FreeWhileInAnInterrupt(*world, true);
  EXPECT_EQ(world->calls_compared(), 2u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, PlantedFreeWithoutGracePeriodIsCaughtForAnInterruptedCall) {
  auto world = MakeWorld(1, "free-without-grace-period");
  auto inside = world->Load(Asm(kLoop));
  auto other = world->Load(Asm(kStackWriter));
  ASSERT_TRUE(inside && other);
  world->Step(0, *inside, 9);
  ASSERT_TRUE(world->Interrupt(0, *other, 6));
  world->Free(*inside);
  // The free overwrites the slot the interrupted call will resume in...
  EXPECT_TRUE(Broke(*world, Invariant::kNoOverwriteInUse)) << Violations(*world);
  EXPECT_FALSE(Broke(*world, Invariant::kOwnership)) << Violations(*world);
  world->RunToCompletion(0);
  world->RunToCompletion(0);
  // ...and it does resume there.
  EXPECT_TRUE(Broke(*world, Invariant::kOwnership)) << Violations(*world);
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
  EXPECT_EQ(world->calls_compared(), 2u) << "cpu 0's call follows the entry its tail call read";
  EXPECT_EQ(world->calls_replayed(), 1u);
  EXPECT_EQ(world->calls_not_comparable(), 0u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A CPU that came into a program through a tail call is inside it as much
// as one that called it: the free waits for it too. The planted bug waits
// only for calls that began in the program, and overwrites the code under
// the CPU.
void FreeWithACpuInsideByTailCall(World& world) {
  auto loop = world.Load(Asm(kLoop));
  ASSERT_TRUE(loop) << loop.message();
  world.SetTailTarget(0, *loop);
  world.Step(0, 0, 200);  // tail caller 0, long past its tail call into the loop
  const auto inside = world.CpusInside(*loop);
  ASSERT_EQ(inside.size(), 1u);
  ASSERT_TRUE(inside[0].by_tail_call);
  world.Free(*loop);
  world.Synchronize();
}

TEST(LifecycleWorld, FreeWaitsForACpuThatCameInByATailCall) {
  auto world = MakeWorld(1);
  FreeWithACpuInsideByTailCall(*world);
  EXPECT_EQ(world->calls_compared(), 1u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, PlantedGracePeriodForEntryOnlyOverwritesACpusCode) {
  auto world = MakeWorld(1, "grace-period-for-entry-only");
  FreeWithACpuInsideByTailCall(*world);
  EXPECT_TRUE(Broke(*world, Invariant::kNoOverwriteInUse)) << Violations(*world);
}

// A program padded to about 8 KiB: its image crosses a 4 KiB page, and its
// code past the padding runs in the second page. The planted bug leaves
// that page as the pack's BRK fill.
void RunAnImageAcrossAPage(World& world) {
  auto id = world.Load(Asm(kLoop), 1'000);
  ASSERT_TRUE(id) << id.message();
  const jit::CompiledProgram* compiled = world.Compiled(*id);
  ASSERT_NE(compiled, nullptr);
  const jit::PackAllocation& slot = *compiled->subprograms.front().allocation;
  ASSERT_NE(slot.rx_slot() / 4096, (slot.rx_slot() + slot.slot_bytes() - 1) / 4096);
  world.Step(0, *id, 1'000'000);
}

TEST(LifecycleWorld, AnImageAcrossAPageRuns) {
  auto world = MakeWorld(1);
  RunAnImageAcrossAPage(*world);
  EXPECT_EQ(world->calls_compared(), 1u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// Caught at the load, by the slot's contents, before any call runs into
// the BRK words; and then by the call that does.
TEST(LifecycleWorld, PlantedCopyStopsAtPageEndIsCaughtAtTheLoadAndByTheOutcome) {
  auto world = MakeWorld(1, "copy-stops-at-page-end");
  RunAnImageAcrossAPage(*world);
  ASSERT_FALSE(world->violations().empty());
  EXPECT_EQ(world->violations().front().invariant, Invariant::kSlotAsWritten) << Violations(*world);
  EXPECT_EQ(world->violations().front().operation, "load of a padded program (program 4)") << Violations(*world);
  EXPECT_TRUE(Broke(*world, Invariant::kOutcome)) << Violations(*world);
}

// --- calls whose prog_array entry changes while they run ---

std::vector<isa::Insn> Returns(int value) { return Asm(fmt::format("mov %r0, {}\nexit\n", value)); }

// A program that tail-calls through prog_array entry `entry` (fd 4, the
// world's) and returns 0x51 if the tail call falls through.
std::vector<isa::Insn> TailCallsThrough(int entry) {
  return {{isa::kOpLddw, 2, isa::kPseudoMapFd, 0, 4}, {0, 0, 0, 0, 0},
          {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 3, 0, 0, entry},
          {isa::kOpTailCall, 0, 0, 0, 0},
          {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 0x51},
          {isa::kOpExit, 0, 0, 0, 0}};
}

// Tail caller 0 stopped after `steps` instructions; entry 0 changes from
// `from` to `to` (-1: empty); the call is run to its end. Returns whether
// the interpreter had to follow the new entry (the call read it).
bool ReadTheNewEntry(World& world, int from, int to, uint64_t steps) {
  world.SetTailTarget(0, from);
  const uint64_t replayed = world.calls_replayed();
  world.Step(0, 0, steps);
  world.SetTailTarget(0, to);
  world.RunToCompletion(0);
  return world.calls_replayed() != replayed;
}

TEST(LifecycleWorld, EntryChangedBeforeTheTailCallIsFollowed) {
  auto world = MakeWorld(1);
  auto a = world->Load(Returns(1));
  auto b = world->Load(Returns(2));
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(ReadTheNewEntry(*world, *a, *b, 2));
  EXPECT_TRUE(ReadTheNewEntry(*world, *a, -1, 2)) << "an entry emptied: the call falls through";
  EXPECT_TRUE(ReadTheNewEntry(*world, -1, *b, 2)) << "an entry filled";
  EXPECT_EQ(world->calls_compared(), 3u);
  EXPECT_EQ(world->calls_not_comparable(), 0u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

TEST(LifecycleWorld, EntryChangedAfterTheTailCallIsNotFollowed) {
  auto world = MakeWorld(1);
  auto loop = world->Load(Asm(kLoop));
  auto b = world->Load(Returns(2));
  ASSERT_TRUE(loop && b);
  EXPECT_FALSE(ReadTheNewEntry(*world, *loop, *b, 200)) << "cpu 0 is in the loop, long past its tail call";
  EXPECT_EQ(world->calls_compared(), 1u);
  EXPECT_EQ(world->calls_not_comparable(), 0u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// The entry changes with the CPU stopped at every instruction of the tail
// caller in turn: up to some instruction (the load of the entry) the call
// reads the new program, from there on the old one, and every call is
// compared along the one it read.
TEST(LifecycleWorld, EntryChangedAtEveryInstructionOfATailCall) {
  auto world = MakeWorld(2);
  auto a = world->Load(Returns(1));
  auto b = world->Load(Returns(2));
  ASSERT_TRUE(a && b);
  std::vector<bool> read_new;
  for (uint64_t steps = 1; steps <= 60; ++steps) read_new.push_back(ReadTheNewEntry(*world, *a, *b, steps));
  const auto first_old = std::find(read_new.begin(), read_new.end(), false);
  EXPECT_NE(first_old, read_new.begin()) << "stopped early, the call must read the new entry";
  EXPECT_NE(first_old, read_new.end()) << "stopped late, the call must have read the old entry";
  EXPECT_TRUE(std::all_of(first_old, read_new.end(), [](bool read) { return !read; })) << "an entry is read once";
  EXPECT_EQ(world->calls_compared(), 60u);
  EXPECT_EQ(world->calls_not_comparable(), 0u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// The object of the program the entry names sends the tail call into a
// third program: a tail call that lands where the entry never pointed is a
// divergence, whether the entry changed during the call or not.
TEST(LifecycleWorld, TailCallIntoAProgramTheEntryNeverNamedDiverges) {
  for (bool entry_changes : {false, true}) {
    auto world = MakeWorld(1);
    auto a = world->Load(Returns(1));
    auto b = world->Load(Returns(2));
    auto c = world->Load(Returns(2));  // the same r0: the tail calls tell them apart
    ASSERT_TRUE(a && b && c);
    GuestMemory& memory = world->sandbox().env().memory();
    uint64_t c_entry = 0;
    std::memcpy(&c_entry, memory.HostPointer(guest::ProgObjectAddress(static_cast<uint64_t>(*c)), 8), 8);
    memory.Store<uint64_t>(guest::ProgObjectAddress(static_cast<uint64_t>(*b)) + guest::kProgBpfFuncOffset, c_entry);
    world->SetTailTarget(0, entry_changes ? *a : *b);
    world->Step(0, 0, 2);
    world->SetTailTarget(0, *b);
    world->RunToCompletion(0);
    ASSERT_EQ(world->violations().size(), 1u) << Violations(*world);
    EXPECT_EQ(world->violations().front().invariant, Invariant::kOutcome);
    const std::string& detail = world->violations().front().detail;
    EXPECT_NE(detail.find("divergence in tail calls"), std::string::npos) << detail;
    EXPECT_EQ(detail.find("the interpreter read prog_array[0]") != std::string::npos, entry_changes) << detail;
  }
}

// Counts down, then loads prog_array[1] itself through an untrusted
// pointer (a PROBE_MEM load of the map object's ptrs[1]) and returns it.
constexpr std::string_view kLoadsEntryOne = R"(
  mov %r0, 0
  mov %r2, 100
loop:
  add %r0, 3
  sub %r2, 1
  jne %r2, 0, loop
  mov %r1, 0x3000048
  probe ldxdw %r0, [%r1+0]
  exit
)";

// A call that loads an entry itself while another CPU updates it sees the
// old or the new program depending on when the load runs: when the call
// then disagrees with the interpreter, it is not comparable, by name.
// Whether the call ran a tail call first (where the world can only tell
// that the target may load memory) or not (where the interpreter's replay
// says the load touched the prog_array).
TEST(LifecycleWorld, ALoadOfAnEntryUpdatedDuringTheCallIsNamed) {
  for (bool through_tail_call : {false, true}) {
    auto world = MakeWorld(1);
    auto loads = world->Load(Asm(kLoadsEntryOne));
    auto b = world->Load(Returns(2));
    ASSERT_TRUE(loads && b);
    world->SetTailTarget(1, *loads);
    world->Step(0, through_tail_call ? 1 : *loads, 120);  // in the loop
    ASSERT_TRUE(world->busy(0));
    world->SetTailTarget(1, *b);
    world->RunToCompletion(0);
    EXPECT_TRUE(world->violations().empty()) << Violations(*world);
    EXPECT_EQ(world->not_comparable_reasons(),
              (std::map<std::string, uint64_t>{{std::string(kArrayLoadedWhileUpdated), 1}}));
    // Unchanged during the call, the same load is compared.
    world->Step(0, through_tail_call ? 1 : *loads, 1'000'000);
    EXPECT_EQ(world->calls_compared(), 1u);
    EXPECT_TRUE(world->violations().empty()) << Violations(*world);
  }
}

// The same race with what a load writes: the call loads program 5's
// bpf_func while program 5 is loaded.
TEST(LifecycleWorld, ALoadOfAProgramObjectWrittenDuringTheCallIsNamed) {
  auto world = MakeWorld(1);
  auto loads = world->Load(Asm(R"(
    mov %r2, 100
  loop:
    sub %r2, 1
    jne %r2, 0, loop
    mov %r1, 0x3100140
    probe ldxdw %r0, [%r1+0]
    exit
  )"));
  ASSERT_TRUE(loads);
  ASSERT_EQ(guest::ProgObjectAddress(5), 0x3100140u);
  world->Step(0, *loads, 120);
  ASSERT_TRUE(world->busy(0));
  auto five = world->Load(Returns(2));
  ASSERT_TRUE(five);
  ASSERT_EQ(*five, 5);
  world->RunToCompletion(0);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
  EXPECT_EQ(world->not_comparable_reasons(),
            (std::map<std::string, uint64_t>{{std::string(kImagesLoadedWhileUpdated), 1}}));
  world->Step(0, *loads, 1'000'000);
  EXPECT_EQ(world->calls_compared(), 1u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// An entry changed during a call that loads nothing of it: a JIT bug in
// that call is still a divergence.
TEST(LifecycleWorld, AJitBugInACallWhoseEntryChangedIsStillCaught) {
  auto world = MakeWorld(1, "alu32-add-no-zext");
  auto add = world->Load(Asm(R"(
    mov32 %r0, -1
    mov %r2, 100
  loop:
    sub %r2, 1
    jne %r2, 0, loop
    add32 %r0, 2
    exit
  )"));
  auto b = world->Load(Returns(2));
  ASSERT_TRUE(add && b);
  world->Step(0, *add, 50);
  ASSERT_TRUE(world->busy(0));
  world->SetTailTarget(1, *b);
  world->RunToCompletion(0);
  ASSERT_EQ(world->violations().size(), 1u) << Reasons(*world);
  EXPECT_EQ(world->violations().front().invariant, Invariant::kOutcome);
}

// A program that tail-calls itself through entry 0 reads the entry on
// every round; replaced part way, one call reads two values of one entry,
// which one interpreter run over one prog_array cannot replay: not
// comparable, by name. Replaced before the call, it is compared.
TEST(LifecycleWorld, OneEntryReadTwiceWithTwoValuesIsNamed) {
  auto world = MakeWorld(1);
  auto again = world->Load(TailCallsThrough(0));
  auto b = world->Load(Returns(2));
  ASSERT_TRUE(again && b);
  world->SetTailTarget(0, *again);
  world->Step(0, 0, 200);  // several rounds
  ASSERT_TRUE(world->busy(0));
  world->SetTailTarget(0, *b);
  world->RunToCompletion(0);
  EXPECT_EQ(world->calls_not_comparable(), 1u);
  EXPECT_EQ(world->not_comparable_reasons(),
            (std::map<std::string, uint64_t>{{std::string(kSlotReadTwice), 1}}));
  world->SetTailTarget(0, *again);
  world->Step(0, 0, 1'000'000);  // 33 rounds, then it falls through
  EXPECT_EQ(world->calls_compared(), 1u);
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
  std::string_view jit_engine = "jit";  // whose JIT compiles the programs
};

void PrintTo(const Control& control, std::ostream* out) {
  *out << control.bug << " caught by " << InvariantName(control.invariant) << " with " << control.jit_engine;
}

// The kernel's JIT's rows need a build that read a Linux tree.
bool Runs(std::string_view jit_engine) { return jit_engine == "jit" || kernelsrc::BuiltKernelTree().has_value(); }

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
  if (!Runs(GetParam().jit_engine)) GTEST_SKIP() << "built without a Linux tree";
  auto world = MakeWorld(2, GetParam().bug, GetParam().jit_engine);
  Scenario(*world);
  EXPECT_TRUE(Broke(*world, GetParam().invariant))
      << "expected " << InvariantName(GetParam().invariant) << "; got " << Violations(*world);
}

TEST(PlantedBugControl, ScenarioIsCleanWithoutABug) {
  for (std::string_view jit_engine : {"jit", "kernel-jit"}) {
    if (!Runs(jit_engine)) continue;
    auto world = MakeWorld(2, "", jit_engine);
    Scenario(*world);
    EXPECT_TRUE(world->violations().empty()) << jit_engine << ": " << Violations(*world);
    EXPECT_GE(world->calls_compared(), 3u) << jit_engine;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lifecycle, PlantedBugControl,
    ::testing::Values(Control{"flush-before-copy", Invariant::kIcacheDiscipline},
                      Control{"extable-against-rw", Invariant::kExtableStructure},
                      Control{"extable-against-rw", Invariant::kOutcome},
                      Control{"skip-invalidate-on-free", Invariant::kFreedSlotInvalid},
                      Control{"skip-invalidate-on-free", Invariant::kStaleEntryTraps},
                      Control{"per-word-invalidate", Invariant::kOneCacheOpPerRange},
                      Control{"free-without-grace-period", Invariant::kNoOverwriteInUse},
                      // The pack's and the lifecycle's bugs under the
                      // kernel's use of the pack API.
                      Control{"skip-invalidate-on-free", Invariant::kFreedSlotInvalid, "kernel-jit"},
                      Control{"skip-invalidate-on-free", Invariant::kStaleEntryTraps, "kernel-jit"},
                      Control{"per-word-invalidate", Invariant::kOneCacheOpPerRange, "kernel-jit"},
                      Control{"free-without-grace-period", Invariant::kNoOverwriteInUse, "kernel-jit"}),
    [](const ::testing::TestParamInfo<Control>& param_info) {
      std::string name = std::string(param_info.param.bug) + "_" + std::string(InvariantName(param_info.param.invariant));
      if (param_info.param.jit_engine != "jit") name += "_" + std::string(param_info.param.jit_engine);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

}  // namespace
}  // namespace bpfdiff::lifecycle
