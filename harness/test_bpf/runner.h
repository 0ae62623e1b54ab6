// lib/test_bpf.c's cases (kernelsrc/test_bpf) on bpfdiff's engines, run as
// test_bpf.ko runs them: each eBPF case's program with the context each of
// its sub-tests gets, judged first as run_one() judges it (the result's
// low 32 bits against the case's), then by bpfdiff (the whole outcome
// against the interpreter's). The summary lines are test_bpf's own, one
// set per engine, so that they read as a maintainer's dmesg does.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/diff/engines.h"
#include "harness/machine/sandbox.h"
#include "kernelsrc/test_bpf/suite.h"
#include "support/result.h"

namespace bpfdiff {

struct TestBpfOptions {
  std::string engine{kAllEngines};  // a name of harness/diff/engines.h, or a group
  // test_suite: nullopt runs both of the JIT's suites, as the module does
  // without the parameter.
  std::optional<kernelsrc::TestBpfSuite> suite;
  kernelsrc::TestBpfSelection selection;
  std::optional<std::string> filter;  // regex over case names, after the selection
  MachineFactory machine_factory = nullptr;
  bool every_case = false;  // a line per case and engine, as dmesg shows them
};

// One engine's account of one suite: test_bpf's counts, then bpfdiff's.
struct TestBpfTally {
  std::string engine;
  int passed = 0, failed = 0, jited = 0, run = 0;  // test_bpf's Summary line
  int agreed = 0;          // every sub-test's outcome equals the interpreter's
  int diverged = 0;        // some sub-test's outcome differs from it
  int not_comparable = 0;  // some sub-test could not be compared
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
  std::vector<TestBpfTally> cases;       // per engine, tests[]
  std::vector<TestBpfTally> tail_calls;  // per engine, tail_call_tests[]
  std::map<std::string, int> left_out;   // cases bpfdiff does not run, by reason
  std::vector<TestBpfFailure> failures;
  bool AllPassed() const;
};

// Runs the selection and prints, per suite, the failures and each
// engine's summary lines (every case's line too with every_case). Errors
// for bad options (an unknown engine, a selection test_bpf refuses, a bad
// pattern), a build without a tree, and a machine that stops working;
// a case that fails is a result.
Result<TestBpfSummary> RunTestBpf(const TestBpfOptions& options, std::ostream& out);

}  // namespace bpfdiff
