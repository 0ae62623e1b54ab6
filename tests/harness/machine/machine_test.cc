// harness_machine: the Unicorn machines of a Sandbox, on arm64 code written
// with the a64 encoder into pack slots.
//
//  - A precise machine (a code hook keeps the pc exact) and a fast machine
//    (the faulting instruction is found by decoding the block) report the
//    same faulting pc, address and registers for faults in the middle of a
//    block, for every addressing form the JIT uses and more; the fast
//    machine says kImpreciseFault, never a wrong pc, when two accesses of
//    the block could have faulted at the address.
//  - Translation tracking: code rewritten in place through the pack (free,
//    alloc, finalize) runs new, never stale, on both machines, and
//    RemoveCache only asks Unicorn when the CPU may hold a translation.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness/machine/sandbox.h"
#include "harness/machine/vixl_cpu.h"
#include "tests/harness/machine/machine_test_support.h"
#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

using a64::AtomicOp;
using a64::ExclusiveOp;
using a64::Extend;
using a64::Indexing;
using a64::LoadStoreOp;
using a64::MemOrder;
using a64::PairOp;
using a64::Reg;
using a64::Size;
using a64::Width;

uint32_t Ldr(Size size, Reg rt, Reg rn, int64_t offset = 0) {
  return a64::LoadStoreUnsignedImmediate(LoadStoreOp::kLoad, size, rt, rn, offset);
}
uint32_t Str(Size size, Reg rt, Reg rn, int64_t offset = 0) {
  return a64::LoadStoreUnsignedImmediate(LoadStoreOp::kStore, size, rt, rn, offset);
}
uint32_t AddImm(Reg rd, Reg rn, uint32_t imm) {
  return a64::AddSubImmediate(a64::AddSubOp::kAdd, Width::kX, rd, rn, imm);
}
uint32_t MovImm(Reg rd, uint32_t imm16) {
  return a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, rd, imm16, 0);
}

struct FaultCase {
  std::string name;
  std::vector<uint32_t> words;  // a straight-line block ending in ret
  size_t faulting;              // index of the faulting word
  uint64_t address;             // the address the fault reports
};

