// The load step (oracle/load.cc): each rewrite, each verifier-lite rejection
// with its message, the case-level limits, and the clobbered-register finding.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "oracle/guest_layout.h"
#include "oracle/helpers.h"
#include "tests/oracle/oracle_test_support.h"

namespace bpfdiff::testing {
namespace {

using isa::Insn;

CaseSource Source(std::vector<std::string> programs, std::vector<isa::MapSpec> maps = {}) {
  Case c;
  c.programs = std::move(programs);
  c.maps = std::move(maps);
  return SourceOf(c);
}

LoadedCase MustLoad(const CaseSource& source) {
  auto loaded = LoadCase(source);
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  return loaded.ok() ? std::move(loaded).value() : LoadedCase{};
}

const std::vector<Insn>& InsnsOf(const LoadedCase& loaded, size_t program = 0) {
  static const std::vector<Insn> kNone;
  return program < loaded.programs.size() ? loaded.programs[program].program.insns : kNone;
}

// --- Rewrites ---

TEST(oracle_load, NoContextAndInputMemoryAreRefusedTogether) {
  CaseSource source = Source({"mov %r0, 0\nexit"});
  source.options.null_context = true;
  EXPECT_TRUE(LoadCase(source));
  source.memory = {1, 2, 3};
  auto refused = LoadCase(source);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("no context (r1 NULL) has no input memory; this one has 3 bytes"),
            std::string::npos)
      << refused.message();
}

TEST(oracle_load, MapFdBecomesTheMapObjectAddress) {
  const LoadedCase loaded =
      MustLoad(Source({"lddw %r1, map:9\nlddw %r2, map:3\nmov %r0, 0\nexit"}, {ArrayMap(3, 8, 4), ArrayMap(9, 8, 4)}));
  const auto& insns = InsnsOf(loaded);
  ASSERT_EQ(insns.size(), 6u);
  // A plain lddw (src 0) of the address, in declaration order: fd 3 is map 0.
  EXPECT_EQ(insns[0], Make(isa::kOpLddw, 1, 0, 0, 0x3000400));
  EXPECT_EQ(insns[1], Make(0, 0, 0, 0, 0));
  EXPECT_EQ(insns[2], Make(isa::kOpLddw, 2, 0, 0, 0x3000000));
  EXPECT_EQ(insns[3], Make(0, 0, 0, 0, 0));
}

TEST(oracle_load, MapValueBecomesTheValueAddressPlusTheOffset) {
  // Values areas follow each other from 0x02000000, each 64-byte aligned:
  // map 3 has 4 x 8 = 32 bytes, so map 9's values start at 0x02000040.
  const LoadedCase loaded = MustLoad(
      Source({"lddw %r1, map_value:3+8\nlddw %r2, map_value:9+20\nmov %r0, 0\nexit"},
             {ArrayMap(3, 8, 4), ArrayMap(9, 8, 4)}));
  const auto& insns = InsnsOf(loaded);
  ASSERT_EQ(insns.size(), 6u);
  EXPECT_EQ(insns[0], Make(isa::kOpLddw, 1, 0, 0, 0x2000008));
  EXPECT_EQ(insns[1], Make(0, 0, 0, 0, 0));  // upper half of the address: 0
  EXPECT_EQ(insns[2], Make(isa::kOpLddw, 2, 0, 0, 0x2000054));
  EXPECT_EQ(insns[3], Make(0, 0, 0, 0, 0));
}

TEST(oracle_load, MapValueAddressesOfHashMaps) {
  // Hash slots are 8 + round_up(key, 8) + round_up(value, 8) bytes.
  std::vector<isa::MapSpec> maps = {HashMap(1, 5, 3, 3), ArrayMap(2, 8, 1)};
  EXPECT_EQ(MapValuesBytes(maps[0]), 3u * (8 + 8 + 8));
  EXPECT_EQ(MapValueAddresses(maps), (std::vector<uint64_t>{0x2000000, 0x2000080}));  // 72 -> 128
  EXPECT_EQ(MapValuesBytes(ProgArray(3, 4, {})), 0u);
}

TEST(oracle_load, TailCallHelperBecomesTheTailCallInstruction) {
  const LoadedCase loaded = MustLoad(Source({"lddw %r2, map:5\nmov %r3, 0\ncall 12\nmov %r0, 0\nexit"},
                                            {ProgArray(5, 1, {})}));
  const auto& insns = InsnsOf(loaded);
  ASSERT_EQ(insns.size(), 6u);
  EXPECT_EQ(insns[3], Make(isa::kOpTailCall));
}

// The kptr_xchg case: a loop around `call kptr_xchg` with a forward jump
// that crosses the call, a backward jump that crosses it, and a forward jump
// after it.
constexpr const char* kKptrProgram =
    "  lddw %r6, map_value:3\n"   // 0-1
    "  mov %r7, 0\n"              // 2
    "loop:\n"
    "  mov %r1, %r6\n"            // 3
    "  jeq %r7, 5, after\n"       // 4 -> 8 (crosses the call)
    "  mov %r2, %r7\n"            // 5
    "  call 194\n"                // 6: r0 = old *r1; *r1 = r2
    "  add %r7, 1\n"              // 7
    "after:\n"
    "  jlt %r7, 2, loop\n"        // 8 -> 3 (crosses the call backward)
    "  jeq %r7, 2, done\n"        // 9 -> 11
    "  exit\n"                    // 10
    "done:\n"
    "  ldxdw %r0, [%r6]\n"        // 11
    "  exit\n";                   // 12

TEST(oracle_load, KptrXchgIsInlinedAndJumpsAreAdjusted) {
  CaseSource source = Source({kKptrProgram}, {ArrayMap(3, 8, 1)});
  source.options.inline_kptr_xchg = true;
  const LoadedCase loaded = MustLoad(source);
  const auto& insns = InsnsOf(loaded);
  ASSERT_EQ(insns.size(), 14u);
  // r0 = r2; r0 = xchg(*(u64 *)(r1 + 0), r0)
  EXPECT_EQ(insns[6], Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 0, 2));
  EXPECT_EQ(insns[7], Make(isa::kClassStx | isa::kModeAtomic | isa::kSizeDW, 1, 0, 0, isa::kAtomicXchg));
  EXPECT_EQ(insns[4].offset, 4);   // 4 -> 9 (the old 8)
  EXPECT_EQ(insns[9].offset, -7);  // 9 -> 3
  EXPECT_EQ(insns[10].offset, 1);  // 10 -> 12 (the old 11)
  EXPECT_EQ(loaded.programs[0].source_slot,
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(oracle_load, KptrXchgIsACallWithoutTheOption) {
  const LoadedCase loaded = MustLoad(Source({kKptrProgram}, {ArrayMap(3, 8, 1)}));
  const auto& insns = InsnsOf(loaded);
  ASSERT_EQ(insns.size(), 13u);
  EXPECT_EQ(insns[6], Make(isa::kOpCall, 0, 0, 0, kHelperKptrXchg));
  EXPECT_EQ(insns[4].offset, 3);
  EXPECT_EQ(insns[8].offset, -6);
}

TEST(oracle_load, InlinedAndCalledKptrXchgAgree) {
  // The loop swaps 0 then 1 into the value; it ends holding 1.
  Case c;
  c.programs = {kKptrProgram};
  c.maps = {ArrayMap(3, 8, 1)};
  const Outcome called = RunCase(c);
  ASSERT_TRUE(ExitsWith(called, 1));
  EXPECT_EQ(called.helper_calls.size(), 2u);
  EXPECT_EQ(Read64(called.memory.map_values, 0), 1u);
  c.options.inline_kptr_xchg = true;
  const Outcome inlined = RunCase(c);
  ASSERT_TRUE(ExitsWith(inlined, 1));
  EXPECT_TRUE(inlined.helper_calls.empty());
  EXPECT_EQ(inlined.memory, called.memory);
}

TEST(oracle_load, KptrXchgInliningAdjustsImmDistances) {
  // ja32 and call local keep their distance in imm; each crosses the call.
  CaseSource source;
  source.options.inline_kptr_xchg = true;
  source.programs = {{
      Make(isa::kOpCall, 0, isa::kPseudoCall, 0, 7),                    // 0: call local -> 8
      Make(isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, 1),                 // 1: ja32 -> 3
      kExit,                                                            // 2
      Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 1, 10),        // 3: r1 = r10
      Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluAdd, 1, 0, 0, -8),  // 4: r1 -= 8
      Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 2, 0, 0, 5),   // 5: r2 = 5
      Make(isa::kOpCall, 0, 0, 0, kHelperKptrXchg),                     // 6: 2 slots after
      Make(isa::kClassJmp32 | isa::kJmpJa, 0, 0, 0, -6),                // 7: ja32 -> 2
      Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov, 0, 0, 0, 3),   // 8: sub: r0 = 3
      kExit,                                                            // 9
  }};
  auto prepared = Prepare(source);
  ASSERT_TRUE(prepared.has_value());
  const auto& insns = InsnsOf(prepared->loaded);
  ASSERT_EQ(insns.size(), 11u);
  EXPECT_EQ(insns[0].imm, 8);   // 0 -> 9 (the old 8)
  EXPECT_EQ(insns[1].imm, 1);   // 1 -> 3
  EXPECT_EQ(insns[8].imm, -7);  // 8 (the old 7) -> 2
  // The subprogram returns 3; the xchg then puts 5 at r10-8 and returns the
  // old 0 there.
  const Outcome outcome = prepared->Run();
  EXPECT_TRUE(ExitsWith(outcome, 0));
  EXPECT_EQ(Read64(outcome.memory.stack, StackIndex(0, -8)), 5u);
}

