// Shared pieces of the oracle tests: running a case written in assembly
// through the load step and the interpreter, in a fresh guest environment,
// with the JIT's frame geometry.
//
// Expected values in the tests are derived from RFC 9669 and from the
// kernel's semantics by hand, never from what the interpreter printed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/insn.h"
#include "isa/program.h"
#include "oracle/environment.h"
#include "oracle/interpreter.h"
#include "oracle/load.h"
#include "oracle/outcome.h"
#include "tests/isa/make_insn.h"

namespace bpfdiff::testing {

// The arm64 JIT's frame: FP(0) = entry SP - 80, FP(d + 1) = FP(d) - 592.
inline const StackGeometry kGeometry{80, 592};
// r10 of depth d on CPU 0: 0x04010000 (the top of CPU 0's stack) - 80 - 592 d.
constexpr uint64_t FramePointer(int depth) {
  return 0x0401'0000 - 80 - 592 * static_cast<uint64_t>(depth);
}
// Offset of byte `r10 + offset` (offset < 0) of frame `depth` in
// MemorySnapshot::stack: frames of 512 bytes, frame 0 first, low to high.
constexpr size_t StackIndex(int depth, int offset) {
  return static_cast<size_t>(depth * 512 + 512 + offset);
}

// A case as a test writes it: programs in assembly.
struct Case {
  std::vector<std::string> programs;  // [0] is the main program
  std::vector<isa::MapSpec> maps;
  std::vector<uint8_t> memory;
  LoadOptions options;
  uint64_t budget = 100'000;
};

// Assembles text that must assemble (a failure is a test failure).
std::vector<isa::Insn> Asm(std::string_view text);

CaseSource SourceOf(const Case& c);

// A loaded case installed in a fresh environment, ready to run (and to be
// run again after env->Reset()).
struct Prepared {
  std::unique_ptr<GuestEnvironment> env;
  LoadedCase loaded;

  Outcome Run(uint64_t budget = 100'000, int cpu = 0);
};

// Loads and installs; nullopt (with a test failure) if loading fails.
std::optional<Prepared> Prepare(const CaseSource& source);

// Loads, installs and runs a case; a load failure is a test failure and
// gives an outcome with EndKind::kHarnessError.
Outcome RunCase(const Case& c);
Outcome RunAsm(std::string_view text, std::vector<uint8_t> memory = {});
Outcome RunInsns(std::vector<isa::Insn> insns, std::vector<isa::MapSpec> maps = {});

// The load error of a case expected not to load ("" if it loads).
std::string LoadError(const CaseSource& source);
std::string LoadError(const Case& c);

// Checks that the run exited normally with `r0`.
::testing::AssertionResult ExitsWith(const Outcome& outcome, uint64_t r0);

// Checks that the run faulted at instruction `insn` of program `program`
// with this address and access kind.
::testing::AssertionResult FaultsAt(const Outcome& outcome, uint32_t insn, uint64_t address,
                                    AccessKind kind, uint32_t program = 0);

// Little-endian 64-bit value at `index` of a byte vector.
uint64_t Read64(const std::vector<uint8_t>& bytes, size_t index);
std::vector<uint8_t> Bytes64(std::initializer_list<uint64_t> values);

// Instruction builders for programs written as isa::Insn values.
using isa_testing::Make;
// lddw %rD, value (two slots).
std::vector<isa::Insn> Lddw(uint8_t dst, uint64_t value);
inline const isa::Insn kExit = Make(isa::kOpExit);

isa::MapSpec ArrayMap(int32_t fd, uint32_t value_size, uint32_t entries,
                      std::vector<uint8_t> initial = {});
isa::MapSpec HashMap(int32_t fd, uint32_t key_size, uint32_t value_size, uint32_t entries);
isa::MapSpec ProgArray(int32_t fd, uint32_t entries, std::vector<int32_t> programs);

}  // namespace bpfdiff::testing