std::vector<FaultCase> FaultCases() {
  const Reg x0 = Reg::kX0, x1 = Reg::kX1, x2 = Reg::kX2, x3 = Reg::kX3, x4 = Reg::kX4;
  const Reg x5 = Reg::kX5, x6 = Reg::kX6, x7 = Reg::kX7, x8 = Reg::kX8;
  const uint32_t ret = a64::Ret();
  std::vector<FaultCase> cases = {
      {"ldr after two good loads",
       {Ldr(Size::k64, x5, x0), Ldr(Size::k64, x6, x0, 8), Ldr(Size::k64, x7, x1, 16),
        a64::AddSubShiftedRegister(a64::AddSubOp::kAdd, Width::kX, x8, x5, x6), ret},
       2, kUnmapped + 16},
      {"str as the first word", {Str(Size::k64, x2, x1), Ldr(Size::k64, x5, x0), ret}, 0, kUnmapped},
      {"ldrb at the largest scaled offset", {AddImm(x5, x5, 1), Ldr(Size::k8, x6, x1, 4095), ret}, 1, kUnmapped + 4095},
      {"ldrsw", {AddImm(x5, x5, 1), a64::LoadStoreUnsignedImmediate(LoadStoreOp::kLoadSigned64, Size::k32, x6, x1, 8), ret},
       1, kUnmapped + 8},
      {"store to read-only memory", {Ldr(Size::k64, x5, x3), Str(Size::k32, x5, x3, 8), ret}, 1, kReadOnly + 8},
      {"ldur with a negative offset",
       {Ldr(Size::k64, x5, x0), a64::LoadStoreUnscaledImmediate(LoadStoreOp::kLoad, Size::k64, x6, x1, -8), ret},
       1, kUnmapped - 8},
      {"pre-indexed ldr",
       {Ldr(Size::k64, x5, x0), a64::LoadStoreImmediateIndexed(LoadStoreOp::kLoad, Size::k64, x6, x1, -16, Indexing::kPreIndex),
        ret},
       1, kUnmapped - 16},
      {"post-indexed str",
       {Ldr(Size::k64, x5, x0), a64::LoadStoreImmediateIndexed(LoadStoreOp::kStore, Size::k16, x5, x1, 64, Indexing::kPostIndex),
        ret},
       1, kUnmapped},
      {"stp then ldp",
       {a64::LoadStorePair(PairOp::kStore, Width::kX, x2, x4, x0, 16), a64::LoadStorePair(PairOp::kLoad, Width::kX, x5, x6, x0, 16),
        a64::LoadStorePair(PairOp::kLoad, Width::kW, x7, x8, x1, 32), ret},
       2, kUnmapped + 32},
      {"pre-indexed stp", {MovImm(x5, 1), a64::LoadStorePair(PairOp::kStore, Width::kX, x5, x6, x1, -64, Indexing::kPreIndex), ret},
       1, kUnmapped - 64},
      {"ldr register offset, lsl",
       {a64::LoadStoreRegisterOffset(LoadStoreOp::kLoad, Size::k32, x5, x0, x2, Extend::kUxtx, true),
        a64::LoadStoreRegisterOffset(LoadStoreOp::kLoad, Size::k16, x6, x1, x2, Extend::kUxtx, true), ret},
       1, kUnmapped + 6},
      {"str register offset, sxtw",
       {Ldr(Size::k64, x5, x0), a64::LoadStoreRegisterOffset(LoadStoreOp::kStore, Size::k64, x5, x1, x4, Extend::kSxtw, true), ret},
       1, kUnmapped - 16},
      {"ldrsb register offset, unscaled",
       {Ldr(Size::k64, x5, x0), a64::LoadStoreRegisterOffset(LoadStoreOp::kLoadSigned64, Size::k8, x6, x1, x2), ret},
       1, kUnmapped + 3},
      {"ldaddal after a good one",
       {a64::AtomicMemoryOperation(AtomicOp::kLdadd, Size::k64, MemOrder::kAcquireRelease, x2, x7, x0),
        a64::AtomicMemoryOperation(AtomicOp::kLdadd, Size::k64, MemOrder::kAcquireRelease, x2, x6, x1), ret},
       1, kUnmapped},
      {"stclr (no result register)",
       {MovImm(x5, 7), a64::AtomicMemoryOperation(AtomicOp::kLdclr, Size::k32, MemOrder::kRelaxed, x5, Reg::kZr, x1), ret},
       1, kUnmapped},
      {"swpal", {MovImm(x5, 7), a64::AtomicMemoryOperation(AtomicOp::kSwp, Size::k64, MemOrder::kAcquireRelease, x5, x6, x1), ret},
       1, kUnmapped},
      {"casal", {MovImm(x5, 7), a64::CompareAndSwap(Size::k64, MemOrder::kAcquireRelease, x5, x6, x1), ret}, 1, kUnmapped},
      {"ldaxr", {MovImm(x5, 7), a64::Ldaxr(Size::k64, x6, x1), ret}, 1, kUnmapped},
      // (A store-exclusive is not here: without the monitor of a matching
      // load-exclusive it fails without touching memory.)
      {"ldxrb", {MovImm(x5, 7), a64::Ldxr(Size::k8, x6, x1), ret}, 1, kUnmapped},
      {"ldar", {Ldr(Size::k64, x5, x0), a64::Ldar(Size::k32, x6, x1), ret}, 1, kUnmapped},
  };
  // Deep in a long block: 40 additions, then the fault.
  FaultCase deep{"after 40 additions", {}, 40, kUnmapped + 24};
  for (int i = 0; i < 40; ++i) deep.words.push_back(AddImm(x5, x5, 1));
  deep.words.push_back(Ldr(Size::k64, x6, x1, 24));
  deep.words.push_back(ret);
  cases.push_back(deep);
  return cases;
}

// The precise and the fast Unicorn machine, and a VIXL machine over the
// same memory (the second executor: harness/machine/vixl_cpu.h).
TEST(harness_machine, PreciseFastAndVixlReportTheSameFaultingPc) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine& precise = sandbox->machine(0);
  Machine* fast = sandbox->fast_machine();
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(precise.mode(), MachineMode::kPrecise);
  EXPECT_EQ(fast->mode(), MachineMode::kFast);
  GuestMemory& memory = sandbox->env().memory();
  auto vixl = CreateVixlMachine(memory, 0);
  ASSERT_TRUE(vixl.ok()) << vixl.message();
  EXPECT_EQ((*vixl)->executor(), "vixl");
  ASSERT_TRUE(memory.Store<uint64_t>(kMapped, 0x1111));
  ASSERT_TRUE(memory.Store<uint64_t>(kMapped + 8, 0x2222));
  for (const FaultCase& c : FaultCases()) {
    SCOPED_TRACE(c.name);
    auto slot = Place(*sandbox, c.words);
    ASSERT_NE(slot, nullptr);
    const uint64_t pc = slot->rx_image() + 4 * c.faulting;
    for (int round = 0; round < 2; ++round) {  // the second time from translated code
      std::array<uint64_t, 3> x5{};
      const std::array<Machine*, 3> machines = {&precise, fast, vixl->get()};
      for (size_t m = 0; m < machines.size(); ++m) {
        Machine* machine = machines[m];
        SCOPED_TRACE(m == 0 ? "precise" : m == 1 ? "fast" : "vixl");
        const MachineStop stop = Call(*machine, slot->rx_image());
        EXPECT_EQ(stop.kind, MachineStop::Kind::kFault) << stop.message;
        EXPECT_EQ(stop.pc, pc) << fmt::format("0x{:x}, expected 0x{:x}", stop.pc, pc);
        EXPECT_EQ(machine->ReadPc(), pc);
        EXPECT_EQ(stop.address, c.address) << fmt::format("0x{:x}", stop.address);
        // The pre-index write-back of a faulting access does not happen.
        EXPECT_EQ(machine->ReadX(1), kUnmapped);
        x5[m] = machine->ReadX(5);
      }
      EXPECT_EQ(x5[0], x5[1]) << "the registers differ at the fault";
      EXPECT_EQ(x5[0], x5[2]) << "the registers differ at the fault";
    }
    sandbox->pack().Free(std::move(slot));
  }
}