// --- Verifier-lite rejections ---

TEST(oracle_load, RejectsUnknownHelpers) {
  EXPECT_EQ(LoadError(Source({"mov %r0, 0\ncall 99\nexit"})),
            "program 0, instruction 1 (call helper): unknown helper 99");
  EXPECT_EQ(LoadError(Source({"mov %r0, 0\nexit", "call 6\nexit"})),
            "program 1, instruction 0 (call helper): unknown helper 6");
}

// bpf_loop needs a function in r2: lddw_func r2 right before the call,
// which nothing jumps between; the function is no program's entry, and it
// counts as a frame below its caller's.
TEST(oracle_load, BpfLoopTakesOnlyTheCallbackLoadedJustBefore) {
  const std::string cb = "cb:\nmov %r0, 0\nexit\n";
  EXPECT_EQ(LoadError(Source({"mov %r1, 1\nmov %r3, 0\nmov %r4, 0\nlddw_func %r2, cb\ncall 181\nexit\n" + cb})), "");
  const std::string kWants =
      "bpf_loop's callback (r2) must be the function `lddw_func r2` loads just before the call";
  EXPECT_EQ(LoadError(Source({"mov %r1, 1\nmov %r2, 0\ncall 181\nexit\n"})),
            "program 0, instruction 2 (call helper): " + kWants);
  EXPECT_EQ(LoadError(Source({"lddw_func %r3, cb\nmov %r1, 1\ncall 181\nexit\n" + cb})),
            "program 0, instruction 3 (call helper): " + kWants);
  EXPECT_EQ(LoadError(Source({"lddw_func %r2, cb\nmov %r1, 1\ncall 181\nexit\n" + cb})),
            "program 0, instruction 3 (call helper): " + kWants)
      << "not right after it";
  EXPECT_EQ(LoadError(Source({"jeq %r1, 0, +2\nlddw_func %r2, cb\ncall 181\nexit\n" + cb})),
            "program 0, instruction 3 (call helper): " + kWants)
      << "a jump lands between them";
  EXPECT_EQ(LoadError(Source({"start:\nlddw_func %r2, start\nmov %r1, 1\nexit\n"})),
            "program 0, instruction 0 (lddw func): a callback must be a subprogram, not the program's entry");
  EXPECT_EQ(LoadError(Source({"lddw_func %r2, cb\ncall 181\nexit\ncb:\nlddw_func %r2, cb\ncall 181\nexit\n"})),
            "program 0: subprogram 1 calls itself recursively (through subprogram 1)")
      << "a callback that passes itself to bpf_loop";
}

