// kernel/bpf/core.c's own prog pack (bpf_jit_binary_pack_*, bpf_prog_pack_*)
// under the kernel's JIT: only execmem, set_memory_rox and the text patching
// below it are bpfdiff's, and what it hands out is checked from outside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "harness/diff/code_generator.h"
#include "harness/machine/identity_view.h"
#include "harness/machine/sandbox.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"
#include "oracle/trampoline.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

using jit_testing::Asm;
using jit_testing::MustProgram;

constexpr std::string_view kSmall = "mov %r0, 42\nexit";

// A sandbox without the resident program, and the kernel's JIT on
// core.c's pack over it.
struct CorePackFixture {
  std::unique_ptr<Sandbox> sandbox;
  std::unique_ptr<kernelsrc::KernelJit> jit;

  CorePackFixture() {
    SandboxOptions options;
    options.resident_program = false;
    sandbox = jit_testing::MakeSandbox(options);
    auto created = kernelsrc::KernelJit::Create(sandbox->pack(), sandbox->patcher(),
                                                KernelJitWorldOf(*sandbox, KernelPackSource::kCoreC),
                                                jit::AtomicLowering::kLse);
    EXPECT_TRUE(created.ok()) << created.message();
    if (created) jit = std::move(created).value();
  }

  // What core.c's pack did wrong, one per line ("" for nothing).
  std::string Problems() const {
    std::string all;
    for (const std::string& problem : jit->TakePackProblems()) all += problem + "\n";
    return all;
  }

  uint32_t WordAt(uint64_t address) const {
    uint32_t word = 0;
    const uint8_t* host = sandbox->env().memory().HostPointer(address, 4);
    if (host != nullptr) std::memcpy(&word, host, 4);
    return word;
  }
};

TEST(kernel_pack, CoreCMakesAPackForTheFirstImageAndReleasesItWhenEmpty) {
  CorePackFixture f;
  ASSERT_NE(f.jit, nullptr);
  ASSERT_EQ(f.sandbox->pack().Accounting().packs, 0);
  auto compiled = f.jit->Compile(MustProgram(Asm(kSmall)));
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  const jit::PackAccounting loaded = f.sandbox->pack().Accounting();
  EXPECT_EQ(loaded.packs, 1);
  EXPECT_EQ(loaded.external_packs, 1) << "the pack is core.c's, from execmem_alloc";
  EXPECT_EQ(loaded.packs_created, 1u);
  EXPECT_EQ(loaded.live_rw_buffers, 0) << "finalize freed the RW buffer";
  const jit::PackAllocation& slot = *compiled->subprograms[0].allocation;
  EXPECT_TRUE(slot.adopted());
  EXPECT_EQ(slot.rx_slot() % jit::kChunkSize, 0u);
  // bpf_jit_binary_pack_alloc(): the header holds the slot's size, the
  // image starts within the slot's first chunk.
  EXPECT_EQ(f.WordAt(slot.rx_slot()), slot.slot_bytes());
  EXPECT_LT(slot.rx_image() - slot.rx_slot(), jit::kChunkSize);
  // The rest of the pack is what alloc_new_pack() filled it with.
  const uint64_t pack_base = slot.rx_slot() - slot.rx_slot() % jit::kPackSize;
  EXPECT_EQ(f.WordAt(pack_base + jit::kPackSize - 4), jit::kBreakFault);
  EXPECT_EQ(f.Problems(), "");

  const uint64_t header = slot.rx_slot(), bytes = slot.slot_bytes();
  ASSERT_TRUE(f.jit->Release(*compiled).ok());
  const jit::PackAccounting freed = f.sandbox->pack().Accounting();
  EXPECT_EQ(freed.packs, 0) << "bpf_prog_pack_free() frees a pack once its bitmap is empty";
  EXPECT_EQ(freed.packs_released, 1u);
  for (uint64_t at = header; at < header + bytes; at += 4) {
    ASSERT_EQ(f.WordAt(at), jit::kBreakFault) << "bpf_arch_text_invalidate() left 0x" << std::hex << at;
  }
  EXPECT_EQ(f.Problems(), "");
}

