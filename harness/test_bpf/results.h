// What a run of lib/test_bpf.c's suites found (harness/test_bpf/runner.h):
// per suite and engine, test_bpf's counts and bpfdiff's, the cases left
// out by reason, and each failure. Plain data with no dependency beyond the
// standard library, so that the report reads it without linking anything
// that runs code.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace bpfdiff {

// One engine's account of one suite: test_bpf's counts, then bpfdiff's.
struct TestBpfTally {
  std::string engine;
  int passed = 0, failed = 0, jited = 0, run = 0;  // test_bpf's Summary line
  int agreed = 0;          // every sub-test's outcome equals the interpreter's
  int diverged = 0;        // some sub-test's outcome differs from it
  int not_comparable = 0;  // some sub-test could not be compared
  // Not run on the engine at all (kernel-interp: what only the verifier
  // stops; test_bpf.ko loads without it): in no count above.
  int not_run = 0;
};

struct TestBpfFailure {
  std::string suite;   // "test_bpf" or "test_tail_calls"
  int index = 0;
  std::string name;
  std::string engine;
  std::string reason;  // test_bpf's words ("ret 1 != 2"), or bpfdiff's divergence
  bool kernel_verdict = true;  // test_bpf's own verdict failed (else only bpfdiff's)
};

struct TestBpfSummary {
  std::string tree;  // the Linux tree whose lib/test_bpf.c ran: its version, or its path
  std::vector<TestBpfTally> cases;       // per engine, tests[]
  std::vector<TestBpfTally> tail_calls;  // per engine, tail_call_tests[]
  std::map<std::string, int> left_out;   // cases bpfdiff does not run, by reason
  std::vector<TestBpfFailure> failures;
  bool AllPassed() const;
};

}  // namespace bpfdiff