// bpf_throw: the one kfunc; not under a callback of bpf_loop, however
// deep; a program that throws gets the verifier's hidden exception
// callback, `r0 = r1; exit`, appended, whose slots map to the source's last.
TEST(oracle_load, ThrowsGetTheHiddenExceptionCallbackAndNeverComeFromACallback) {
  EXPECT_EQ(LoadError(Source({"mov %r1, 1\ncall kfunc 2\nexit"})),
            "program 0, instruction 1 (call kfunc): unknown kfunc 2 (bpfdiff knows bpf_throw, 1)");
  const std::string thrower = "thrower:\nmov %r1, 7\ncall kfunc 1\nexit\n";
  EXPECT_EQ(LoadError(Source({"mov %r1, 1\nmov %r3, 0\nmov %r4, 0\nlddw_func %r2, cb\ncall 181\nexit\n"
                              "cb:\ncall local thrower\nmov %r0, 0\nexit\n" + thrower})),
            "program 0, instruction 11 (call kfunc): bpf_throw cannot be called from a callback or what a callback "
            "calls (subprogram 2)");
  auto prepared = Prepare(Source({"mov %r0, 1\ncall local thrower\nexit\n" + thrower}));
  ASSERT_TRUE(prepared.has_value());
  const isa::Program& program = prepared->loaded.programs.front().program;
  ASSERT_EQ(program.size(), 8u);
  EXPECT_EQ(program.exception_callback, 6u);
  EXPECT_EQ(program.subprogram_starts, (std::vector<uint32_t>{0, 3, 6}));
  EXPECT_EQ(program.insns[6], Make(isa::kClassAlu64 | isa::kSrcX | isa::kAluMov, 0, 1));
  EXPECT_EQ(program.insns[7], kExit);
  EXPECT_EQ(prepared->loaded.programs.front().source_slot, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 5, 5}));
  // The callback returns the cookie; what follows the calls never runs.
  EXPECT_TRUE(ExitsWith(prepared->Run(), 7));
  // A program that does not throw gets none.
  auto plain = Prepare(Source({"mov %r0, 1\nexit"}));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->loaded.programs.front().program.exception_callback, 0u);
  EXPECT_EQ(plain->loaded.programs.front().program.size(), 2u);
}