TEST(kernel_pack, SlotsShareAPackWithoutOverlapping) {
  CorePackFixture f;
  ASSERT_NE(f.jit, nullptr);
  std::vector<jit::CompiledProgram> programs;
  std::set<std::pair<uint64_t, uint64_t>> slots;
  for (int i = 0; i < 8; ++i) {
    auto compiled = f.jit->Compile(MustProgram(Asm(kSmall)));
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    const jit::PackAllocation& a = *compiled->subprograms[0].allocation;
    for (const auto& [begin, end] : slots) {
      EXPECT_TRUE(a.rx_slot() >= end || a.rx_slot() + a.slot_bytes() <= begin) << "slots overlap";
    }
    slots.insert({a.rx_slot(), a.rx_slot() + a.slot_bytes()});
    programs.push_back(std::move(compiled).value());
  }
  EXPECT_EQ(f.sandbox->pack().Accounting().packs, 1);
  // A freed slot in the middle is handed out again (first fit), after its
  // invalidation.
  const uint64_t freed_slot = programs[3].subprograms[0].allocation->rx_slot();
  ASSERT_TRUE(f.jit->Release(programs[3]).ok());
  EXPECT_EQ(f.WordAt(freed_slot), jit::kBreakFault);
  auto again = f.jit->Compile(MustProgram(Asm(kSmall)));
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->subprograms[0].allocation->rx_slot(), freed_slot);
  programs[3] = std::move(again).value();
  for (auto& program : programs) ASSERT_TRUE(f.jit->Release(program).ok());
  EXPECT_EQ(f.sandbox->pack().Accounting().packs, 0);
  EXPECT_EQ(f.Problems(), "");
}

// Each failable call of a first compile in an empty world: core.c's own
// allocations (the pack's struct, its executable memory, the RW buffer)
// fail in turn, and after each nothing is left in the pack or the heap.
TEST(kernel_pack, EachFailureInsideCoreCsPackLeavesNothing) {
  CorePackFixture f;
  ASSERT_NE(f.jit, nullptr);
  const isa::Program program = MustProgram(Asm(kSmall));
  std::vector<std::string> injected;
  for (uint32_t call = 1; call < 32; ++call) {
    kernelsrc::FailingCompile attempt = f.jit->CompileFailing(program, call);
    if (attempt.injected.empty()) {
      ASSERT_TRUE(attempt.compiled.ok()) << attempt.compiled.message();
      ASSERT_TRUE(f.jit->Release(*attempt.compiled).ok());
      break;
    }
    injected.push_back(attempt.injected);
    EXPECT_FALSE(attempt.compiled.ok()) << attempt.injected;
    EXPECT_EQ(attempt.breach, "") << attempt.injected;
    EXPECT_EQ(f.sandbox->pack().Accounting().packs, 0) << "after a failed " << attempt.injected;
  }
  EXPECT_EQ(injected, (std::vector<std::string>{"kzalloc", "kvcalloc", "bpf_jit_binary_pack_alloc", "kzalloc",
                                                "execmem_alloc", "kvmalloc"}));
  EXPECT_EQ(f.Problems(), "");
}

