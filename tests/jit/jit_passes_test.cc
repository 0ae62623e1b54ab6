// jit_passes: the extra pass for programs with subprograms. It must write
// every callee's final RX address into the call sequences without changing
// the size (and fail cleanly, freeing everything, when the size changes);
// an image depends on where it lands only through those call sequences
// (CompiledSubprogram::address_words).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "jit/text_patching.h"
#include "oracle/guest_layout.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

// main calls `double` and `plus_double` (which calls `double` again) and
// `probe` (a PROBE_MEM load of NULL in a subprogram): r0 = 10 + 21 + 0.
constexpr const char* kCalls = R"(
mov %r6, 0
mov %r1, 5
call local double
add %r6, %r0
mov %r1, 7
call local plus_double
add %r6, %r0
mov %r1, 0
call local probe
add %r6, %r0
mov %r0, %r6
exit
double:
mov %r0, %r1
add %r0, %r1
exit
plus_double:
mov %r7, %r1
call local double
add %r0, %r7
exit
probe:
mov %r0, -1
probe ldxdw %r0, [%r1+0]
exit
)";

struct Images {
  std::vector<uint64_t> rx_images;
  std::vector<std::vector<uint32_t>> words;
  std::vector<std::vector<uint32_t>> address_words;
  std::vector<std::vector<uint8_t>> rx_slots;     // header, hole, image, table, tail: the whole RX slot
  std::vector<std::vector<uint8_t>> rx_extables;
};

// Compiles `program` in `sandbox` and records what landed in RX memory.
Images CompileAndRecord(Sandbox& sandbox, const isa::Program& program) {
  Images images;
  jit::Jit jit(sandbox.pack(), Sandbox::JitEnvironment(), {});
  auto compiled = jit.Compile(program);
  EXPECT_TRUE(compiled.ok()) << compiled.message();
  if (!compiled) return images;
  GuestMemory& memory = sandbox.env().memory();
  for (const auto& sub : compiled->subprograms) {
    images.rx_images.push_back(sub.rx_image);
    images.words.push_back(sub.words);
    images.address_words.push_back(sub.address_words);
    const uint8_t* slot = memory.HostPointer(sub.allocation->rx_slot(), sub.allocation->slot_bytes());
    const uint8_t* table = memory.HostPointer(sub.rx_extable, 12ull * sub.extable_entries);
    EXPECT_NE(slot, nullptr);
    EXPECT_NE(table, nullptr);
    if (slot == nullptr || table == nullptr) continue;
    images.rx_slots.emplace_back(slot, slot + sub.allocation->slot_bytes());
    images.rx_extables.emplace_back(table, table + 12ull * sub.extable_entries);
  }
  jit.Release(*compiled);
  return images;
}

TEST(jit_passes, ExtraPassWritesEveryCalleeAddress) {
  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  const isa::Program program = jit_testing::MustProgram(jit_testing::Asm(kCalls));
  ASSERT_EQ(program.subprogram_starts.size(), 4u);
  jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
  auto compiled = jit.Compile(program);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  ASSERT_EQ(compiled->subprograms.size(), 4u);
  GuestMemory& memory = sandbox->env().memory();
  size_t calls = 0;
  for (const auto& sub : compiled->subprograms) {
    // One address sequence per local call of the subprogram, in code order.
    std::vector<uint32_t> call_slots;
    for (uint32_t slot = sub.first_slot; slot < sub.end_slot; ++slot) {
      const isa::Insn& insn = program.insns[slot];
      if (insn.opcode == isa::kOpCall && insn.src == isa::kPseudoCall) call_slots.push_back(slot);
    }
    // Three words (movz/movk/movk) per call, consecutive.
    ASSERT_EQ(sub.address_words.size(), 3 * call_slots.size()) << "subprogram at slot " << sub.first_slot;
    for (size_t i = 0; i < call_slots.size(); ++i) {
      const uint32_t slot = call_slots[i];
      const uint32_t word = sub.address_words[3 * i];
      EXPECT_EQ(sub.address_words[3 * i + 1], word + 1);
      EXPECT_EQ(sub.address_words[3 * i + 2], word + 2);
      EXPECT_EQ(sub.SlotAt(sub.rx_image + 4ull * word), slot);
      const uint32_t target = slot + 1 + static_cast<uint32_t>(program.insns[slot].imm);
      const auto& callee = compiled->subprograms[program.SubprogramOf(target)];
      EXPECT_EQ(callee.first_slot, target);
      // The sequence loads the callee's final RX address, and RX holds it.
      EXPECT_EQ(jit_testing::AddressMovValue(sub.words, word), callee.rx_image)
          << fmt::format("call at instruction {}", slot);
      std::vector<uint32_t> in_rx(3);
      const uint8_t* rx = memory.HostPointer(sub.rx_image + 4ull * word, 12);
      ASSERT_NE(rx, nullptr);
      std::memcpy(in_rx.data(), rx, 12);
      EXPECT_EQ(jit_testing::AddressMovValue(in_rx, 0), callee.rx_image);
      ++calls;
    }
    EXPECT_TRUE(jit_testing::CheckExtable(program, sub, memory));
  }
  EXPECT_EQ(calls, 4u);
  jit.Release(*compiled);
  EXPECT_EQ(jit_testing::RunOnInterpAndJit(jit_testing::Asm(kCalls), {{0}}), (std::vector<uint64_t>{31}));
}