TEST(oracle_load, RejectsRecursiveLocalCalls) {
  EXPECT_EQ(LoadError(Source({"call local f\nexit\nf:\ncall local f\nexit"})),
            "program 0: subprogram 1 calls itself recursively (through subprogram 1)");
  EXPECT_EQ(LoadError(Source({"call local f\nexit\nf:\ncall local g\nexit\ng:\ncall local f\nexit"})),
            "program 0: subprogram 1 calls itself recursively (through subprogram 2)");
  // A call back into the main program is recursion too.
  EXPECT_EQ(LoadError(Source({"start:\ncall local f\nexit\nf:\ncall local start\nexit"})),
            "program 0: subprogram 0 calls itself recursively (through subprogram 1)");
}

std::string CallChain(int frames) {
  std::string text = "call local f1\nexit\n";
  for (int d = 1; d < frames; ++d) {
    text += fmt::format("f{}:\n", d);
    text += d + 1 < frames ? fmt::format("call local f{}\n", d + 1) : "mov %r0, 0\n";
    text += "exit\n";
  }
  return text;
}

TEST(oracle_load, RejectsCallsNestedDeeperThanEightFrames) {
  EXPECT_EQ(LoadError(Source({CallChain(8)})), "");
  EXPECT_EQ(LoadError(Source({CallChain(9)})), "program 0: calls nest 9 frames deep, more than the limit of 8");
}

