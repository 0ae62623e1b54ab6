// State coverage of tail calls, for the targets that generate BPF programs
// (diff_fuzzer): which of the bounds the JIT's tail call checks were
// reached, from the reference interpreter's account of every bpf_tail_call
// a run made (Outcome::tail_call_attempts). A campaign that never reaches
// one says so: its count stays 0 in the stats and the nightly report.
#pragma once

#include <cstdint>

#include "fuzz/stats/stats_file.h"
#include "oracle/outcome.h"

namespace bpfdiff::fuzz {

struct TailCallStates {
  // Runs (the main one and each input variant's) in which a tail call...
  uint64_t taken = 0;                     // was taken
  uint64_t chain_to_the_limit = 0;        // was refused because MAX_TAIL_CALL_CNT (33) were taken
  uint64_t index_at_max_entries = 0;      // had an index equal to max_entries (refused)
  uint64_t index_above_max_entries = 0;   // had an index above it (refused)
  uint64_t taken_with_upper_half = 0;     // was taken with garbage in r3's upper half
  uint64_t refused_with_upper_half = 0;   // was refused for its index, with garbage in the upper half
  uint64_t empty_slot = 0;                // found its slot empty
  uint64_t longest_chain = 0;             // the most tail calls one run took

  // Counts one run's attempts (the interpreter's outcome).
  void Count(const Outcome& reference);
  // By name, in declaration order, as the stats file keeps them.
  NamedCounts Reached() const;
  NamedCounts Largest() const;
};

}  // namespace bpfdiff::fuzz
