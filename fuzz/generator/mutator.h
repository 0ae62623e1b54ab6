// The custom mutator of the differential targets: edits inputs at the level
// of the generator's records (one record = one construct, mostly one or a
// few instructions), so that every mutant is still a valid program:
// insert, delete, replace or duplicate a record, change one operand byte,
// set a record's word to a magnitude-class value, swap two records, change
// the case's configuration (maps, subprograms, tail-call targets, input
// memory, the operand-magnitude mode); and for raw-mode inputs, insert,
// delete or replace whole instruction slots, or change any byte (the
// input memory's too). Inputs of an older format version are upgraded
// first (UpgradeFuzzInput): mutants are of the current version.
// Deterministic for a given seed; never returns more than max_size bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bpfdiff::fuzz {

size_t MutateInput(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// Splices two inputs: the first one's header and leading records, the
// second one's trailing records.
size_t CrossOverInputs(const uint8_t* first, size_t first_size, const uint8_t* second,
                       size_t second_size, uint8_t* out, size_t max_out, unsigned seed);

}  // namespace bpfdiff::fuzz