TEST(oracle_load, RejectsStackAccessesOutsideTheFrame) {
  EXPECT_EQ(LoadError(Source({"stxdw [%r10-520], %r1\nmov %r0, 0\nexit"})),
            "program 0, instruction 0 (stxdw): stack access at r10-520 (8 bytes) is outside the 512-byte frame");
  EXPECT_EQ(LoadError(Source({"stb [%r10+0], 1\nmov %r0, 0\nexit"})),
            "program 0, instruction 0 (stb): stack access at r10+0 (1 bytes) is outside the 512-byte frame");
  EXPECT_EQ(LoadError(Source({"ldxw %r0, [%r10-2]\nexit"})),
            "program 0, instruction 0 (ldxw): stack access at r10-2 (4 bytes) is outside the 512-byte frame");
  EXPECT_EQ(LoadError(Source({"mov %r1, 1\nlock add [%r10-516], %r1\nmov %r0, 0\nexit"})),
            "program 0, instruction 1 (lock add): stack access at r10-516 (8 bytes) is outside the 512-byte frame");
  // The edges of the frame are fine.
  EXPECT_EQ(LoadError(Source({"stdw [%r10-512], 1\nstb [%r10-1], 1\nldxw %r0, [%r10-4]\nexit"})), "");
}

TEST(oracle_load, RejectsTailCallsFromSubprograms) {
  const std::vector<isa::MapSpec> maps = {ProgArray(5, 1, {})};
  EXPECT_EQ(LoadError(Source({"call local f\nexit\nf:\nlddw %r2, map:5\nmov %r3, 0\ntail_call\nexit"}, maps)),
            "program 0, instruction 5 (tail_call): tail calls from subprograms are not modelled");
  EXPECT_EQ(LoadError(Source({"call local f\nexit\nf:\nlddw %r2, map:5\nmov %r3, 0\ncall 12\nexit"}, maps)),
            "program 0, instruction 5 (call helper): tail calls from subprograms are not modelled");
  EXPECT_EQ(LoadError(Source({"lddw %r2, map:5\nmov %r3, 0\ntail_call\nmov %r0, 0\nexit"}, maps)), "");
}

TEST(oracle_load, RejectsMapProblems) {
  CaseSource source = Source({"mov %r0, 0\nexit"});
  source.maps = {ProgArray(5, 121, {})};
  EXPECT_EQ(LoadError(source), "prog_array map 5 has 121 entries, more than the limit of 120");
  source.maps = {ProgArray(5, 120, {})};
  EXPECT_EQ(LoadError(source), "");
  source.maps = {ProgArray(5, 2, {0, 1})};
  EXPECT_EQ(LoadError(source), "prog_array map 5 names program 1, but the case has 1 programs");
  source.maps = {ProgArray(5, 2, {-2})};
  EXPECT_EQ(LoadError(source), "prog_array map 5 names program -2, but the case has 1 programs");
  source.maps = {ProgArray(5, 2, {0, -1, 0})};
  EXPECT_EQ(LoadError(source), "prog_array map 5 lists 3 programs for 2 entries");
  source.maps = {ArrayMap(3, 8, 4, std::vector<uint8_t>(33, 1))};
  EXPECT_EQ(LoadError(source), "map 3 has 33 bytes of initial values, more than its 4 values of 8 bytes");
  source.maps = {ArrayMap(3, 8, 4, std::vector<uint8_t>(32, 1))};
  EXPECT_EQ(LoadError(source), "");
  // Initial bytes list the values unpadded: 3 values of 4 bytes, not 3 of 8.
  source.maps = {ArrayMap(3, 4, 3, std::vector<uint8_t>(13, 1))};
  EXPECT_EQ(LoadError(source), "map 3 has 13 bytes of initial values, more than its 3 values of 4 bytes");
  // 1 MiB of values fits exactly; one more 64-byte block does not.
  source.maps = {ArrayMap(3, 8, 0x20000)};
  EXPECT_EQ(LoadError(source), "");
  source.maps = {ArrayMap(3, 8, 0x20000), ArrayMap(4, 8, 1)};
  EXPECT_EQ(LoadError(source), "the maps' values need 1048640 bytes, more than the 1048576-byte map region");
  // Problems MakeProgram finds come through with the program's number.
  EXPECT_EQ(LoadError(Source({"mov %r0, 0\nexit", "lddw %r1, map:9\nexit"})),
            "program 1: instruction 0 (lddw map_fd): map fd 9 is not declared");
}

