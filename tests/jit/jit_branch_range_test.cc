// jit_branch_range: jumps at the limits of the BPF encodings compile and
// run; a conditional jump whose arm64 distance is beyond the +-1 MiB reach
// of b.cond (imm19) is a clean compile failure naming the instruction, and
// the failure leaves nothing allocated in the pack.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jit/text_patching.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

using isa::Insn;

constexpr uint8_t kMov64Imm = isa::kClassAlu64 | isa::kAluMov | isa::kSrcK;
constexpr uint8_t kAdd64Imm = isa::kClassAlu64 | isa::kAluAdd | isa::kSrcK;
constexpr uint8_t kMul64Imm = isa::kClassAlu64 | isa::kAluMul | isa::kSrcK;
constexpr uint8_t kJeqImm = isa::kClassJmp | isa::kJmpJeq | isa::kSrcK;
constexpr uint8_t kJneImm = isa::kClassJmp | isa::kJmpJne | isa::kSrcK;
constexpr uint8_t kJa = isa::kClassJmp | isa::kJmpJa;
constexpr uint8_t kGotol = isa::kClassJmp32 | isa::kJmpJa;
constexpr uint8_t kLdxb = isa::kClassLdx | isa::kModeMem | isa::kSizeB;

Insn I(uint8_t opcode, uint8_t dst = 0, uint8_t src = 0, int16_t offset = 0, int32_t imm = 0) {
  return Insn{opcode, dst, src, offset, imm};
}

// if (*(u8 *)r1 == 1) goto +32767, over 32767 one-word additions.
TEST(jit_branch_range, ConditionalJumpForwardAtOffsetMax) {
  std::vector<Insn> insns = {
      I(kLdxb, 2, 1, 0, 0),
      I(kMov64Imm, 0, 0, 0, 0),
      I(kJeqImm, 2, 0, 32767, 1),
  };
  for (int i = 0; i < 32767; ++i) insns.push_back(I(kAdd64Imm, 0, 0, 0, 1));
  insns.push_back(I(kAdd64Imm, 0, 0, 0, 0x100000));  // the target
  insns.push_back(I(isa::kOpExit));
  EXPECT_EQ(jit_testing::RunOnInterpAndJit(insns, {{1}, {0}}), (std::vector<uint64_t>{0x100000, 0x100000 + 32767}));
}

// if (r6 != 1) goto -32768: a gotol enters at the jump, which goes back
// 32768 slots to `mov r6, 1`; the body counts, and the second time the
// jump falls through to exit.
TEST(jit_branch_range, ConditionalJumpBackwardAtOffsetMin) {
  constexpr int kBody = 32767;  // slots [3, 3 + kBody), the first is mov r6, 1
  std::vector<Insn> insns = {
      I(kMov64Imm, 0, 0, 0, 0),
      I(kMov64Imm, 6, 0, 0, 0),
      I(kGotol, 0, 0, 0, kBody),
      I(kMov64Imm, 6, 0, 0, 1),
  };
  for (int i = 1; i < kBody; ++i) insns.push_back(I(kAdd64Imm, 0, 0, 0, 1));
  ASSERT_EQ(insns.size(), 3u + kBody);
  insns.push_back(I(kJneImm, 6, 0, -32768, 1));  // slot 3 + kBody; target 3 + kBody + 1 - 32768 = 3
  insns.push_back(I(isa::kOpExit));
  EXPECT_EQ(jit_testing::RunOnInterpAndJit(insns, {{0}}), (std::vector<uint64_t>{kBody - 1}));
}

