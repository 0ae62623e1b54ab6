// The bounds the JIT decides on, reached from nothing: a random walk of the
// mutator (the one diff_fuzzer uses) from an empty input, no seed, no
// coverage feedback, a fixed number of steps with fixed seeds. Along it the
// generator must write
//  - a tail-call chain that runs to MAX_TAIL_CALL_CNT (33 tail calls, run
//    on every engine with agreement);
//  - tail-call indexes below, equal to and above max_entries, and with
//    garbage in the upper half (the JIT compares the low 32 bits);
//  - a 32-bit JSET whose operands share bits only in their upper halves,
//    some of them differing only there;
//  - loads, stores and atomics at every offset class the JIT tells apart:
//    zero, an immediate (up to +-4095), a register (beyond, both signs),
//    and the field's limits, each access inside its area.
// Classified from the instructions as written (the generator emits the
// index or operand as a constant right before its use), so the walk costs
// decoding only; the chain and the far accesses are also run.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "fuzz/generator/mutator.h"
#include "oracle/helpers.h"
#include "tests/fuzz/fuzz_test_support.h"

namespace bpfdiff::fuzz {
namespace {

constexpr size_t kMaxSize = 2048;  // diff_fuzzer.options' max_len
constexpr unsigned kSteps = 20'000;

// The constant the last write to `reg` before `pc` put there, if that write
// is a mov of an immediate or an lddw of a number (what EmitMovImm writes).
std::optional<uint64_t> ConstantBefore(const std::vector<isa::Insn>& program, size_t pc, uint8_t reg) {
  for (size_t i = pc; i-- > 0;) {
    const isa::Insn& insn = program[i];
    if (i > 0 && program[i - 1].opcode == isa::kOpLddw) continue;  // a second slot
    if (insn.dst != reg) continue;
    if (insn.opcode == (isa::kClassAlu64 | isa::kSrcK | isa::kAluMov)) {
      return static_cast<uint64_t>(static_cast<int64_t>(insn.imm));
    }
    if (insn.opcode == (isa::kClassAlu | isa::kSrcK | isa::kAluMov)) return static_cast<uint32_t>(insn.imm);
    if (insn.opcode == isa::kOpLddw && insn.src == 0 && i + 1 < program.size()) {
      return static_cast<uint32_t>(insn.imm) | uint64_t{static_cast<uint32_t>(program[i + 1].imm)} << 32;
    }
    return std::nullopt;  // written some other way
  }
  return std::nullopt;
}

bool IsTailCall(const isa::Insn& insn) {
  return insn.opcode == isa::kOpTailCall || (insn.opcode == isa::kOpCall && insn.src == 0 && insn.imm == kHelperTailCall);
}

// Offset classes of jit/memory.cc and jit/atomic.cc.
enum OffsetClass { kZero, kImmediate, kRegisterPositive, kRegisterNegative, kLimit, kOffsetClasses };
const char* const kOffsetClassNames[] = {"zero", "immediate (1..4095, -1..-4095)", "register (> 4095)",
                                         "register (< -4095)", "limit (32767, -32768)"};
OffsetClass ClassOf(int16_t offset) {
  if (offset == 0) return kZero;
  if (offset == 32767 || offset == -32768) return kLimit;
  if (offset > 4095) return kRegisterPositive;
  if (offset < -4095) return kRegisterNegative;
  return kImmediate;
}

enum Access { kLoad, kStore, kAtomic, kAccesses };
const char* const kAccessNames[] = {"load", "store", "atomic"};
std::optional<Access> AccessOf(const isa::Insn& insn) {
  const uint8_t cls = insn.opcode & 0x07;
  const uint8_t mode = insn.opcode & 0xe0;
  if (cls == isa::kClassLdx && (mode == isa::kModeMem || mode == isa::kModeMemSx)) return kLoad;
  if ((cls == isa::kClassSt || cls == isa::kClassStx) && mode == isa::kModeMem) return kStore;
  if (cls == isa::kClassStx && mode == isa::kModeAtomic) return kAtomic;
  return std::nullopt;
}

struct Reached {
  unsigned chain_cases = 0;
  std::vector<std::vector<uint8_t>> chains;  // a few inputs in chain mode
  unsigned index_below = 0, index_equal = 0, index_above = 0, index_upper_garbage = 0, index_u32_max = 0;
  unsigned jset32_upper_only = 0, jset32_only_upper_halves_differ = 0;
  std::array<std::array<unsigned, kOffsetClasses>, kAccesses> offsets{};
  std::vector<std::vector<uint8_t>> far;  // the first few inputs with an access at a limit
};

void Classify(const CaseSource& source, const std::vector<uint8_t>& input, Reached& reached) {
  uint32_t entries = 0;
  for (const auto& map : source.maps) {
    if (map.type == isa::MapType::kProgArray) entries = map.max_entries;
  }
  if (input.size() > 15 && (input[15] & kOptionTailCallChain) == kOptionTailCallChain && entries > 0) {
    // Consecutive steps often make the same case: take every 64th.
    if (reached.chain_cases++ % 64 == 0 && reached.chains.size() < 10) reached.chains.push_back(input);
  }
  bool limit = false;
  for (const auto& program : source.programs) {
    for (size_t pc = 0; pc < program.size(); ++pc) {
      const isa::Insn& insn = program[pc];
      if (pc > 0 && program[pc - 1].opcode == isa::kOpLddw) continue;
      if (IsTailCall(insn) && entries > 0) {
        if (const auto index = ConstantBefore(program, pc, 3)) {
          const auto low = static_cast<uint32_t>(*index);
          reached.index_below += low < entries;
          reached.index_equal += low == entries;
          reached.index_above += low > entries;
          reached.index_u32_max += low == 0xffffffffu;
          reached.index_upper_garbage += (*index >> 32) != 0;
        }
      }
      if (insn.opcode == (isa::kClassJmp32 | isa::kSrcX | isa::kJmpJset)) {
        const auto a = ConstantBefore(program, pc, insn.dst);
        const auto b = ConstantBefore(program, pc, insn.src);
        if (a && b && ((*a & *b) & 0xffffffffu) == 0 && ((*a & *b) >> 32) != 0) {
          ++reached.jset32_upper_only;
          reached.jset32_only_upper_halves_differ += static_cast<uint32_t>(*a) == static_cast<uint32_t>(*b) && *a != *b;
        }
      }
      if (const auto access = AccessOf(insn)) {
        ++reached.offsets[*access][ClassOf(insn.offset)];
        limit |= ClassOf(insn.offset) == kLimit;
      }
    }
  }
  if (limit && reached.far.size() < 8) reached.far.push_back(input);
}

Reached Walk() {
  Reached reached;
  std::vector<uint8_t> buffer(kMaxSize);
  size_t size = 0;  // the empty input
  for (unsigned step = 0; step < kSteps; ++step) {
    size = MutateInput(buffer.data(), size, kMaxSize, step + 1);
    const std::vector<uint8_t> input(buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(size));
    if (size < 2 || input[1] == kModeRaw) continue;  // raw mode: the bytes are the program
    if (const auto source = DecodeFuzzInput(input)) Classify(*source, input, reached);
  }
  return reached;
}

const Reached& WalkOnce() {
  static const Reached reached = Walk();
  return reached;
}

TEST(FuzzGeneratorBounds, TailCallIndexesAroundMaxEntries) {
  const Reached& r = WalkOnce();
  std::printf("tail-call indexes: %u below, %u equal, %u above max_entries, %u 0xffffffff, %u with upper garbage\n",
              r.index_below, r.index_equal, r.index_above, r.index_u32_max, r.index_upper_garbage);
  EXPECT_GT(r.index_below, 0u);
  EXPECT_GT(r.index_equal, 0u);
  EXPECT_GT(r.index_above, 0u);
  EXPECT_GT(r.index_u32_max, 0u);
  EXPECT_GT(r.index_upper_garbage, 0u);
}

TEST(FuzzGeneratorBounds, Jset32WithOperandsThatMeetOnlyInTheirUpperHalves) {
  const Reached& r = WalkOnce();
  std::printf("jset32 with operands meeting only in the upper halves: %u, of which differing only there: %u\n",
              r.jset32_upper_only, r.jset32_only_upper_halves_differ);
  EXPECT_GT(r.jset32_upper_only, 0u);
  EXPECT_GT(r.jset32_only_upper_halves_differ, 0u);
}

TEST(FuzzGeneratorBounds, EveryOffsetClassOfLoadsStoresAndAtomics) {
  const Reached& r = WalkOnce();
  for (int a = 0; a < kAccesses; ++a) {
    for (int c = 0; c < kOffsetClasses; ++c) {
      std::printf("%s offsets, %s: %u\n", kAccessNames[a], kOffsetClassNames[c], r.offsets[a][c]);
      EXPECT_GT(r.offsets[a][c], 0u) << kAccessNames[a] << ", " << kOffsetClassNames[c];
    }
  }
  // Each far access lands inside its area: the runs agree, and none faults
  // at an access beyond +-4095.
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  ASSERT_FALSE(r.far.empty());
  unsigned far_executed = 0;
  for (const auto& input : r.far) {
    const auto source = DecodeFuzzInput(input);
    ASSERT_TRUE(source);
    const CaseRun run = harness->RunCase(*source);
    ASSERT_FALSE(run.load_error) << *run.load_error;
    EXPECT_EQ(run.FirstDivergence(), nullptr) << Hex(input);
    const Outcome& outcome = *run.runs.front().outcome;
    if (outcome.fault) {
      const auto& program = source->programs[outcome.fault->program];
      EXPECT_LE(std::abs(program[outcome.fault->insn].offset), 4095) << "a far access faulted: " << Hex(input);
    }
    far_executed += outcome.end == EndKind::kExit;
  }
  EXPECT_GT(far_executed, 0u);
}

TEST(FuzzGeneratorBounds, TailCallChainsRunToTheLimit) {
  const Reached& r = WalkOnce();
  std::printf("inputs in tail-call chain mode: %u\n", r.chain_cases);
  ASSERT_FALSE(r.chains.empty());
  DiffHarness* harness = SharedHarness();
  ASSERT_NE(harness, nullptr);
  unsigned at_limit = 0, at_limit_with_upper_halves = 0;
  for (const auto& input : r.chains) {
    const auto source = DecodeFuzzInput(input);
    ASSERT_TRUE(source);
    const CaseRun run = harness->RunCase(*source);
    ASSERT_FALSE(run.load_error) << *run.load_error;
    EXPECT_EQ(run.FirstDivergence(), nullptr) << Hex(input);
    // A chain is cut short only by an exit, a fault or a helper's unwind
    // on the way; one that ends at the main entry's end runs 33.
    const bool limit = run.runs.front().outcome->tail_calls.size() == 33;
    at_limit += limit;
    at_limit_with_upper_halves += limit && (input[15] & kOptionChainUpperGarbage) != 0;
  }
  std::printf("of %zu of them run, %u took 33 tail calls, %u of those with indexes that have an upper half\n",
              r.chains.size(), at_limit, at_limit_with_upper_halves);
  EXPECT_GT(at_limit, 0u);
}

}  // namespace
}  // namespace bpfdiff::fuzz