TEST(oracle_load, RejectsTooManyProgramsOrMaps) {
  CaseSource source;
  source.programs.assign(65, {Make(isa::kClassAlu64 | isa::kSrcK | isa::kAluMov), kExit});
  EXPECT_EQ(LoadError(source), "the case has 65 programs, more than the limit of 64");
  source.programs.resize(64);
  EXPECT_EQ(LoadError(source), "");
  source.programs.resize(1);
  for (int i = 0; i < 17; ++i) source.maps.push_back(ArrayMap(i, 8, 1));
  EXPECT_EQ(LoadError(source), "the case declares 17 maps, more than the limit of 16");
  source.maps.resize(16);
  EXPECT_EQ(LoadError(source), "");
  EXPECT_EQ(LoadError(CaseSource{}), "the case has no program");
}

TEST(oracle_load, RejectsMemoryLargerThanTheContextRegion) {
  CaseSource source = Source({"mov %r0, 0\nexit"});
  source.memory.assign(0x10001, 0);
  EXPECT_EQ(LoadError(source), "input memory of 65537 bytes is larger than the 65536-byte context region");
  source.memory.assign(0x10000, 0);
  EXPECT_EQ(LoadError(source), "");
}

// A stack depth a case names (a test_bpf case's fp->aux->stack_depth):
// every program of the case gets its own, at most 512, and it must hold
// what the program reads and writes through r10.
TEST(oracle_load, AStackDepthHoldsTheAccessesThroughR10) {
  CaseSource source = Source({"stxdw [%r10-40], %r1\nldxw %r0, [%r10-40]\nexit", "mov %r0, 0\nexit"});
  source.stack_depths = {40, 0};
  const LoadedCase loaded = MustLoad(source);
  EXPECT_EQ(loaded.programs[0].stack_depth, 40u);
  EXPECT_EQ(loaded.programs[1].stack_depth, 0u);
  source.stack_depths = {32};
  EXPECT_EQ(LoadError(source),
            "program 0: instruction 0 (stxdw) accesses r10-40, past the stack depth of 32 bytes");
  source.stack_depths = {0, 8};
  EXPECT_EQ(LoadError(source),
            "program 0: instruction 0 (stxdw) accesses r10-40, past the stack depth of 0 bytes");
  source.stack_depths = {520};
  EXPECT_EQ(LoadError(source), "program 0: a stack depth of 520 bytes is more than the 512 the verifier allows");
}

// Named by none, a program's depth is the verifier's: the deepest byte its
// accesses through r10 reach (the deepest of the case's programs);
// MAX_BPF_STACK where bpfdiff cannot follow the verifier (a copy of r10,
// or calls anywhere in the case).
TEST(oracle_load, AStackDepthNamedByNoneIsTheVerifiers) {
  auto depths = [](std::vector<std::string> programs) {
    const LoadedCase loaded = MustLoad(Source(std::move(programs)));
    std::vector<uint32_t> out;
    for (const LoadedProgram& p : loaded.programs) out.push_back(p.stack_depth);
    return out;
  };
  EXPECT_EQ(depths({"stxdw [%r10-40], %r1\nldxh %r0, [%r10-6]\nexit"}), (std::vector<uint32_t>{40}));
  EXPECT_EQ(depths({"mov %r0, 0\nexit"}), (std::vector<uint32_t>{0}));
  // The programs of a case share the deepest.
  EXPECT_EQ(depths({"mov %r0, 0\nexit", "stxdw [%r10-40], %r1\nmov %r0, 0\nexit"}),
            (std::vector<uint32_t>{40, 40}));
  EXPECT_EQ(depths({"stw [%r10-4], 1\nlock add [%r10-12], %r1\nmov %r0, 0\nexit"}), (std::vector<uint32_t>{12}));
  // r10 copied, stored as a value, or the source of an atomic.
  EXPECT_EQ(depths({"mov %r1, %r10\nadd %r1, -8\nstdw [%r1], 0\nmov %r0, 0\nexit"}), (std::vector<uint32_t>{512}));
  EXPECT_EQ(depths({"stxdw [%r10-8], %r10\nmov %r0, 0\nexit"}), (std::vector<uint32_t>{512}));
  // A call in one program of the case: every program gets 512.
  EXPECT_EQ(depths({"stw [%r10-4], 1\nmov %r0, 0\nexit", "call local +1\nexit\nmov %r0, 0\nexit"}),
            (std::vector<uint32_t>{512, 512}));
}

