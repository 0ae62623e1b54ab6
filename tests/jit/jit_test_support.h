// Shared by the JIT tests (jit_words, jit_probe_offsets, jit_branch_range,
// jit_passes): the corpora of programs, sandboxes, and the structural check
// of a compiled exception table.
//
// Expected values are derived from the kernel's rules (DESIGN.md, the
// comments of jit/extable.cc and jit/prog_pack.h), never from what the JIT
// printed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/conformance/case_file.h"
#include "harness/machine/sandbox.h"
#include "isa/insn.h"
#include "isa/program.h"
#include "jit/jit.h"
#include "oracle/load.h"

namespace bpfdiff::jit_testing {

// A case of one of the corpora, by name.
struct NamedCase {
  std::string name;
  CaseSource source;
  Expectations expected;
};

// tests/conformance (our vectors).
std::filesystem::path OwnVectorsDir();
// The shared upstream suite, or nullopt when it is not there.
std::optional<std::filesystem::path> SharedSuiteDir();
// fuzz/corpus/diff_fuzzer.
std::filesystem::path FuzzSeedDir();

// Every `.data` file of `dir` whose name contains `name_filter`; a file
// that does not parse is a test failure.
std::vector<NamedCase> ReadDataFiles(const std::filesystem::path& dir, std::string_view name_filter = "");
// Every fuzz seed of `dir` that decodes to a case.
std::vector<NamedCase> ReadFuzzSeeds(const std::filesystem::path& dir);

// Assembles text that must assemble.
std::vector<isa::Insn> Asm(std::string_view text);
// Validates instructions into a program that must be valid.
isa::Program MustProgram(std::vector<isa::Insn> insns);

// A sandbox that must be created.
std::unique_ptr<Sandbox> MakeSandbox(const SandboxOptions& options = {});

// Runs `insns` as a case on the interpreter and on the JIT (LSE lowering),
// once per input memory (at least one), through the DifferentialRunner;
// checks that both exit and agree, and returns r0 of each run.
std::vector<uint64_t> RunOnInterpAndJit(std::vector<isa::Insn> insns,
                                        const std::vector<std::vector<uint8_t>>& inputs);

// Slots of the PROBE_MEM / PROBE_MEMSX loads in [first, end).
std::vector<uint32_t> ProbeLoadSlots(const isa::Program& program, uint32_t first, uint32_t end);

// The RX address of the arm64 load that a PROBE_MEM slot lowers to: the
// last word of the slot's code (a register-offset load may be preceded by
// the move of its offset).
uint64_t ProbeLoadAddress(const jit::CompiledSubprogram& sub, uint32_t slot);

// The exception table of `sub` as it lies in RX memory, checked against the
// program: one entry per PROBE_MEM load, in code order; each entry's target
// is the RX address of that load (an ldr* into the arm64 register of the
// BPF destination), its fixup resumes at the next word and names the same
// register; type EX_TYPE_BPF; entries sorted by target; the table right
// after the code inside the slot; and SearchExtable finds every entry (and
// nothing at the entry of the code).
::testing::AssertionResult CheckExtable(const isa::Program& program, const jit::CompiledSubprogram& sub,
                                        const GuestMemory& memory);

// The 64-bit value a `movz; movk #16; movk #32` sequence (EmitAddressMov)
// starting at `words[index]` loads, or nullopt if the words are not one.
std::optional<uint64_t> AddressMovValue(const std::vector<uint32_t>& words, uint32_t index);

}  // namespace bpfdiff::jit_testing