TEST(harness_machine, FaultAccessKinds) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  struct Kinds {
    std::vector<uint32_t> words;
    AccessKind kind;
  };
  const Kinds cases[] = {
      {{Ldr(Size::k64, Reg::kX5, Reg::kX1), a64::Ret()}, AccessKind::kRead},
      {{Str(Size::k64, Reg::kX5, Reg::kX1), a64::Ret()}, AccessKind::kWrite},
      {{Str(Size::k8, Reg::kX5, Reg::kX3), a64::Ret()}, AccessKind::kWrite},  // read-only
      // A read-modify-write faults as a read where nothing is mapped, and
      // as a write where the memory is read-only.
      {{a64::StAtomic(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, Reg::kX2, Reg::kX1), a64::Ret()},
       AccessKind::kRead},
      {{a64::StAtomic(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, Reg::kX2, Reg::kX3), a64::Ret()},
       AccessKind::kWrite},
      {{a64::CompareAndSwap(Size::k64, MemOrder::kAcquireRelease, Reg::kX5, Reg::kX6, Reg::kX1), a64::Ret()},
       AccessKind::kRead},
      {{a64::CompareAndSwap(Size::k64, MemOrder::kAcquireRelease, Reg::kX5, Reg::kX6, Reg::kX3), a64::Ret()},
       AccessKind::kWrite},
  };
  auto vixl = CreateVixlMachine(sandbox->env().memory(), 0);
  ASSERT_TRUE(vixl.ok()) << vixl.message();
  for (const Kinds& c : cases) {
    auto slot = Place(*sandbox, c.words);
    ASSERT_NE(slot, nullptr);
    for (Machine* machine : {&sandbox->machine(0), sandbox->fast_machine(), vixl->get()}) {
      SCOPED_TRACE(fmt::format("{} {}, word 0x{:08x}", machine->executor(),
                               machine->mode() == MachineMode::kFast ? "fast" : "precise", c.words[0]));
      const MachineStop stop = Call(*machine, slot->rx_image());
      EXPECT_EQ(stop.kind, MachineStop::Kind::kFault);
      EXPECT_EQ(stop.access, c.kind);
    }
  }
}

// Two accesses of the block hold the faulting address (given the registers
// at the fault): the fast machine cannot tell which one faulted and says
// so; the precise machine knows.
TEST(harness_machine, FastMachineSaysImpreciseWhenTwoAccessesMatch) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  const Reg x0 = Reg::kX0, x1 = Reg::kX1, x2 = Reg::kX2, x5 = Reg::kX5, x6 = Reg::kX6;
  struct Ambiguous {
    const char* name;
    std::vector<uint32_t> words;
    size_t faulting;
  };
  const Ambiguous cases[] = {
      {"the same load twice", {Ldr(Size::k64, x5, x1), Ldr(Size::k64, x6, x1), a64::Ret()}, 0},
      {"overlapping store and load", {Str(Size::k64, x5, x1, 8), Ldr(Size::k32, x6, x1, 8), a64::Ret()}, 0},
      {"a good load whose base now points at the fault",
       {Ldr(Size::k64, x5, x0), a64::Mov(Width::kX, x0, x1), Ldr(Size::k64, x6, x1), a64::Ret()}, 2},
      {"pair and atomic",
       {a64::LoadStorePair(PairOp::kLoad, Width::kX, x5, x6, x1, 0),
        a64::AtomicMemoryOperation(AtomicOp::kLdadd, Size::k64, MemOrder::kRelaxed, x2, x5, x1), a64::Ret()}, 0},
  };
  for (const Ambiguous& c : cases) {
    SCOPED_TRACE(c.name);
    auto slot = Place(*sandbox, c.words);
    ASSERT_NE(slot, nullptr);
    const MachineStop fast = Call(*sandbox->fast_machine(), slot->rx_image());
    EXPECT_EQ(fast.kind, MachineStop::Kind::kImpreciseFault) << fmt::format("pc 0x{:x}", fast.pc);
    const MachineStop precise = Call(sandbox->machine(0), slot->rx_image());
    EXPECT_EQ(precise.kind, MachineStop::Kind::kFault);
    EXPECT_EQ(precise.pc, slot->rx_image() + 4 * c.faulting);
  }
  // Accesses near the faulting address but not holding it are no reason
  // for doubt: a store of [x1 + 8, x1 + 16) and a load of [x1 + 16, x1 + 20).
  auto slot = Place(*sandbox, {Str(Size::k64, x5, x1, 8), Ldr(Size::k32, x6, x1, 16), a64::Ret()});
  ASSERT_NE(slot, nullptr);
  const MachineStop fast = Call(*sandbox->fast_machine(), slot->rx_image());
  EXPECT_EQ(fast.kind, MachineStop::Kind::kFault) << fast.message;
  EXPECT_EQ(fast.pc, slot->rx_image());
}

