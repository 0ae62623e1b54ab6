#include "fuzz/stats/tail_call_states.h"

#include <algorithm>

namespace bpfdiff::fuzz {

void TailCallStates::Count(const Outcome& reference) {
  using Result = TailCallAttempt::Result;
  bool saw_taken = false, saw_limit = false, saw_at = false, saw_above = false, saw_taken_upper = false,
       saw_refused_upper = false, saw_empty = false;
  for (const TailCallAttempt& attempt : reference.tail_call_attempts) {
    saw_taken |= attempt.result == Result::kTaken;
    saw_limit |= attempt.result == Result::kCountAtLimit;
    saw_empty |= attempt.result == Result::kEmptySlot;
    saw_at |= attempt.index == attempt.max_entries;
    saw_above |= attempt.index > attempt.max_entries;
    saw_taken_upper |= attempt.upper_half && attempt.result == Result::kTaken;
    saw_refused_upper |= attempt.upper_half && attempt.result == Result::kIndexOutOfRange;
  }
  taken += saw_taken;
  chain_to_the_limit += saw_limit;
  index_at_max_entries += saw_at;
  index_above_max_entries += saw_above;
  taken_with_upper_half += saw_taken_upper;
  refused_with_upper_half += saw_refused_upper;
  empty_slot += saw_empty;
  longest_chain = std::max<uint64_t>(longest_chain, reference.tail_calls.size());
}

NamedCounts TailCallStates::Reached() const {
  return {{"tail_call_taken", taken},
          {"tail_call_chain_to_the_limit", chain_to_the_limit},
          {"tail_call_index_at_max_entries", index_at_max_entries},
          {"tail_call_index_above_max_entries", index_above_max_entries},
          {"tail_call_taken_with_upper_half", taken_with_upper_half},
          {"tail_call_refused_with_upper_half", refused_with_upper_half},
          {"tail_call_to_an_empty_slot", empty_slot}};
}

NamedCounts TailCallStates::Largest() const { return {{"longest_tail_call_chain", longest_chain}}; }

}  // namespace bpfdiff::fuzz
