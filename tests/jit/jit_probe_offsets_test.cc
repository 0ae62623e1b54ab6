// jit_probe_offsets: the PROBE_MEM vectors (tests/conformance/probe-*.data)
// give the interpreter's outcome wherever the JIT's images land: with other
// pack seeds (so other random holes before the image), behind filler slots
// of various sizes, in a hole left by a freed slot, in a second pack, and
// (for a program too large for a pack) in the oversize region. Each time the
// exception table is checked structurally in RX memory (CheckExtable): one
// entry per PROBE_MEM load, targets at the RX address of each load, fixups
// resuming at the next word with the load's destination register, sorted,
// found by SearchExtable.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "harness/diff/compare.h"
#include "harness/diff/interp_engine.h"
#include "harness/diff/jit_engine.h"
#include "oracle/guest_layout.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

using jit_testing::NamedCase;

constexpr uint64_t kInterpBudget = 1'000'000;
constexpr uint64_t kJitBudget = 10'000'000;

// An image of this many bytes takes every chunk of a pack but the first
// (RoundUp(bytes + header + 16, 64) = 2 MiB - 64): with the sandbox's
// resident program in chunk 0, the pack is then full.
constexpr uint64_t kRestOfPack = jit::kPackSize - jit::kChunkSize - jit::kHeaderSize - 16;

// Slots taken from the pack before the programs are compiled, and which of
// them to free again (leaving a hole) before compiling.
struct Placement {
  std::string name;
  std::vector<uint64_t> fillers;  // image bytes of each filler
  std::vector<size_t> freed;      // indices into `fillers`
  int expected_pack = 0;          // where the main program must land
};