// `value` returned by code in `slot`: movz x0, #value; ret.
std::vector<uint32_t> Returns(uint32_t value) { return {MovImm(Reg::kX0, value), a64::Ret()}; }

uint64_t RunReturn(Machine& machine, uint64_t entry) {
  const MachineStop stop = Call(machine, entry);
  EXPECT_EQ(stop.kind, MachineStop::Kind::kReturned) << stop.message;
  return machine.ReadX(0);
}

// Frees the slot and allocates until the pack hands out the very same
// image address again (the slot is reused first fit; the hole is random),
// then finalizes `words` there.
std::unique_ptr<jit::PackAllocation> RewriteInPlace(Sandbox& sandbox, std::unique_ptr<jit::PackAllocation> old,
                                                    const std::vector<uint32_t>& words) {
  const uint64_t image = old->rx_image();
  sandbox.pack().Free(std::move(old));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    auto allocation = sandbox.pack().Alloc(4 * words.size());
    EXPECT_TRUE(allocation.ok());
    if (!allocation) return nullptr;
    if ((*allocation)->rx_image() != image) {
      sandbox.pack().Free(std::move(allocation).value());
      continue;
    }
    std::memcpy((*allocation)->rw_image(), words.data(), 4 * words.size());
    sandbox.pack().Finalize(**allocation);
    return std::move(allocation).value();
  }
  ADD_FAILURE() << "the pack never gave the same image address back";
  return nullptr;
}

TEST(harness_machine, RewrittenSlotRunsNewCodeOnBothMachines) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine& precise = sandbox->machine(0);
  Machine& fast = *sandbox->fast_machine();
  auto slot = Place(*sandbox, Returns(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  EXPECT_EQ(RunReturn(precise, entry), 1u);
  EXPECT_EQ(RunReturn(fast, entry), 1u);
  for (uint32_t generation = 2; generation < 6; ++generation) {
    SCOPED_TRACE(fmt::format("generation {}", generation));
    const uint64_t precise_removals = precise.unicorn_cache_removals();
    const uint64_t fast_removals = fast.unicorn_cache_removals();
    slot = RewriteInPlace(*sandbox, std::move(slot), Returns(generation));
    ASSERT_NE(slot, nullptr);
    ASSERT_EQ(slot->rx_image(), entry);
    // Only the free found translations to drop (one call to Unicorn per
    // machine); the attempts and the finalize had nothing to drop.
    EXPECT_EQ(precise.unicorn_cache_removals(), precise_removals + 1);
    EXPECT_EQ(fast.unicorn_cache_removals(), fast_removals + 1);
    EXPECT_EQ(RunReturn(precise, entry), generation);
    EXPECT_EQ(RunReturn(fast, entry), generation);
  }
}

// The check above can fail: bytes written into RX memory without the cache
// maintenance operation leave the old translation running (UNICORN.md), and
// the operation is what makes the new code run.
// Keeping unchanged translations (SandboxOptions::keep_unchanged_translations)
// must not change what runs: these tests run in both modes.
class harness_machine_cache : public testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<Sandbox> MakeCacheSandbox() { return MakeSandbox({.keep_unchanged_translations = GetParam()}); }
};
INSTANTIATE_TEST_SUITE_P(Modes, harness_machine_cache, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& mode) {
                           return mode.param ? std::string("KeepUnchanged") : std::string("DropEveryFlush");
                         });

