// kernel-interp: the kernel's own interpreter (kernel/bpf/core.c of the
// tree), run over bpfdiff's guest memory, against bpfdiff's interpreter.
// Each case is a .data text run on interp and kernel-interp by the
// differential runner, whose verdict compares every field the two hold
// alike: r0, the helper calls, the BPF frames, the context and map values.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "harness/conformance/case_file.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "kernelsrc/kernel_interpreter.h"

namespace bpfdiff {
namespace {

struct Ran {
  CaseRun run;
  const EngineRun& interp() const { return run.runs.at(0); }
  const EngineRun& kernel() const { return run.runs.at(1); }
};

// Runs a .data text on interp then kernel-interp (or kernel-interp alone).
Ran RunData(std::string_view text, std::string_view engines = "interp,kernel-interp") {
  Ran ran;
  auto file = ParseCaseText(text, true, "test.data");
  EXPECT_TRUE(file.ok()) << file.message();
  auto sandbox = Sandbox::Create();
  EXPECT_TRUE(sandbox.ok()) << sandbox.message();
  if (!file || !sandbox) return ran;
  auto made = MakeEngines(**sandbox, engines);
  EXPECT_TRUE(made.ok()) << made.message();
  if (!made) return ran;
  DifferentialRunner runner(**sandbox, std::move(made).value());
  ran.run = runner.Run(file->source);
  EXPECT_FALSE(ran.run.load_error) << *ran.run.load_error;
  return ran;
}

// The kernel-interp run matched interp's, and exited with `r0`.
void ExpectAgreedOn(const Ran& ran, uint64_t r0) {
  ASSERT_EQ(ran.run.runs.size(), 2u);
  const EngineRun& kernel = ran.kernel();
  EXPECT_TRUE(kernel.verdict.match()) << kernel.verdict.Describe();
  ASSERT_TRUE(kernel.outcome.has_value()) << kernel.WhyNotRun();
  EXPECT_EQ(kernel.outcome->end, EndKind::kExit) << kernel.outcome->Summary();
  EXPECT_EQ(kernel.outcome->r0, r0);
}

TEST(KernelInterp, RunsAProgramAsTheInterpreterDoes) {
  // ALU, a byte swap, a sign-extending load and a 32-bit jump.
  const Ran ran = RunData(R"(
-- asm
mov %r0, 0x1234
be16 %r0
stdw [%r10-8], -2
ldxsb %r1, [%r10-8]
add %r0, %r1
jslt32 %r1, 0, out
mov %r0, 0
out:
exit
-- result
0x3410
)");
  ExpectAgreedOn(ran, 0x3412 - 2);
}

TEST(KernelInterp, DividesAsTheVerifierGuardsItsDivisions) {
  // By a register holding 0 (div gives 0, mod keeps the dividend), and
  // the smallest dividend signed-divided by -1 (x86 would trap without
  // the verifier's patch): every result is added up, so each one counts.
  const Ran ran = RunData(R"(
-- asm
mov %r0, 0
mov %r1, 7
mov %r2, 0
mov %r3, %r1
div %r3, %r2
add %r0, %r3
mov %r3, %r1
mod %r3, %r2
add %r0, %r3
mov32 %r4, 5
mod32 %r4, %r2
add %r0, %r4
lddw %r5, 0x8000000000000000
mov %r6, -1
sdiv %r5, %r6
rsh %r5, 60
add %r0, %r5
mov32 %r7, 0x80000000
smod32 %r7, %r6
add %r0, %r7
mov32 %r8, 0x80000000
sdiv32 %r8, 2
rsh32 %r8, 28
add %r0, %r8
exit
-- result
0x20
)");
  ExpectAgreedOn(ran, 7 + 5 + 8 + 0xc);
}

TEST(KernelInterp, JumpsAndCallsOverAGuardedDivisionLandWhereTheyDid) {
  // The guards make each division several instructions: a loop back over
  // one, a jump forward over one, and a local call past one must still
  // reach the instructions they named (100 / 10 + ... + 100 / 1 = 291,
  // and f's 7 mod 0 = 7).
  const Ran ran = RunData(R"(
-- asm
mov %r6, 0
mov %r1, 10
mov %r2, 0
loop:
mov %r3, 100
div %r3, %r1
add %r6, %r3
sub %r1, 1
jne %r1, 0, loop
jeq %r2, 0, skip
mod %r6, %r2
skip:
call local f
add %r0, %r6
exit
f:
mov %r0, 7
mod %r0, %r2
exit
-- result
0x12a
)");
  ExpectAgreedOn(ran, 298);
}

TEST(KernelInterp, HelperAndLocalCallsLeaveTheFramesAsTheInterpreterDoes) {
  // A map lookup keyed on the stack, a local call whose frame holds a
  // value, a helper called from it, then a second local call: the final
  // frames are compared byte by byte with the interpreter's.
  const Ran ran = RunData(R"(
-- map 1 array key=4 value=8 entries=2
11 00 00 00 00 00 00 00 22 00 00 00 00 00 00 00
-- asm
stw [%r10-4], 1
mov %r2, %r10
add %r2, -4
lddw %r1, map:1
call 1
ldxdw %r6, [%r0]
call local sub
add %r6, %r0
call local sub
add %r0, %r6
exit
sub:
stdw [%r10-16], 0x55
call 7
ldxdw %r0, [%r10-16]
exit
-- result
0xcc
)");
  ExpectAgreedOn(ran, 0x22 + 0x55 + 0x55);
}

TEST(KernelInterp, ACalleeFindsWhatAnEarlierCallAtItsDepthLeft) {
  // f stores only on its first call; the second leaves its frame alone.
  // The final frames hold that store in both interpreters (a frame is not
  // cleared between calls, in the kernel or in bpfdiff).
  const Ran ran = RunData(R"(
-- asm
mov %r1, 1
call local f
mov %r1, 0
call local f
mov %r0, 3
exit
f:
mov %r0, 0
jeq %r1, 0, out
stdw [%r10-16], 0xef
out:
exit
-- result
0x3
)");
  ExpectAgreedOn(ran, 3);
}

TEST(KernelInterp, TailCallsReachTheInterpretersOwnPrograms) {
  const Ran ran = RunData(R"(
-- map 1 prog_array key=4 value=4 entries=2
1 -1
-- asm
mov %r6, %r1
lddw %r2, map:1
mov %r3, 1
call 12
lddw %r2, map:1
mov %r3, 0
call 12
mov %r0, 1
exit
-- asm 1
mov %r0, 0x77
exit
-- result
0x77
)");
  ExpectAgreedOn(ran, 0x77);
}

TEST(KernelInterp, AReadOfTheProgramArraysSlotsIsNotComparable) {
  // bpf_probe_read of the program array's slot: a guest program object's
  // address in bpfdiff's interpreter, a host struct bpf_prog in the
  // kernel's, as in the kernel. Not a disagreement of the two.
  const Ran ran = RunData(R"(
-- map 1 prog_array key=4 value=4 entries=1
1
-- asm
mov %r1, %r10
add %r1, -8
mov %r2, 8
lddw %r3, map:1
add %r3, 64
call 4
ldxdw %r0, [%r10-8]
exit
-- asm 1
mov %r0, 0
exit
)");
  ASSERT_EQ(ran.run.runs.size(), 2u);
  EXPECT_EQ(ran.kernel().verdict.kind, Verdict::Kind::kNotComparable) << ran.kernel().verdict.Describe();
  EXPECT_NE(ran.kernel().verdict.detail.find("program array's slots"), std::string::npos)
      << ran.kernel().verdict.detail;
}

TEST(KernelInterp, ACalleeReadingWhatItWasNotGivenIsRefused) {
  // f returns r0 without writing it: every JIT returns the caller's r0,
  // the kernel's interpreter its callee's own, uninitialized; the
  // verifier refuses the read (R0 !read_ok).
  const Ran ran = RunData(R"(
-- asm
mov %r0, 5
call local f
exit
f:
exit
)");
  ASSERT_EQ(ran.run.runs.size(), 2u);
  EXPECT_TRUE(ran.kernel().verifier_refused);
  EXPECT_NE(ran.kernel().verdict.detail.find("reads r0, which is undefined where a bpf-to-bpf call enters"),
            std::string::npos)
      << ran.kernel().verdict.detail;
}

TEST(KernelInterp, RefusesWhatTheVerifierDoesNotLoadForTheInterpreter) {
  struct Refused {
    std::string_view program;
    std::string_view why;
  };
  const Refused refused[] = {
      {"mov %r0, 1\ndiv %r0, 0\nexit\n", "div by zero"},
      {"mov %r0, 1\nlsh %r0, 64\nexit\n", "invalid shift 64"},
      {"mov %r0, 1\nlsh32 %r0, 32\nexit\n", "invalid shift 32"},
  };
  for (const Refused& r : refused) {
    const Ran ran = RunData(std::string("-- asm\n") + std::string(r.program));
    ASSERT_EQ(ran.run.runs.size(), 2u);
    EXPECT_EQ(ran.kernel().verdict.kind, Verdict::Kind::kNotComparable) << r.program;
    EXPECT_TRUE(ran.kernel().verifier_refused) << r.program;
    EXPECT_NE(ran.kernel().verdict.detail.find(r.why), std::string::npos) << ran.kernel().verdict.detail;
  }
  // What only a JIT may run, read from the programs themselves.
  isa::Program callx;
  callx.insns = {{isa::kOpCallX, 1, 0, 0, 0}, {isa::kOpExit, 0, 0, 0, 0}};
  callx.subprogram_starts = {0};
  EXPECT_EQ(kernelsrc::InterpreterRefusal(callx).value_or(""), "unknown opcode 8d");
  isa::Program kfunc;
  kfunc.insns = {{isa::kOpCall, 0, isa::kPseudoKfuncCall, 0, 1}, {isa::kOpExit, 0, 0, 0, 0}};
  kfunc.subprogram_starts = {0};
  EXPECT_EQ(kernelsrc::InterpreterRefusal(kfunc).value_or(""),
            "calling kernel functions are not allowed in non-JITed programs");
}

TEST(KernelInterp, RunsOnlyWhatTheReferenceRanWithoutAFault) {
  const Ran ran = RunData(R"(
-- asm
mov %r1, 0x10
ldxdw %r0, [%r1]
exit
)");
  ASSERT_EQ(ran.run.runs.size(), 2u);
  EXPECT_EQ(ran.interp().outcome->end, EndKind::kFault);
  EXPECT_FALSE(ran.kernel().outcome.has_value());
  EXPECT_EQ(ran.kernel().verdict.kind, Verdict::Kind::kNotComparable);
  EXPECT_NE(ran.kernel().verdict.detail.find("runs only what ends without a fault"), std::string::npos)
      << ran.kernel().verdict.detail;
}

TEST(KernelInterp, AFaultOfItsOwnEndsTheRunAsAnOops) {
  // Alone, nothing stops it from running the null load: the host's fault
  // ends the run, as a trap that says the kernel would oops.
  const Ran ran = RunData(R"(
-- asm
mov %r1, 0x10
ldxdw %r0, [%r1]
exit
)",
                          "kernel-interp");
  ASSERT_EQ(ran.run.runs.size(), 1u);
  const EngineRun& alone = ran.run.runs.front();
  ASSERT_TRUE(alone.outcome.has_value()) << alone.WhyNotRun();
  EXPECT_EQ(alone.outcome->end, EndKind::kTrap);
  EXPECT_NE(alone.outcome->message.find("read of 0x10"), std::string::npos) << alone.outcome->message;
  EXPECT_NE(alone.outcome->message.find("would oops"), std::string::npos) << alone.outcome->message;
}

TEST(KernelInterp, ProbeLoadsReadGuestMemoryOrZero) {
  // A probe load of the stack reads what is there; one of address 0 gives
  // 0, as copy_from_kernel_nofault() fails and the kernel zeroes.
  const Ran ran = RunData(R"(
-- asm
stdw [%r10-8], 0x4321
mov %r1, %r10
add %r1, -8
probe ldxdw %r0, [%r1+0]
mov %r2, 0
probe ldxdw %r3, [%r2+8]
add %r0, %r3
exit
-- result
0x4321
)");
  ExpectAgreedOn(ran, 0x4321);
}

}  // namespace
}  // namespace bpfdiff