// JitBugs::extra_pass_grows: the size changes in the extra pass, which is
// a clean failure that frees every image (and never copies one to RX).
TEST(jit_passes, ExtraPassThatGrowsFailsAndFreesEverything) {
  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  const jit::PackAccounting before = sandbox->pack().Accounting();
  ASSERT_EQ(before.chunks_used, 1u);  // the resident program
  sandbox->patcher().ResetCounters();
  jit::JitOptions options;
  options.bugs.extra_pass_grows = true;
  jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), options);
  auto compiled = jit.Compile(jit_testing::MustProgram(jit_testing::Asm(kCalls)));
  ASSERT_FALSE(compiled.ok());
  fmt::print("jit_passes: {}\n", compiled.message());
  EXPECT_NE(compiled.message().find("extra pass"), std::string::npos) << compiled.message();
  EXPECT_EQ(compiled.message().rfind("subprogram 0: ", 0), 0u) << compiled.message();
  const jit::PackAccounting after = sandbox->pack().Accounting();
  EXPECT_EQ(after.chunks_used, before.chunks_used);
  EXPECT_EQ(after.largest_free_run, before.largest_free_run);
  EXPECT_EQ(after.live_rw_buffers, 0);
  EXPECT_EQ(after.packs, 1);
  EXPECT_EQ(after.oversize_allocations, 0);
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFinalize).copies, 0u);
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFree).fills, 4u);  // the four slots, invalidated
  // A program without subprograms has no extra pass: the bug cannot bite.
  auto single = jit.Compile(jit_testing::MustProgram(jit_testing::Asm("mov %r0, 1\nexit\n")));
  ASSERT_TRUE(single.ok()) << single.message();
  jit.Release(*single);
}

// The pack runs out of room in the middle of a compile: the images of the
// subprograms already allocated are freed again, RW buffers included.
TEST(jit_passes, AllocationFailureInALaterSubprogramFreesTheEarlierOnes) {
  const isa::Program program = jit_testing::MustProgram(jit_testing::Asm(kCalls));
  // The slot the main subprogram takes (a first compile, elsewhere).
  uint64_t main_slot = 0;
  {
    auto scratch = jit_testing::MakeSandbox();
    ASSERT_NE(scratch, nullptr);
    jit::Jit jit(scratch->pack(), Sandbox::JitEnvironment(), {});
    auto compiled = jit.Compile(program);
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    main_slot = compiled->subprograms[0].allocation->slot_bytes();
    jit.Release(*compiled);
  }
  SandboxOptions options;
  options.resident_program = false;
  auto sandbox = jit_testing::MakeSandbox(options);
  ASSERT_NE(sandbox, nullptr);
  jit::ProgPack& pack = sandbox->pack();
  // Every pack full, but for exactly the main subprogram's slot in pack 0.
  std::vector<std::unique_ptr<jit::PackAllocation>> fillers;
  for (uint64_t p = 0; p < guest::kMaxPacks; ++p) {
    const uint64_t slot = p == 0 ? jit::kPackSize - main_slot : jit::kPackSize;
    auto filler = pack.Alloc(slot - jit::kHeaderSize - 16);
    ASSERT_TRUE(filler.ok()) << filler.message();
    ASSERT_EQ((*filler)->pack(), static_cast<int>(p));
    pack.Finalize(**filler);
    fillers.push_back(std::move(filler).value());
  }
  const jit::PackAccounting before = pack.Accounting();
  ASSERT_EQ(before.chunks_free, main_slot / jit::kChunkSize);
  jit::Jit jit(pack, Sandbox::JitEnvironment(), {});
  auto compiled = jit.Compile(program);
  ASSERT_FALSE(compiled.ok());
  fmt::print("jit_passes: {}\n", compiled.message());
  EXPECT_EQ(compiled.message().rfind("subprogram 1: ", 0), 0u) << compiled.message();
  EXPECT_NE(compiled.message().find("full"), std::string::npos) << compiled.message();
  const jit::PackAccounting after = pack.Accounting();
  EXPECT_EQ(after.chunks_used, before.chunks_used);
  EXPECT_EQ(after.chunks_free, before.chunks_free);
  EXPECT_EQ(after.live_rw_buffers, 0);
  EXPECT_EQ(after.oversize_allocations, 0);
  // And the room is there again: the program compiles once a filler goes.
  pack.Free(std::move(fillers.back()));
  auto retry = jit.Compile(program);
  ASSERT_TRUE(retry.ok()) << retry.message();
  jit.Release(*retry);
}

