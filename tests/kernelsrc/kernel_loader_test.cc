// The kernel's JIT under each loader of classic BPF (kernelsrc/
// kernel_loader.h): the epilogue's Spectre-BHB mitigation is the one its
// CPU needs, word for word as the Arm ARM encodes it, and it runs on both
// executors, its firmware call answered as SMCCC says.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "harness/diff/code_generator.h"
#include "harness/diff/engines.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/vixl_cpu.h"
#include "kernelsrc/kernel_jit.h"
#include "kernelsrc/kernel_loader.h"
#include "oracle/guest_layout.h"
#include "tests/jit/jit_test_support.h"
#include "tests/kernelsrc/kernel_run.h"

namespace bpfdiff {
namespace {

using jit_testing::Asm;
using kernelsrc::KernelLoader;
using kernelsrc::SmcccConduit;

// The words the epilogue of a classic program gets under `loader`, after
// the callee-saved registers are popped: build_bhb_mitigation(), encoded
// here from the Arm ARM.
std::vector<uint32_t> MitigationWords(const KernelLoader& loader) {
  if (loader.capable || loader.mitigations_off || loader.spectre_v2_vulnerable) return {};
  if (loader.clearbhb) return {0xd50322df};  // HINT #22: CLRBHB
  std::vector<uint32_t> words;
  if (loader.bhb_loop_k != 0) {
    words = {
        0x52800000u | (uint32_t{loader.bhb_loop_k} << 5),  // MOVZ w0, #k (emit_a64_mov_i64 of a u32)
        0x14000001,                                        // B .+4
        0xf1000400,                                        // SUBS x0, x0, #1
        0x54ffffc1,                                        // B.NE .-8
        0xd5033b9f,                                        // DSB ISH
        // ISB #0: CRm 0000, not SY's 1111. aarch64_insn_get_isb_value()
        // is insn.h's match pattern 0xD50330DF; the Arm ARM reserves
        // every CRm but SY ("execute as full system barrier operations,
        // but must not be relied upon by software"). The kernel's own
        // loop (entry.S) uses `isb`. A finding: SHIMS.md.
        0xd50330df,
    };
  }
  if (loader.bhb_firmware) {
    words.push_back(0x32013be0);  // ORR w0, wzr, #0x80003fff (N=0, immr=1, imms=14)
    words.push_back(loader.conduit == SmcccConduit::kHvc ? 0xd4000002 : 0xd4000003);  // HVC/SMC #0
  }
  return words;
}

struct Executor {
  std::string_view name;
  MachineFactory factory;
};
std::vector<Executor> Executors() { return {{"unicorn", nullptr}, {"vixl", CreateVixlMachine}}; }

// One program compiled by the kernel's JIT as `loader` loads it, in a
// sandbox of its own on `executor`.
struct Classic : CompiledUnderLoader {
  Classic(const Executor& executor, std::string_view text, const KernelLoader& loader)
      : CompiledUnderLoader(text, loader, executor.factory) {
    EXPECT_TRUE(error.empty()) << error;
  }

