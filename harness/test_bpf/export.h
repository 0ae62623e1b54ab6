// A reproducer (a .data file, a minimized fuzz artifact) written as an
// entry of lib/test_bpf.c, so that a finding can go upstream as a
// regression test the JIT maintainers already run (test_bpf.ko).
//
// A case without tail calls becomes one entry of tests[]: INTERNAL, with
// FLAG_NO_DATA when it has no input memory (r1 is NULL), else
// FLAG_LARGE_MEM with a data_size of the memory's length, and stores at
// the program's start that fill those bytes (test_bpf hands such a case
// kmalloc()ed bytes). A case with tail calls becomes a group of
// tail_call_tests[] entries, its main program first, each tail call's
// constant index written as TAIL_CALL() names a test: the distance to the
// program in that slot, TAIL_CALL_NULL for an empty slot, or
// TAIL_CALL_INVALID past the array.
//
// Each result is the interpreter's, computed on what the entry runs, as
// test_bpf runs it (harness/test_bpf/tail_call_suite.h for the group), and
// held to the reproducer's own: an entry whose result depends on what
// test_bpf does not give (r2..r9 at the entry, the input memory of a
// tail-call case, maps) is refused with the reason.
#pragma once

#include <functional>
#include <string>

#include "kernelsrc/test_bpf/suite.h"
#include "oracle/load.h"
#include "oracle/outcome.h"
#include "support/result.h"

namespace bpfdiff {

// Runs a case on the interpreter: its outcome, or why it did not load.
using InterpretCase = std::function<Result<Outcome>(const CaseSource&)>;

struct TestBpfExportOptions {
  std::string name;     // the entry's descr, after "bpfdiff: "
  std::string comment;  // lines for the comment above the entry
};

struct TestBpfExport {
  std::string text;                    // the entries, as C for the array they go in
  kernelsrc::TestBpfSuite suite{};     // tests[] or tail_call_tests[]
  std::vector<std::string> names;      // each entry's descr
  std::vector<int64_t> results;        // each entry's expected result
};

Result<TestBpfExport> ExportAsTestBpf(const CaseSource& source, const InterpretCase& interpret,
                                      const kernelsrc::TestBpfMarkers& markers, const TestBpfExportOptions& options);

}  // namespace bpfdiff
