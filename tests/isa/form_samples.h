// Valid instances of the forms of the opcode table, for the decoder and
// round-trip tests: built from the table and the operand layout of each Shape
// (isa/syntax.h), so that a form added to the table is covered at once.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "isa/opcode_table.h"
#include "isa/program.h"

namespace bpfdiff::isa::testing {

// A program around one instance of a form: [instance (2 slots if wide),
// exit, exit], with the map that lddw map forms name (fd 3, an array of four
// 8-byte values).
struct Sample {
  std::vector<Insn> insns;
  std::vector<MapSpec> maps;
};

// Registers r1/r2, immediate 7, memory [%r10-8] / [%r2+4], jumps to the next
// slot, a local call to the last exit: valid for every form.
Sample CanonicalSample(const Form& form);

// The same with random operand values: random registers, immediates (small,
// large and edge values), offsets, and jump distances within a program of
// random length padded with exits. Not every draw is valid (writes to r10,
// a call that splits the program badly): callers keep those MakeProgram
// accepts.
Sample RandomSample(const Form& form, std::mt19937_64& rng);

// A random value for a 32-bit field, biased to small values and edges.
int32_t RandomImm32(std::mt19937_64& rng);

}  // namespace bpfdiff::isa::testing