TEST(oracle_load, RejectsInvalidPrograms) {
  EXPECT_EQ(LoadError(Source({"mov %r0, 0"})),
            "program 0: instruction 0 (mov imm): the program must end in exit or an unconditional jump");
}

// --- Clobbered registers ---

TEST(oracle_load, ReadingAnArgumentRegisterAfterACallIsFlagged) {
  const LoadedCase loaded = MustLoad(Source({"mov %r1, 1\ncall 7\nmov %r0, %r1\nexit"}));
  ASSERT_TRUE(loaded.clobbered_read.has_value());
  EXPECT_EQ(*loaded.clobbered_read,
            "program 0, instruction 2 (mov reg) reads r1, which the call at instruction 1 left undefined");
  // Each of r1..r5, and after a local call too.
  for (int r = 1; r <= 5; ++r) {
    const LoadedCase l = MustLoad(Source({fmt::format("call 7\nadd %r0, %r{}\nexit", r)}));
    EXPECT_TRUE(l.clobbered_read.has_value()) << "r" << r;
  }
  EXPECT_TRUE(MustLoad(Source({"call local f\nmov %r0, %r3\nexit\nf:\nmov %r0, 0\nexit"})).clobbered_read);
  // On one path only (the read joins a path through the call).
  EXPECT_TRUE(MustLoad(Source({"mov %r2, 1\njeq %r2, 0, +1\ncall 7\nmov %r0, %r2\nexit"})).clobbered_read);
  // A helper call reads as many argument registers as the helper takes:
  // map_lookup_elem (1) reads r1 and r2, get_smp_processor_id (8) none.
  EXPECT_TRUE(MustLoad(Source({"call 7\ncall 1\nexit"})).clobbered_read.has_value());
  EXPECT_FALSE(MustLoad(Source({"call 7\ncall 8\nexit"})).clobbered_read.has_value());
}

// A register a call left undefined, passed to a local call as an argument,
// is undefined in the callee too (the verifier refuses the callee's read).
TEST(oracle_load, AnArgumentAnEarlierCallLeftUndefinedIsFlaggedInTheCallee) {
  const LoadedCase loaded = MustLoad(Source({"mov %r1, 1\ncall 7\ncall local f\nexit\nf:\nmov %r0, %r1\nexit"}));
  ASSERT_TRUE(loaded.clobbered_read.has_value());
  EXPECT_EQ(*loaded.clobbered_read,
            "program 0, instruction 4 (mov reg) reads r1, which the call at instruction 1 left undefined");
  // Through a second local call, as the fuzzer found it: the first call's
  // callee writes r1, the caller passes it on to the callee of the next.
  EXPECT_TRUE(MustLoad(Source({"call local g\ncall local f\nexit\nf:\nldxdw %r0, [%r1-8]\nexit\n"
                               "g:\nmov %r1, 5\nmov %r0, 0\nexit"}))
                  .clobbered_read);
  // The same callee called with its argument set is not flagged.
  EXPECT_FALSE(MustLoad(Source({"call 7\nmov %r1, 2\ncall local f\nexit\nf:\nmov %r0, %r1\nexit"}))
                   .clobbered_read.has_value());
  // Nor is a callee every call of which passes a defined r1.
  EXPECT_FALSE(MustLoad(Source({"mov %r1, 2\ncall local f\nmov %r1, 3\ncall local f\nexit\nf:\nmov %r0, %r1\nexit"}))
                   .clobbered_read.has_value());
}