TEST_P(harness_machine_cache, WriteWithoutFlushRunsStaleCode) {
  auto sandbox = MakeCacheSandbox();
  ASSERT_NE(sandbox, nullptr);
  auto slot = Place(*sandbox, Returns(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  Machine* machines[] = {&sandbox->machine(0), sandbox->fast_machine()};
  for (Machine* machine : machines) EXPECT_EQ(RunReturn(*machine, entry), 1u);
  const uint32_t word = MovImm(Reg::kX0, 2);
  std::memcpy(sandbox->env().memory().HostPointer(entry, 4), &word, 4);
  for (Machine* machine : machines) EXPECT_EQ(RunReturn(*machine, entry), 1u) << "stale code expected";
  sandbox->patcher().FlushIcache(entry, entry + 4, jit::TextOrigin::kFinalize);
  for (Machine* machine : machines) EXPECT_EQ(RunReturn(*machine, entry), 2u);
}

TEST(harness_machine, RemoveCacheAsksUnicornOnlyForTranslatedCode) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine& precise = sandbox->machine(0);
  Machine& fast = *sandbox->fast_machine();
  // A slot that has never run: neither its finalize nor its free asks Unicorn.
  const uint64_t p0 = precise.unicorn_cache_removals(), f0 = fast.unicorn_cache_removals();
  auto idle = Place(*sandbox, Returns(1));
  ASSERT_NE(idle, nullptr);
  sandbox->pack().Free(std::move(idle));
  EXPECT_EQ(precise.unicorn_cache_removals(), p0);
  EXPECT_EQ(fast.unicorn_cache_removals(), f0);

  // Code run on the precise machine only: its free asks that machine only.
  auto slot = Place(*sandbox, Returns(1));
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(RunReturn(precise, slot->rx_image()), 1u);
  sandbox->pack().Free(std::move(slot));
  EXPECT_EQ(precise.unicorn_cache_removals(), p0 + 1);
  EXPECT_EQ(fast.unicorn_cache_removals(), f0);

  // Chunk granularity: the 8-byte image lies in one 64-byte chunk.
  slot = Place(*sandbox, Returns(3));
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  const uint64_t chunk = entry & ~uint64_t{63};
  ASSERT_LE(entry + 8, chunk + 64);
  EXPECT_EQ(RunReturn(fast, entry), 3u);
  uint64_t f = fast.unicorn_cache_removals();
  fast.RemoveCache(chunk + 64, chunk + 128);  // the next chunk: nothing there
  EXPECT_EQ(fast.unicorn_cache_removals(), f);
  fast.RemoveCache(chunk + 60, chunk + 64);  // part of the chunk: asks, the chunk stays marked
  EXPECT_EQ(fast.unicorn_cache_removals(), f + 1);
  fast.RemoveCache(chunk, chunk + 64);  // the whole chunk: asks, then it is clean
  EXPECT_EQ(fast.unicorn_cache_removals(), f + 2);
  fast.RemoveCache(chunk, chunk + 64);
  EXPECT_EQ(fast.unicorn_cache_removals(), f + 2);
  // And the translation really is gone: a silent write now shows.
  const uint32_t word = MovImm(Reg::kX0, 4);
  std::memcpy(sandbox->env().memory().HostPointer(entry, 4), &word, 4);
  EXPECT_EQ(RunReturn(fast, entry), 4u);
  // Outside the JIT regions there is no tracking: always asked.
  f = fast.unicorn_cache_removals();
  fast.RemoveCache(guest::kHelperBase, guest::kHelperBase + 64);
  EXPECT_EQ(fast.unicorn_cache_removals(), f + 1);
}

// Code that runs across a chunk boundary and is then rewritten through a
// flush of only the second chunk: the block that started in the first
// chunk covers the second too, so the flush must reach Unicorn.
TEST_P(harness_machine_cache, FlushOfALaterChunkDropsABlockThatStartedEarlier) {
  auto sandbox = MakeCacheSandbox();
  ASSERT_NE(sandbox, nullptr);
  std::vector<uint32_t> words;
  for (int i = 0; i < 40; ++i) words.push_back(AddImm(Reg::kX0, Reg::kX0, 1));
  words.push_back(a64::Ret());
  auto slot = Place(*sandbox, words);
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  for (Machine* machine : {&sandbox->machine(0), sandbox->fast_machine()}) {
    SCOPED_TRACE(machine == sandbox->fast_machine() ? "fast" : "precise");
    ASSERT_TRUE(machine->PrepareCall(entry, {0, 0, 0, 0, 0}, guest::StackTop(0)));
    ASSERT_EQ(machine->Resume().kind, MachineStop::Kind::kReturned);
    EXPECT_EQ(machine->ReadX(0), 40u);
  }
  // Rewrite the last addition, in a later chunk than the entry.
  const uint64_t last_add = entry + 4 * 39;
  const uint64_t chunk = last_add & ~uint64_t{63};
  ASSERT_GT(chunk, entry);
  const uint32_t add100 = AddImm(Reg::kX0, Reg::kX0, 100);
  sandbox->patcher().Copy(last_add, {reinterpret_cast<const uint8_t*>(&add100), 4}, jit::TextOrigin::kFinalize);
  sandbox->patcher().FlushIcache(chunk, chunk + 64, jit::TextOrigin::kFinalize);
  for (Machine* machine : {&sandbox->machine(0), sandbox->fast_machine()}) {
    SCOPED_TRACE(machine == sandbox->fast_machine() ? "fast" : "precise");
    ASSERT_TRUE(machine->PrepareCall(entry, {0, 0, 0, 0, 0}, guest::StackTop(0)));
    ASSERT_EQ(machine->Resume().kind, MachineStop::Kind::kReturned);
    EXPECT_EQ(machine->ReadX(0), 139u);
  }
}

TEST_P(harness_machine_cache, AFreedSlotReloadedRunsWhatWasReloaded) {
  auto sandbox = MakeCacheSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine* machines[] = {&sandbox->machine(0), sandbox->fast_machine()};
  auto slot = Place(*sandbox, Returns(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  for (Machine* machine : machines) EXPECT_EQ(RunReturn(*machine, entry), 1u);
  // The same words again, then other words, then the first again: each
  // run sees the words of the last reload, whatever was translated before.
  for (const uint32_t value : {1u, 7u, 1u, 7u}) {
    SCOPED_TRACE(fmt::format("reloaded to return {}", value));
    slot = RewriteInPlace(*sandbox, std::move(slot), Returns(value));
    ASSERT_NE(slot, nullptr);
    for (Machine* machine : machines) EXPECT_EQ(RunReturn(*machine, entry), value);
  }
  // Freed and not reloaded: the trap words run, not the old code.
  sandbox->pack().Free(std::move(slot));
  for (Machine* machine : machines) {
    const MachineStop stop = Call(*machine, entry);
    EXPECT_EQ(stop.kind, MachineStop::Kind::kException) << stop.message;
  }
}

// What keeping saves: a slot reloaded with the same words is not
// translated again; a reload that changes one chunk of a longer image
// drops the translations of that chunk (and of blocks reaching into it),
// not those of the chunks before it.
TEST(harness_machine, KeptTranslationsOfASlotReloadedWithTheSameWords) {
  auto sandbox = MakeSandbox({.keep_unchanged_translations = true});
  ASSERT_NE(sandbox, nullptr);
  Machine& precise = sandbox->machine(0);
  // Eight blocks of a chunk's length (each ends in a branch to the next);
  // the last addition of the last one is the word a reload changes. A
  // block spans at most two chunks, so one changed word drops at most the
  // three blocks around it.
  const auto image = [](uint32_t last_add) {
    std::vector<uint32_t> words;
    for (int block = 0; block < 8; ++block) {
      for (int i = 0; i < 15; ++i) words.push_back(AddImm(Reg::kX0, Reg::kX0, block == 7 && i == 14 ? last_add : 1));
      words.push_back(a64::B(4));
    }
    words.push_back(a64::Ret());
    return words;
  };
  auto slot = Place(*sandbox, image(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t entry = slot->rx_image();
  const auto run = [&] {
    EXPECT_TRUE(precise.PrepareCall(entry, {0, 0, 0, 0, 0}, guest::StackTop(0)));
    const MachineStop stop = precise.Resume();
    EXPECT_EQ(stop.kind, MachineStop::Kind::kReturned) << stop.message;
    return precise.ReadX(0);
  };
  EXPECT_EQ(run(), 120u);
  const uint64_t first_translation = precise.instructions_translated();
  EXPECT_GE(first_translation, 128u);  // the eight blocks; the RET may share a marked chunk

  slot = RewriteInPlace(*sandbox, std::move(slot), image(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t kept_before = precise.translations_kept();
  EXPECT_EQ(run(), 120u);
  EXPECT_EQ(precise.instructions_translated(), first_translation) << "the same words were translated again";
  EXPECT_GT(precise.translations_kept(), kept_before);

  slot = RewriteInPlace(*sandbox, std::move(slot), image(100));
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(run(), 219u);
  const uint64_t retranslated = precise.instructions_translated() - first_translation;
  EXPECT_GT(retranslated, 0u);
  EXPECT_LT(retranslated, first_translation / 2) << "chunks that did not change were translated again";
}

TEST(harness_machine, TextPatcherCountsByOrigin) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  UnicornTextPatcher& patcher = sandbox->patcher();
  // Creating the sandbox made pack 0 (a fill and a flush) and finalized
  // the resident program (a copy and a flush).
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kNewPack).fills, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kNewPack).flushes, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kNewPack).bytes_filled, jit::kPackSize);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).copies, 1u);
  patcher.ResetCounters();
  auto slot = Place(*sandbox, Returns(1));
  ASSERT_NE(slot, nullptr);
  const uint64_t bytes = slot->slot_bytes();
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).copies, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).flushes, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).bytes_copied, bytes);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).fills, 0u);
  sandbox->pack().Free(std::move(slot));
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).fills, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).flushes, 1u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFree).bytes_filled, bytes);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kNewPack).fills, 0u);
  EXPECT_EQ(patcher.counters(jit::TextOrigin::kFinalize).copies, 1u);
}