// gotol forward and backward over 100k slots whose code is larger than
// the reach of b.cond (so only the imm26 of b can encode the jumps).
TEST(jit_branch_range, GotolOver100kInstructions) {
  constexpr int kFiller = 100'000;
  std::vector<Insn> insns = {
      I(kMov64Imm, 0, 0, 0, 0),
      I(kGotol, 0, 0, 0, kFiller + 2),  // to the slot after the filler
      I(kAdd64Imm, 0, 0, 0, 0x10),      // slot 2: the backward target
      I(isa::kOpExit),
  };
  // r0 *= 0x12345678: movz, movk, mul (3 words).
  for (int i = 0; i < kFiller; ++i) insns.push_back(I(kMul64Imm, 0, 0, 0, 0x12345678));
  const auto forward_target = static_cast<uint32_t>(insns.size());
  ASSERT_EQ(forward_target, 2u + kFiller + 2);
  insns.push_back(I(kAdd64Imm, 0, 0, 0, 1));
  const auto back = static_cast<int32_t>(insns.size());
  insns.push_back(I(kGotol, 0, 0, 0, 2 - (back + 1)));  // to slot 2
  // The distances really are beyond b.cond's reach.
  {
    auto sandbox = jit_testing::MakeSandbox();
    ASSERT_NE(sandbox, nullptr);
    jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
    auto compiled = jit.Compile(jit_testing::MustProgram(insns));
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    const auto& offsets = compiled->subprograms[0].offsets;
    EXPECT_GT(4ull * (offsets[forward_target] - offsets[1]), 1u << 20);
    EXPECT_GT(4ull * (offsets[static_cast<size_t>(back)] - offsets[2]), 1u << 20);
    jit.Release(*compiled);
  }
  EXPECT_EQ(jit_testing::RunOnInterpAndJit(insns, {{0}}), (std::vector<uint64_t>{0x11}));
}

// Compiles `insns` in a sandbox with no resident program; the compile must
// fail with a message naming `slot` and the reach of b.cond, and leave the
// pack as it found it (nothing used, no RW buffer, nothing copied to RX).
void ExpectOutOfRangeFailure(std::vector<Insn> insns, uint32_t slot) {
  SandboxOptions options;
  options.resident_program = false;
  auto sandbox = jit_testing::MakeSandbox(options);
  ASSERT_NE(sandbox, nullptr);
  jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
  auto compiled = jit.Compile(jit_testing::MustProgram(std::move(insns)));
  ASSERT_FALSE(compiled.ok());
  fmt::print("jit_branch_range: {}\n", compiled.message());
  EXPECT_EQ(compiled.message().rfind(fmt::format("instruction {}: ", slot), 0), 0u) << compiled.message();
  EXPECT_NE(compiled.message().find("1 MiB"), std::string::npos) << compiled.message();
  const jit::PackAccounting accounting = sandbox->pack().Accounting();
  EXPECT_EQ(accounting.live_rw_buffers, 0);
  EXPECT_EQ(accounting.chunks_used, 0u);
  EXPECT_EQ(accounting.packs, 0);
  EXPECT_EQ(accounting.oversize_allocations, 0);
  EXPECT_EQ(accounting.packs_created, accounting.packs_released);
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFinalize).copies, 0u);
  // The slot was invalidated once when it was freed.
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFree).fills, 1u);
}

// A conditional jump over 32000 tail calls (19 words each: 2.4 MB, an
// oversize image) and over 32000 callx (13 words each: 1.6 MB, in a pack).
TEST(jit_branch_range, ConditionalJumpBeyondBCondReachFailsCleanly) {
  constexpr int kFiller = 32'000;
  for (const Insn filler : {I(isa::kOpTailCall), I(isa::kOpCallX, 1)}) {
    SCOPED_TRACE(filler.opcode == isa::kOpTailCall ? "tail calls" : "callx");
    std::vector<Insn> insns = {
        I(kMov64Imm, 0, 0, 0, 0),
        I(kMov64Imm, 3, 0, 0, 0),
        I(kJeqImm, 1, 0, kFiller, 0),  // slot 2
    };
    for (int i = 0; i < kFiller; ++i) insns.push_back(filler);
    insns.push_back(I(isa::kOpExit));
    ExpectOutOfRangeFailure(insns, 2);
  }
}

// The same backwards: a gotol to the end, and a jump back to the start of
// 32000 callx.
TEST(jit_branch_range, BackwardConditionalJumpBeyondBCondReachFailsCleanly) {
  constexpr int kFiller = 32'000;
  std::vector<Insn> insns = {
      I(kMov64Imm, 0, 0, 0, 0),
      I(kJa, 0, 0, kFiller, 0),  // to the jump
  };
  for (int i = 0; i < kFiller; ++i) insns.push_back(I(isa::kOpCallX, 1));
  const auto jump = static_cast<uint32_t>(insns.size());
  insns.push_back(I(kJeqImm, 0, 0, static_cast<int16_t>(-(kFiller + 1)), 1));  // to slot 2
  insns.push_back(I(isa::kOpExit));
  ExpectOutOfRangeFailure(insns, jump);
}

