// bpf_conformance_runner's side of the plugin protocol, written from its
// documented behaviour (lib/src/bpf_conformance.cc): how it encodes bytes
// for the plugin, and how it judges a plugin's reply.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tests/cli/process.h"

namespace bpfdiff::test {

// Every byte as two lowercase hex digits followed by two spaces
// ("01  0a  "): the memory argument, and the program on stdin (then "\n").
std::string RunnerHex(std::span<const uint8_t> bytes);

// What the runner's parser keeps of a test file: the `-- result` value (0
// when absent) and the `-- error` text (empty when absent, which means "no
// error expected").
struct RunnerExpectation {
  uint64_t result = 0;
  std::string error;
};

enum class RunnerVerdict { kPass, kFail, kError };

struct RunnerJudgement {
  RunnerVerdict verdict;
  std::string message;  // why, for anything but a pass
};

// The runner's rules: on a non-zero exit, the error text is stdout, or
// stderr when stdout is empty, with one trailing newline removed, cut at a
// '\r' and trailing white space removed; it must equal the expected error,
// and a test that expects no error is an ERROR. On exit 0, stdout without
// one trailing newline is read by std::stoull in base 16 (ERROR when it is
// not a number) and must equal the expected result.
RunnerJudgement JudgeLikeRunner(const RunnerExpectation& expected, const ProcessResult& reply);

}  // namespace bpfdiff::test