// A machine that has translated enough gets a fresh Unicorn engine at its
// next call (Unicorn 2.0.1 misbehaves when its translation buffer fills
// mid-run); calls before and after give the same results, and code written
// since runs new.
TEST(harness_machine, RecycledEngineRunsTheSameCode) {
  SandboxOptions options;
  options.fast_machine = true;
  auto sandbox = MakeSandbox(options);
  ASSERT_NE(sandbox, nullptr);
  for (Machine* machine : {&sandbox->machine(0), sandbox->fast_machine()}) {
    machine->set_recycle_after(16);
    const uint64_t opened = machine->engines_opened();
    for (uint32_t round = 0; round < 8; ++round) {
      // x0 = round, in a fresh slot each time (new code to translate).
      auto slot = Place(*sandbox, {a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, Reg::kX0, round),
                                   AddImm(Reg::kX0, Reg::kX0, 0), AddImm(Reg::kX0, Reg::kX0, 0),
                                   AddImm(Reg::kX0, Reg::kX0, 0), AddImm(Reg::kX0, Reg::kX0, 0), a64::Ret()});
      ASSERT_NE(slot, nullptr);
      const MachineStop stop = Call(*machine, slot->rx_image());
      EXPECT_EQ(stop.kind, MachineStop::Kind::kReturned);
      EXPECT_EQ(machine->ReadX(0), round);
      sandbox->pack().Free(std::move(slot));
    }
    // Six instructions a call against a threshold of 16: a new engine
    // every few calls.
    EXPECT_GE(machine->engines_opened(), opened + 2);
  }
}

