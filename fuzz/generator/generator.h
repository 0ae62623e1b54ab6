// The structure-aware generator: fuzz bytes -> a valid, terminating case.
//
// Valid by construction: registers are written before they are read (and
// never read after a call left them undefined), memory accesses stay inside
// the stack frame, the input memory or a map value unless the generator
// means them to fault (an untrusted pointer behind a PROBE_MEM load, or a
// rare deliberate fault), atomics are aligned, helpers get arguments of the
// right kind, local calls form an acyclic graph no deeper than the kernel's
// limit. Terminating by construction: jumps go forward, except the back
// edge of a loop whose counter the body never writes; tail calls end after
// 33 by the kernel's own rule.
//
// The generator never knows which engine will run its output.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "oracle/load.h"

namespace bpfdiff::fuzz {

// The case an input describes, or nullopt when the input is of no format
// version the decoder reads (or, in raw mode, holds no instruction at all).
std::optional<CaseSource> DecodeFuzzInput(std::span<const uint8_t> input);

// One self-contained program from generator records (fuzz_format.h) of
// format `version`, which must be one the decoder reads (IsFormatVersion):
// no maps, no input memory, no tail-call targets, so
// that runs of it on different CPUs share no writable data. `subprograms`
// and `seed` are the header's bytes 2 and 6..13. Any records make a
// program (missing ones read as zeros).
std::vector<isa::Insn> GenerateSelfContainedProgram(uint8_t version, uint8_t subprograms,
                                                    std::span<const uint8_t> records, uint64_t seed);

// `source` as a raw input of the current version: its memory, then its
// instructions as they are (the seeds made from .data files). Error, saying
// why, for what raw mode cannot carry: more than one program, maps, load
// options, more memory than kMaxRawMemory.
Result<std::vector<uint8_t>> EncodeRawInput(const CaseSource& source);

// Rewrites an input of an older version as the current version (what the
// mutator does before it edits one), as close in meaning as the versions
// allow; inputs of the current version, or not ours, stay as they are.
void UpgradeFuzzInput(std::vector<uint8_t>& input);

}  // namespace bpfdiff::fuzz
