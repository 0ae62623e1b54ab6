// The emitted trampoline: what it encodes (checked with LLVM's disassembler),
// its boundary labels, and what it does when run in Unicorn, with an
// interrupt or a task switch at every one of its instruction boundaries.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <set>

#include "harness/recursion/equivalence.h"
#include "jit/a64/disasm/a64_disassembler.h"
#include "jit/trampoline.h"
#include "tests/harness/recursion/recursion_test_support.h"

namespace bpfdiff::recursion {
namespace {

using jit::AtomicLowering;
using jit::TrampolineAnchor;

struct Variant {
  Policy policy;
  AtomicLowering lowering;
};
const Variant kVariants[] = {
    {Policy::kAtomic, AtomicLowering::kLse},     {Policy::kAtomic, AtomicLowering::kLlSc},
    {Policy::kPerContext, AtomicLowering::kLse}, {Policy::kPerContext, AtomicLowering::kLlSc},
    {Policy::kLanded, AtomicLowering::kLse},     {Policy::kLanded, AtomicLowering::kLlSc},
};
std::string Name(const Variant& v) {
  return fmt::format("{}/{}", PolicyName(v.policy), v.lowering == AtomicLowering::kLse ? "lse" : "llsc");
}

jit::TrampolineCode Emit(const Variant& v, jit::TrampolineBugs bugs = {}) {
  jit::TrampolineSpec spec;
  spec.policy = v.policy;
  spec.atomics = v.lowering;
  spec.program_entry = 0x10001000;
  spec.preempt_count_offset = 0;
  spec.state_offset = 0x40;
  spec.bugs = bugs;
  auto code = jit::EmitTrampoline(spec);
  EXPECT_TRUE(code) << (code ? "" : code.message());
  return code ? std::move(code).value() : jit::TrampolineCode{};
}

std::vector<std::string> Disassemble(const jit::TrampolineCode& code) {
  static auto disassembler = A64Disassembler::Create();
  EXPECT_TRUE(disassembler);
  std::vector<std::string> text;
  for (size_t i = 0; i < code.words.size(); ++i) {
    auto line = disassembler->Disassemble(code.words[i], 4 * i);
    EXPECT_TRUE(line) << fmt::format("word {} (0x{:08x}) does not decode", i, code.words[i]);
    text.push_back(line.value_or("?"));
  }
  return text;
}

bool Has(const std::vector<std::string>& text, std::string_view prefix) {
  for (const auto& line : text) {
    if (line.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(recursionTrampoline, EveryVariantEncodesAndLabelsEveryBoundary) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(Name(v));
    const jit::TrampolineCode code = Emit(v);
    ASSERT_EQ(code.labels.size(), code.words.size());
    const auto text = Disassemble(code);
    EXPECT_EQ(text[code.call_word], "blr x10");
    EXPECT_TRUE(Has(text, "mrs x20, TPIDR_EL1"));
    EXPECT_EQ(text.back(), "ret");
    int enter_windows = 0, exit_windows = 0, conditional = 0;
    for (const auto& label : code.labels) {
      enter_windows += label.anchor == TrampolineAnchor::kEnterWindow;
      exit_windows += label.anchor == TrampolineAnchor::kExitWindow;
      conditional += label.status_reg >= 0;
    }
    EXPECT_EQ(enter_windows, 1);
    EXPECT_EQ(exit_windows, 1);
    // LL/SC: one store-exclusive per update (misses, plus enter and exit for atomic).
    const int exclusive_updates = v.lowering == AtomicLowering::kLlSc ? (v.policy == Policy::kAtomic ? 3 : 1) : 0;
    EXPECT_EQ(conditional, exclusive_updates);
  }
}

TEST(recursionTrampoline, EachPolicyUsesItsInstructions) {
  {
    const auto lse = Disassemble(Emit({Policy::kAtomic, AtomicLowering::kLse}));
    EXPECT_TRUE(Has(lse, "ldadd w10, w11, [x22]"));  // this_cpu_inc_return
    EXPECT_TRUE(Has(lse, "stadd w10, [x22]"));       // this_cpu_dec
    EXPECT_TRUE(Has(lse, "stadd x10, [x13]"));       // misses
    EXPECT_FALSE(Has(lse, "ldrb"));
  }
  {
    const auto llsc = Disassemble(Emit({Policy::kAtomic, AtomicLowering::kLlSc}));
    EXPECT_TRUE(Has(llsc, "ldxr w11, [x22]"));
    EXPECT_TRUE(Has(llsc, "stxr w12, w11, [x22]"));
    EXPECT_FALSE(Has(llsc, "ldadd"));
  }
  for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
    const auto text = Disassemble(Emit({p, AtomicLowering::kLse}));
    EXPECT_TRUE(Has(text, "ldrb w11, [x22, x21]"));  // active[rctx]
    EXPECT_TRUE(Has(text, "strb w11, [x22, x21]"));
    EXPECT_FALSE(Has(text, "ldadd w"));               // no atomic on active
    EXPECT_EQ(Has(text, "ldr w12, [x22]"), p == Policy::kLanded);  // the u32 check
    EXPECT_EQ(Has(text, "ldr w10, [x20]"), true);                  // preempt_count (rctx, preempt_disable)
  }
}

TEST(recursionTrampoline, TheEnterWindowSitsBetweenTheLoadAndTheStore) {
  for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
    const jit::TrampolineCode code = Emit({p, AtomicLowering::kLse});
    const auto text = Disassemble(code);
    for (size_t i = 0; i < code.labels.size(); ++i) {
      if (code.labels[i].anchor != TrampolineAnchor::kEnterWindow) continue;
      EXPECT_EQ(text[i - 1], "ldrb w11, [x22, x21]");
      EXPECT_EQ(code.labels[i].mark, Point::kActiveLoaded);
      EXPECT_EQ(text[i + 1], "strb w11, [x22, x21]");
    }
  }
}

TEST(recursionTrampoline, RefusesTwoBugsThatShareARegister) {
  jit::TrampolineSpec spec;
  spec.bugs.exit_wrong_context = true;
  spec.bugs.check_then_increment = true;
  EXPECT_FALSE(jit::EmitTrampoline(spec));
}

// How many arm64 instructions one uninterrupted trigger of `schedule` runs.
uint64_t Length(std::string_view schedule, const RunConfig& config) {
  const RunResult run = RunText(schedule, config);
  EXPECT_TRUE(run.ok());
  return run.steps;
}

TEST(recursionTrampoline, AHardirqAtEveryBoundaryAgreesWithTheModel) {
  constexpr std::string_view kBase = "cpus 1\nprogram 0 loop 1\ntask 0 A fire 0\n";
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(Name(v));
    const RunConfig config = MakeConfig(v.policy, v.lowering);
    const uint64_t length = Length(kBase, config);
    ASSERT_GT(length, 20u);
    std::set<std::string> outcomes;
    for (uint64_t k = 1; k < length; ++k) {
      const RunResult run = RunText(fmt::format("{}run 0 {}\nhardirq 0 fire 0\n", kBase, k), config);
      ASSERT_TRUE(run.ok()) << "k=" << k << ": " << run.findings.front().Describe();
      outcomes.insert(DecisionOf(run, "hardirq3.1"));
      EXPECT_EQ(DecisionOf(run, "A.1"), "run");
    }
    // percontext has its own byte for hardirq; the others see the task's.
    if (v.policy == Policy::kPerContext) {
      EXPECT_EQ(outcomes, std::set<std::string>{"run"});
    } else {
      EXPECT_EQ(outcomes, (std::set<std::string>{"miss", "run"}));
    }
  }
}

