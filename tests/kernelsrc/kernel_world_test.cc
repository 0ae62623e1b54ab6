// The lifecycle world with the kernel's JIT compiling its programs: the
// kernel's use of the pack API (bpf_jit_binary_pack_alloc, the RW and RX
// images, finalize, free) under the world's invariants, and its calls,
// whose frames differ per program, compared with the interpreter's.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/lifecycle/not_comparable.h"
#include "harness/lifecycle/world.h"
#include "isa/assembler.h"
#include "harness/machine/text_patcher.h"
#include "tests/harness/lifecycle/world_test_support.h"

namespace bpfdiff::lifecycle {
namespace {

using namespace world_testing;

std::unique_ptr<World> MakeKernelWorld(int cpus) {
  WorldOptions options;
  options.cpus = cpus;
  options.jit_engine = "kernel-jit";
  auto world = World::Create(options);
  EXPECT_TRUE(world) << world.message();
  return world ? std::move(world).value() : nullptr;
}

// Its subprogram keeps values in r6 and r7 (the kernel pushes x19 and x20
// for it) and in its stack frame; main pushes neither: their frames differ.
constexpr std::string_view kSubprogramWithCalleeSaved = R"(
  mov %r1, 4
  stxdw [%r10-8], %r1
  call local sub
  ldxdw %r1, [%r10-8]
  add %r0, %r1
  exit
sub:
  mov %r6, %r1
  mov %r7, 9
  stxdw [%r10-16], %r7
  ldxdw %r0, [%r10-16]
  add %r0, %r6
  exit
)";

// Uses r6..r9 and its frame: the kernel's prologue pushes all four.
constexpr std::string_view kCalleeSavedAndStack = R"(
  mov %r6, 1
  mov %r7, 2
  mov %r8, 3
  mov %r9, 4
  stxdw [%r10-8], %r9
  mov %r2, 40
loop:
  add %r6, %r7
  sub %r2, 1
  jne %r2, 0, loop
  ldxdw %r0, [%r10-8]
  add %r0, %r6
  add %r0, %r8
  exit
)";

// Tail-calls through prog_array entry `entry` (fd 4, the world's) with
// r6 = 0x77, then returns 0x51 if the tail call falls through.
std::vector<isa::Insn> TailCallsWithR6(int entry) {
  return {{isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 6, 0, 0, 0x77},
          {isa::kOpLddw, 2, isa::kPseudoMapFd, 0, 4}, {0, 0, 0, 0, 0},
          {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 3, 0, 0, entry},
          {isa::kOpTailCall, 0, 0, 0, 0},
          {isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 0x51},
          {isa::kOpExit, 0, 0, 0, 0}};
}