std::vector<Placement> Placements() {
  return {
      {"right after the resident program", {}, {}, 0},
      {"after one chunk", {4}, {}, 0},
      {"after slots of odd sizes", {4, 100, 1000, 44, 2044}, {}, 0},
      {"past 64 KiB", {70'000}, {}, 0},
      {"past 1 MiB", {1'100'000}, {}, 0},
      {"in the hole of a freed slot", {6000, 4}, {0}, 0},
      {"in a second pack", {kRestOfPack}, {}, 1},
      {"deep in a second pack", {kRestOfPack, 1'500'000}, {}, 1},
  };
}

// Installs `loaded` in the sandbox and runs it on the interpreter: the
// outcome the JIT's runs of the case are compared with.
Outcome InstallAndInterpret(Sandbox& sandbox, const LoadedCase& loaded) {
  sandbox.env().Install(loaded);
  InterpreterEngine interp(sandbox);
  const Status prepared = interp.Prepare(loaded);
  EXPECT_TRUE(prepared.ok()) << prepared.message();
  sandbox.env().Reset();
  return interp.Run(kInterpBudget);
}

struct Tally {
  size_t runs = 0;
  size_t tables = 0;
  std::set<uint64_t> images;       // RX addresses of main images
  std::set<uint64_t> pack_offsets; // their offsets within the pack
  std::set<int> packs;
};

// Runs `c` on the interpreter and on the JIT in `sandbox` and checks the
// JIT's exception tables, where the main image landed, and the outcome.
// `within`, when not empty, is the RX range the main image must lie in.
void RunCase(Sandbox& sandbox, const NamedCase& c, const jit::JitOptions& options, const std::string& where,
             int expected_pack, std::pair<uint64_t, uint64_t> within, Tally& tally) {
  SCOPED_TRACE(c.name + ", " + where);
  auto loaded = LoadCase(c.source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  GuestEnvironment& env = sandbox.env();
  const Outcome expected = InstallAndInterpret(sandbox, *loaded);

  JitEngine jit(sandbox, options, "jit");
  auto prepared = jit.Prepare(*loaded);
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  for (size_t p = 0; p < jit.compiled().size(); ++p) {
    for (const auto& sub : jit.compiled()[p].subprograms) {
      EXPECT_TRUE(jit_testing::CheckExtable(loaded->programs[p].program, sub, env.memory()))
          << "program " << p << ", subprogram at 0x" << std::hex << sub.rx_image;
      ++tally.tables;
    }
  }
  const auto& main = jit.compiled().front().subprograms.front();
  EXPECT_EQ(main.allocation->pack(), expected_pack) << "the main image is at 0x" << std::hex << main.rx_image;
  if (within.first != within.second) {
    EXPECT_GE(main.rx_image, within.first);
    EXPECT_LE(main.rx_image + 4ull * main.code_words, within.second);
  }
  tally.images.insert(main.rx_image);
  tally.pack_offsets.insert((main.rx_image - guest::kPackBase) % jit::kPackSize);
  tally.packs.insert(main.allocation->pack());

  env.Reset();
  const Outcome actual = jit.Run(kJitBudget);
  const Verdict verdict = Compare(expected, actual);
  EXPECT_TRUE(verdict.match()) << verdict.Describe();
  EXPECT_EQ(CheckExpectations(c.expected, actual), std::nullopt);
  ++tally.runs;
  jit.Release();
}

TEST(jit_probe_offsets, ProbeVectorsAtManyPackOffsets) {
  const auto cases = jit_testing::ReadDataFiles(jit_testing::OwnVectorsDir(), "probe-");
  ASSERT_GE(cases.size(), 8u);
  const uint64_t seeds[] = {1, 2, 7, 12345, 0x9e3779b97f4a7c15};
  Tally tally;
  size_t config = 0;
  for (const Placement& placement : Placements()) {
    for (const uint64_t seed : seeds) {
      // Alternate the machine (fast with precise fallback, or precise only)
      // and the atomic lowering, so that both are covered at odd offsets.
      ++config;
      SandboxOptions options;
      options.pack_seed = seed;
      options.fast_machine = config % 2 == 0;
      auto sandbox = jit_testing::MakeSandbox(options);
      ASSERT_NE(sandbox, nullptr);
      jit::ProgPack& pack = sandbox->pack();
      std::vector<std::unique_ptr<jit::PackAllocation>> fillers;
      for (const uint64_t bytes : placement.fillers) {
        auto allocation = pack.Alloc(bytes);
        ASSERT_TRUE(allocation.ok()) << allocation.message();
        pack.Finalize(**allocation);
        fillers.push_back(std::move(allocation).value());
      }
      std::pair<uint64_t, uint64_t> hole{0, 0};
      for (const size_t index : placement.freed) {
        hole = {fillers[index]->rx_slot(), fillers[index]->rx_slot() + fillers[index]->slot_bytes()};
        pack.Free(std::move(fillers[index]));
      }
      const jit::JitOptions jit_options{config % 3 == 0 ? jit::AtomicLowering::kLlSc : jit::AtomicLowering::kLse, {}};
      const std::string where = fmt::format("{}, seed {}", placement.name, seed);
      for (const NamedCase& c : cases) {
        RunCase(*sandbox, c, jit_options, where, placement.expected_pack, hole, tally);
      }
    }
  }
  fmt::print("jit_probe_offsets: {} probe vectors x {} placements x {} seeds = {} runs, {} exception tables "
             "checked; main images at {} distinct RX addresses ({} distinct offsets in a pack, packs {})\n",
             cases.size(), Placements().size(), std::size(seeds), tally.runs, tally.tables, tally.images.size(),
             tally.pack_offsets.size(), fmt::join(tally.packs, ","));
  EXPECT_EQ(tally.runs, cases.size() * Placements().size() * std::size(seeds));
  // Every placement and seed moves the images (the vectors of one sandbox
  // reuse one slot, with other random holes).
  EXPECT_GE(tally.images.size(), Placements().size() * std::size(seeds));
  EXPECT_EQ(tally.packs.size(), 2u);
}

// The planted bug of the arm64 prog pack review: offsets computed against
// the RW buffer. The table no longer points at the loads, and a faulting
// PROBE_MEM load is an unhandled fault instead of reading 0.
//
// (This test first failed: the switch took the faulting pc *and* the
// entry's own address from the RW alias, so both moved together and the
// offsets, being differences, came out right. jit/extable.cc now mixes
// them as the kernel's mistake did.)
TEST(jit_probe_offsets, ExtableAgainstRwIsCaught) {
  const auto cases = jit_testing::ReadDataFiles(jit_testing::OwnVectorsDir(), "probe-null-all-widths");
  ASSERT_EQ(cases.size(), 1u);
  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  auto loaded = LoadCase(cases[0].source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  GuestEnvironment& env = sandbox->env();
  const Outcome expected = InstallAndInterpret(*sandbox, *loaded);
  ASSERT_EQ(expected.end, EndKind::kExit);

  jit::JitOptions options;
  options.bugs.extable_against_rw = true;
  JitEngine jit(*sandbox, options, "jit");
  ASSERT_TRUE(jit.Prepare(*loaded).ok());
  const auto& main = jit.compiled().front().subprograms.front();
  EXPECT_FALSE(jit_testing::CheckExtable(loaded->programs[0].program, main, env.memory()));
  env.Reset();
  const Outcome actual = jit.Run(kJitBudget);
  EXPECT_FALSE(Compare(expected, actual).match()) << actual.Summary();
  EXPECT_EQ(actual.end, EndKind::kFault) << actual.Summary();
  jit.Release();
}

// The structural check and the run fail when the table in RX memory is
// wrong in any one way (what a JIT that computed it wrongly would leave).
TEST(jit_probe_offsets, CorruptTablesAreCaught) {
  const auto cases = jit_testing::ReadDataFiles(jit_testing::OwnVectorsDir(), "probe-null-all-widths");
  ASSERT_EQ(cases.size(), 1u);
  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  auto loaded = LoadCase(cases[0].source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  GuestEnvironment& env = sandbox->env();
  const Outcome expected = InstallAndInterpret(*sandbox, *loaded);

  JitEngine jit(*sandbox, jit::JitOptions{}, "jit");
  ASSERT_TRUE(jit.Prepare(*loaded).ok());
  const auto& main = jit.compiled().front().subprograms.front();
  const isa::Program& program = loaded->programs[0].program;
  ASSERT_TRUE(jit_testing::CheckExtable(program, main, env.memory()));
  ASSERT_GE(main.extable_entries, 2u);
  uint8_t* table = env.memory().HostPointer(main.rx_extable, 12ull * main.extable_entries);
  ASSERT_NE(table, nullptr);
  const std::vector<uint8_t> good(table, table + 12ull * main.extable_entries);

  auto add32 = [&](size_t offset, int32_t delta) {
    int32_t value;
    std::memcpy(&value, table + offset, 4);
    value += delta;
    std::memcpy(table + offset, &value, 4);
  };
  struct Corruption {
    const char* what;
    std::function<void()> apply;
    bool run_fails;  // whether the run itself then differs from the interpreter
  };
  const Corruption corruptions[] = {
      {"entry 0 targets the next word", [&] { add32(0, 4); }, true},
      {"entry 0 resumes one word later", [&] { add32(4, -4); }, true},
      {"entry 0 zeroes another register", [&] { add32(4, 1 << 27); }, true},
      {"entry 0 has another type", [&] { table[8] = 2; }, false},
      {"entries 0 and 1 swapped", [&] {
         std::vector<uint8_t> e0(table, table + 12);
         std::memcpy(table, table + 12, 12);
         std::memcpy(table + 12, e0.data(), 12);
       }, true},
  };
  for (const Corruption& corruption : corruptions) {
    SCOPED_TRACE(corruption.what);
    corruption.apply();
    EXPECT_FALSE(jit_testing::CheckExtable(program, main, env.memory()));
    env.Reset();
    const Outcome actual = jit.Run(kJitBudget);
    if (corruption.run_fails) {
      EXPECT_FALSE(Compare(expected, actual).match()) << actual.Summary();
    }
    std::memcpy(table, good.data(), good.size());
  }
  EXPECT_TRUE(jit_testing::CheckExtable(program, main, env.memory()));
  jit.Release();
}

// A program whose code is larger than a pack gets an allocation of its own
// in the oversize region; its exception table must point there, and its
// PROBE_MEM loads (before and after 2 MiB of code that a gotol jumps over)
// must still be fixed up.
TEST(jit_probe_offsets, OversizeImage) {
  // A tail call lowers to 19 words (76 bytes): 28000 of them are 2.1 MB.
  constexpr int kTailCalls = 28'000;
  std::string text =
      "mov %r0, 0\n"
      "mov %r1, 0\n"
      "mov %r2, -1\n"
      "probe ldxdw %r2, [%r1+0]\n"        // NULL: r2 = 0
      "or %r0, %r2\n"
      "mov %r4, 0x101000\n"
      "mov %r5, -1\n"
      "probe ldxsh %r5, [%r4+2]\n"        // the gap after the helper stubs: r5 = 0
      "or %r0, %r5\n"
      "ja32 after\n";
  for (int i = 0; i < kTailCalls; ++i) text += "tail_call\n";
  text +=
      "after:\n"
      "mov %r3, -1\n"
      "probe ldxw %r3, [%r1+0x7ffc]\n"    // r3 = 0
      "or %r0, %r3\n"
      "add %r0, 0x600d\n"
      "exit\n";
  CaseSource source;
  source.programs.push_back(jit_testing::Asm(text));
  const NamedCase c{"oversize", source, {}};

  auto sandbox = jit_testing::MakeSandbox();
  ASSERT_NE(sandbox, nullptr);
  auto loaded = LoadCase(source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  GuestEnvironment& env = sandbox->env();
  const Outcome expected = InstallAndInterpret(*sandbox, *loaded);
  ASSERT_EQ(expected.end, EndKind::kExit) << expected.Summary();
  ASSERT_EQ(expected.r0, 0x600du);

  JitEngine jit(*sandbox, jit::JitOptions{}, "jit");
  auto prepared = jit.Prepare(*loaded);
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  const auto& main = jit.compiled().front().subprograms.front();
  EXPECT_GT(4ull * main.code_words, jit::kPackSize);
  EXPECT_TRUE(main.allocation->oversize());
  EXPECT_EQ(main.allocation->pack(), -1);
  EXPECT_EQ(sandbox->pack().Accounting().oversize_allocations, 1);
  const uint64_t oversize_end = guest::kOversizeBase + guest::kOversizeSize;
  EXPECT_GE(main.rx_image, guest::kOversizeBase);
  EXPECT_LE(main.rx_extable + 12ull * main.extable_entries, oversize_end);
  EXPECT_TRUE(jit_testing::CheckExtable(loaded->programs[0].program, main, env.memory()));
  for (const uint32_t slot : jit_testing::ProbeLoadSlots(loaded->programs[0].program, 0,
                                                         static_cast<uint32_t>(loaded->programs[0].program.size()))) {
    const uint64_t load = jit_testing::ProbeLoadAddress(main, slot);
    EXPECT_GE(load, guest::kOversizeBase) << "instruction " << slot;
    EXPECT_LT(load, oversize_end) << "instruction " << slot;
  }
  env.Reset();
  const Outcome actual = jit.Run(kJitBudget);
  const Verdict verdict = Compare(expected, actual);
  EXPECT_TRUE(verdict.match()) << verdict.Describe();
  fmt::print("jit_probe_offsets oversize: {} code words ({} bytes) at 0x{:x}, {} exception-table entries\n",
             main.code_words, 4ull * main.code_words, main.rx_image, main.extable_entries);
  jit.Release();
  EXPECT_EQ(sandbox->pack().Accounting().oversize_allocations, 0);
}

}  // namespace
}  // namespace bpfdiff
