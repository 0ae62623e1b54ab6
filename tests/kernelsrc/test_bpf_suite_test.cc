// lib/test_bpf.c of the tree read as data (kernelsrc/test_bpf): its cases,
// their programs as its fill helpers build them, their contexts, and the
// selection its module parameters make, decided by its own code.
#include "kernelsrc/test_bpf/suite.h"

#include <gtest/gtest.h>

#include "isa/insn.h"

namespace bpfdiff::kernelsrc {
namespace {

TestBpfFile File() {
  auto file = TestBpfFile::Open();
  EXPECT_TRUE(file) << file.message();
  return *file;
}

int IndexOf(const TestBpfFile& file, std::string_view name) {
  for (int i = 0; i < file.Count(TestBpfSuite::kCases); ++i) {
    if (file.Case(i).name == name) return i;
  }
  ADD_FAILURE() << "no case named " << name;
  return 0;
}

TEST(TestBpfSuite, TheFileHasBothOfTheJitsSuites) {
  const TestBpfFile file = File();
  // 6.12: more than a thousand entries in tests[], a dozen tail-call tests.
  EXPECT_GT(file.Count(TestBpfSuite::kCases), 1000);
  EXPECT_GE(file.Count(TestBpfSuite::kTailCalls), 10);
  EXPECT_EQ(file.Markers().max_testruns, 1000);
}

TEST(TestBpfSuite, ACaseOfTheTableKeepsItsProgramAndSubtests) {
  const TestBpfFile file = File();
  // { BPF_ALU32_IMM(BPF_MOV, R0, 0x4711), BPF_EXIT_INSN(), ... }: "JMP_EXIT"
  // has unreachable code after its exit; its result is the first mov's.
  const int index = IndexOf(file, "JMP_EXIT");
  const TestBpfCase test = file.Case(index);
  EXPECT_FALSE(test.classic);
  ASSERT_EQ(test.subtests.size(), 1u);
  EXPECT_EQ(test.subtests[0].result, 0x4711u);
  auto program = file.Program(index);
  ASSERT_TRUE(program) << program.message();
  ASSERT_EQ(program->insns.size(), 3u);  // filter_length(): up to the last non-zero slot
  EXPECT_EQ(program->insns[0].imm, 0x4711);
  EXPECT_EQ(program->insns[1].opcode, isa::kOpExit);
  EXPECT_EQ(program->stack_depth, 0u);  // it names none
}

// fp->aux->stack_depth is the table's, or what the fill helper set.
TEST(TestBpfSuite, AProgramHasItsStackDepthAsGenerateFilterReadsIt) {
  const TestBpfFile file = File();
  // { BPF_ST_MEM(BPF_DW, R10, -40, 10), ... }, .stack_depth = 40.
  auto table = file.Program(IndexOf(file, "STX_MEM_DW: Store double word: first word in memory"));
  ASSERT_TRUE(table) << table.message();
  EXPECT_EQ(table->stack_depth, 40u);
  // __bpf_fill_stxdw() sets self->stack_depth = 40; the entry names none.
  auto filled = file.Program(IndexOf(file, "STX_XADD_W: X + 1 + 1 + 1 + ..."));
  ASSERT_TRUE(filled) << filled.message();
  EXPECT_EQ(filled->stack_depth, 40u);
}

TEST(TestBpfSuite, AFillHelperBuildsTheProgramOfALargeCase) {
  const TestBpfFile file = File();
  // bpf_fill_maxinsns*: BPF_MAXINSNS instructions (4096), eBPF ones too.
  for (int i = 0; i < file.Count(TestBpfSuite::kCases); ++i) {
    const TestBpfCase test = file.Case(i);
    if (!test.has_fill_helper || test.classic) continue;
    auto program = file.Program(i);
    ASSERT_TRUE(program) << test.name << ": " << program.message();
    EXPECT_GT(program->insns.size(), 1u) << test.name;
    // The fill's memory is freed and the table's pointer cleared again,
    // as test_bpf() does: a second build gives the same program.
    auto again = file.Program(i);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->insns, program->insns) << test.name;
    return;
  }
  FAIL() << "no eBPF case with a fill helper";
}

TEST(TestBpfSuite, ContextsAreAsGenerateTestDataBuildsThem) {
  const TestBpfFile file = File();
  bool saw_no_data = false, saw_large = false, saw_skb = false;
  for (int i = 0; i < file.Count(TestBpfSuite::kCases) && !(saw_no_data && saw_large && saw_skb); ++i) {
    const TestBpfCase test = file.Case(i);
    if (test.classic) continue;
    auto context = file.Context(i, 0);
    ASSERT_TRUE(context) << test.name << ": " << context.message();
    if (test.no_data) {
      EXPECT_TRUE(context->empty()) << test.name;
      saw_no_data = true;
    } else if (test.large_mem) {
      EXPECT_EQ(context->size(), static_cast<size_t>(test.subtests[0].data_size)) << test.name;
      saw_large = true;
    } else {
      EXPECT_FALSE(context->empty()) << test.name;  // a socket buffer
      saw_skb = true;
    }
  }
  EXPECT_TRUE(saw_no_data && saw_large && saw_skb);
}

TEST(TestBpfSuite, TheModuleParametersSelectAsTheModuleDoes) {
  const TestBpfFile file = File();
  auto all = file.Select(TestBpfSuite::kCases, {});
  ASSERT_TRUE(all) << all.message();
  EXPECT_EQ(all->first, 0);
  EXPECT_EQ(all->second, file.Count(TestBpfSuite::kCases) - 1);

  auto by_name = file.Select(TestBpfSuite::kCases, {.name = "JMP_EXIT"});
  ASSERT_TRUE(by_name) << by_name.message();
  EXPECT_EQ(by_name->first, IndexOf(file, "JMP_EXIT"));
  EXPECT_EQ(by_name->second, by_name->first);

  auto by_id = file.Select(TestBpfSuite::kTailCalls, {.id = 2});
  ASSERT_TRUE(by_id);
  EXPECT_EQ(*by_id, (std::pair{2, 2}));

  // prepare_test_range()'s refusals, in its own words.
  auto unknown = file.Select(TestBpfSuite::kCases, {.name = "no such case"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find("no test named 'no such case' found for 'test_bpf' suite"), std::string::npos)
      << unknown.message();
  auto past = file.Select(TestBpfSuite::kTailCalls, {.id = 1000});
  ASSERT_FALSE(past);
  EXPECT_NE(past.message().find("invalid test_id"), std::string::npos) << past.message();
  auto backwards = file.Select(TestBpfSuite::kCases, {.first = 5, .last = 2});
  ASSERT_FALSE(backwards);
  EXPECT_NE(backwards.message().find("ending before it starts"), std::string::npos) << backwards.message();
}

TEST(TestBpfSuite, TailCallTestsKeepTheirMarkers) {
  const TestBpfFile file = File();
  const TestBpfMarkers markers = file.Markers();
  const TestBpfTailCall test = file.TailCall(1);  // "Tail call 2": TAIL_CALL(-1)
  EXPECT_TRUE(test.has_tail_call);
  EXPECT_EQ(test.result, 3);
  int lddw = 0, index = 0, tail_calls = 0;
  for (const isa::Insn& insn : test.insns) {
    if (insn.opcode == isa::kOpLddw && insn.imm == markers.tail_call_marker) ++lddw;
    if (insn.opcode == 0xb4 && insn.imm == markers.tail_call_marker && insn.offset == -1) ++index;
    if (insn.opcode == isa::kOpTailCall) ++tail_calls;
  }
  EXPECT_EQ(lddw, 1);
  EXPECT_EQ(index, 1);
  EXPECT_EQ(tail_calls, 1);
}

}  // namespace
}  // namespace bpfdiff::kernelsrc