// The jump out of reach in the second of three subprograms: the message
// names the subprogram and the instruction, and the first subprogram's
// image (allocated and emitted already) is freed with the rest.
TEST(jit_branch_range, OutOfReachInALaterSubprogramFreesEveryImage) {
  constexpr int kFiller = 32'000;
  std::vector<Insn> insns = {
      I(kMov64Imm, 1, 0, 0, 0),
      Insn{isa::kOpCall, 0, isa::kPseudoCall, 0, 1},  // to slot 3
      I(isa::kOpExit),
      I(kMov64Imm, 0, 0, 0, 0),  // slot 3: subprogram 1
      I(kJeqImm, 1, 0, kFiller, 0),  // slot 4
  };
  for (int i = 0; i < kFiller; ++i) insns.push_back(I(isa::kOpCallX, 1));
  insns.push_back(Insn{isa::kOpCall, 0, isa::kPseudoCall, 0, 1});  // to the last subprogram
  insns.push_back(I(isa::kOpExit));
  insns.push_back(I(kMov64Imm, 0, 0, 0, 7));  // subprogram 2
  insns.push_back(I(isa::kOpExit));
  SandboxOptions options;
  options.resident_program = false;
  auto sandbox = jit_testing::MakeSandbox(options);
  ASSERT_NE(sandbox, nullptr);
  jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
  const isa::Program program = jit_testing::MustProgram(std::move(insns));
  ASSERT_EQ(program.subprogram_starts.size(), 3u);
  auto compiled = jit.Compile(program);
  ASSERT_FALSE(compiled.ok());
  fmt::print("jit_branch_range: {}\n", compiled.message());
  EXPECT_EQ(compiled.message().rfind("subprogram 1: instruction 4: ", 0), 0u) << compiled.message();
  const jit::PackAccounting accounting = sandbox->pack().Accounting();
  EXPECT_EQ(accounting.live_rw_buffers, 0);
  EXPECT_EQ(accounting.chunks_used, 0u);
  EXPECT_EQ(accounting.packs, 0);
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFinalize).copies, 0u);
  EXPECT_EQ(sandbox->patcher().counters(jit::TextOrigin::kFree).fills, 2u);  // subprograms 0 and 1
}

// Words of one lowering of `insn`, measured from a compile.
uint32_t WordsOf(Insn insn) {
  auto sandbox = jit_testing::MakeSandbox();
  if (sandbox == nullptr) return 0;
  jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
  auto compiled = jit.Compile(jit_testing::MustProgram({insn, I(isa::kOpExit)}));
  EXPECT_TRUE(compiled.ok()) << compiled.message();
  if (!compiled) return 0;
  const auto& offsets = compiled->subprograms[0].offsets;
  return offsets[1] - offsets[0];
}

// `words` words of filler: tail calls (never executed) and one-word adds
// (r0 += 1). Returns the number of adds.
int AppendFiller(std::vector<Insn>& insns, uint32_t words, uint32_t tail_call_words) {
  for (uint32_t i = 0; i < words / tail_call_words; ++i) insns.push_back(I(isa::kOpTailCall));
  for (uint32_t i = 0; i < words % tail_call_words; ++i) insns.push_back(I(kAdd64Imm, 0, 0, 0, 1));
  return static_cast<int>(words % tail_call_words);
}

