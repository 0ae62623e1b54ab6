// harness/diff/compare.h: Compare() walks two outcomes field by field and names
// the first field that differs; cases that cannot be compared are not comparable.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/diff/compare.h"
#include "harness/diff/executor_compare.h"
#include "oracle/outcome.h"

namespace bpfdiff {
namespace {

using Kind = Verdict::Kind;

Outcome Exited(uint64_t r0) {
  Outcome o;
  o.end = EndKind::kExit;
  o.r0 = r0;
  o.helper_calls = {HelperCall{7, {1, 2, 3, 4, 5}, 0x1234}, HelperCall{5, {9, 0, 0, 0, 0}, 9}};
  o.tail_calls = {1, 2};
  o.memory.stack.assign(8 * 512, 0);
  o.memory.context = {1, 2, 3, 4};
  o.memory.map_values.assign(64, 0);
  o.steps = 10;
  return o;
}

Outcome Faulted(uint32_t insn, uint64_t address, AccessKind kind, bool partial = false) {
  Outcome o = Exited(0);
  o.end = EndKind::kFault;
  o.fault = FaultInfo{insn, 0, address, kind, partial};
  return o;
}

void ExpectDivergence(const Verdict& v, std::string_view field, std::string_view detail) {
  EXPECT_EQ(v.kind, Kind::kDivergence) << v.Describe();
  EXPECT_EQ(v.field, field) << v.Describe();
  EXPECT_EQ(v.detail, detail) << v.Describe();
}

TEST(oracle_compare, IdenticalOutcomesMatch) {
  EXPECT_TRUE(Compare(Exited(5), Exited(5)).match());
  EXPECT_TRUE(Compare(Faulted(3, 0x10, AccessKind::kRead), Faulted(3, 0x10, AccessKind::kRead)).match());
  EXPECT_EQ(Compare(Exited(5), Exited(5)).Describe(), "match");
}

TEST(oracle_compare, StepsAreNotCompared) {
  Outcome b = Exited(5);
  b.steps = 999;
  EXPECT_TRUE(Compare(Exited(5), b).match());
}

TEST(oracle_compare, EndKind) {
  const Verdict v = Compare(Exited(1), Faulted(2, 0x0, AccessKind::kRead));
  ExpectDivergence(v, "end", "interp exit r0=0x1, jit fault at insn 2: read of 0x0");
  EXPECT_EQ(v.Describe(), "divergence in end: interp exit r0=0x1, jit fault at insn 2: read of 0x0");
  // A budget exhausted only by the candidate is a divergence, not a case left uncompared.
  Outcome budget = Exited(1);
  budget.end = EndKind::kBudget;
  EXPECT_EQ(Compare(Exited(1), budget).field, "end");
}

TEST(oracle_compare, FaultFields) {
  const Outcome a = Faulted(3, 0x10, AccessKind::kRead);
  Outcome b = a;
  b.fault->program = 1;
  ExpectDivergence(Compare(a, b), "fault program", "interp 0, jit 1");
  b = a;
  b.fault->insn = 4;
  ExpectDivergence(Compare(a, b), "fault instruction", "interp 3, jit 4");
  b = a;
  b.fault->kind = AccessKind::kWrite;
  ExpectDivergence(Compare(a, b), "fault access", "interp read, jit write");
  b = a;
  b.fault->address = 0x11;
  ExpectDivergence(Compare(a, b), "fault address", "interp 0x10, jit 0x11");
  // r0 is not compared after a fault.
  b = a;
  b.r0 = 77;
  EXPECT_TRUE(Compare(a, b).match());
}

TEST(oracle_compare, R0OnExitAndUnwind) {
  ExpectDivergence(Compare(Exited(1), Exited(2)), "r0", "interp 0x1, jit 0x2");
  Outcome a = Exited(0), b = Exited(3);
  a.end = b.end = EndKind::kUnwind;
  EXPECT_EQ(Compare(a, b).field, "r0");
}

TEST(oracle_compare, HelperErrorMessages) {
  Outcome a = Exited(0), b = Exited(0);
  a.end = b.end = EndKind::kHelperError;
  a.message = "callx target is not a helper id";
  b.message = "call to unknown helper 99";
  ExpectDivergence(Compare(a, b), "message",
                   "interp callx target is not a helper id, jit call to unknown helper 99");
}

TEST(oracle_compare, HelperCalls) {
  const Outcome a = Exited(5);
  Outcome b = a;
  b.helper_calls[1].id = 6;
  ExpectDivergence(Compare(a, b), "helper call #1 id", "interp 5, jit 6");
  b = a;
  b.helper_calls[0].args[1] = 0x22;
  ExpectDivergence(Compare(a, b), "helper call #0 (7) argument r2", "interp 0x2, jit 0x22");
  b = a;
  b.helper_calls[0].ret = 0;
  ExpectDivergence(Compare(a, b), "helper call #0 (7) result", "interp 0x1234, jit 0x0");
  b = a;
  b.helper_calls.pop_back();
  ExpectDivergence(Compare(a, b), "helper call count", "interp 2, jit 1");
}

TEST(oracle_compare, TailCalls) {
  const Outcome a = Exited(5);
  Outcome b = a;
  b.tail_calls = {1};
  ExpectDivergence(Compare(a, b), "tail calls", "interp 1,2, jit 1");
}

TEST(oracle_compare, StackNamesFrameAndOffset) {
  const Outcome a = Exited(5);
  Outcome b = a;
  b.memory.stack[512 + 504] = 0xab;  // frame 1, r10-8
  ExpectDivergence(Compare(a, b), "stack frame 1 at r10-8", "interp 0x0, jit 0xab");
  b = a;
  b.memory.stack[0] = 1;  // frame 0, r10-512
  EXPECT_EQ(Compare(a, b).field, "stack frame 0 at r10-512");
  b = a;
  b.memory.stack[7 * 512 + 511] = 1;
  EXPECT_EQ(Compare(a, b).field, "stack frame 7 at r10-1");
}

TEST(oracle_compare, ContextAndMapValues) {
  const Outcome a = Exited(5);
  Outcome b = a;
  b.memory.context[3] = 9;
  ExpectDivergence(Compare(a, b), "context byte 3", "interp 0x4, jit 0x9");
  b = a;
  b.memory.map_values[63] = 1;
  ExpectDivergence(Compare(a, b), "map values byte 63", "interp 0x0, jit 0x1");
  b = a;
  b.memory.map_values.resize(8);
  ExpectDivergence(Compare(a, b), "map values size", "interp 64, jit 8");
}

TEST(oracle_compare, FirstDifferenceWins) {
  // r0 comes before helper calls, which come before memory.
  Outcome b = Exited(6);
  b.helper_calls.clear();
  b.memory.context[0] = 0;
  EXPECT_EQ(Compare(Exited(5), b).field, "r0");
  b.r0 = 5;
  EXPECT_EQ(Compare(Exited(5), b).field, "helper call count");
}

TEST(oracle_compare, NotComparableWhenTheReferenceRanOutOfBudget) {
  Outcome a = Exited(0);
  a.end = EndKind::kBudget;
  const Verdict v = Compare(a, Exited(1));
  EXPECT_EQ(v.kind, Kind::kNotComparable) << v.Describe();
  EXPECT_EQ(v.detail, "interp ran out of its instruction budget");
}

TEST(oracle_compare, NotComparableAfterAHarnessErrorOnEitherSide) {
  Outcome broken = Exited(0);
  broken.end = EndKind::kHarnessError;
  broken.message = "unicorn said no";
  Verdict v = Compare(Exited(1), broken);
  EXPECT_EQ(v.kind, Kind::kNotComparable);
  EXPECT_EQ(v.detail, "jit failed: unicorn said no");
  v = Compare(broken, Exited(1));
  EXPECT_EQ(v.kind, Kind::kNotComparable);
  EXPECT_EQ(v.detail, "interp failed: unicorn said no");
  EXPECT_EQ(v.Describe(), "not comparable: interp failed: unicorn said no");
}

TEST(oracle_compare, NotComparableWhenAStoreFaultedPartWay) {
  const Outcome a = Faulted(1, 0x1010000, AccessKind::kWrite, /*partial=*/true);
  Outcome b = a;
  b.memory.context[2] = 0xff;  // the bytes before the fault are unknown
  const Verdict v = Compare(a, b);
  EXPECT_EQ(v.kind, Kind::kNotComparable) << v.Describe();
  // A partial load does not make memory unknown.
  Outcome c = Faulted(1, 0x1010000, AccessKind::kRead, true);
  Outcome d = c;
  d.memory.context[2] = 0xff;
  EXPECT_EQ(Compare(c, d).field, "context byte 2");
  // The fault fields are still compared first.
  Outcome e = a;
  e.fault->address = 0x100fffc;
  EXPECT_EQ(Compare(a, e).field, "fault address");
}

TEST(oracle_compare, CustomEngineNames) {
  ExpectDivergence(Compare(Exited(1), Exited(2), "ref", "cand"), "r0", "ref 0x1, cand 0x2");
}

}  // namespace
// Two executors' runs of one case: each engine's outcome on the one
// against the other, unless the reference read bytes the engines hold
// differently by design, which depend on the sandbox's history (a probe
// read of JIT code, say): then only whether each engine ran is compared.
TEST(executor_compare, OutcomesOfARunThatReadEnginePrivateBytesAreNotCompared) {
  const auto case_run = [](uint64_t r0, bool read_private) {
    CaseRun run;
    for (const char* engine : {"interp", "kernel-jit"}) {
      EngineRun engine_run;
      engine_run.engine = engine;
      engine_run.outcome = Exited(r0);
      run.runs.push_back(engine_run);
    }
    run.runs[0].outcome->read_engine_private = read_private;
    return run;
  };
  const auto disagreements = CompareExecutors(case_run(1, false), case_run(2, false), "unicorn", "vixl");
  ASSERT_EQ(disagreements.size(), 2u);
  EXPECT_EQ(disagreements[0].engine, "interp");
  EXPECT_EQ(disagreements[1].engine, "kernel-jit");
  EXPECT_TRUE(CompareExecutors(case_run(1, true), case_run(2, false), "unicorn", "vixl").empty());
  EXPECT_TRUE(CompareExecutors(case_run(1, false), case_run(2, true), "unicorn", "vixl").empty());
  CaseRun not_run = case_run(1, true);
  not_run.runs[1].outcome.reset();
  not_run.runs[1].prepare_error = "refused";
  EXPECT_EQ(CompareExecutors(case_run(1, true), not_run, "unicorn", "vixl").size(), 1u)
      << "an engine that ran on one executor and not on the other still disagrees";
}

}  // namespace bpfdiff