// An interrupt's call can be the one that recycles the engine: the context
// saved before it, in the old engine, must resume in the new one.
TEST(harness_machine, ContextSavedBeforeARecycleResumesInTheNewEngine) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine& machine = sandbox->machine(0);
  machine.set_recycle_after(1);
  // x0 = 7; x0 += 1 (twice); ret: stopped after the first two instructions.
  auto interrupted = Place(*sandbox, {a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, Reg::kX0, 7),
                                      AddImm(Reg::kX0, Reg::kX0, 1), AddImm(Reg::kX0, Reg::kX0, 1), a64::Ret()});
  auto handler = Place(*sandbox, {a64::MoveWideImmediate(a64::MoveWideOp::kMovz, Width::kX, Reg::kX0, 99),
                                  AddImm(Reg::kX0, Reg::kX0, 0), AddImm(Reg::kX0, Reg::kX0, 0),
                                  AddImm(Reg::kX0, Reg::kX0, 0), AddImm(Reg::kX0, Reg::kX0, 0), a64::Ret()});
  ASSERT_NE(interrupted, nullptr);
  ASSERT_NE(handler, nullptr);
  const uint64_t opened = machine.engines_opened();
  ASSERT_TRUE(machine.PrepareCall(interrupted->rx_image(), kArgs, guest::StackTop(0)));
  ASSERT_EQ(machine.Resume(2).kind, MachineStop::Kind::kStep);
  ASSERT_EQ(machine.ReadX(0), 8u);
  const MachineContext saved = machine.SaveContext();
  EXPECT_EQ(machine.engines_opened(), opened) << "nothing was translated before the first call";
  ASSERT_EQ(Call(machine, handler->rx_image()).kind, MachineStop::Kind::kReturned);
  EXPECT_EQ(machine.engines_opened(), opened + 1) << "the handler's call should have recycled the engine";
  EXPECT_EQ(machine.ReadX(0), 99u);

  machine.RestoreContext(saved);
  EXPECT_EQ(machine.ReadX(0), 8u);
  const MachineStop stop = machine.Resume();
  EXPECT_EQ(stop.kind, MachineStop::Kind::kReturned);
  EXPECT_EQ(machine.ReadX(0), 9u);
}

// A saved context is moved around (into the record of an interrupted
// call): moved or move-assigned, it restores the instruction count too, on
// which a call's resumption after a stop depends.
TEST(harness_machine, AMovedContextRestoresTheInstructionCount) {
  auto sandbox = MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  Machine& machine = sandbox->machine(0);
  auto code = Place(*sandbox, {AddImm(Reg::kX0, Reg::kX0, 1), AddImm(Reg::kX0, Reg::kX0, 1),
                               AddImm(Reg::kX0, Reg::kX0, 1), a64::Ret()});
  ASSERT_NE(code, nullptr);
  ASSERT_TRUE(machine.PrepareCall(code->rx_image(), kArgs, guest::StackTop(0)));
  ASSERT_EQ(machine.Resume(2).kind, MachineStop::Kind::kStep);
  ASSERT_EQ(machine.steps(), 2u);
  MachineContext saved = machine.SaveContext();
  MachineContext moved(std::move(saved));
  MachineContext assigned;
  assigned = machine.SaveContext();
  ASSERT_EQ(Call(machine, code->rx_image()).kind, MachineStop::Kind::kReturned);
  ASSERT_NE(machine.steps(), 2u);
  machine.RestoreContext(moved);
  EXPECT_EQ(machine.steps(), 2u);
  ASSERT_EQ(Call(machine, code->rx_image()).kind, MachineStop::Kind::kReturned);
  machine.RestoreContext(assigned);
  EXPECT_EQ(machine.steps(), 2u);
}