TEST(recursionTrampoline, ATaskSwitchAtEveryBoundaryAgreesWithTheModel) {
  // Task B preempts A at boundary k (where the kernel allows it), runs into
  // its program, and A resumes: the model must follow every interleaving,
  // including the lost update of percontext.
  constexpr std::string_view kBase = "cpus 1\nprogram 0 loop 1\ntask 0 A fire 0\n";
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(Name(v));
    const RunConfig config = MakeConfig(v.policy, v.lowering);
    const uint64_t length = Length(kBase, config);
    bool lost = false, refused = false;
    for (uint64_t k = 1; k < length; ++k) {
      const RunResult run = RunText(
          fmt::format("{}run 0 {}\ntask 0 B fire 0\nuntil 0 program\nswitch 0 A\n", kBase, k), config);
      ASSERT_TRUE(run.ok()) << "k=" << k << ": " << run.findings.front().Describe();
      lost |= run.split_by_preemption;
      refused |= Mentions(run, "refused: preemption is disabled");
      if (v.policy != Policy::kPerContext) {
        // Never both: one of them misses, or they did not overlap.
        EXPECT_FALSE(Mentions(run, "at the same time")) << "k=" << k;
      }
    }
    EXPECT_EQ(lost, v.policy == Policy::kPerContext);
    EXPECT_EQ(refused, v.policy == Policy::kLanded);  // preempt_disable() around the update
  }
}

TEST(recursionTrampoline, AtomicInstructionsPerTrigger) {
  auto rows = CountAtomicsPerTrigger();
  ASSERT_TRUE(rows) << rows.message();
  auto find = [&](Policy p, AtomicLowering l) {
    for (const auto& row : *rows) {
      if (row.policy == p && row.lowering == l) return std::make_pair(row.run_path, row.miss_path);
    }
    return std::make_pair(~uint64_t{0}, ~uint64_t{0});
  };
  // atomic: inc_return + dec on the run path, + the misses add on the miss path.
  EXPECT_EQ(find(Policy::kAtomic, AtomicLowering::kLse), std::make_pair(uint64_t{2}, uint64_t{3}));
  // LL/SC: a load-exclusive and a store-exclusive each.
  EXPECT_EQ(find(Policy::kAtomic, AtomicLowering::kLlSc), std::make_pair(uint64_t{4}, uint64_t{6}));
  for (Policy p : {Policy::kPerContext, Policy::kLanded}) {
    EXPECT_EQ(find(p, AtomicLowering::kLse), std::make_pair(uint64_t{0}, uint64_t{1}));
    EXPECT_EQ(find(p, AtomicLowering::kLlSc), std::make_pair(uint64_t{0}, uint64_t{2}));
  }
}

}  // namespace
}  // namespace bpfdiff::recursion
