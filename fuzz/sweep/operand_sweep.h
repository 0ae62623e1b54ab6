// The operand-magnitude sweep: every ALU, JMP/JMP32, load and store (the
// sign-extending ones too), atomic and call form against operands from the
// magnitude classes (fuzz/generator/magnitudes.h), enumerated, not drawn.
// The kernel's test_bpf grew such exhaustive tests in 2021 because
// value-dependent JIT bugs kept shipping; this is ours, compared on every
// engine, whole outcomes.
//
// Each case is one program of up to 64 operand combinations. Combination i
// leaves its result in the stack slot at r10 - 8 * (i + 1) (loads and
// stores also use the input memory), so a divergence in the stack names the
// combination that diverged.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fuzz/diff/diff_harness.h"
#include "oracle/load.h"

namespace bpfdiff::fuzz {

struct SweepCase {
  std::string name;                 // "alu64 add imm, part 3"
  CaseSource source;
  std::vector<std::string> combos;  // combination i: its operands, in words
};

// Every case of the sweep, in a fixed order.
std::vector<SweepCase> OperandSweep();

struct SweepDivergence {
  std::string case_name;
  std::string combo;   // the combination the diverging stack slot belongs to, if known
  std::string detail;  // the engine and the first differing field
};

struct SweepResult {
  size_t cases = 0;
  size_t combos = 0;
  size_t not_comparable = 0;  // cases
  size_t divergent_cases = 0;
  std::vector<SweepDivergence> divergences;  // the first `keep` divergent cases
};

// Runs `cases` on every engine of `harness`.
SweepResult RunSweep(DiffHarness& harness, const std::vector<SweepCase>& cases, size_t keep = 20);

}  // namespace bpfdiff::fuzz
