// The kernel's JIT with bpf_jit_harden on: kernel/bpf/core.c's
// bpf_jit_blind_constants() rewrites the program before the JIT sees it,
// for the loaders bpf_jit_blinding_enabled() names, and the code computes
// what the program as loaded computes. The offsets the engine keeps are
// those of the program as loaded (SHIMS.md, "core.c").
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/diff/blinding_check.h"
#include "harness/diff/code_generator.h"
#include "kernelsrc/kernel_jit.h"
#include "kernelsrc/kernel_loader.h"
#include "oracle/guest_layout.h"
#include "tests/jit/jit_test_support.h"
#include "tests/kernelsrc/kernel_run.h"

namespace bpfdiff {
namespace {

using kernelsrc::KernelLoader;

// One program compiled by the kernel's JIT as `loader` loads it, in a
// sandbox of its own.
struct Hardened : CompiledUnderLoader {
  Hardened(std::string_view text, const KernelLoader& loader) : CompiledUnderLoader(text, loader) {
    EXPECT_TRUE(error.empty()) << error;
  }
  ~Hardened() {
    if (jit && !compiled.subprograms.empty()) {
      EXPECT_TRUE(jit->Release(compiled).ok());
    }
  }

  uint64_t R0() {
    auto outcome = RunOnKernelConventions(*sandbox, loaded, compiled);
    EXPECT_TRUE(outcome.ok()) << outcome.message();
    return outcome ? outcome->r0 : ~uint64_t{0};
  }
};

// Constants a user chose, in each form blinding rewrites: an ALU64 and an
// ALU32 immediate, a jump's immediate, a store's immediate and a 64-bit load.
constexpr std::string_view kProgram = R"(
  mov %r0, 0x5a5a1234
  add32 %r0, 0x1111
  jeq %r0, 0x5a5a2345, skip
  mov %r0, 0
skip:
  stdw [%r10-8], 0x77
  ldxdw %r1, [%r10-8]
  add %r0, %r1
  lddw %r2, 0x0123456789abcdef
  xor %r0, %r2
  exit
)";

constexpr uint64_t kExpected = (uint64_t{0x5a5a2345} + 0x77) ^ 0x0123456789abcdefULL;

// Whether a MOVZ/MOVN/MOVK of the code has `imm16` as its immediate.
bool MovesHalfword(const std::vector<uint32_t>& code, uint16_t imm16) {
  return std::any_of(code.begin(), code.end(), [&](uint32_t word) {
    const bool move_wide = (word & 0x1f800000u) == 0x12800000u;  // MOVN/MOVZ/MOVK, 32 or 64 bits
    return move_wide && ((word >> 5) & 0xffff) == imm16;
  });
}

TEST(kernel_blinding, BlindsAsBpfJitBlindingEnabledSays) {
  Hardened root(kProgram, kernelsrc::kRootLoader);
  ASSERT_FALSE(root.compiled.subprograms.empty());
  // Unblinded, the constants are in the code.
  EXPECT_TRUE(MovesHalfword(root.Code(), 0x1234));
  EXPECT_TRUE(MovesHalfword(root.Code(), 0xcdef));
  for (const KernelLoader& loader : kernelsrc::HardenedLoaders()) {
    SCOPED_TRACE(std::string(loader.name));
    Hardened hardened(kProgram, loader);
    ASSERT_FALSE(hardened.compiled.subprograms.empty());
    if (kernelsrc::BlindsConstants(loader)) {
      EXPECT_GT(hardened.Code().size(), root.Code().size());
      EXPECT_FALSE(MovesHalfword(hardened.Code(), 0x1234));
      EXPECT_FALSE(MovesHalfword(hardened.Code(), 0xcdef));
      EXPECT_FALSE(MovesHalfword(hardened.Code(), 0x89ab));
    } else {
      EXPECT_EQ(hardened.Code(), root.Code());
    }
  }
}

TEST(kernel_blinding, BlindedCodeComputesWhatTheProgramDoes) {
  for (const KernelLoader& loader : kernelsrc::HardenedLoaders()) {
    SCOPED_TRACE(std::string(loader.name));
    Hardened hardened(kProgram, loader);
    ASSERT_FALSE(hardened.compiled.subprograms.empty());
    EXPECT_EQ(hardened.R0(), kExpected);
  }
}

TEST(kernel_blinding, OffsetsAreThoseOfTheProgramAsLoaded) {
  Hardened hardened(kProgram, kernelsrc::HardenedLoaders()[0]);
  Hardened root(kProgram, kernelsrc::kRootLoader);
  ASSERT_FALSE(hardened.compiled.subprograms.empty());
  ASSERT_FALSE(root.compiled.subprograms.empty());
  const auto& blinded = hardened.compiled.subprograms[0].offsets;
  const auto& plain = root.compiled.subprograms[0].offsets;
  // One entry per slot as loaded, and the epilogue's.
  ASSERT_EQ(blinded.size(), hardened.loaded.programs[0].program.insns.size() + 1);
  ASSERT_EQ(blinded.size(), plain.size());
  EXPECT_TRUE(std::is_sorted(blinded.begin(), blinded.end()));
  // The prologue is the same; every slot with a constant grew by the
  // rewrite, one without (the load, the exit) did not.
  EXPECT_EQ(blinded.front(), plain.front());
  const auto words = [](const std::vector<uint32_t>& offsets, size_t slot) {
    return offsets[slot + 1] - offsets[slot];
  };
  EXPECT_GT(words(blinded, 0), words(plain, 0));  // mov imm
  EXPECT_GT(words(blinded, 1), words(plain, 1));  // add32 imm
  EXPECT_EQ(words(blinded, 5), words(plain, 5));  // ldxdw
  // A 64-bit load is one instruction: its second slot has no code of its
  // own, blinded (each half rewritten apart) as not.
  EXPECT_EQ(words(plain, 8), 0u);
  EXPECT_EQ(words(blinded, 8), 0u);
  EXPECT_GT(words(blinded, 7), words(plain, 7));
}

// The check the engines make on blinded code (harness/diff/blinding_check.h)
// sees the constants of unblinded code, and none in blinded code.
TEST(kernel_blinding, NoConstantOfTheProgramSurvivesInBlindedCode) {
  Hardened root(kProgram, kernelsrc::kRootLoader);
  ASSERT_FALSE(root.compiled.subprograms.empty());
  const isa::Program& program = root.loaded.programs[0].program;
  const auto unblinded = ConstantLeftByBlinding(program, root.compiled);
  ASSERT_TRUE(unblinded.has_value());
  EXPECT_NE(unblinded->find("0x5a5a1234 of slot 0"), std::string::npos) << *unblinded;
  for (const KernelLoader& loader : kernelsrc::HardenedLoaders()) {
    SCOPED_TRACE(std::string(loader.name));
    Hardened hardened(kProgram, loader);
    ASSERT_FALSE(hardened.compiled.subprograms.empty());
    EXPECT_EQ(ConstantLeftByBlinding(program, hardened.compiled).has_value(), !kernelsrc::BlindsConstants(loader));
  }
}

TEST(kernel_blinding, TheConstantsDrawnAreAFunctionOfTheProgram) {
  Hardened first(kProgram, kernelsrc::HardenedLoaders()[0]);
  Hardened again(kProgram, kernelsrc::HardenedLoaders()[0]);
  EXPECT_EQ(first.Code(), again.Code());
}

}  // namespace
}  // namespace bpfdiff