// The same seed gives the same slots and holes: two compiles of the same
// program are identical, word for word and byte for byte in RX (headers,
// holes, code, tables and tails included).
TEST(jit_passes, SameSlotsGiveIdenticalImages) {
  const isa::Program program = jit_testing::MustProgram(jit_testing::Asm(kCalls));
  SandboxOptions options;
  options.pack_seed = 99;
  auto a = jit_testing::MakeSandbox(options);
  auto b = jit_testing::MakeSandbox(options);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const Images first = CompileAndRecord(*a, program);
  const Images second = CompileAndRecord(*b, program);
  ASSERT_EQ(first.rx_images.size(), 4u);
  EXPECT_EQ(first.rx_images, second.rx_images);
  EXPECT_EQ(first.words, second.words);
  EXPECT_EQ(first.rx_slots, second.rx_slots);
}

// Somewhere else in the packs, an image differs only in the words listed
// in address_words; the exception tables (offsets relative to the image)
// do not differ at all. (Moves of 64 KiB or more change the movk words,
// which carry bits 16..47 of the callee's address: all three are listed.)
TEST(jit_passes, OtherOffsetsDifferOnlyInAddressWords) {
  const isa::Program program = jit_testing::MustProgram(jit_testing::Asm(kCalls));
  const Images reference = CompileAndRecord(*jit_testing::MakeSandbox(), program);
  ASSERT_EQ(reference.rx_images.size(), 4u);
  struct Placement {
    const char* name;
    uint64_t seed;
    std::vector<uint64_t> fillers;
  };
  const Placement placements[] = {
      {"other holes", 5, {}},
      {"a few chunks further", 1, {1000}},
      {"past 64 KiB", 3, {70'000}},
      {"in a second pack", 1, {jit::kPackSize - jit::kChunkSize - jit::kHeaderSize - 16}},
  };
  for (const Placement& placement : placements) {
    SCOPED_TRACE(placement.name);
    SandboxOptions options;
    options.pack_seed = placement.seed;
    auto sandbox = jit_testing::MakeSandbox(options);
    ASSERT_NE(sandbox, nullptr);
    std::vector<std::unique_ptr<jit::PackAllocation>> fillers;
    for (const uint64_t bytes : placement.fillers) {
      auto filler = sandbox->pack().Alloc(bytes);
      ASSERT_TRUE(filler.ok()) << filler.message();
      sandbox->pack().Finalize(**filler);
      fillers.push_back(std::move(filler).value());
    }
    const Images moved = CompileAndRecord(*sandbox, program);
    ASSERT_EQ(moved.rx_images.size(), reference.rx_images.size());
    for (size_t s = 0; s < reference.rx_images.size(); ++s) {
      SCOPED_TRACE(fmt::format("subprogram {} at 0x{:x} and 0x{:x}", s, reference.rx_images[s], moved.rx_images[s]));
      EXPECT_NE(reference.rx_images[s], moved.rx_images[s]);
      EXPECT_EQ(reference.address_words[s], moved.address_words[s]);
      ASSERT_EQ(reference.words[s].size(), moved.words[s].size());
      const std::set<uint32_t> listed(reference.address_words[s].begin(), reference.address_words[s].end());
      std::vector<uint32_t> unlisted;
      for (uint32_t i = 0; i < reference.words[s].size(); ++i) {
        if (reference.words[s][i] != moved.words[s][i] && !listed.contains(i)) unlisted.push_back(i);
      }
      EXPECT_TRUE(unlisted.empty()) << fmt::format("words {} differ but are not in address_words {}",
                                                   fmt::join(unlisted, ","), fmt::join(listed, ","));
      EXPECT_EQ(reference.rx_extables[s], moved.rx_extables[s]);
    }
  }
}

}  // namespace
}  // namespace bpfdiff