// b.cond reaches [-1 MiB, 1 MiB - 4]: a forward jump of exactly 1 MiB - 4
// compiles and runs, one of 1 MiB fails.
TEST(jit_branch_range, ForwardConditionalJumpAtTheEdgeOfBCondReach) {
  const uint32_t tail_call_words = WordsOf(I(isa::kOpTailCall));
  ASSERT_GT(tail_call_words, 1u);
  for (const uint32_t distance_words : {(1u << 18) - 1, 1u << 18}) {
    SCOPED_TRACE(fmt::format("b.cond distance {} bytes", 4 * distance_words));
    // 1: if (r1 != 0) goto target (cmp; b.ne): b.ne to target = 1 + filler words.
    std::vector<Insn> insns = {I(kMov64Imm, 0, 0, 0, 0), I(kJneImm, 1, 0, 0, 0)};
    AppendFiller(insns, distance_words - 1, tail_call_words);
    const auto target = static_cast<uint32_t>(insns.size());
    insns[1].offset = static_cast<int16_t>(target - 2);
    insns.push_back(I(kMov64Imm, 0, 0, 0, 0x600d));
    insns.push_back(I(isa::kOpExit));
    if (distance_words == 1u << 18) {
      ExpectOutOfRangeFailure(insns, 1);
      continue;
    }
    auto sandbox = jit_testing::MakeSandbox();
    ASSERT_NE(sandbox, nullptr);
    jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
    auto compiled = jit.Compile(jit_testing::MustProgram(insns));
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    // The construction is right: the b.ne is the last word of slot 1.
    const auto& offsets = compiled->subprograms[0].offsets;
    EXPECT_EQ(offsets[target] - (offsets[2] - 1), distance_words);
    jit.Release(*compiled);
    EXPECT_EQ(jit_testing::RunOnInterpAndJit(insns, {{0}}), (std::vector<uint64_t>{0x600d}));
  }
}

// Backwards: a jump of exactly -1 MiB compiles and runs, one of
// -1 MiB - 4 fails. The path: gotol to the jump, back to `mov r6, 1`, a
// ja over the tail calls, the adds, and the jump again, now not taken.
TEST(jit_branch_range, BackwardConditionalJumpAtTheEdgeOfBCondReach) {
  const uint32_t tail_call_words = WordsOf(I(isa::kOpTailCall));
  ASSERT_GT(tail_call_words, 1u);
  for (const uint32_t distance_words : {1u << 18, (1u << 18) + 1}) {
    SCOPED_TRACE(fmt::format("b.cond distance -{} bytes", 4 * distance_words));
    std::vector<Insn> insns = {
        I(kMov64Imm, 0, 0, 0, 0),
        I(kMov64Imm, 6, 0, 0, 0),
        I(kGotol, 0, 0, 0, 0),     // to the jump
        I(kMov64Imm, 6, 0, 0, 1),  // slot 3: the target (movz, 1 word)
        I(kJa, 0, 0, 0, 0),        // over the tail calls (b, 1 word)
    };
    // From the target to the b.ne: mov, b, the filler, and the jump's cmp.
    const uint32_t filler_words = distance_words - 3;
    for (uint32_t i = 0; i < filler_words / tail_call_words; ++i) insns.push_back(I(isa::kOpTailCall));
    insns[4].offset = static_cast<int16_t>(insns.size() - 5);
    const uint32_t adds = filler_words % tail_call_words;
    for (uint32_t i = 0; i < adds; ++i) insns.push_back(I(kAdd64Imm, 0, 0, 0, 1));
    const auto jump = static_cast<int32_t>(insns.size());
    insns[2].imm = jump - 3;
    insns.push_back(I(kJneImm, 6, 0, static_cast<int16_t>(3 - (jump + 1)), 1));
    insns.push_back(I(isa::kOpExit));
    if (distance_words != 1u << 18) {
      ExpectOutOfRangeFailure(insns, static_cast<uint32_t>(jump));
      continue;
    }
    auto sandbox = jit_testing::MakeSandbox();
    ASSERT_NE(sandbox, nullptr);
    jit::Jit jit(sandbox->pack(), Sandbox::JitEnvironment(), {});
    auto compiled = jit.Compile(jit_testing::MustProgram(insns));
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    const auto& offsets = compiled->subprograms[0].offsets;
    EXPECT_EQ((offsets[static_cast<size_t>(jump) + 1] - 1) - offsets[3], distance_words);
    jit.Release(*compiled);
    EXPECT_EQ(jit_testing::RunOnInterpAndJit(insns, {{0}}), (std::vector<uint64_t>{adds}));
  }
}

}  // namespace
}  // namespace bpfdiff