TEST(kernel_pack, AnImageLargerThanAPackGetsExecutableMemoryOfItsOwn) {
  CorePackFixture f;
  ASSERT_NE(f.jit, nullptr);
  // gotol over 150,000 lddw of constants with no 16-bit half zero, four
  // words each: an image of about 2.4 MiB.
  std::vector<isa::Insn> insns = {{isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, 300'000}};
  for (int i = 0; i < 150'000; ++i) {
    insns.push_back({isa::kOpLddw, 0, 0, 0, 0x11110001 + 2 * i});
    insns.push_back({0, 0, 0, 0, static_cast<int32_t>(0x9abcdef1u)});
  }
  insns.push_back({isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 1});
  insns.push_back({isa::kOpExit, 0, 0, 0, 0});
  isa::Program program;
  program.insns = insns;
  program.subprogram_starts = {0};
  auto compiled = f.jit->Compile(program);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  const jit::PackAllocation& a = *compiled->subprograms[0].allocation;
  EXPECT_TRUE(a.oversize());
  EXPECT_EQ(f.sandbox->pack().Accounting().oversize_allocations, 1);
  EXPECT_EQ(f.sandbox->pack().Accounting().packs, 0);
  ASSERT_TRUE(f.jit->Release(*compiled).ok());
  EXPECT_EQ(f.sandbox->pack().Accounting().oversize_allocations, 0) << "execmem_free()d";
  EXPECT_EQ(f.Problems(), "");
}

// A trampoline's slot is core.c's bpf_prog_pack_alloc()'s, in the same
// pack as the program it traces, and arch_free_bpf_trampoline() gives it
// back through bpf_prog_pack_free(), invalidated; each failure of the
// build (the pack's allocations among them) leaves nothing.
TEST(kernel_pack, TrampolinesTakeAndGiveBackCoreCsSlots) {
  CorePackFixture f;
  ASSERT_NE(f.jit, nullptr);
  auto traced = f.jit->Compile(MustProgram(Asm("mov %r0, %r1\nexit")));
  ASSERT_TRUE(traced.ok()) << traced.message();
  const uint64_t entry = traced->entry();
  kernelsrc::TrampolineRequest request;
  request.fentry = {{entry, 0, guest::kTrampProgEnterAddress, guest::kTrampProgExitAddress}};
  request.nr_args = 1;
  request.flags = trampoline::kRestoreRegs;
  request.traced_entry = entry;
  request.tramp_enter = guest::kTrampImageEnterAddress;
  request.tramp_exit = guest::kTrampImageExitAddress;
  const uint64_t chunks_before = f.sandbox->pack().Accounting().chunks_used;
  std::vector<std::string> injected;
  for (uint32_t fail_call = 1; fail_call < 10; ++fail_call) {
    request.fail_call = fail_call;
    kernelsrc::TrampolineErrorPath path;
    auto built = f.jit->BuildTrampoline(request, &path);
    EXPECT_EQ(path.breach, "") << "fail_call " << fail_call;
    if (path.injected.empty()) {
      ASSERT_TRUE(built.ok()) << built.message();
      const jit::PackAllocation& slot = *built->allocation;
      EXPECT_TRUE(slot.adopted());
      EXPECT_EQ(slot.pack(), traced->subprograms[0].allocation->pack()) << "one pack for both";
      EXPECT_GT(f.sandbox->pack().Accounting().chunks_used, chunks_before);
      const uint64_t at = built->entry;
      f.jit->ReleaseTrampoline(*built);
      EXPECT_EQ(f.WordAt(at), jit::kBreakFault) << "bpf_prog_pack_free() invalidates it";
      break;
    }
    injected.push_back(path.injected);
    EXPECT_FALSE(built.ok());
    EXPECT_EQ(f.sandbox->pack().Accounting().chunks_used, chunks_before) << "after a failed " << path.injected;
  }
  // The arch code's RW image (kvmalloc) and its table (kcalloc); core.c's
  // pack has room already, so its allocation cannot fail.
  EXPECT_FALSE(injected.empty());
  EXPECT_EQ(std::count(injected.begin(), injected.end(), "bpf_prog_pack_alloc"), 0)
      << "core.c's pack fails only where it allocates";
  EXPECT_EQ(f.sandbox->pack().Accounting().chunks_used, chunks_before);
  ASSERT_TRUE(f.jit->Release(*traced).ok());
  EXPECT_EQ(f.sandbox->pack().Accounting().packs, 0);
  EXPECT_EQ(f.Problems(), "");
}

TEST(kernel_pack, CoreCsPackHasOneUserPerProcess) {
  CorePackFixture first;
  ASSERT_NE(first.jit, nullptr);
  SandboxOptions options;
  options.resident_program = false;
  auto sandbox = jit_testing::MakeSandbox(options);
  kernelsrc::KernelJitWorld world{Sandbox::JitEnvironment(), guest::kDummyTrampAddress,
                                  static_cast<uint32_t>(guest::kThreadInfoCpuOffset), {}, std::nullopt};
  world.kernel_pack = kernelsrc::KernelPack{[] { return Status{}; }};
  auto second = kernelsrc::KernelJit::Create(sandbox->pack(), sandbox->patcher(), world, jit::AtomicLowering::kLse);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find("one per process"), std::string::npos) << second.message();
}

// A JIT destroyed with images still allocated hands them back through
// core.c, so that the next user of its list of packs starts empty.
TEST(kernel_pack, ADestroyedJitLeavesCoreCsPackEmpty) {
  {
    CorePackFixture f;
    ASSERT_NE(f.jit, nullptr);
    auto compiled = f.jit->Compile(MustProgram(Asm(kSmall)));
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    f.jit.reset();
    EXPECT_EQ(f.sandbox->pack().Accounting().external_packs, 0);
  }
  CorePackFixture next;
  ASSERT_NE(next.jit, nullptr);
  auto compiled = next.jit->Compile(MustProgram(Asm(kSmall)));
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  EXPECT_EQ(next.sandbox->pack().Accounting().packs_created, 1u) << "a pack of its own, not the last world's";
  ASSERT_TRUE(next.jit->Release(*compiled).ok());
}

}  // namespace
}  // namespace bpfdiff
