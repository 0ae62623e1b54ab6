// test_tail_calls() as cases: every tail-call test is an entry of one
// program array, its TAIL_CALL() markers relocated as
// prepare_tail_call_tests() relocates them, and a test runs as the main
// program of a case whose other programs are the array's entries. The
// runner (runner.h) runs lib/test_bpf.c's tests this way, and the export
// (export.h) computes an exported group's results the same way.
#pragma once

#include <vector>

#include "isa/insn.h"
#include "isa/program.h"
#include "kernelsrc/test_bpf/suite.h"
#include "oracle/load.h"
#include "support/result.h"

namespace bpfdiff {

class TailCallSuite {
 public:
  TailCallSuite(const std::vector<kernelsrc::TestBpfTailCall>& tests, const kernelsrc::TestBpfMarkers& markers);

  int Count() const { return static_cast<int>(relocated_.size()); }
  // Test `which` relocated, or why bpfdiff cannot build it.
  const Result<std::vector<isa::Insn>>& Relocated(int which) const { return relocated_.at(static_cast<size_t>(which)); }
  // Test `which` (relocated) as test_tail_calls() runs it: r1 a pointer to
  // an int 0 (FLAG_NEED_STATE) or NULL, the array holding every test
  // bpfdiff could build and NULL last, each program with its own stack
  // depth.
  CaseSource CaseOf(int which, bool needs_state) const;

 private:
  std::vector<Result<std::vector<isa::Insn>>> relocated_;
  std::vector<uint32_t> stack_depths_;  // of each test
  isa::MapSpec array_;
  std::vector<std::vector<isa::Insn>> entries_;  // the array's programs, in order
  std::vector<uint32_t> entry_stack_depths_;
};

}  // namespace bpfdiff