TEST(harness_machine, FaultSpecificationsParseOrSayWhatIsWrong) {
  auto open = ParseUnicornFault("open");
  ASSERT_TRUE(open) << open.message();
  EXPECT_EQ(open->call, UnicornCall::kOpen);
  EXPECT_EQ(open->skip, 0u);
  auto map = ParseUnicornFault("map:3");
  ASSERT_TRUE(map) << map.message();
  EXPECT_EQ(map->call, UnicornCall::kMapMemory);
  EXPECT_EQ(map->skip, 3u);
  auto unknown = ParseUnicornFault("close");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find("expected open, map or start"), std::string::npos) << unknown.message();
  EXPECT_FALSE(ParseUnicornFault("start:x"));
  EXPECT_FALSE(ParseUnicornFault("start:"));
}

// Unicorn failures become errors that name the call and carry
// uc_strerror's text; nothing aborts, and a machine that failed once
// refuses to run instead of running on a broken engine.
TEST(harness_machine, AnEngineThatWillNotOpenIsAnErrorNamingTheCall) {
  auto sandbox = Sandbox::Create({.unicorn_fault = {UnicornCall::kOpen, 0}});
  ASSERT_FALSE(sandbox);
  EXPECT_NE(sandbox.message().find("unicorn: open: "), std::string::npos) << sandbox.message();
  EXPECT_NE(sandbox.message().find(uc_strerror(UC_ERR_NOMEM)), std::string::npos) << sandbox.message();
}

TEST(harness_machine, MemoryThatWillNotMapIsAnErrorNamingTheRegion) {
  auto sandbox = Sandbox::Create({.unicorn_fault = {UnicornCall::kMapMemory, 2}});
  ASSERT_FALSE(sandbox);
  EXPECT_NE(sandbox.message().find("unicorn: map region "), std::string::npos) << sandbox.message();
  EXPECT_NE(sandbox.message().find(uc_strerror(UC_ERR_NOMEM)), std::string::npos) << sandbox.message();
}

TEST(harness_machine, EmulationThatWillNotStartIsAnErrorAndTheMachineStaysFailed) {
  auto sandbox = MakeSandbox({.unicorn_fault = {UnicornCall::kStartEmulation, 1}});
  ASSERT_NE(sandbox, nullptr);
  Machine& machine = sandbox->machine(0);
  auto code = Place(*sandbox, {a64::Ret()});
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(Call(machine, code->rx_image()).kind, MachineStop::Kind::kReturned) << "the first start succeeds";
  const MachineStop failed = Call(machine, code->rx_image());
  EXPECT_EQ(failed.kind, MachineStop::Kind::kError);
  EXPECT_NE(failed.message.find("unicorn: start emulation at 0x"), std::string::npos) << failed.message;
  EXPECT_NE(failed.message.find(uc_strerror(UC_ERR_NOMEM)), std::string::npos) << failed.message;
  ASSERT_TRUE(machine.failure());
  EXPECT_FALSE(machine.PrepareCall(code->rx_image(), kArgs, guest::StackTop(0)));
  EXPECT_EQ(machine.Resume().kind, MachineStop::Kind::kError);
}

// The engine recycle used to abort the process when a fresh engine would
// not open; now the call that needed it fails, with the reason.
TEST(harness_machine, AFreshEngineThatWillNotOpenFailsTheCallInsteadOfAborting) {
  auto sandbox = MakeSandbox({.fast_machine = false, .unicorn_fault = {UnicornCall::kOpen, 1}});
  ASSERT_NE(sandbox, nullptr);
  Machine& machine = sandbox->machine(0);
  machine.set_recycle_after(0);
  auto code = Place(*sandbox, {AddImm(Reg::kX0, Reg::kX0, 1), a64::Ret()});
  ASSERT_NE(code, nullptr);
  ASSERT_EQ(Call(machine, code->rx_image()).kind, MachineStop::Kind::kReturned);
  auto prepared = machine.PrepareCall(code->rx_image(), kArgs, guest::StackTop(0));
  ASSERT_FALSE(prepared);
  EXPECT_NE(prepared.message().find("unicorn: open: "), std::string::npos) << prepared.message();
}

}  // namespace
}  // namespace bpfdiff