  // The program called on CPU 0 with the kernel's conventions, the
  // firmware as `firmware` says, the per-CPU offset in TPIDR_EL2 when
  // `el2` says.
  Outcome Run(SmcccConduit firmware, bool el2 = false) {
    auto outcome = RunOnKernelConventions(*sandbox, loaded, compiled, [&](CodeConventions& conventions) {
      conventions.firmware = firmware;
      conventions.per_cpu_in_tpidr_el2 = el2;
    });
    EXPECT_TRUE(outcome.ok()) << outcome.message();
    return outcome ? *outcome : Outcome{};
  }
};

constexpr std::string_view kProgram = "mov %r0, 42\nmov %r1, 7\nmov %r6, %r1\nadd %r0, %r6\nexit";

TEST(kernel_loader, EachClassicLoaderGetsTheMitigationItsCpuNeeds) {
  const Executor unicorn = Executors().front();
  Classic root(unicorn, kProgram, kernelsrc::kRootLoader);
  ASSERT_FALSE(root.compiled.subprograms.empty());
  const auto& root_sub = root.compiled.subprograms[0];
  const std::vector<uint32_t> root_words(root_sub.words.begin(), root_sub.words.begin() + root_sub.code_words);
  // The mitigation goes after the pop of the tail-call count's pair
  // (`ldp xzr, x26, [sp], #16`), before the frame record's.
  const auto pop = std::find(root_words.begin(), root_words.end(), 0xa8c16bffu);
  ASSERT_NE(pop, root_words.end());
  for (const KernelLoader& loader : kernelsrc::ClassicLoaders()) {
    SCOPED_TRACE(std::string(loader.name));
    Classic classic(unicorn, kProgram, loader);
    ASSERT_FALSE(classic.compiled.subprograms.empty());
    const auto& sub = classic.compiled.subprograms[0];
    std::vector<uint32_t> expected(root_words.begin(), pop + 1);
    const std::vector<uint32_t> mitigation = MitigationWords(loader);
    expected.insert(expected.end(), mitigation.begin(), mitigation.end());
    expected.insert(expected.end(), pop + 1, root_words.end());
    // A main program from classic BPF has no landing pad for a tail call
    // (`bti j` after the tail-call count): nothing tail-calls it.
    expected.erase(std::find(expected.begin(), expected.end(), 0xd503249fu));
    // Up to the `ret`: the PLT after it is aligned to 8 bytes, with a
    // `nop` before it as the length needs.
    const auto through_ret = [](std::vector<uint32_t> words) {
      words.erase(std::find(words.begin(), words.end(), 0xd65f03c0u) + 1, words.end());
      return words;
    };
    EXPECT_EQ(through_ret({sub.words.begin(), sub.words.begin() + sub.code_words}), through_ret(expected));
    EXPECT_TRUE(classic.jit->Release(classic.compiled).ok());
  }
}

TEST(kernel_loader, TheMitigationRunsAndItsFirmwareCallIsAnswered) {
  for (const Executor& executor : Executors()) {
    for (const KernelLoader& loader : kernelsrc::ClassicLoaders()) {
      SCOPED_TRACE(fmt::format("{} on {}", loader.name, executor.name));
      Classic classic(executor, kProgram, loader);
      const Outcome outcome = classic.Run(kernelsrc::FirmwareCallOf(loader));
      EXPECT_EQ(outcome.end, EndKind::kExit) << outcome.message;
      EXPECT_EQ(outcome.r0, 49u);
      if (kernelsrc::FirmwareCallOf(loader) == SmcccConduit::kNone) continue;
      // Where no firmware call is due, one is a trap that says so.
      Classic again(executor, kProgram, loader);
      const Outcome refused = again.Run(SmcccConduit::kNone);
      EXPECT_EQ(refused.end, EndKind::kTrap);
      EXPECT_NE(refused.message.find("where none is due"), std::string::npos) << refused.message;
    }
  }
}

TEST(kernel_loader, AReturnWithoutTheDueFirmwareCallOrACallOfAnotherFunctionIsATrap) {
  for (const Executor& executor : Executors()) {
    SCOPED_TRACE(executor.name);
    // Code without the mitigation, run where the firmware call is due.
    Classic root(executor, kProgram, kernelsrc::kRootLoader);
    const Outcome lost = root.Run(SmcccConduit::kHvc);
    EXPECT_EQ(lost.end, EndKind::kTrap);
    EXPECT_NE(lost.message.find("returned without the Spectre-BHB firmware call"), std::string::npos)
        << lost.message;

    // The mitigation's function id changed to another's.
    const auto hvc = std::find_if(kernelsrc::ClassicLoaders().begin(), kernelsrc::ClassicLoaders().end(),
                                  [](const KernelLoader& l) { return l.state == "bhb_firmware_hvc"; });
    ASSERT_NE(hvc, kernelsrc::ClassicLoaders().end());
    Classic classic(executor, kProgram, *hvc);
    const auto& sub = classic.compiled.subprograms[0];
    const auto orr = std::find(sub.words.begin(), sub.words.end(), 0x32013be0u);
    ASSERT_NE(orr, sub.words.end());
    const uint64_t address = sub.rx_image + 4ull * static_cast<uint64_t>(orr - sub.words.begin());
    uint8_t* host = classic.sandbox->env().memory().HostPointer(address, 4);
    ASSERT_NE(host, nullptr);
    const uint32_t other = 0x320003e0;  // ORR w0, wzr, #1
    std::memcpy(host, &other, 4);
    const Outcome wrong = classic.Run(SmcccConduit::kHvc);
    EXPECT_EQ(wrong.end, EndKind::kTrap);
    EXPECT_NE(wrong.message.find("SMCCC function 0x00000001"), std::string::npos) << wrong.message;
  }
}

// A per-CPU move under a kernel at EL2 (VHE) reads TPIDR_EL2, which the
// call answers as TPIDR_EL1 otherwise: the same address either way. Where
// the kernel runs at EL1, the read is a trap.
TEST(kernel_loader, APerCpuMoveOnAKernelAtEl2ReadsTpidrEl2) {
  const auto vhe = std::find_if(kernelsrc::ClassicLoaders().begin(), kernelsrc::ClassicLoaders().end(),
                                [](const KernelLoader& l) { return l.vhe && kernelsrc::FirmwareCallOf(l) == SmcccConduit::kNone; });
  ASSERT_NE(vhe, kernelsrc::ClassicLoaders().end());
  constexpr std::string_view kPerCpu = "mov %r1, 0xc00\naddr_percpu %r2, %r1\nstdw [%r2+8], 0x1234\n"
                                       "ldxdw %r0, [%r2+8]\nadd %r0, %r2\nexit";
  for (const Executor& executor : Executors()) {
    SCOPED_TRACE(executor.name);
    Classic at_el1(executor, kPerCpu, kernelsrc::kRootLoader);
    const Outcome expected = at_el1.Run(SmcccConduit::kNone);
    ASSERT_EQ(expected.end, EndKind::kExit) << expected.message;
    EXPECT_EQ(expected.r0, 0x1234 + guest::PerCpuArea(0) + 0xc00);
    Classic at_el2(executor, kPerCpu, *vhe);
    const auto& words = at_el2.compiled.subprograms[0].words;
    EXPECT_NE(std::find(words.begin(), words.end(), 0xd53cd040u | 10), words.end());  // mrs x10, tpidr_el2
    const Outcome outcome = at_el2.Run(SmcccConduit::kNone, /*el2=*/true);
    EXPECT_EQ(outcome.end, EndKind::kExit) << outcome.message;
    EXPECT_EQ(outcome.r0, expected.r0);
    Classic refused(executor, kPerCpu, *vhe);
    const Outcome trapped = refused.Run(SmcccConduit::kNone, /*el2=*/false);
    EXPECT_EQ(trapped.end, EndKind::kTrap) << trapped.message;
  }
}

TEST(kernel_loader, TheClassicEngineChoosesItsLoaderByTheCaseAndRefusesTailCalls) {
  // Every loader is some program's: the fuzz input reaches each.
  std::vector<bool> chosen(kernelsrc::ClassicLoaders().size(), false);
  for (int imm = 0; imm < 200; ++imm) {
    const isa::Program program = jit_testing::MustProgram(Asm(fmt::format("mov %r0, {}\nexit", imm)));
    const KernelLoader& loader = kernelsrc::ClassicLoaderFor(ProgramFingerprint(program.insns));
    chosen[static_cast<size_t>(&loader - kernelsrc::ClassicLoaders().data())] = true;
  }
  EXPECT_TRUE(std::all_of(chosen.begin(), chosen.end(), [](bool b) { return b; }));

  auto sandbox = jit_testing::MakeSandbox();
  const EngineSpec* spec = FindEngine("kernel-jit-cbpf");
  ASSERT_NE(spec, nullptr);
  auto generator = MakeCodeGenerator(*sandbox, *spec, {});
  ASSERT_TRUE(generator.ok()) << generator.message();
  CaseSource source;
  source.programs.push_back(Asm("mov %r0, 0\ncall 12\nexit"));
  auto loaded = LoadCase(source);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const auto refusal = (*generator)->VerifierRefusal(loaded->programs[0].program);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_NE(refusal->find("classic BPF"), std::string::npos) << *refusal;
}

// What a loader without CAP_BPF cannot load, seen in the program alone.
TEST(kernel_loader, TheUnprivilegedVerifierRefusesWhatNeedsCapBpf) {
  const auto refusal = [](std::string_view text) {
    return kernelsrc::UnprivilegedRefusal(jit_testing::MustProgram(Asm(text)));
  };
  EXPECT_FALSE(refusal("mov %r0, 1\nexit"));
  EXPECT_FALSE(refusal("mov %r1, 0\nstxdw [%r10-8], %r1\nmov %r2, %r10\nadd %r2, -8\ncall 7\nexit"));
  EXPECT_FALSE(refusal("jeq %r1, 0, +1\nmov %r0, 1\nexit"));  // a forward jump
  const auto says = [&](std::string_view text, std::string_view what) {
    const auto why = refusal(text);
    ASSERT_TRUE(why.has_value()) << text;
    EXPECT_NE(why->find(what), std::string::npos) << *why;
  };
  says("call local +1\nexit\nmov %r0, 0\nexit", "call of a BPF function");
  says("mov %r1, 1\nmov %r3, 0\nmov %r4, 0\nlddw_func %r2, +3\ncall 181\nexit\nmov %r0, 0\nexit", "a callback");
  says("mov %r0, 3\nsub %r0, 1\njne %r0, 0, -2\nexit", "back-edge");
  says("mov %r0, 0\ncall 35\nexit", "helper 35");
  says("probe ldxdw %r0, [%r1]\nexit", "PROBE_MEM");
}

// kernel-jit-blind: a program the unprivileged row cannot load is blinded
// as root loads it under bpf_jit_harden=2; the row stays for the others.
TEST(kernel_loader, TheBlindingEngineGivesTheUnprivilegedRowOnlyWhatItLoads) {
  auto sandbox = jit_testing::MakeSandbox();
  const EngineSpec* spec = FindEngine("kernel-jit-blind");
  ASSERT_NE(spec, nullptr);
  auto generator = MakeCodeGenerator(*sandbox, *spec, {});
  ASSERT_TRUE(generator.ok()) << generator.message();
  int unprivileged = 0;
  for (int imm = 0; imm < 60; ++imm) {
    for (bool calls : {false, true}) {
      const isa::Program program = jit_testing::MustProgram(
          Asm(calls ? fmt::format("mov %r0, {}\ncall local +1\nexit\nexit", imm) : fmt::format("mov %r0, {}\nexit", imm)));
      (*generator)->BeginCase(program);
      const KernelLoader* loader = (*generator)->loader();
      ASSERT_NE(loader, nullptr);
      if (!loader->capable) {
        EXPECT_FALSE(calls) << "a program with a call went to " << loader->name;
        ++unprivileged;
      }
    }
  }
  EXPECT_GT(unprivileged, 0);
}

}  // namespace
}  // namespace bpfdiff