TEST(KernelWorld, ProgramsLoadRunAndFreeUnderEveryInvariant) {
  auto world = MakeKernelWorld(2);
  ASSERT_NE(world, nullptr);
  uint64_t calls = 0;
  // At the start of a pack, deep in one, and in an allocation of its own
  // (where only a program without a backward branch loads: see the
  // finding below).
  for (uint64_t pad : {0u, 130u * 64, 262'144u}) {
    for (std::string_view text : {kLoop, kProbe, kSubprogramWithCalleeSaved, kCalleeSavedAndStack}) {
      if (pad == 262'144u && (text == kLoop || text == kCalleeSavedAndStack)) continue;
      auto id = world->Load(Asm(text), pad);
      ASSERT_TRUE(id) << id.message();
      world->Step(static_cast<int>(calls % 2), *id, 1'000'000);
      ++calls;
      world->Free(*id);
    }
  }
  world->FreeAll();
  EXPECT_EQ(world->calls_compared(), calls) << Reasons(*world);
  EXPECT_EQ(world->calls_not_comparable(), 0u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// The tail caller pushes no callee-saved register, its target pushes four:
// r10 moves at the tail call, and the target's stack is compared where the
// kernel's code put it.
TEST(KernelWorld, ATailCallIntoAProgramWithAnotherFrameIsCompared) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto target = world->Load(Asm(kCalleeSavedAndStack));
  ASSERT_TRUE(target) << target.message();
  world->SetTailTarget(0, *target);
  world->Step(0, 0, 1'000'000);
  world->Step(0, *target, 1'000'000);
  EXPECT_EQ(world->calls_compared(), 2u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A CPU inside the target by a tail call when it is freed, and an
// interrupt on the same CPU running another program meanwhile.
TEST(KernelWorld, FreeWaitsForACpuInsideByTailCallAcrossAnInterrupt) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto target = world->Load(Asm(kCalleeSavedAndStack));
  auto other = world->Load(Asm(kSubprogramWithCalleeSaved));
  ASSERT_TRUE(target && other);
  world->SetTailTarget(0, *target);
  world->Step(0, 0, 60);
  const auto inside = world->CpusInside(*target);
  ASSERT_EQ(inside.size(), 1u);
  ASSERT_TRUE(inside[0].by_tail_call);
  world->Free(*target);
  EXPECT_EQ(world->WaitingFor(*target), (std::vector<int>{0}));
  ASSERT_TRUE(world->Interrupt(0, *other, 5));
  world->Synchronize();
  EXPECT_TRUE(world->WaitingFor(*target).empty());
  EXPECT_EQ(world->calls_compared(), 2u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// The kernel's tail call restores the caller's r6..r9 before it jumps; the
// interpreter keeps them. A target that returns r6 unwritten diverges for
// that reason alone, which the world names instead of reporting it.
TEST(KernelWorld, ATailCallTargetReadingARestoredRegisterIsNotComparable) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto target = world->Load(Asm("mov %r0, %r6\nexit\n"));
  auto caller = world->Load(TailCallsWithR6(1));
  ASSERT_TRUE(target && caller);
  world->SetTailTarget(1, *target);
  world->Step(0, *caller, 1'000'000);
  EXPECT_EQ(world->calls_compared(), 0u);
  EXPECT_EQ(world->not_comparable_reasons().count(std::string(kTailCallTargetReadsRestoredRegister)), 1u)
      << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A load of the bytes above its frame reads where the kernel's prologue
// saved the caller's registers, which the interpreter's stack does not
// hold: a divergence that is named, not reported.
TEST(KernelWorld, AReadOfTheSavedRegistersAboveTheFrameIsNotComparable) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto id = world->Load(Asm("mov %r6, 1\nmov %r1, %r10\nprobe ldxdw %r0, [%r1+40]\nadd %r0, %r6\nexit\n"));
  ASSERT_TRUE(id) << id.message();
  world->Step(0, *id, 1'000'000);
  EXPECT_EQ(world->calls_compared(), 0u);
  EXPECT_EQ(world->not_comparable_reasons().count(std::string(kPrivateStackRead)), 1u) << Reasons(*world);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// 6.12 flushes each image twice at finalize (aarch64_insn_copy's text
// poke, then bpf_int_jit_compile's bpf_flush_icache); the free fills and
// flushes once. The world's cache-operation invariant allows the second
// flush, not one per word.
TEST(KernelWorld, FinalizeCopiesOnceAndFlushesTwicePerImage) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto& patcher = world->sandbox().patcher();
  patcher.ResetCounters();
  auto id = world->Load(Asm(kSubprogramWithCalleeSaved));  // two images
  ASSERT_TRUE(id) << id.message();
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).copies, 2u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).flushes, 4u);
  world->Free(*id);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).fills, 2u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).flushes, 2u);
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A finding in 6.12 (kernelsrc/SHIMS.md): pass 1 of bpf_int_jit_compile()
// computes a branch's offset as offset[target] - (offset[i + 1] - 1), and
// offset[i + 1] is not yet set (0) while instruction i is built. A
// backward conditional branch, however short, whose target lies past the
// first MiB of the image then fails check_imm19() and the JIT refuses the
// program with -EINVAL: 6.12 cannot JIT a loop that starts more than 2^18
// arm64 instructions into a program. bpfdiff's JIT compiles it.
TEST(KernelWorld, FindingABackwardBranchPastTheFirstMiBOfCodeIsRefused) {
  auto world = MakeKernelWorld(1);
  ASSERT_NE(world, nullptr);
  auto deep_loop = world->Load(Asm(kLoop), 262'144);
  ASSERT_FALSE(deep_loop) << "6.12's JIT compiled a loop past its first MiB: the finding is fixed in this tree";
  EXPECT_NE(deep_loop.message().find("out of range"), std::string::npos) << deep_loop.message();
  // Shallow enough, the same loop compiles; and as deep, a program with
  // no backward branch does.
  EXPECT_TRUE(world->Load(Asm(kLoop), 8'000));
  EXPECT_TRUE(world->Load(Asm(kProbe), 262'144));

  WorldOptions model;
  model.jit_engine = "jit";
  auto model_world = World::Create(model);
  ASSERT_TRUE(model_world) << model_world.message();
  auto id = (*model_world)->Load(Asm(kLoop), 262'144);
  ASSERT_TRUE(id) << id.message();
  (*model_world)->Step(0, *id, 10'000'000);
  EXPECT_EQ((*model_world)->calls_compared(), 1u);
}

// A kernel-jit world's options with planted bug `bug` switched on.
WorldOptions KernelWorldWithBug(std::string_view bug) {
  WorldOptions options;
  options.jit_engine = "kernel-jit";
  auto bugs = PlantedBugsNamed(bug);
  EXPECT_TRUE(bugs) << bugs.message();
  if (bugs) options.bugs = *bugs;
  return options;
}

TEST(KernelWorld, APlantedBugOfBpfdiffsJitIsRefusedNotIgnored) {
  auto world = World::Create(KernelWorldWithBug("alu32-add-no-zext"));
  ASSERT_FALSE(world);
  EXPECT_NE(world.message().find("the kernel's JIT has none planted"), std::string::npos) << world.message();
}

// The world's pack under a kernel engine is core.c's own: the tail
// callers' pack came from its alloc_new_pack() (execmem), an image larger
// than a pack gets memory of its own, and the freed images and the packs
// left empty go back through its frees, under every invariant.
TEST(KernelWorld, RunsOnCoreCsPackUnderEveryInvariant) {
  auto world = MakeKernelWorld(2);
  ASSERT_NE(world, nullptr);
  const jit::PackAccounting start = world->sandbox().pack().Accounting();
  EXPECT_EQ(start.packs, 1);
  EXPECT_EQ(start.external_packs, 1) << "the tail callers' pack is core.c's";
  auto small = world->Load(Asm(kLoop));
  ASSERT_TRUE(small) << small.message();
  auto deep = world->Load(Asm(kProbe), 300'000);  // past a pack: execmem of its own
  ASSERT_TRUE(deep) << deep.message();
  EXPECT_TRUE(world->Compiled(*deep)->subprograms[0].allocation->oversize());
  world->Step(0, *small, 50);
  world->Step(1, *deep, 10'000'000);
  world->Free(*deep);
  world->Free(*small);
  world->Synchronize();
  world->FreeAll();
  const jit::PackAccounting end = world->sandbox().pack().Accounting();
  EXPECT_EQ(end.oversize_allocations, 0);
  EXPECT_EQ(end.packs, 1) << "the tail callers' pack stays";
  EXPECT_TRUE(world->violations().empty()) << Violations(*world);
}

// A bug planted in bpfdiff's pack runs where its code is: the world uses
// bpfdiff's pack for it, and catches it there.
TEST(KernelWorld, APlantedPackBugRunsOnBpfdiffsPack) {
  auto world = World::Create(KernelWorldWithBug("skip-invalidate-on-free"));
  ASSERT_TRUE(world) << world.message();
  EXPECT_EQ((*world)->sandbox().pack().Accounting().external_packs, 0);
  auto id = (*world)->Load(Asm(kLoop));
  ASSERT_TRUE(id) << id.message();
  (*world)->Free(*id);
  EXPECT_FALSE((*world)->violations().empty());
}

}  // namespace
}  // namespace bpfdiff::lifecycle