TEST(oracle_load, ReadingARedefinedRegisterIsNotFlagged) {
  EXPECT_FALSE(MustLoad(Source({"call 7\nmov %r1, 5\nmov %r0, %r1\nexit"})).clobbered_read.has_value());
  EXPECT_FALSE(MustLoad(Source({"call 7\nldxdw %r2, [%r10-8]\nmov %r0, %r2\nexit"})).clobbered_read.has_value());
  EXPECT_FALSE(MustLoad(Source({"call 7\nlddw %r3, 1\nmov %r0, %r3\nexit"})).clobbered_read.has_value());
}

// A program a tail call enters that reads r3 or r6..r9 before it writes
// them is noted apart: the kernel's JIT restores the caller's r6..r9 before
// it jumps and truncates r3, where the interpreter (and bpfdiff's model)
// keep the tail caller's registers.
TEST(oracle_load, ATailCallTargetReadingARegisterBeforeWritingItIsFlagged) {
  const std::vector<isa::MapSpec> maps = {ProgArray(1, 1, {1})};
  const LoadedCase loaded = MustLoad(Source({"mov %r0, 0\nexit", "mov %r0, %r6\nexit"}, maps));
  EXPECT_FALSE(loaded.clobbered_read.has_value());  // the model's engines keep the registers
  ASSERT_TRUE(loaded.read_at_tail_call_entry.has_value());
  EXPECT_EQ(*loaded.read_at_tail_call_entry,
            "program 1, instruction 0 (mov reg) reads r6, which is undefined where a tail call enters the program");
  for (int r : {3, 6, 7, 8, 9}) {
    EXPECT_TRUE(MustLoad(Source({"mov %r0, 0\nexit", fmt::format("add %r{}, 1\nmov %r0, 0\nexit", r)}, maps))
                    .read_at_tail_call_entry)
        << "r" << r;
  }
  // r1 (the context) and r10 are defined, and so is what the target writes;
  // r0, r2, r4 and r5 are the tail caller's in every engine.
  EXPECT_FALSE(MustLoad(Source({"mov %r0, 0\nexit", "mov %r0, %r1\nadd %r0, %r10\nexit"}, maps)).read_at_tail_call_entry);
  EXPECT_FALSE(
      MustLoad(Source({"mov %r0, 0\nexit", "add %r0, %r2\nadd %r0, %r4\nadd %r0, %r5\nexit"}, maps)).read_at_tail_call_entry);
  EXPECT_FALSE(MustLoad(Source({"mov %r0, 0\nexit", "mov %r6, 1\nmov %r0, %r6\nexit"}, maps)).read_at_tail_call_entry);
  // The main program is entered as the harness calls it, not by a tail call.
  EXPECT_FALSE(MustLoad(Source({"mov %r0, %r6\nexit", "mov %r0, 0\nexit"}, maps)).read_at_tail_call_entry);
}

TEST(oracle_load, CalleeSavedRegistersAreNeverFlagged) {
  const LoadedCase loaded = MustLoad(Source({
      "mov %r6, 6\nmov %r7, 7\nmov %r8, 8\nmov %r9, 9\n"
      "call 7\n"
      "call local f\n"
      "mov %r0, %r6\nadd %r0, %r7\nadd %r0, %r8\nadd %r0, %r9\nadd %r0, %r10\n"
      "exit\n"
      "f:\nmov %r0, 0\nexit"}));
  EXPECT_FALSE(loaded.clobbered_read.has_value()) << *loaded.clobbered_read;
}

TEST(oracle_load, R0IsDefinedAfterACall) {
  EXPECT_FALSE(MustLoad(Source({"call 7\nexit"})).clobbered_read.has_value());
}

}  // namespace
}  // namespace bpfdiff::testing
