// lib/test_bpf.c of the tree (test_bpf.ko, the BPF JIT maintainers' suite),
// as data: its cases, their programs as its fill helpers build them, the
// context each sub-test runs with, and the selection its module
// parameters make. The file is compiled from the tree (test_bpf/file.c);
// harness/test_bpf runs its cases on bpfdiff's engines.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "isa/insn.h"
#include "support/result.h"

struct bpfdiff_test_bpf_file;

namespace bpfdiff::kernelsrc {

// test_bpf's suites, by its test_suite parameter: "test_bpf" (tests[]) and
// "test_tail_calls" (tail_call_tests[]). test_skb_segment tests no JIT.
enum class TestBpfSuite : uint8_t { kCases, kTailCalls };

// The module parameters that select cases, as insmod takes them.
struct TestBpfSelection {
  std::string name;       // test_name: a case's description, exactly
  int id = -1;            // test_id
  int first = 0;          // test_range
  int last = INT_MAX;
};

struct TestBpfSubtest {
  int data_size = 0;
  uint32_t result = 0;
};

// One entry of tests[] (struct bpf_test), less its program.
struct TestBpfCase {
  int index = 0;
  std::string name;  // its descr
  bool classic = false;   // CLASSIC (else INTERNAL: eBPF)
  bool no_data = false;   // FLAG_NO_DATA: the context is NULL
  bool large_mem = false; // FLAG_LARGE_MEM: the context is data_size bytes, not a socket buffer
  bool has_fill_helper = false;
  std::vector<TestBpfSubtest> subtests;
};

// A case's program as test_bpf() builds it.
struct TestBpfProgram {
  std::vector<isa::Insn> insns;
  // fp->aux->stack_depth, as generate_filter() reads it after the fill
  // helper (which may set it); most cases name none: 0.
  uint32_t stack_depth = 0;
};

// One entry of tail_call_tests[]: its instructions as written (TAIL_CALL()
// markers and helper ids unrelocated), and what it must give.
struct TestBpfTailCall {
  int index = 0;
  std::string name;
  std::vector<isa::Insn> insns;
  bool needs_state = false;      // FLAG_NEED_STATE: the context is an int, 0
  bool result_in_state = false;  // FLAG_RESULT_IN_STATE: the int is the result
  int32_t result = 0;
  bool has_tail_call = false;
  uint32_t stack_depth = 0;  // fp->aux->stack_depth
};

// test_bpf's markers and limits that a runner of its tail-call tests needs.
struct TestBpfMarkers {
  int max_testruns = 0;
  int max_insns = 0;              // MAX_INSNS: the instructions an entry holds
  int32_t tail_call_marker = 0;   // TAIL_CALL_MARKER in lddw r2 and mov r3
  int16_t tail_call_null = 0;     // TAIL_CALL(TAIL_CALL_NULL): the empty slot
  int16_t tail_call_invalid = 0;  // TAIL_CALL(TAIL_CALL_INVALID): past the array
  int32_t func_test_func = 0;     // BPF_FUNC_test_func, the file's own helper
  // The file's tail_call_tests[] entries have has_tail_call (6.12, not 6.1).
  bool has_tail_call_field = true;
  // Its tree writes (BPF_MOVSX*, BPF_LDX_MEMSX, ...) and takes the cpu v4
  // instructions (6.12, not 6.1).
  bool cpu_v4 = true;
};

class TestBpfFile {
 public:
  // The file of the tree this bpfdiff was built with, or of `version`, a
  // tree it links beside it (kernel_jit.h, LinkedKernelTrees); fails when
  // it was built without one, or links no such tree.
  static Result<TestBpfFile> Open(std::string_view version = "");
  // Another compiled copy, read through its accessors (test_bpf/bridge.h:
  // the export check's copy with entries added).
  static TestBpfFile Of(const bpfdiff_test_bpf_file* accessors) { return TestBpfFile(accessors); }

  int Count(TestBpfSuite suite) const;
  TestBpfMarkers Markers() const;
  // The indices [first, last] the selection runs in `suite`, as
  // prepare_test_range() decides; its message when the selection is bad.
  Result<std::pair<int, int>> Select(TestBpfSuite suite, const TestBpfSelection& selection) const;

  TestBpfCase Case(int index) const;
  // The case's program as test_bpf() builds it (its fill helper's, or the
  // table's); the fill helper's failure otherwise.
  Result<TestBpfProgram> Program(int index) const;
  // The context sub-test `sub` runs with, as generate_test_data() builds
  // it: empty for FLAG_NO_DATA.
  Result<std::vector<uint8_t>> Context(int index, int sub) const;

  TestBpfTailCall TailCall(int index) const;

 private:
  explicit TestBpfFile(const bpfdiff_test_bpf_file* accessors) : file_(accessors) {}

  const bpfdiff_test_bpf_file* file_;
};

}  // namespace bpfdiff::kernelsrc
