// lib/test_bpf.c's cases (kernelsrc/test_bpf) on bpfdiff's engines, run as
// test_bpf.ko runs them: each eBPF case's program with the context each of
// its sub-tests gets, judged first as run_one() judges it (the result's
// low 32 bits against the case's), then by bpfdiff (the whole outcome
// against the interpreter's). The summary lines are test_bpf's own, one
// set per engine, so that they read as a maintainer's dmesg does.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "harness/diff/engines.h"
#include "harness/machine/sandbox.h"
#include "harness/planted/planted_bugs.h"
#include "harness/test_bpf/results.h"
#include "kernelsrc/test_bpf/suite.h"
#include "support/result.h"

namespace bpfdiff {

struct TestBpfOptions {
  // The compiled lib/test_bpf.c to run: nullptr, the tree's
  // (kernelsrc::TestBpfFile::Open).
  const kernelsrc::TestBpfFile* file = nullptr;
  std::string engine{kAllEngines};  // a name of harness/diff/engines.h, or a group
  // test_suite: nullopt runs both of the JIT's suites, as the module does
  // without the parameter.
  std::optional<kernelsrc::TestBpfSuite> suite;
  kernelsrc::TestBpfSelection selection;
  std::optional<std::string> filter;  // regex over case names, after the selection
  MachineFactory machine_factory = nullptr;
  PlantedBugs bugs;  // negative controls only (see harness/planted/planted_bugs.h)
  bool every_case = false;  // a line per case and engine, as dmesg shows them
};

// Runs the selection and prints, per suite, the failures and each
// engine's summary lines (every case's line too with every_case). Errors
// for bad options (an unknown engine, a selection test_bpf refuses, a bad
// pattern), a build without a tree, and a machine that stops working;
// a case that fails is a result.
Result<TestBpfSummary> RunTestBpf(const TestBpfOptions& options, std::ostream& out);

}  // namespace bpfdiff
