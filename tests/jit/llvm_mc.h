// Runs LLVM's assembler (llvm-mc, path from CMake) over many instructions in
// one process and returns the encoding of each.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "support/result.h"

namespace bpfdiff::a64::testing {

// What llvm-mc made of one line: its 32-bit word, or its error message.
struct Assembled {
  std::optional<uint32_t> word;
  std::string error;
};

// The exact command the tests run, for messages.
std::string LlvmMcCommand();

// Assembles `lines` (one instruction each) with a single llvm-mc invocation
// (`-triple=aarch64 -mattr=+lse,+v8.4a -show-encoding`). Fails if llvm-mc
// cannot be run or its output cannot be matched to the lines; a line that
// llvm-mc rejects is not a failure here but an Assembled with an error.
Result<std::vector<Assembled>> AssembleWithLlvmMc(std::span<const std::string> lines);

}  // namespace bpfdiff::a64::testing
