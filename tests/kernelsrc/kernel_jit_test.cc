// The kernel's arm64 JIT, built from the tree under our shims: it compiles
// into bpfdiff's pack, its code is what the kernel would emit, and its
// tables are what bpfdiff's engines read.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "fuzz/generator/far_branch.h"
#include "harness/diff/code_generator.h"
#include "harness/diff/kernel_refusals.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "kernelsrc/kernel_jit.h"
#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "tests/jit/jit_test_support.h"

namespace bpfdiff {
namespace {

using jit_testing::Asm;
using jit_testing::MustProgram;

struct KernelJitFixture {
  std::unique_ptr<Sandbox> sandbox = jit_testing::MakeSandbox();
  std::unique_ptr<kernelsrc::KernelJit> jit;

  explicit KernelJitFixture(jit::AtomicLowering lowering) {
    auto created = kernelsrc::KernelJit::Create(sandbox->pack(), sandbox->patcher(), KernelJitWorldOf(*sandbox),
                                                lowering);
    EXPECT_TRUE(created.ok()) << created.message();
    if (created) jit = std::move(created).value();
  }
};

std::vector<std::string> Listing(const jit::CompiledSubprogram& sub) {
  auto disassembler = A64Disassembler::Create();
  EXPECT_TRUE(disassembler.ok()) << disassembler.message();
  std::vector<std::string> lines;
  for (uint32_t i = 0; i < sub.code_words; ++i) {
    auto text = disassembler->Disassemble(sub.words[i], sub.rx_image + 4ull * i);
    lines.push_back(text ? *text : fmt::format(".word 0x{:08x}", sub.words[i]));
  }
  return lines;
}

TEST(kernel_jit, CompilesMovExitAsTheKernelDoes) {
  KernelJitFixture f(jit::AtomicLowering::kLse);
  ASSERT_NE(f.jit, nullptr);
  auto compiled = f.jit->Compile(MustProgram(Asm("mov %r0, 42\nexit")));
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  ASSERT_EQ(compiled->subprograms.size(), 1u);
  const auto& sub = compiled->subprograms[0];
  // The main prologue as bpf_jit_comp.c's comment gives it, with BTI and
  // PAC (Debian's configuration), no callee-saved register in use, and the
  // 512-byte stack every subprogram gets; then r0 = 42 in x7, and the
  // epilogue, and the PLT (build_plt) after it.
  const std::vector<std::string> expected = {
      "bti jc", "add x9, x30, #0", "nop", "paciasp", "stp x29, x30, [sp, #-16]!", "mov x29, sp",
      "stp xzr, x26, [sp, #-16]!", "mov x26, sp", "bti j", "sub sp, sp, #512",
      "mov x7, #42",
      "add sp, sp, #512", "ldp xzr, x26, [sp], #16", "ldp x29, x30, [sp], #16", "add x0, x7, #0",
      "autiasp", "ret",
      "nop", "ldr x10, #8", "br x10"};
  EXPECT_EQ(Listing(sub), expected);
  EXPECT_EQ(sub.offsets, (std::vector<uint32_t>{10, 11, 11}));  // mov at word 10, exit is the epilogue
  EXPECT_EQ(sub.extable_entries, 0u);
  // The PLT's target is the guest's dummy_tramp, in RX memory right after
  // the code.
  uint64_t target = 0;
  const uint8_t* rx = f.sandbox->env().memory().HostPointer(sub.rx_image + 4ull * sub.code_words, 8);
  ASSERT_NE(rx, nullptr);
  std::memcpy(&target, rx, 8);
  EXPECT_EQ(target, guest::kDummyTrampAddress);
  EXPECT_EQ(kernelsrc::PrologueFrameBytes(sub), 32u);
  EXPECT_EQ(kernelsrc::StackReservationBytes(sub), 512u);
  EXPECT_TRUE(f.jit->Release(*compiled).ok());
}

// The stack depth a loader gives (prog->aux->stack_depth): none reserves
// no stack; another is rounded up to 16 bytes. The pushes are the same,
// and bpfdiff reads both from the prologue.
TEST(kernel_jit, ReservesTheStackDepthItIsGiven) {
  KernelJitFixture f(jit::AtomicLowering::kLse);
  ASSERT_NE(f.jit, nullptr);
  const isa::Program program = MustProgram(Asm("mov %r0, 42\nexit"));
  kernelsrc::FailingCompile none = f.jit->CompileFailing(program, kernelsrc::kRootLoader, 0, 0);
  ASSERT_TRUE(none.compiled.ok()) << none.compiled.message();
  const auto& sub = none.compiled->subprograms[0];
  const std::vector<std::string> expected = {
      "bti jc", "add x9, x30, #0", "nop", "paciasp", "stp x29, x30, [sp, #-16]!", "mov x29, sp",
      "stp xzr, x26, [sp, #-16]!", "mov x26, sp", "bti j",
      "mov x7, #42",
      "ldp xzr, x26, [sp], #16", "ldp x29, x30, [sp], #16", "add x0, x7, #0",
      "autiasp", "ret",
      "nop", "ldr x10, #8", "br x10"};
  EXPECT_EQ(Listing(sub), expected);
  EXPECT_EQ(kernelsrc::PrologueFrameBytes(sub), 32u);
  EXPECT_EQ(kernelsrc::StackReservationBytes(sub), 0u);
  EXPECT_TRUE(f.jit->Release(*none.compiled).ok());

  kernelsrc::FailingCompile some = f.jit->CompileFailing(program, kernelsrc::kRootLoader, 0, 40);
  ASSERT_TRUE(some.compiled.ok()) << some.compiled.message();
  EXPECT_EQ(kernelsrc::PrologueFrameBytes(some.compiled->subprograms[0]), 32u);
  EXPECT_EQ(kernelsrc::StackReservationBytes(some.compiled->subprograms[0]), 48u);
  EXPECT_TRUE(f.jit->Release(*some.compiled).ok());
}

// Every program of the corpora, compiled by the kernel's JIT with both
// lowerings: each compiles, or the kernel refuses it with its own message;
// every word of what it emits decodes, and the RX copy is what it emitted.
struct CorpusCount {
  size_t programs = 0;
  size_t words = 0;
  std::map<std::string, size_t> refusals;  // by the kernel's message
};

void CompileCorpus(const std::vector<jit_testing::NamedCase>& cases, CorpusCount& count) {
  auto disassembler = A64Disassembler::Create();
  ASSERT_TRUE(disassembler.ok()) << disassembler.message();
  for (const jit::AtomicLowering lowering : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    KernelJitFixture f(lowering);
    ASSERT_NE(f.jit, nullptr);
    const GuestMemory& memory = f.sandbox->env().memory();
    for (const auto& c : cases) {
      auto loaded = LoadCase(c.source);
      if (!loaded) continue;
      for (size_t p = 0; p < loaded->programs.size(); ++p) {
        auto compiled = f.jit->Compile(loaded->programs[p].program);
        if (!compiled) {
          ++count.refusals[compiled.message()];
          continue;
        }
        ++count.programs;
        for (const auto& sub : compiled->subprograms) {
          ASSERT_EQ(sub.words.size(), sub.code_words) << c.name;
          // 6.12 asks the pack for 8-byte aligned images (its PLT target is a
          // u64 it may patch atomically).
          EXPECT_EQ(sub.rx_image % 8, 0u) << c.name;
          ASSERT_EQ(sub.offsets.size(), sub.end_slot - sub.first_slot + 1u) << c.name;
          EXPECT_TRUE(std::is_sorted(sub.offsets.begin(), sub.offsets.end())) << c.name;
          EXPECT_LE(sub.offsets.back(), sub.code_words) << c.name;
          const uint8_t* rx = memory.HostPointer(sub.rx_image, 4ull * sub.code_words);
          ASSERT_NE(rx, nullptr);
          for (uint32_t i = 0; i < sub.code_words; ++i) {
            uint32_t in_rx;
            std::memcpy(&in_rx, rx + 4ull * i, 4);
            EXPECT_EQ(in_rx, sub.words[i]) << c.name << " word " << i;
            EXPECT_NE(sub.words[i], jit::kBreakFault) << c.name << " word " << i;
            EXPECT_TRUE(disassembler->Disassemble(sub.words[i], sub.rx_image + 4ull * i).has_value())
                << c.name << fmt::format(" word {} = 0x{:08x}", i, sub.words[i]);
            ++count.words;
          }
        }
        EXPECT_TRUE(f.jit->Release(*compiled).ok());
      }
    }
    // Everything was released: only the sandbox's resident program is left.
    const jit::PackAccounting accounting = f.sandbox->pack().Accounting();
    EXPECT_EQ(accounting.chunks_used, 1u);
    EXPECT_EQ(accounting.live_rw_buffers, 0);
  }
}

void Report(const char* corpus, const CorpusCount& count) {
  fmt::print("kernel_jit {}: {} programs compiled (both lowerings), {} words checked\n", corpus, count.programs,
             count.words);
  for (const auto& [message, n] : count.refusals) fmt::print("  refused {} times: {}\n", n, message);
}

// A compile counts the services it could have seen fail: one program
// makes three (jit_data, the offset table, the image's slot). Failing the
// last of them refuses the program; failing one past them fails nothing.
// The far-branch block (fuzz/generator/far_branch.h): under LL/SC its
// jump spans 1 MiB of code from a filler of 29,127 cmpxchgs, and 6.12's
// check_imm19 refuses the program (-EINVAL) rather than emit a b.cond
// whose offset wraps, a refusal the differential runs take as the
// kernel's (KernelBranchOutOfRange); one cmpxchg fewer compiles. Under
// LSE every length compiles.
TEST(kernel_jit, AConditionalJumpOverMoreThanOneMiBIsRefused) {
  for (const auto lowering : {jit::AtomicLowering::kLse, jit::AtomicLowering::kLlSc}) {
    KernelJitFixture f(lowering);
    ASSERT_NE(f.jit, nullptr);
    for (uint8_t choice = 0; choice < std::size(fuzz::kFarBranchFillers); ++choice) {
      const uint32_t filler = fuzz::kFarBranchFillers[choice];
      isa::Program program;
      program.insns = fuzz::FarBranchBlock(choice, 0x1234);
      program.insns.push_back(isa::Insn{static_cast<uint8_t>(isa::kClassAlu64 | isa::kAluMov | isa::kSrcK), 0, 0, 0, 1});
      program.insns.push_back(isa::Insn{isa::kOpExit, 0, 0, 0, 0});
      program.subprogram_starts = {0};
      auto compiled = f.jit->Compile(program);
      if (lowering == jit::AtomicLowering::kLse || filler <= 29126) {
        ASSERT_TRUE(compiled.ok()) << filler << ": " << compiled.message();
        EXPECT_GT(compiled->subprograms[0].code_words, 3 * filler);
        (void)f.jit->Release(*compiled);
      } else {
        ASSERT_FALSE(compiled.ok()) << filler;
        EXPECT_NE(compiled.message().find(") out of range"), std::string::npos) << compiled.message();
        EXPECT_TRUE(KernelBranchOutOfRange(compiled.message())) << compiled.message();
      }
    }
  }
  // Only an offset out of imm19's range is the kernel's refusal.
  EXPECT_TRUE(KernelBranchOutOfRange("bpf_jit: [ 3] imm=262144(0x40000) out of range"));
  EXPECT_TRUE(KernelBranchOutOfRange("bpf_jit: [ 3] imm=-262145(0xfffbffff) out of range"));
  EXPECT_FALSE(KernelBranchOutOfRange("bpf_jit: [ 3] imm=262143(0x3ffff) out of range"));
  EXPECT_FALSE(KernelBranchOutOfRange("bpf_jit: [ 3] imm=-262144(0xfffc0000) out of range"));
  EXPECT_FALSE(KernelBranchOutOfRange("the pack is full"));
}

TEST(kernel_jit, CountsTheFailableCallsItMakes) {
  KernelJitFixture f(jit::AtomicLowering::kLse);
  ASSERT_NE(f.jit, nullptr);
  const isa::Program program = MustProgram(Asm("mov %r0, 42\nexit"));
  const kernelsrc::FailingCompile clean = f.jit->CompileFailing(program, 0);
  ASSERT_TRUE(clean.compiled.ok()) << clean.compiled.message();
  EXPECT_EQ(clean.failable_calls, 3u);
  EXPECT_EQ(clean.injected, "");
  const kernelsrc::FailingCompile last = f.jit->CompileFailing(program, clean.failable_calls);
  EXPECT_FALSE(last.compiled.ok());
  EXPECT_EQ(last.injected, "bpf_jit_binary_pack_alloc");
  const kernelsrc::FailingCompile past = f.jit->CompileFailing(program, clean.failable_calls + 1);
  EXPECT_TRUE(past.compiled.ok()) << past.compiled.message();
  EXPECT_EQ(past.injected, "");
  EXPECT_EQ(past.failable_calls, clean.failable_calls);
}

TEST(kernel_jit, SharedSuite) {
  const auto dir = jit_testing::SharedSuiteDir();
  if (!dir) GTEST_SKIP() << "the shared suite is not at " << BPFDIFF_CONFORMANCE_SUITE;
  CorpusCount count;
  CompileCorpus(jit_testing::ReadDataFiles(*dir), count);
  Report("shared suite", count);
  EXPECT_GT(count.programs, 2 * 150u);
}

TEST(kernel_jit, OwnVectorsAndSeeds) {
  CorpusCount count;
  CompileCorpus(jit_testing::ReadDataFiles(jit_testing::OwnVectorsDir()), count);
  CompileCorpus(jit_testing::ReadFuzzSeeds(jit_testing::FuzzSeedDir()), count);
  Report("own vectors and diff_fuzzer seeds", count);
  EXPECT_GT(count.programs, 2 * 50u);
}

// The verifier's questions, put to the tree's JIT: 6.12's arm64 JIT takes
// per-CPU moves, kfuncs, exceptions, arena (its atomics with LSE) and tail
// calls in subprograms, and performs three helper calls itself.
TEST(kernel_jit, AnswersTheVerifiersQuestionsAsTheTreeDoes) {
  KernelJitFixture f(jit::AtomicLowering::kLse);
  ASSERT_NE(f.jit, nullptr);
  const kernelsrc::VerifierAnswers& answers = f.jit->answers();
  EXPECT_TRUE(answers.percpu_insn);
  EXPECT_TRUE(answers.kfunc_call);
  EXPECT_TRUE(answers.subprog_tailcalls);
  EXPECT_TRUE(answers.ptr_xchg);
  EXPECT_TRUE(answers.exceptions);
  EXPECT_TRUE(answers.arena);
  EXPECT_TRUE(answers.arena_atomics);
  EXPECT_TRUE(answers.bypass_spec_v4);
  EXPECT_EQ(answers.inlined_helpers, (std::vector<int32_t>{kHelperGetSmpProcessorId, kHelperGetCurrentTask,
                                                           kHelperGetCurrentTaskBtf}));
  // Without LSE atomics (the LL/SC lowering) the JIT takes no arena atomic.
  KernelJitFixture llsc(jit::AtomicLowering::kLlSc);
  ASSERT_NE(llsc.jit, nullptr);
  EXPECT_FALSE(llsc.jit->answers().arena_atomics);
  EXPECT_TRUE(llsc.jit->answers().percpu_insn);
}

// What a tree's verifier refuses for what its JIT lacks: nothing here,
// a per-CPU move where the JIT has none, a tail call beside bpf-to-bpf
// calls where the JIT cannot mix them.
TEST(kernel_jit, VerifierRefusesWhatTheTreesJitLacks) {
  const isa::Program percpu = MustProgram({{isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 0, 1, -1, 0},
                                           {isa::kOpExit, 0, 0, 0, 0}});
  const isa::Program mixed = MustProgram(Asm("mov %r0, 0\ncall local +1\nexit\nmov %r2, 0\n"
                                             "mov %r3, 0\ntail_call\nexit"));
  kernelsrc::VerifierAnswers all;
  all.percpu_insn = all.subprog_tailcalls = true;
  EXPECT_FALSE(kernelsrc::VerifierRefusal(all, percpu));
  EXPECT_FALSE(kernelsrc::VerifierRefusal(all, mixed));

  kernelsrc::VerifierAnswers older = all;
  older.percpu_insn = false;
  const auto refused = kernelsrc::VerifierRefusal(older, percpu);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("per-CPU address move at slot 0"), std::string::npos) << *refused;
  EXPECT_FALSE(kernelsrc::VerifierRefusal(older, mixed));

  older.subprog_tailcalls = false;
  const auto mixing = kernelsrc::VerifierRefusal(older, mixed);
  ASSERT_TRUE(mixing);
  EXPECT_NE(mixing->find("tail call at slot 5 in a program of 2 functions"), std::string::npos) << *mixing;
}

}  // namespace
}  // namespace bpfdiff
